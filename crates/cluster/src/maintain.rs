//! Demotion in the tiered store: a maintenance pass moves L0 chunks unloaded for `x` ticks
//! into their L1 clusters and L1 clusters idle for `y` ticks or beyond `z` blocks from every
//! player into their L2 clusters ([`TieredStore::maintain`]).

use std::collections::BTreeMap;

use terrane_section::keys::{self, Level};
use terrane_section::{AreaId, ChunkPos, GridPos};
use terrane_store::{Object, Store, tables};

use crate::container::{ClusterBuilder, ClusterView, Scale};
use crate::error::{Error, Result};
use crate::tiered::{TieredStore, tick_version};
use crate::txn::Txn;

/// What a maintenance pass did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct MaintenanceReport {
    /// Chunks moved from L0 into L1 clusters.
    pub l0_to_l1: usize,
    /// L1 clusters merged into L2 clusters.
    pub l1_to_l2: usize,
    /// Atomic batches written (one per destination cluster).
    pub batches: usize,
}

/// The game tick an object's version records (0 for a negative version).
fn version_tick(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

impl<S: Store> TieredStore<S> {
    /// Whether L1 cluster `cell` of `dim` is beyond `z` blocks from every player.
    fn far_from_players(&self, dim: u64, cell: ChunkPos) -> bool {
        let Some(players) = &self.players else { return false };
        let z = i128::from(self.config.l1_distance_blocks);
        let lo = |c: i64| i128::from(c) * 64;
        players.iter().filter(|p| p.dim == dim).all(|p| {
            let axis = |c: i64, v: i64| {
                let (a, b) = (lo(c), lo(c) + 63);
                let v = i128::from(v);
                if v < a {
                    a - v
                } else if v > b {
                    v - b
                } else {
                    0
                }
            };
            let (dx, dy, dz) = (axis(cell.x, p.x), axis(cell.y, p.y), axis(cell.z, p.z));
            // Compare squared, saturating: beyond 2^63 blocks everything is far.
            let d2 = dx
                .saturating_mul(dx)
                .saturating_add(dy.saturating_mul(dy))
                .saturating_add(dz.saturating_mul(dz));
            d2 > z * z
        })
    }

    /// One maintenance pass at game tick `tick`: L0 chunks unloaded for `x` ticks move into
    /// their L1 clusters, then L1 clusters idle for `y` ticks or beyond `z` blocks from every
    /// player merge into their L2 clusters. Each destination cluster is one atomic batch.
    pub fn maintain(&mut self, tick: u64) -> Result<MaintenanceReport> {
        self.see(tick);
        let mut report = MaintenanceReport::default();
        // L0 → L1, grouped by destination cluster.
        let mut groups: BTreeMap<(u64, ChunkPos), Vec<(ChunkPos, Object)>> = BTreeMap::new();
        for (dim, pos, obj) in self.scan_level(Level::L0)? {
            if self.loaded.contains(&(dim, pos)) || !self.in_scope(AreaId::of_chunk(pos)) {
                continue;
            }
            let since = self
                .unloaded_at
                .get(&(dim, pos))
                .copied()
                .unwrap_or(0)
                .max(version_tick(obj.version));
            if tick.saturating_sub(since) >= self.config.l0_idle_ticks {
                let obj = Object { version: tick_version(since), data: obj.data };
                groups.entry((dim, Scale::Cube4.cluster_of(pos))).or_default().push((pos, obj));
            }
        }
        for ((dim, cell), chunks) in groups {
            let mut txn = Txn::new(&self.store, &self.fence);
            let key = keys::cell_key(dim, cell);
            let c1 = txn.get(tables::CHUNK_L1, &key)?;
            let view = match &c1 {
                Some(c) => Some(ClusterView::with_scale(&c.data, Scale::Cube4)?),
                None => None,
            };
            let mut b = match &view {
                Some(v) => ClusterBuilder::from_view(v),
                None => ClusterBuilder::new(Scale::Cube4),
            };
            let mut version = c1.as_ref().map_or(i64::MIN, |c| c.version);
            for (pos, obj) in &chunks {
                b.insert(Scale::Cube4.local_index(*pos), obj.data.as_slice()).map_err(|_| {
                    Error::Inconsistent(format!(
                        "chunk {pos:?} of dimension {dim} is in both L0 and L1"
                    ))
                })?;
                version = version.max(obj.version);
                txn.delete(tables::CHUNK_L0, &keys::chunk_key(dim, *pos, Level::L0));
            }
            Self::put_cluster(&mut txn, &key, b, version)?;
            txn.commit(false)?;
            report.batches += 1;
            report.l0_to_l1 += chunks.len();
            for (pos, _) in &chunks {
                self.unloaded_at.remove(&(dim, *pos));
            }
        }
        // L1 → L2, grouped by destination cluster.
        let mut groups: BTreeMap<(u64, ChunkPos), Vec<(ChunkPos, Object)>> = BTreeMap::new();
        for (dim, cell, obj) in self.scan_level(Level::L1)? {
            let first = Scale::Cube4.chunk_pos(cell, 0);
            if first.is_none_or(|p| !self.in_scope(AreaId::of_chunk(p))) {
                continue;
            }
            let idle = tick.saturating_sub(version_tick(obj.version)) >= self.config.l1_idle_ticks;
            if idle || self.far_from_players(dim, cell) {
                groups.entry((dim, cell.section(2))).or_default().push((cell, obj));
            }
        }
        for ((dim, cell2), clusters) in groups {
            let mut txn = Txn::new(&self.store, &self.fence);
            let key = keys::cell_key(dim, cell2);
            let c2 = txn.get(tables::CHUNK_L2, &key)?;
            let view = match &c2 {
                Some(c) => Some(ClusterView::with_scale(&c.data, Scale::Cube16)?),
                None => None,
            };
            let mut b = match &view {
                Some(v) => ClusterBuilder::from_view(v),
                None => ClusterBuilder::new(Scale::Cube16),
            };
            let mut version = c2.as_ref().map_or(i64::MIN, |c| c.version);
            let mut views = Vec::with_capacity(clusters.len());
            for (cell, obj) in &clusters {
                views.push((*cell, ClusterView::with_scale(&obj.data, Scale::Cube4)?));
                version = version.max(obj.version);
            }
            for (cell, v1) in &views {
                for (j, blob) in v1.iter() {
                    let p = Scale::Cube4.chunk_pos(*cell, j).ok_or_else(|| {
                        Error::Inconsistent(format!("L1 cluster {cell:?} is outside the world"))
                    })?;
                    b.insert(Scale::Cube16.local_index(p), blob).map_err(|_| {
                        Error::Inconsistent(format!(
                            "chunk {p:?} of dimension {dim} is in both L1 and L2"
                        ))
                    })?;
                }
                txn.delete(tables::CHUNK_L1, &keys::cell_key(dim, *cell));
            }
            Self::put_cluster(&mut txn, &key, b, version)?;
            txn.commit(false)?;
            report.batches += 1;
            report.l1_to_l2 += clusters.len();
        }
        Ok(report)
    }
}
