//! Trimming a world: removing the columns nobody changed since they were generated, so that
//! they are generated again when a player comes near.

use std::collections::{BTreeMap, BTreeSet};

use terrane_cluster::TickSave;
use terrane_section::keys::Level;
use terrane_section::{AreaId, ChunkPos, ColumnPos};
use terrane_store::KeyRange;
use terrane_worldgen::Terrain;

use crate::area_scan::{area_chunk_objects, area_of_cell, chunks_of, level_table};
use crate::error::{Error, Result};
use crate::world::World;

/// What [`World::trim`] keeps whatever it holds, and whether it only counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrimOptions {
    /// Keep every column whose centre is within this many blocks of this block column
    /// (`(x, z, radius)`). Default none.
    pub keep_radius: Option<(i64, i64, u32)>,
    /// Keep these areas whole. Default none.
    pub keep_areas: Vec<AreaId>,
    /// Count what would be removed, remove nothing. Default `false`.
    pub dry_run: bool,
}

/// What [`World::trim`] removed, or with `dry_run` would remove.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TrimReport {
    /// Generated columns holding chunks that were looked at.
    pub columns_checked: u64,
    /// Columns removed (their chunks deleted, the distance graph marking them missing).
    pub columns_trimmed: u64,
    /// Chunks removed.
    pub chunks_removed: u64,
    /// Bytes of those chunks, as stored.
    pub bytes_removed: u64,
    /// Columns kept because they differ from what the generator makes (changed by a player,
    /// or by anything else).
    pub columns_changed: u64,
    /// Columns kept by the options (radius, areas) or because they are loaded.
    pub columns_kept: u64,
    /// Areas written, one atomic batch each.
    pub batches: u64,
}

impl World {
    /// Removes the columns of dimension 0 that hold exactly what `terrain` generates for
    /// them: every stored chunk of the column (at any level, any height from chunk y −2,048
    /// to 2,047) is the generator's chunk byte for byte, no other chunk is stored and none
    /// lists an entity. Those columns were never changed, by a player or anything else; the
    /// distance graph marks them missing, so a server generates them again, the same, when a
    /// player comes near. Loaded columns and those [`TrimOptions`] keeps are left.
    ///
    /// Each area is one atomic save (its chunks' deletions and the distance graph), so a trim
    /// cut off leaves whole areas trimmed or not. With [`TrimOptions::dry_run`] it counts
    /// exactly what a real run removes and writes nothing. Refused on a world shared by
    /// several servers (the others' distance graphs would list the columns still).
    pub fn trim(&mut self, terrain: &Terrain, options: &TrimOptions) -> Result<TrimReport> {
        if let Some(server) = self.tiered().server() {
            return Err(Error::TrimShared(server.to_string()));
        }
        let ids = terrain.ids(self.schema()).ok_or(Error::TerrainMismatch)?;
        let areas = self.areas_holding_chunks()?;
        let mut report = TrimReport::default();
        for area in areas {
            let snap = self.store().snapshot()?;
            let mut columns: BTreeMap<ColumnPos, Vec<(ChunkPos, Vec<u8>)>> = BTreeMap::new();
            for (level, key, o) in area_chunk_objects(&*snap, 0, area)? {
                for (pos, bytes) in chunks_of(level, &key, &o.data)? {
                    let col = ColumnPos::new(pos.x as i32, pos.z as i32);
                    columns.entry(col).or_default().push((pos, bytes.to_vec()));
                }
            }
            drop(snap);
            let area_kept =
                options.keep_areas.contains(&area) || self.tiered().is_area_loaded(0, area);
            let mut trim = Vec::new();
            for (col, mut stored) in columns {
                if !self.distance().contains(col) {
                    continue; // not generated: nothing a generator would make again
                }
                report.columns_checked += 1;
                if area_kept || in_radius(col, options) {
                    report.columns_kept += 1;
                    continue;
                }
                stored.sort_by_key(|(p, _)| p.y);
                let generated: Vec<(i64, Vec<u8>)> = terrain
                    .column(col, &ids)
                    .into_iter()
                    .map(|(y, c)| (y, c.encode(self.schema())))
                    .collect();
                let same = stored.len() == generated.len()
                    && stored.iter().zip(&generated).all(|((p, b), (y, g))| p.y == *y && b == g);
                if !same {
                    report.columns_changed += 1;
                    continue;
                }
                report.columns_trimmed += 1;
                report.chunks_removed += stored.len() as u64;
                report.bytes_removed += stored.iter().map(|(_, b)| b.len() as u64).sum::<u64>();
                trim.push((col, stored));
            }
            if trim.is_empty() || options.dry_run {
                continue;
            }
            let mut save = TickSave::new();
            for (col, stored) in &trim {
                for (pos, _) in stored {
                    save.delete_chunk(0, *pos);
                }
                self.distance().remove(*col)?;
            }
            self.mark_distance_dirty();
            let tick = self.tick();
            self.save_tick(tick, save)?;
            report.batches += 1;
        }
        Ok(report)
    }

    /// The areas of dimension 0 holding chunks, from one pass over the chunk tables' keys.
    fn areas_holding_chunks(&self) -> Result<BTreeSet<AreaId>> {
        let mut areas = BTreeSet::new();
        let (lo, hi) = terrane_section::keys::dimension_range(0);
        for level in Level::ALL {
            let range = match hi {
                Some(hi) => KeyRange::between(&lo, &hi),
                None => KeyRange::from(&lo),
            };
            for e in self.store().scan(level_table(level), range)? {
                let (k, _) = e?;
                areas.extend(area_of_cell(&k, level, 0));
            }
        }
        Ok(areas)
    }
}

/// Whether column `col`'s centre is within [`TrimOptions::keep_radius`].
fn in_radius(col: ColumnPos, options: &TrimOptions) -> bool {
    options.keep_radius.is_some_and(|(x, z, r)| {
        let (cx, cz) = (i64::from(col.x) * 16 + 8, i64::from(col.z) * 16 + 8);
        ((cx - x) as f64).hypot((cz - z) as f64) <= f64::from(r)
    })
}
