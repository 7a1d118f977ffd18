//! A column's block entities from one edition's form to the other's, through
//! [`terrane_bedrock::block_entity`]: Java's (the block-entity components of its chunks, and
//! those its record keeps aside) into a Bedrock `BlockEntity` record, and a Bedrock
//! `BlockEntity` record into Java compounds for the column record. Used by the conversions and
//! by the `terrane` facade's Bedrock export of a world of Java states.

use std::borrow::Cow;
use terrane_anvil::mapping::BLOCK_ENTITY_COMPONENT;
use terrane_bedrock::block_entity::{self, BlockEntityReport};
use terrane_bedrock::translate::table;

use terrane_chunk::{BlockId, Chunk, ChunkView, Schema};
use terrane_nbt::{Compound, Reader, Tag, Writer};
use terrane_section::ColumnPos;

use crate::error::Result;

/// World coordinates of cell `i` (`x << 8 | y << 4 | z`) of chunk `cy` of column `pos`.
fn cell_world(pos: ColumnPos, cy: i64, i: u16) -> (i32, i32, i32) {
    let (x, y, z) = (i32::from(i >> 8), i32::from((i >> 4) & 15), i32::from(i & 15));
    (pos.x * 16 + x, cy as i32 * 16 + y, pos.z * 16 + z)
}

/// A chunk of a column as the block-entity translation reads it: encoded (format v1, read in
/// place) or decoded ([`Chunk`], as an import builds it before encoding it).
pub trait ColumnChunk {
    /// The layer-0 block of cell `i`; `None` when the chunk does not read.
    fn block(&self, i: u16) -> Option<BlockId>;
    /// Every cell whose layer-0 block is one of those `wanted` says yes to, with its block
    /// (none when the chunk does not read); `wanted` sees each palette entry once.
    fn cells_of(&self, wanted: impl FnMut(BlockId) -> bool) -> Result<Vec<(u16, BlockId)>>;
    /// The chunk decoded (with `schema`) when it holds any component, else `None`.
    fn with_components(&self, schema: &Schema) -> Result<Option<Cow<'_, Chunk>>>;
}

impl ColumnChunk for Vec<u8> {
    fn block(&self, i: u16) -> Option<BlockId> {
        // One cell: read in place, not the whole chunk decoded.
        Some(ChunkView::parse(self).ok()?.block(i))
    }
    fn cells_of(&self, mut wanted: impl FnMut(BlockId) -> bool) -> Result<Vec<(u16, BlockId)>> {
        let view = ChunkView::parse(self)?;
        let mut found = Vec::new();
        if view.palette_iter().any(&mut wanted) {
            view.for_each_block(|i, b| {
                if wanted(b) {
                    found.push((i, b));
                }
            });
        }
        Ok(found)
    }
    fn with_components(&self, schema: &Schema) -> Result<Option<Cow<'_, Chunk>>> {
        if ChunkView::parse(self)?.component_bytes().is_empty() {
            return Ok(None);
        }
        Ok(Some(Cow::Owned(Chunk::decode(self, schema)?)))
    }
}

impl ColumnChunk for Chunk {
    fn block(&self, i: u16) -> Option<BlockId> {
        Some(self.get_index(i))
    }
    fn cells_of(&self, mut wanted: impl FnMut(BlockId) -> bool) -> Result<Vec<(u16, BlockId)>> {
        let palette = self.palette();
        let hits: Vec<bool> = palette.iter().map(|&b| wanted(b)).collect();
        let mut found = Vec::new();
        if hits.contains(&true) {
            let mut locals = [0u16; terrane_chunk::CELLS];
            self.read_locals(&mut locals);
            for (i, &l) in locals.iter().enumerate() {
                if hits[usize::from(l)] {
                    found.push((i as u16, palette[usize::from(l)]));
                }
            }
        }
        Ok(found)
    }
    fn with_components(&self, _: &Schema) -> Result<Option<Cow<'_, Chunk>>> {
        Ok((self.component_values().next().is_some()).then_some(Cow::Borrowed(self)))
    }
}

