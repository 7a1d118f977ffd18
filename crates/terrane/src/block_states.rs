//! One Java block state registered under several ids: what [`World::verify`] reports and
//! [`World::merge_duplicate_states`] (`terrane repair`) merges.
//!
//! Importers register Java block states by their canonical string
//! ([`block_state::canonical`]). A world written before they did can hold one state under
//! several spellings (properties in another order, spaces around them), each its own id, and
//! chunks that use several of those ids for the same block. Registries only grow (a chunk
//! stores ids, an id is a registration index), so no entry is ever removed: merging rewrites
//! the chunks that use the other ids to use the canonical spelling's id, registering that
//! spelling first when it is missing, and the other ids stay registered, used by no chunk
//! (`docs/format/chunk-v1.md`, "Spellings of one block state").
//!
//! Registry entries are spellings of one state when their canonical forms are equal, they
//! carry the same components and they agree on opacity; an entry that differs from the
//! canonical spelling in components or opacity stays a block of its own, since merging it
//! would drop or invent component values, or change the opacity map. Entries that do not
//! parse as a Java block state take no part, nor do names with a `"` (Bedrock's quoted
//! string values: terrane-bedrock's names are another format).

use std::collections::{BTreeMap, HashMap, HashSet};

use terrane_chunk::{BlockId, CELLS, Chunk, ChunkView, ComponentId, Schema, block_state};

pub use crate::duplicate_state::{DuplicateState, describe};
use crate::error::{Error, Result};
use crate::world::World;

/// What [`World::merge_duplicate_states`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MergeReport {
    /// The states merged, as they were found.
    pub states: Vec<DuplicateState>,
    /// Canonical spellings registered because they were missing.
    pub registered: usize,
    /// Chunks rewritten, per level (L0, L1, L2).
    pub chunks: [usize; 3],
    /// Atomic batches written: the schema's (when spellings were registered), then one per
    /// page of rewritten chunks.
    pub batches: usize,
}

/// The spellings of one canonical state that can be merged.
struct Group {
    canonical: String,
    /// The canonical spelling's id, when registered.
    target: Option<BlockId>,
    /// The components the canonical spelling carries (or will, once registered).
    components: Vec<ComponentId>,
    /// The other entries with the target's components and opacity.
    members: Vec<BlockId>,
}

/// The groups of registry entries that spell one state (see the module docs), in order of
/// their canonical form; `used` decides, for a canonical spelling not registered yet, whose
/// components it gets (the first used entry's, else the first entry's).
fn groups(world: &World, used: &HashSet<BlockId>) -> Vec<Group> {
    let schema = world.schema();
    let mut by_canonical: BTreeMap<String, Vec<BlockId>> = BTreeMap::new();
    for (i, name) in schema.blocks().names().enumerate() {
        if name.contains('"') || block_state::parse(name).is_err() {
            continue;
        }
        by_canonical.entry(block_state::canonical(name)).or_default().push(BlockId(i as u32));
    }
    let tiered = world.tiered();
    let mut out = Vec::new();
    for (canonical, ids) in by_canonical.into_iter().filter(|(_, ids)| ids.len() > 1) {
        let target = schema.blocks().find(&canonical).map(BlockId);
        let (components, opaque) = match target {
            Some(t) => (schema.block_components(t).to_vec(), tiered.is_opaque(t)),
            None => {
                let first = ids.iter().find(|b| used.contains(b)).unwrap_or(&ids[0]);
                (schema.block_components(*first).to_vec(), (tiered.config().opaque)(&canonical))
            }
        };
        let members: Vec<BlockId> = ids
            .into_iter()
            .filter(|&b| {
                Some(b) != target
                    && schema.block_components(b) == components.as_slice()
                    && tiered.is_opaque(b) == opaque
            })
            .collect();
        if !members.is_empty() {
            out.push(Group { canonical, target, components, members });
        }
    }
    out
}

/// The states of `groups` that chunks store under more than one id.
fn duplicates(schema: &Schema, groups: &[Group], used: &HashSet<BlockId>) -> Vec<DuplicateState> {
    groups
        .iter()
        .filter_map(|g| {
            let spellings: Vec<(BlockId, String)> = g
                .members
                .iter()
                .filter(|b| used.contains(b))
                .map(|&b| (b, schema.blocks().get(b.0).unwrap_or_default().to_string()))
                .collect();
            (!spellings.is_empty()).then(|| DuplicateState {
                canonical: g.canonical.clone(),
                id: g.target,
                spellings,
            })
        })
        .collect()
}

/// Whether the registry holds two entries with one canonical form (then the chunks decide
/// whether that is a problem): a look at the names only.
fn has_spellings(schema: &Schema) -> bool {
    let mut seen = HashSet::new();
    schema.blocks().names().any(|n| {
        !n.contains('"') && block_state::parse(n).is_ok() && !seen.insert(block_state::canonical(n))
    })
}

impl World {
    /// The block states chunks store under several ids (see the [module docs](self)): empty
    /// for a world whose every state has one id. [`verify`](Self::verify) fails with
    /// [`Error::DuplicateStates`] when there are any;
    /// [`merge_duplicate_states`](Self::merge_duplicate_states) merges them. Reads every
    /// chunk's palette when two registry entries spell one state, and nothing when none do.
    pub fn duplicate_states(&self) -> Result<Vec<DuplicateState>> {
        if !has_spellings(self.schema()) {
            return Ok(Vec::new());
        }
        let used = self.used_blocks()?;
        Ok(self.duplicate_states_among(&used))
    }

