//! One area of a live world put back as a backup holds it (its chunks at every level, its
//! opacity tiles, its entities and its containers' records) in one atomic batch; and the
//! blocks of a box.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{SystemTime, UNIX_EPOCH};

use terrane_backup::BackupContents;
use terrane_chunk::{ChunkView, Uuid};
use terrane_cluster::{ClusterView, Scale};
use terrane_lease::{Leases, area_precondition};
use terrane_section::keys::{self, Level};
use terrane_section::{AreaId, ChunkPos, ColumnPos};
use terrane_snapshot::BlockBox;
use terrane_store::{Batch, Object, ReadView, tables};

use crate::area_scan::{area_chunk_objects, area_of_cell, chunks_of, level_table};
use crate::error::{Error, Result};
use crate::game::container_in_area;
use crate::world::World;

/// What [`World::restore_area`] replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AreaRestoreReport {
    /// The area.
    pub area: AreaId,
    /// Objects of the area the world held before (chunk objects at every level, opacity
    /// tiles, entities).
    pub objects_before: u64,
    /// Objects written from the backup.
    pub objects_written: u64,
    /// Bytes of their values.
    pub bytes_written: u64,
    /// Objects of the area the backup does not hold, removed.
    pub objects_removed: u64,
    /// Objects that already held the backup's bytes and version (unchanged).
    pub objects_unchanged: u64,
    /// Columns generated since the backup (its distance graph lists them missing): listed
    /// missing again, so a server generates them again instead of showing them empty. The
    /// area's columns get back the backup's marks, in the same batch.
    pub columns_regenerated: u64,
}

/// An area's objects: by table and key.
type AreaObjects = BTreeMap<(String, Vec<u8>), Object>;

/// The entities a chunk-table object's chunks list.
fn entity_refs(level: Level, key: &[u8], bytes: &[u8], out: &mut BTreeSet<Uuid>) -> Result<()> {
    for (_, chunk) in chunks_of(level, key, bytes)? {
        out.extend(ChunkView::parse(chunk)?.entities().iter().copied());
    }
    Ok(())
}

/// The world's objects of `area` (dimension `dim`): chunk objects ([`area_chunk_objects`]),
/// opacity tiles,
/// entities keyed by the area, and the single-server entities its chunks list.
fn live_objects(view: &dyn ReadView, dim: u64, area: AreaId) -> Result<AreaObjects> {
    let mut out = AreaObjects::new();
    let mut refs = BTreeSet::new();
    for (level, k, o) in area_chunk_objects(view, dim, area)? {
        entity_refs(level, &k, &o.data, &mut refs)?;
        out.insert((level_table(level).to_string(), k), o);
    }
    let (ax, az) = (i64::from(area.x), i64::from(area.z));
    for tx in ax * 4..ax * 4 + 4 {
        for tz in az * 4..az * 4 + 4 {
            let k = keys::column_key(dim, tx * 4, tz * 4);
            if let Some(o) = view.get(tables::OPACITY_MAP, &k)? {
                out.insert((tables::OPACITY_MAP.to_string(), k.to_vec()), o);
            }
        }
    }
    let containers = [crate::game::CONTAINER_PREFIX, &dim.to_be_bytes()].concat();
    for e in view.scan_prefix(tables::WORLD_PROPERTIES, &containers)? {
        let (k, o) = e?;
        if container_in_area(&k, dim, area) {
            out.insert((tables::WORLD_PROPERTIES.to_string(), k), o);
        }
    }
    for e in view.scan_prefix(tables::ENTITY, &area.to_bytes())? {
        let (k, o) = e?;
        out.insert((tables::ENTITY.to_string(), k), o);
    }
    for uuid in refs {
        if let Some(o) = view.get(tables::ENTITY, &uuid)? {
            out.insert((tables::ENTITY.to_string(), uuid.to_vec()), o);
        }
    }
    Ok(out)
}

