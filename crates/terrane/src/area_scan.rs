//! The chunk objects of one area (256 × 256 blocks, every height) found by key range, and
//! the chunks inside them: what restoring and trimming an area read.

use terrane_cluster::{ClusterView, Scale};
use terrane_section::keys::{self, Level};
use terrane_section::{AreaId, ChunkPos};
use terrane_store::{KeyRange, Object, ReadView, tables};

use crate::error::Result;

/// Cold (16³) cells searched above and below y 0 for an area's chunks: chunk y from −2,048
/// to 2,047 (block y ±32,768), far past any Minecraft world.
pub(crate) const Y_CELLS: i64 = 128;

/// The table of `level`'s chunk objects.
pub(crate) fn level_table(level: Level) -> &'static str {
    match level {
        Level::L0 => tables::CHUNK_L0,
        Level::L1 => tables::CHUNK_L1,
        Level::L2 => tables::CHUNK_L2,
    }
}

/// The area of a chunk-table key (at `level`), if it is in dimension `dim`.
pub(crate) fn area_of_cell(key: &[u8], level: Level, dim: u64) -> Option<AreaId> {
    let (d, cell) = keys::parse_chunk_key(key)?;
    let s = level.shift();
    (d == dim).then(|| AreaId::of_chunk(ChunkPos::new(cell.x << s, cell.y << s, cell.z << s)))
}

/// The key just after `key` (same length, plus one), for an exclusive range end.
fn next_key(key: &[u8]) -> Vec<u8> {
    let mut k = key.to_vec();
    for b in k.iter_mut().rev() {
        let (v, carry) = b.overflowing_add(1);
        *b = v;
        if !carry {
            return k;
        }
    }
    let mut longer = key.to_vec();
    longer.push(0);
    longer
}

/// The chunk objects of `area` in dimension `dim`, at every level: `(level, key, object)`.
/// Each aligned cube of cells inside one cold cell is one run of Morton keys, so the area is
/// read by one range per level and cold cell of height.
pub(crate) fn area_chunk_objects(
    view: &dyn ReadView,
    dim: u64,
    area: AreaId,
) -> Result<Vec<(Level, Vec<u8>, Object)>> {
    let mut out = Vec::new();
    let (ax, az) = (i64::from(area.x), i64::from(area.z));
    for level in Level::ALL {
        let table = level_table(level);
        let per = 16 >> level.shift(); // cells of this level along an area's edge
        for yc in -Y_CELLS..Y_CELLS {
            let lo = keys::cell_key(dim, ChunkPos::new(ax * per, yc * per, az * per));
            let hi = keys::cell_key(
                dim,
                ChunkPos::new(ax * per + per - 1, yc * per + per - 1, az * per + per - 1),
            );
            for e in view.scan(table, KeyRange::between(&lo, &next_key(&hi)))? {
                let (k, o) = e?;
                if area_of_cell(&k, level, dim) == Some(area) {
                    out.push((level, k, o));
                }
            }
        }
    }
    Ok(out)
}

/// The chunks of a chunk-table object stored at `key` on `level`: `(position, bytes)`.
pub(crate) fn chunks_of<'a>(
    level: Level,
    key: &[u8],
    bytes: &'a [u8],
) -> Result<Vec<(ChunkPos, &'a [u8])>> {
    let Some((_, cell)) = keys::parse_chunk_key(key) else { return Ok(Vec::new()) };
    match Scale::from_level(level) {
        None => Ok(vec![(cell, bytes)]),
        Some(scale) => ClusterView::with_scale(bytes, scale)?
            .iter()
            .map(|(i, c)| {
                let pos = scale.chunk_pos(cell, i).expect("an index the view holds");
                Ok((pos, c))
            })
            .collect(),
    }
}