/// The state name at world `(x, y, z)` in `chunks` (`(chunk y, chunk)` in `schema`).
fn state_at<'s, C: ColumnChunk>(
    chunks: &[(i64, C)],
    schema: &'s Schema,
    (x, y, z): (i32, i32, i32),
) -> Option<&'s str> {
    let cy = i64::from(y >> 4);
    let (_, chunk) = chunks.iter().find(|(c, _)| *c == cy)?;
    let i = terrane_section::cell_index((x & 15) as u32, (y & 15) as u32, (z & 15) as u32);
    schema.blocks().get(chunk.block(i)?.0)
}

/// The Java block entities of a column, in Bedrock's form, as the value of its
/// `BlockEntity` record (little-endian compounds back to back); `None` when none translates.
/// `chunks` are the column's Java chunks (`from`'s states); `aside` the block entities its
/// record keeps (with `x`, `y`, `z`); `data_version` the column's.
pub fn java_to_bedrock_record<C: ColumnChunk>(
    pos: ColumnPos,
    chunks: &[(i64, C)],
    from: &Schema,
    aside: &[Compound],
    data_version: Option<i32>,
    report: &mut BlockEntityReport,
) -> Result<Option<Vec<u8>>> {
    let mut out = Writer::new().little_endian();
    let mut any = false;
    // Potted plants: Java keeps the plant in the block, Bedrock in a block entity.
    let potted =
        |b: BlockId| from.blocks().get(b.0).filter(|n| n.starts_with(block_entity::JAVA_POTTED));
    for (cy, chunk) in chunks {
        for (i, b) in chunk.cells_of(|b| potted(b).is_some())? {
            let Some(name) = potted(b) else { continue };
            let at = cell_world(pos, *cy, i);
            if let Some(b) = block_entity::flower_pot_to_bedrock(name, at, report) {
                out.named("", &Tag::Compound(b))?;
                any = true;
            }
        }
    }
    let mut put = |java: &Compound,
                   at: (i32, i32, i32),
                   block: &str,
                   report: &mut BlockEntityReport|
     -> Result<()> {
        if let Some(b) = block_entity::java_to_bedrock(java, at, block, data_version, report) {
            out.named("", &Tag::Compound(b))?;
            any = true;
        }
        Ok(())
    };
    let be = from.components().find(BLOCK_ENTITY_COMPONENT);
    for (cy, chunk) in chunks {
        if be.is_none() {
            continue;
        }
        let Some(chunk) = chunk.with_components(from)? else { continue };
        for (cell, layer, _, value) in chunk.component_values() {
            let block = chunk.get_layer(cell, layer).and_then(|b| from.blocks().get(b.0));
            let java = match terrane_nbt::from_bytes(value) {
                Ok((_, Tag::Compound(c))) => c,
                _ => {
                    *report.left.entry("(damaged block entity)".into()).or_default() += 1;
                    continue;
                }
            };
            put(&java, cell_world(pos, *cy, cell), block.unwrap_or("minecraft:air"), report)?;
        }
    }
    for java in aside {
        let coord = |k: &str| java.get(k).and_then(Tag::as_int).unwrap_or(0);
        let at = (coord("x"), coord("y"), coord("z"));
        let block = state_at(chunks, from, at).unwrap_or("minecraft:air").to_string();
        put(java, at, &block, report)?;
    }
    Ok(any.then_some(out.out))
}

/// A Bedrock `BlockEntity` record's block entities in Java's form.
#[derive(Default)]
pub(crate) struct JavaBlockEntities {
    /// The compounds (with `x`, `y`, `z`), for a Java column record.
    pub(crate) compounds: Vec<Compound>,
    /// Cells whose Java state the block entity corrects ([`block_entity::java_state`]): world
    /// position and state.
    pub(crate) states: Vec<((i32, i32, i32), String)>,
}