/// The backup's objects of `area` (dimension `dim`), chosen as [`live_objects`] chooses.
fn backup_objects(backup: &BackupContents<'_>, dim: u64, area: AreaId) -> Result<AreaObjects> {
    let mut out = AreaObjects::new();
    let mut refs = BTreeSet::new();
    let take = |table: &str, key: &[u8], out: &mut AreaObjects| -> Result<Object> {
        let o = backup.get(table, key)?.expect("listed by the backup");
        out.insert((table.to_string(), key.to_vec()), o.clone());
        Ok(o)
    };
    for level in Level::ALL {
        let table = level_table(level);
        let mine: Vec<Vec<u8>> = backup
            .keys(table)?
            .filter(|(k, _)| area_of_cell(k, level, dim) == Some(area))
            .map(|(k, _)| k.to_vec())
            .collect();
        for k in mine {
            let o = take(table, &k, &mut out)?;
            entity_refs(level, &k, &o.data, &mut refs)?;
        }
    }
    let tiles: Vec<Vec<u8>> = backup
        .keys(tables::OPACITY_MAP)?
        .filter(|(k, _)| {
            keys::parse_column_key(k).is_some_and(|(d, tx, tz)| {
                d == dim && AreaId::new((tx >> 2) as i32, (tz >> 2) as i32) == area
            })
        })
        .map(|(k, _)| k.to_vec())
        .collect();
    let prefix = area.to_bytes();
    let entities: Vec<Vec<u8>> = backup
        .keys(tables::ENTITY)?
        .filter(|(k, _)| k.starts_with(&prefix) || (k.len() == 16 && refs.contains(*k)))
        .map(|(k, _)| k.to_vec())
        .collect();
    let containers: Vec<Vec<u8>> = backup
        .keys(tables::WORLD_PROPERTIES)?
        .filter(|(k, _)| container_in_area(k, dim, area))
        .map(|(k, _)| k.to_vec())
        .collect();
    for k in containers {
        take(tables::WORLD_PROPERTIES, &k, &mut out)?;
    }
    for k in tiles {
        take(tables::OPACITY_MAP, &k, &mut out)?;
    }
    for k in entities {
        take(tables::ENTITY, &k, &mut out)?;
    }
    Ok(out)
}

/// What [`World::restore_box`] changed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BoxRestoreReport {
    /// The box.
    pub bbox: BlockBox,
    /// Chunks the box touches.
    pub chunks: u64,
    /// Of them, chunks written (a block differed from the backup).
    pub chunks_written: u64,
    /// Blocks set back to the backup's.
    pub blocks_changed: u64,
}

/// Chunk `pos` of dimension 0 as `backup` holds it, at whatever level.
fn backup_chunk(backup: &BackupContents<'_>, pos: ChunkPos) -> Result<Option<Vec<u8>>> {
    for level in Level::ALL {
        let key = keys::chunk_key(0, pos, level);
        let Some(o) = backup.get(level_table(level), &key)? else { continue };
        match Scale::from_level(level) {
            None => return Ok(Some(o.data)),
            Some(scale) => {
                if let Some(c) = ClusterView::with_scale(&o.data, scale)?.get_pos(pos) {
                    return Ok(Some(c.to_vec()));
                }
            }
        }
    }
    Ok(None)
}

impl World {
    /// Refuses ([`Error::AreaBusy`]) an area of `dim` with chunks loaded, or that another
    /// server holds a live lease on; returns its lease as read, to fence the restore's batch.
    fn area_free(&self, dim: u64, area: AreaId) -> Result<Option<terrane_lease::Lease>> {
        if self.tiered().is_area_loaded(dim, area) {
            return Err(Error::AreaBusy { area, why: "chunks of it are loaded".into() });
        }
        let me = self.tiered().server().unwrap_or("restore").to_string();
        let leases = Leases::new(std::sync::Arc::clone(self.tiered().store()), &me, 1)?;
        let lease = leases.get(area)?;
        if let Some(l) = &lease {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
            if l.is_live(now as u64) && l.owner != me {
                return Err(Error::AreaBusy {
                    area,
                    why: format!("server {} holds its lease", l.owner),
                });
            }
        }
        Ok(lease)
    }

    /// The columns of `area` (dimension 0) whose mark in this world's distance graph differs
    /// from the mark the backup's graph gives them: `(column, generated)`.
    fn graph_flips(
        &self,
        backup: &BackupContents<'_>,
        area: AreaId,
    ) -> Result<Vec<(ColumnPos, bool)>> {
        let then = match backup.get(tables::WORLD_PROPERTIES, self.distance_key())? {
            Some(o) => terrane_distance::DistanceGraph::from_bytes(&o.data)?,
            None => terrane_distance::DistanceGraph::default(),
        };
        let mut flips = Vec::new();
        for dx in 0..16 {
            for dz in 0..16 {
                let col = ColumnPos::new(area.x * 16 + dx, area.z * 16 + dz);
                let generated = then.contains(col);
                if self.distance().contains(col) != generated {
                    flips.push((col, generated));
                }
            }
        }
        Ok(flips)
    }

