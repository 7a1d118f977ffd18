//! A world's columns one Minecraft region (32 × 32 columns) at a time: what the Java and
//! Bedrock exports read. They hold one region's chunks and column records, never the
//! world's, so their memory does not grow with the world.
//!
//! The regions of a dimension are those whose columns hold a stored chunk
//! ([`TieredStore::column_tiles`](terrane_cluster::TieredStore::column_tiles), a seek per
//! occupied cube of 32 chunks) or a column record under one of the given `worldProperties`
//! prefixes (one streaming scan of those records). Not a snapshot: a world written while it
//! is read may show a column half old, half new; the commands that export open the world
//! alone.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use terrane_cluster::ColumnTile;
use terrane_section::ColumnPos;
use terrane_store::{KeyRange, tables};

use crate::imported::{column_record_key, parse_column_record_key};
use crate::{Result, World};

/// A region is `2^5` columns on a side.
const REGION_SHIFT: u32 = 5;

/// A region's stored chunks by column: `(y, bytes)` of each, in ascending `y`.
pub(crate) type RegionChunks = BTreeMap<ColumnPos, Vec<(i64, Vec<u8>)>>;

/// The regions of one dimension that hold chunks or column records.
pub(crate) struct DimRegions<'w> {
    world: &'w World,
    dim: u64,
    /// Region `(x >> 5, z >> 5)` → its chunks' tile (`None`: column records only).
    regions: BTreeMap<(i64, i64), Option<ColumnTile>>,
}

/// Every dimension that holds a stored chunk or a column record under one of `prefixes`,
/// with its regions, in dimension order.
pub(crate) fn world_regions<'w>(
    world: &'w World,
    prefixes: &[&[u8]],
) -> Result<BTreeMap<u64, DimRegions<'w>>> {
    let mut dims: BTreeMap<u64, DimRegions<'w>> = BTreeMap::new();
    for dim in world.tiered().chunk_dimensions()? {
        dims.insert(dim, DimRegions::chunks_only(world, dim)?);
    }
    for prefix in prefixes {
        for e in world.store().scan_prefix(tables::WORLD_PROPERTIES, prefix)? {
            let (k, _) = e?;
            let Some((dim, pos)) = parse_column_record_key(prefix, &k) else { continue };
            let d = dims.entry(dim).or_insert_with(|| DimRegions {
                world,
                dim,
                regions: BTreeMap::new(),
            });
            d.regions.entry(region_of(pos)).or_insert(None);
        }
    }
    Ok(dims)
}

/// The region holding column `pos`.
fn region_of(pos: ColumnPos) -> (i64, i64) {
    (i64::from(pos.x) >> REGION_SHIFT, i64::from(pos.z) >> REGION_SHIFT)
}

impl<'w> DimRegions<'w> {
    /// The regions of dimension `dim` holding chunks or records under `prefixes`.
    pub(crate) fn of(world: &'w World, dim: u64, prefixes: &[&[u8]]) -> Result<Self> {
        let mut d = Self::chunks_only(world, dim)?;
        for prefix in prefixes {
            for e in world.store().scan_prefix(tables::WORLD_PROPERTIES, prefix)? {
                let (k, _) = e?;
                if let Some((kd, pos)) = parse_column_record_key(prefix, &k)
                    && kd == dim
                {
                    d.regions.entry(region_of(pos)).or_insert(None);
                }
            }
        }
        Ok(d)
    }

    fn chunks_only(world: &'w World, dim: u64) -> Result<Self> {
        let regions = world
            .tiered()
            .column_tiles(dim, REGION_SHIFT)?
            .into_iter()
            .map(|t| ((t.x, t.z), Some(t)))
            .collect();
        Ok(Self { world, dim, regions })
    }

    /// The dimension.
    pub(crate) fn dim(&self) -> u64 {
        self.dim
    }

    /// The regions, in `(x, z)` order.
    pub(crate) fn regions(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.regions.keys().copied()
    }

    /// The columns of `region` holding a stored chunk (read, not kept).
    pub(crate) fn chunk_columns(&self, region: (i64, i64)) -> Result<BTreeSet<ColumnPos>> {
        let mut out = BTreeSet::new();
        self.each_chunk(region, |pos, _, _| {
            out.insert(pos);
            Ok(())
        })?;
        Ok(out)
    }

    /// The stored chunks of `region`, by column.
    pub(crate) fn chunks(&self, region: (i64, i64)) -> Result<RegionChunks> {
        let mut out = RegionChunks::new();
        self.each_chunk(region, |pos, y, bytes| {
            out.entry(pos).or_default().push((y, bytes.to_vec()));
            Ok(())
        })?;
        for chunks in out.values_mut() {
            chunks.sort_unstable_by_key(|c| c.0);
        }
        Ok(out)
    }

    fn each_chunk(
        &self,
        region: (i64, i64),
        mut f: impl FnMut(ColumnPos, i64, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let Some(Some(tile)) = self.regions.get(&region) else { return Ok(()) };
        let dim = self.dim;
        self.world.tiered().tile_chunks(tile, |pos, _, bytes| {
            let (Ok(x), Ok(z)) = (i32::try_from(pos.x), i32::try_from(pos.z)) else {
                return Err(crate::Refusal::BeyondMinecraft { chunk: pos, dimension: dim }.into());
            };
            f(ColumnPos::new(x, z), pos.y, bytes)
        })
    }

    /// The column records of `region` under `prefix`, in key order: one key range.
    pub(crate) fn records(
        &self,
        prefix: &[u8],
        region: (i64, i64),
    ) -> Result<BTreeMap<ColumnPos, Vec<u8>>> {
        let corner = |d: i64| {
            let (Ok(x), Ok(z)) = (
                i32::try_from((region.0 << REGION_SHIFT) + d),
                i32::try_from((region.1 << REGION_SHIFT) + d),
            ) else {
                return None;
            };
            Some(ColumnPos::new(x, z))
        };
        let (Some(lo), Some(hi)) = (corner(0), corner((1 << REGION_SHIFT) - 1)) else {
            return Ok(BTreeMap::new());
        };
        // The region's columns are one contiguous range of 2D Morton keys (keys.md).
        let range = KeyRange {
            start: Bound::Included(column_record_key(prefix, self.dim, lo)),
            end: Bound::Included(column_record_key(prefix, self.dim, hi)),
        };
        let mut out = BTreeMap::new();
        for e in self.world.store().scan(tables::WORLD_PROPERTIES, range)? {
            let (k, o) = e?;
            if let Some((d, pos)) = parse_column_record_key(prefix, &k)
                && d == self.dim
                && region_of(pos) == region
            {
                out.insert(pos, o.data);
            }
        }
        Ok(out)
    }
}