impl JavaBlockEntities {
    /// The corrected cells of chunk `cy`, by cell index, for
    /// [`ChunkTranslator::restate`](terrane_bedrock::translate::ChunkTranslator::restate).
    pub(crate) fn states_in(&self, cy: i64) -> Vec<(u16, String)> {
        let cell = |(x, y, z): (i32, i32, i32)| {
            terrane_section::cell_index((x & 15) as u32, (y & 15) as u32, (z & 15) as u32)
        };
        self.states
            .iter()
            .filter(|((_, y, _), _)| i64::from(y >> 4) == cy)
            .map(|(at, s)| (cell(*at), s.clone()))
            .collect()
    }
}

/// A Bedrock `BlockEntity` record in Java's form. `chunks` are the column's Bedrock chunks
/// (`from`'s states). Damaged bytes end the list (the import of the column reports them).
pub(crate) fn bedrock_record_to_java<C: ColumnChunk>(
    value: &[u8],
    chunks: &[(i64, C)],
    from: &Schema,
    report: &mut BlockEntityReport,
) -> JavaBlockEntities {
    let mut r = Reader::little_endian(value);
    let mut out = JavaBlockEntities::default();
    while r.remaining() > 0 {
        let Ok(bedrock) = r.root_compound() else { break };
        let coord = |k: &str| bedrock.get(k).and_then(Tag::as_int).unwrap_or(0);
        let at = (coord("x"), coord("y"), coord("z"));
        let mut java_block = state_at(chunks, from, at)
            .map(|b| table().bedrock_to_java(b, false).name)
            .unwrap_or_else(|| "minecraft:air".into());
        if let Some(better) = block_entity::java_state(&bedrock, &java_block) {
            out.states.push((at, better.clone()));
            java_block = better;
        }
        if let Some(j) = block_entity::bedrock_to_java(&bedrock, &java_block, report) {
            out.compounds.push(j);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A block entity the Java record keeps aside (not a component) is translated with the
    /// state of its cell, read from the column's chunks.
    #[test]
    fn block_entities_kept_aside_are_translated_with_their_cells_state() {
        let mut schema = Schema::new();
        let air = schema.add_block("minecraft:air", &[]).unwrap();
        let state = "minecraft:chest[facing=north,type=left,waterlogged=false]";
        let chest = schema.add_block(state, &[]).unwrap();
        let mut c = Chunk::new(air);
        c.set(1, 2, 3, chest);
        let pot = schema.add_block("minecraft:potted_fern", &[]).unwrap();
        c.set(9, 9, 9, pot);
        let chunks = vec![(4i64, c.encode(&schema))];
        let mut aside = Compound::new();
        aside.insert("id", Tag::String("minecraft:chest".into()));
        for (k, v) in [("x", 16 * 5 + 1), ("y", 16 * 4 + 2), ("z", 16 * -2 + 3)] {
            aside.insert(k, Tag::Int(v));
        }
        let mut report = BlockEntityReport::default();
        let pos = ColumnPos::new(5, -2);
        let record =
            java_to_bedrock_record(pos, &chunks, &schema, &[aside.clone()], None, &mut report)
                .unwrap()
                .unwrap();
        let mut r = Reader::little_endian(&record);
        let pot = r.root_compound().unwrap();
        assert_eq!(pot.get("id"), Some(&Tag::String("FlowerPot".into())), "{pot:?}");
        let b = r.root_compound().unwrap();
        // The `left` half facing north pairs with the chest east of it.
        assert_eq!(b.get("pairx"), Some(&Tag::Int(16 * 5 + 2)));
        assert_eq!(report.converted.get("minecraft:chest"), Some(&1));
        // The chunk decoded, as the conversion hands it over, makes the same record.
        let decoded = vec![(4i64, c)];
        let mut again = BlockEntityReport::default();
        let same = java_to_bedrock_record(pos, &decoded, &schema, &[aside], None, &mut again);
        assert_eq!(same.unwrap(), Some(record));
        assert_eq!(again, report);
    }
}