    /// Sets every block of `bbox` (dimension 0) back to what `backup` holds there, in one
    /// atomic tick save of the chunks it touches (chunks the backup lacks count as air).
    /// Blocks only: entities and block entities inside the box are left as they are (restore
    /// the whole area for those). Refused, as [`restore_area`](Self::restore_area) is, while
    /// an area the box touches is loaded or leased by another server.
    pub fn restore_box(
        &mut self,
        backup: &BackupContents<'_>,
        bbox: BlockBox,
    ) -> Result<BoxRestoreReport> {
        let regions: Vec<_> = bbox.sub_regions().collect();
        let areas: BTreeSet<AreaId> = regions.iter().map(|r| AreaId::of_chunk(r.chunk)).collect();
        for area in &areas {
            self.area_free(0, *area)?;
        }
        let mut report = BoxRestoreReport {
            bbox,
            chunks: regions.len() as u64,
            chunks_written: 0,
            blocks_changed: 0,
        };
        let mut save = terrane_cluster::TickSave::new();
        for r in &regions {
            let old = match backup_chunk(backup, r.chunk)? {
                Some(b) => terrane_chunk::Chunk::decode(&b, self.schema())?,
                None => terrane_chunk::Chunk::new(self.air()),
            };
            let mut live =
                self.get_chunk(r.chunk)?.unwrap_or_else(|| terrane_chunk::Chunk::new(self.air()));
            let mut changed = 0;
            for c in 0..r.volume() {
                let (x, y, z) = r.local(c);
                let want = old.get(x, y, z);
                if live.get(x, y, z) != want {
                    live.set(x, y, z, want);
                    changed += 1;
                }
            }
            if changed > 0 {
                report.chunks_written += 1;
                report.blocks_changed += changed;
                save.put_chunk(0, r.chunk, live.encode(self.schema()));
            }
        }
        if report.chunks_written > 0 {
            let tick = self.tick();
            self.save_tick(tick, save)?;
        }
        Ok(report)
    }
}

impl World {
    /// Puts `area` of dimension `dim` back as `backup` holds it, while the world runs: its
    /// chunks at every level, its opacity tiles, the entities keyed by the area, the
    /// single-server entities its chunks list and its containers' records ([`crate::game`]),
    /// in **one atomic synced batch** (the area is
    /// the world before or after, never a mix). Objects of the area the backup does not hold
    /// are removed.
    ///
    /// Refused ([`Error::AreaBusy`]) while a chunk of the area is loaded, or while another
    /// server holds a live lease on it; the batch is fenced on the lease record as read, so
    /// a server taking the area meanwhile makes it fail whole. Every piece is checked first
    /// (a damaged backup writes nothing).
    pub fn restore_area(
        &mut self,
        backup: &BackupContents<'_>,
        dim: u64,
        area: AreaId,
    ) -> Result<AreaRestoreReport> {
        let lease = self.area_free(dim, area)?;
        let want = backup_objects(backup, dim, area)?;
        // The distance graph's marks of the area's columns go back too: a column generated
        // since the backup is generated again when needed, not left empty.
        let flips = if dim == 0 { self.graph_flips(backup, area)? } else { Vec::new() };
        let snap = self.store().snapshot()?;
        let have = live_objects(&*snap, dim, area)?;
        drop(snap);
        let mut report = AreaRestoreReport {
            area,
            objects_before: have.len() as u64,
            objects_written: 0,
            bytes_written: 0,
            objects_removed: 0,
            objects_unchanged: 0,
            columns_regenerated: 0,
        };
        let mut batch = Batch::new();
        for ((t, k), o) in &have {
            batch.expect(t, k.clone(), Some(o.version));
            if !want.contains_key(&(t.clone(), k.clone())) {
                batch.delete(t, k.clone());
                report.objects_removed += 1;
            }
        }
        for ((t, k), o) in want {
            if have.get(&(t.clone(), k.clone())) == Some(&o) {
                report.objects_unchanged += 1;
                continue;
            }
            if !have.contains_key(&(t.clone(), k.clone())) {
                batch.expect(&t, k.clone(), None);
            }
            report.objects_written += 1;
            report.bytes_written += o.data.len() as u64;
            batch.put(&t, k, o.version, o.data);
        }
        for &(col, generated) in &flips {
            if generated {
                self.distance().complete(col)?
            } else {
                self.distance().remove(col)?
            };
        }
        if !flips.is_empty() {
            let graph = self.distance().to_bytes();
            let version = i64::try_from(self.tick()).unwrap_or(i64::MAX);
            batch.put(tables::WORLD_PROPERTIES, self.distance_key().to_vec(), version, graph);
            report.columns_regenerated = flips.iter().filter(|(_, g)| !g).count() as u64;
        }
        let mut batch = batch.synced();
        let pre = area_precondition(area, lease.map(|l| l.epoch));
        batch.expect(&pre.table, pre.key, pre.version);
        if let Err(e) = self.store().write(&batch) {
            for &(col, generated) in &flips {
                let _ = if generated {
                    self.distance().remove(col)
                } else {
                    self.distance().complete(col)
                };
            }
            return Err(e.into());
        }
        if !flips.is_empty() {
            self.note_graph_saved();
        }
        Ok(report)
    }
}
