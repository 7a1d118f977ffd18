//! Block states between terrane's registry (names) and Valence's (`BlockState`).
//!
//! A state of a Java release after 1.20.1 (the game Valence serves) is shown as its nearest
//! 1.20.1 state: a renamed block under its old name (`short_grass` as `grass`), a new block
//! as the 1.20.1 block `data/older-states.tsv` names (generated from minecraft-data by
//! `cargo xtask tables`: `tables/generate.js` says how it chooses), with the properties and
//! values the older block has; properties a 1.20.1 block lacks take its defaults.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use terrane::chunk::block_state;
use terrane::{BlockId, Schema};
use valence::prelude::{BlockKind, BlockState, PropName, PropValue};

/// Maps terrane block ids to Valence block states and back, caching both ways.
///
/// A terrane state of a later Java release is shown as its nearest 1.20.1 state
/// ([`nearest_state`]); one no release has (a mod's, a spelling no Minecraft accepts) as the
/// stand-in, reported once with `tracing::warn`. The stored chunk keeps the original state.
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
        let state = match name.and_then(parse_state).or_else(|| name.and_then(nearest_state)) {
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

/// The 1.20.1 blocks shown for blocks of later releases, by name.
fn older_blocks() -> &'static HashMap<&'static str, &'static str> {
    static OLDER: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    OLDER.get_or_init(|| {
        include_str!("../data/older-states.tsv")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut f = l.split('\t');
                Some((f.next()?, f.next()?))
            })
            .collect()
    })
}

/// The nearest 1.20.1 state of a state Valence does not know: its block under its 1.20.1
/// name (or the 1.20.1 block shown for it), with those of its properties that block has
/// (values it does not have keep the block's default); `None` for a block no release has.
pub fn nearest_state(s: &str) -> Option<BlockState> {
    let (name, props) = block_state::parse(s).ok()?;
    let older = older_blocks().get(name.as_str()).copied().unwrap_or(name.as_str());
    let kind = BlockKind::from_str(older.strip_prefix("minecraft:")?)?;
    let mut state = kind.to_state();
    for (k, v) in props {
        let (Some(key), Some(value)) = (PropName::from_str(&k), PropValue::from_str(&v)) else {
            continue;
        };
        if state.get(key).is_some() {
            let set = state.set(key, value);
            if set.get(key) == Some(value) {
                state = set;
            }
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
    fn later_states_show_as_their_nearest_1_20_1_state() {
        assert_eq!(parse_state("minecraft:short_grass"), None);
        assert_eq!(nearest_state("minecraft:short_grass"), Some(BlockState::GRASS));
        assert_eq!(
            nearest_state("minecraft:iron_chain[axis=y,waterlogged=false]"),
            parse_state("minecraft:chain[axis=y]")
        );
        let stairs = nearest_state(
            "minecraft:pale_oak_stairs[facing=east,half=top,shape=straight,waterlogged=false]",
        );
        let want = parse_state("minecraft:oak_stairs[facing=east,half=top,shape=straight]");
        assert_eq!(stairs, want);
        // A property 1.20.1 lacks keeps the block's default.
        assert_eq!(nearest_state("minecraft:stone[facing=up]"), Some(BlockState::STONE));
        assert_eq!(nearest_state("mymod:thing"), None);
        // Every block of the table is one Valence shows.
        for (newer, older) in older_blocks() {
            assert!(nearest_state(newer).is_some(), "{newer} -> {older}");
            assert!(parse_state(older).is_some(), "{older} is not a 1.20.1 block");
        }
        assert!(older_blocks().len() > 150);
        let mut schema = Schema::new();
        let grass = schema.add_block("minecraft:short_grass", &[]).unwrap();
        assert_eq!(
            BlockMap::new(BlockState::BEDROCK).to_valence(&schema, grass),
            BlockState::GRASS
        );
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