    /// [`duplicate_states`](Self::duplicate_states) given the ids chunks use.
    pub(crate) fn duplicate_states_among(&self, used: &HashSet<BlockId>) -> Vec<DuplicateState> {
        duplicates(self.schema(), &groups(self, used), used)
    }

    /// Registry entries that spell a state another entry spells too and that no chunk uses:
    /// what [`merge_duplicate_states`](Self::merge_duplicate_states) leaves registered
    /// (registries only grow). One entry of each state counts even when no chunk uses it.
    pub(crate) fn unused_spellings(&self) -> Result<usize> {
        if !has_spellings(self.schema()) {
            return Ok(0);
        }
        let used = self.used_blocks()?;
        let mut n = 0;
        for g in groups(self, &used) {
            let unused = g.members.iter().filter(|b| !used.contains(b)).count();
            n += if g.target.is_none() && unused == g.members.len() { unused - 1 } else { unused };
        }
        Ok(n)
    }

    /// Every block id a stored chunk uses (its palettes, every layer).
    fn used_blocks(&self) -> Result<HashSet<BlockId>> {
        let mut used = HashSet::new();
        self.tiered().for_each_chunk(|_, _, bytes| -> Result<()> {
            used.extend(ChunkView::parse(bytes)?.palette_iter());
            Ok(())
        })?;
        Ok(used)
    }

    /// Merges every block state that chunks store under several ids into one id each, the
    /// canonical spelling's (see the [module docs](self)), and returns what it did; a world
    /// without such states is left as it is.
    ///
    /// The order of writes, each an atomic batch: first the canonical spellings that are
    /// missing are registered (one batch, [`extend_schema`](Self::extend_schema)); then the
    /// chunks that use another spelling are rewritten where they are, at their level and in
    /// their cluster, a page of keys per synced batch
    /// ([`TieredStore::rewrite_chunks`](terrane_cluster::TieredStore::rewrite_chunks)). A
    /// crash at any point leaves a world that opens and decodes (every id a chunk uses stays
    /// registered); [`verify`](Self::verify) then lists what is left, and merging again
    /// finishes the job, with the same target ids (the spellings registered by the first run
    /// are found registered).
    ///
    /// Refused on a read-only world, and while chunks are loaded (the game holds them and
    /// would write the old ids back).
    pub fn merge_duplicate_states(&mut self) -> Result<MergeReport> {
        if self.is_read_only() {
            return Err(crate::Refusal::ReadOnly("merge block states").into());
        }
        if !self.regionizer().loaded_chunks()?.is_empty() {
            return Err(Error::Inconsistent(
                "merge_duplicate_states while chunks are loaded: unload them first".into(),
            ));
        }
        if !has_spellings(self.schema()) {
            return Ok(MergeReport::default());
        }
        let used = self.used_blocks()?;
        let mut groups = groups(self, &used);
        let states = duplicates(self.schema(), &groups, &used);
        groups.retain(|g| states.iter().any(|s| s.canonical == g.canonical));
        if groups.is_empty() {
            return Ok(MergeReport::default());
        }
        let mut report = MergeReport { states, ..MergeReport::default() };
        let mut schema = self.schema().clone();
        for g in groups.iter_mut().filter(|g| g.target.is_none()) {
            g.target = Some(schema.add_block(&g.canonical, &g.components)?);
            report.registered += 1;
        }
        if report.registered > 0 {
            self.extend_schema(schema)?;
            report.batches += 1;
        }
        let map: HashMap<BlockId, BlockId> = groups
            .iter()
            .filter_map(|g| Some((g.target?, &g.members)))
            .flat_map(|(t, members)| members.iter().map(move |&m| (m, t)))
            .collect();
        let schema = self.schema().clone();
        let r = self.tiered_mut().rewrite_chunks(|_, bytes| Ok(remap(&schema, bytes, &map)?))?;
        report.chunks = r.rewritten;
        report.batches += r.batches;
        Ok(report)
    }
}

/// `bytes` with every block of `map`'s keys replaced by its value, at every layer, their
/// component values kept; `None` when the chunk uses none of them.
fn remap(
    schema: &Schema,
    bytes: &[u8],
    map: &HashMap<BlockId, BlockId>,
) -> terrane_chunk::Result<Option<Vec<u8>>> {
    let view = ChunkView::parse(bytes)?;
    if !view.palette_iter().any(|b| map.contains_key(&b)) {
        return Ok(None);
    }
    let mut chunk = Chunk::from_view(&view, schema)?;
    // Replacing a block drops its entry's component values: keep them to set them again
    // (the target carries the same components).
    let kept: Vec<(u16, u32, ComponentId, Vec<u8>)> = chunk
        .component_values()
        .filter(|&(cell, layer, _, _)| {
            chunk.get_layer(cell, layer).is_some_and(|b| map.contains_key(&b))
        })
        .map(|(cell, layer, id, v)| (cell, layer, id, v.to_vec()))
        .collect();
    for cell in 0..CELLS as u16 {
        for layer in 0..chunk.layer_count(cell) {
            if let Some(&to) = chunk.get_layer(cell, layer).and_then(|b| map.get(&b)) {
                chunk.set_layer(cell, layer, to)?;
            }
        }
    }
    for (cell, layer, id, v) in kept {
        chunk.set_component(schema, cell, layer, id, &v)?;
    }
    Ok(Some(chunk.encode(schema)))
}
