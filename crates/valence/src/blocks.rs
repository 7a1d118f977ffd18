//! Block states between terrane's registry (names) and Valence's (`BlockState`).

use std::collections::{HashMap, HashSet};

use terrane::chunk::block_state;
use terrane::{BlockId, Schema};
use valence::prelude::{BlockKind, BlockState, PropName, PropValue};

/// Maps terrane block ids to Valence block states and back, caching both ways.
///
/// A terrane state Valence does not know (another game version, a mod, a spelling no
/// Minecraft accepts) is shown as the stand-in and reported once with `tracing::warn`; the
/// stored chunk keeps the original state.
#[derive(Debug)]
pub struct BlockMap {
    to_valence: Vec<Option<BlockState>>,
    to_terrane: HashMap<BlockState, BlockId>,
    warned: HashSet<u32>,
    stand_in: BlockState,
}

impl BlockMap {
    /// A map showing unknown states as `stand_in`.
    pub fn new(stand_in: BlockState) -> Self {
        Self {
            to_valence: Vec::new(),
            to_terrane: HashMap::new(),
            warned: HashSet::new(),
            stand_in,
        }
    }

    /// The Valence state for terrane block `id` of `schema`: the stand-in when Valence does
    /// not know it (or the id is not registered).
    pub fn to_valence(&mut self, schema: &Schema, id: BlockId) -> BlockState {
        let i = id.0 as usize;
        if let Some(Some(s)) = self.to_valence.get(i) {
            return *s;
        }
        let name = schema.blocks().get(id.0);
        let state = match name.and_then(parse_state) {
            Some(s) => s,
            None => {
                if self.warned.insert(id.0) {
                    tracing::warn!(
                        "block state {:?} (id {}) is not a Minecraft 1.20.1 state: shown as {}",
                        name.unwrap_or("<unregistered>"),
                        id.0,
                        self.stand_in
                    );
                }
                self.stand_in
            }
        };
        if self.to_valence.len() <= i {
            self.to_valence.resize(i + 1, None);
        }
        self.to_valence[i] = Some(state);
        state
    }

    /// The terrane id `state` is registered under in `schema`, `None` when it is not.
    pub fn to_terrane(&mut self, schema: &Schema, state: BlockState) -> Option<BlockId> {
        if let Some(id) = self.to_terrane.get(&state) {
            return Some(*id);
        }
        let id = BlockId(schema.blocks().find(&state_name(state))?);
        self.to_terrane.insert(state, id);
        Some(id)
    }
}

/// Valence's state for a block-state string (`minecraft:name[k=v,...]`); `None` when the
/// name, a property or a value is not Minecraft 1.20.1's. Properties not given keep the
/// block's defaults.
pub fn parse_state(s: &str) -> Option<BlockState> {
    let (name, props) = block_state::parse(s).ok()?;
    let kind = BlockKind::from_str(name.strip_prefix("minecraft:")?)?;
    let mut state = kind.to_state();
    for (k, v) in props {
        let key = PropName::from_str(&k)?;
        let value = PropValue::from_str(&v)?;
        state.get(key)?;
        state = state.set(key, value);
        if state.get(key) != Some(value) {
            return None;
        }
    }
    Some(state)
}

/// The canonical terrane name of a Valence state: `minecraft:name[k=v,...]`, keys sorted.
pub fn state_name(state: BlockState) -> String {
    let kind = state.to_kind();
    let props = kind.props().iter().filter_map(|p| state.get(*p).map(|v| (p.to_str(), v.to_str())));
    block_state::canonical_from_parts(&format!("minecraft:{}", kind.to_str()), props)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in
            [BlockState::STONE, BlockState::GRASS_BLOCK, BlockState::OAK_STAIRS, BlockState::AIR]
        {
            assert_eq!(parse_state(&state_name(s)), Some(s), "{}", state_name(s));
        }
        assert_eq!(state_name(BlockState::GOLD_BLOCK), "minecraft:gold_block");
        assert_eq!(parse_state("minecraft:water[level=0]"), Some(BlockState::WATER));
        assert_eq!(parse_state("stone"), Some(BlockState::STONE));
    }

    #[test]
    fn unknown_states_are_none() {
        assert_eq!(parse_state("minecraft:no_such_block"), None);
        assert_eq!(parse_state("minecraft:stone[facing=up]"), None);
        assert_eq!(parse_state("minecraft:water[level=99]"), None);
        assert_eq!(parse_state("mymod:thing"), None);
        assert_eq!(parse_state("[broken"), None);
    }

    #[test]
    fn unknown_ids_show_the_stand_in() {
        let mut schema = Schema::new();
        let air = schema.add_block("minecraft:air", &[]).unwrap();
        let odd = schema.add_block("mymod:thing", &[]).unwrap();
        let mut map = BlockMap::new(BlockState::BEDROCK);
        assert_eq!(map.to_valence(&schema, air), BlockState::AIR);
        assert_eq!(map.to_valence(&schema, odd), BlockState::BEDROCK);
        assert_eq!(map.to_valence(&schema, BlockId(99)), BlockState::BEDROCK);
        assert_eq!(map.to_terrane(&schema, BlockState::AIR), Some(air));
        assert_eq!(map.to_terrane(&schema, BlockState::STONE), None);
    }
}
