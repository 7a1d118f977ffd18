//! The hot / warm / cold tiered chunk store: its state, opening, reads, promotion to L0
//! and checks. Tick saves are in `tick_save.rs`, demotion in `maintain.rs`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use terrane_chunk::{Chunk, ChunkView, Schema, SchemaBytes, Uuid};
use terrane_section::keys::{self, Level};
use terrane_section::{AreaId, ChunkPos};
use terrane_store::{Batch, KeyRange, Object, Parts, Precondition, ReadView, Store, tables};

use crate::cluster_part;
use crate::config::{TierConfig, TieredStoreBuilder};
use crate::container::{ClusterBuilder, ClusterView, Scale};
use crate::error::{Error, Result};
use crate::opacity::OpacityTile;
use crate::rewrite::chunks_of;
use crate::tick_save::TickSave;
use crate::tiles::{ColumnTile, VERIFY_TILE_SHIFT};
use crate::txn::Txn;

/// The `worldMeta` property holding the last saved game tick (`u64` LE). In a world shared
/// by several servers each server keeps its own, `gameTick/<server id>`
/// ([`TieredStoreBuilder::server`]); the world's tick is the largest of them.
pub const META_TICK: &str = "gameTick";

/// The `worldMeta` key of a server's game tick in a shared world (see [`META_TICK`]).
pub fn tick_key(server: Option<&str>) -> String {
    match server {
        Some(id) => format!("{META_TICK}/{id}"),
        None => META_TICK.to_string(),
    }
}

/// The world's game tick: the largest of `gameTick` (a single server's) and every server's
/// `gameTick/<id>` in `worldMeta`; 0 for a new world.
pub fn world_tick<S: ReadView + ?Sized>(store: &S) -> Result<u64> {
    let mut tick = 0;
    let per_server = format!("{META_TICK}/");
    for e in store.scan_prefix(tables::WORLD_META, META_TICK.as_bytes())? {
        let (k, o) = e?;
        if k != META_TICK.as_bytes() && !k.starts_with(per_server.as_bytes()) {
            continue;
        }
        let b: [u8; 8] = o.data.as_slice().try_into().map_err(|_| {
            Error::CorruptMeta(format!(
                "{} is {} bytes, not 8",
                String::from_utf8_lossy(&k),
                o.data.len()
            ))
        })?;
        tick = tick.max(u64::from_le_bytes(b));
    }
    Ok(tick)
}

/// A chunk's address: dimension and cubic chunk position.
pub type ChunkAddr = (u64, ChunkPos);

/// A player's position for the distance rule of demotion.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct PlayerPos {
    /// The player's dimension.
    pub dim: u64,
    /// Block x.
    pub x: i64,
    /// Block y.
    pub y: i64,
    /// Block z.
    pub z: i64,
}

impl PlayerPos {
    /// A player in `dim` at block `(x, y, z)`.
    pub const fn new(dim: u64, x: i64, y: i64, z: i64) -> Self {
        Self { dim, x, y, z }
    }
}

/// Counts and stored bytes per level, from [`TieredStore::verify`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LevelStats {
    /// Chunks at L0, L1, L2.
    pub chunks: [usize; 3],
    /// Keys at L0, L1, L2 (chunks, clusters, clusters).
    pub keys: [usize; 3],
    /// Value bytes at L0, L1, L2 (keys excluded).
    pub bytes: [u64; 3],
}

/// The table holding `level`.
pub(crate) fn table_of(level: Level) -> &'static str {
    match level {
        Level::L0 => tables::CHUNK_L0,
        Level::L1 => tables::CHUNK_L1,
        Level::L2 => tables::CHUNK_L2,
    }
}

/// The version recording game tick `tick` (saturating at `i64::MAX`).
pub(crate) fn tick_version(tick: u64) -> i64 {
    i64::try_from(tick).unwrap_or(i64::MAX)
}

/// Where a chunk was found.
pub(crate) struct Found {
    /// The level holding it.
    pub(crate) level: Level,
    /// Its bytes (chunk v1).
    pub(crate) bytes: Vec<u8>,
}

/// The tiered chunk store: hot chunks one per key (`chunkl0`), warm ones in 4³ clusters
/// (`chunkl1`), cold ones in 16³ clusters (`chunkl2`), on any [`Store`].
///
/// - Reads ([`get_chunk`](TieredStore::get_chunk)) look at L0, then L1, then L2, and read one
///   chunk out of a cluster without moving it.
/// - A write ([`save_tick`](TieredStore::save_tick), [`put_chunk`](TieredStore::put_chunk))
///   or a load ([`load_chunk`](TieredStore::load_chunk): a player has the chunk in
///   simulation distance) promotes the chunk to L0. From L2 it splits the cluster path: the
///   chunk's 4³ neighbourhood leaves the L2 cluster for its L1 cluster and the chunk itself
///   goes to L0, in one atomic batch.
/// - [`maintain`](TieredStore::maintain) demotes: L0 → L1 after `x` ticks unloaded, L1 → L2
///   after `y` ticks without a load or beyond `z` blocks from every player.
///
/// Every chunk is at exactly one level at every instant: each move is one batch that
/// deletes it from the old level and writes it to the new, so a crash keeps either.
///
/// Access times: an L0 object's version is the tick of its last write or promotion and an L1
/// cluster's the newest last access (write, promotion, unload) of the chunks demoted into it,
/// so they survive a restart. A chunk's unload clock starts at the later of its version and
/// its unload tick; unload ticks are kept in memory (one entry per chunk unloaded and not yet
/// moved, none per chunk saved), and after a restart a chunk counts as unloaded since its
/// version, which only makes it colder sooner.
pub struct TieredStore<S> {
    /// The backend.
    pub(crate) store: S,
    schema: Schema,
    pub(crate) config: TierConfig,
    /// Whether each registered block is opaque, by id.
    pub(crate) opaque: Vec<bool>,
    /// The chunks players have loaded.
    pub(crate) loaded: HashSet<ChunkAddr>,
    /// When each chunk unloaded since it was last moved was unloaded, in game ticks (a saved
    /// chunk's clock is its L0 version).
    pub(crate) unloaded_at: HashMap<ChunkAddr, u64>,
    /// The latest player positions (`None`: never given).
    pub(crate) players: Option<Vec<PlayerPos>>,
    tick: u64,
    /// Preconditions every batch of this store carries (its saves and its tier moves).
    pub(crate) fence: Vec<Precondition>,
    /// The areas this store may write (`None`: every area).
    areas: Option<BTreeSet<AreaId>>,
    /// This server's `worldMeta` tick key ([`tick_key`]).
    pub(crate) tick_key: String,
}

impl<S> std::fmt::Debug for TieredStore<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TieredStore")
            .field("config", &self.config)
            .field("loaded", &self.loaded.len())
            .field("unloaded", &self.unloaded_at.len())
            .field("tick", &self.tick)
            .finish_non_exhaustive()
    }
}

impl TieredStore<()> {
    /// A builder for a world with `schema`.
    pub fn builder(schema: Schema) -> TieredStoreBuilder {
        TieredStoreBuilder::new(schema)
    }
}

impl<S: Store> TieredStore<S> {
    /// Opens with the default configuration (see [`TieredStoreBuilder`]).
    pub fn open(store: S, schema: Schema) -> Result<Self> {
        TieredStoreBuilder::new(schema).open(store)
    }

    pub(crate) fn open_with(store: S, schema: Schema, config: TierConfig) -> Result<Self> {
        let (stored, versions) = crate::schema_meta::read_with_versions(&store)?;
        let mut write = true;
        if let Some(old) = stored {
            schema.check_extends(&old)?;
            write = old != schema;
        }
        if write {
            // Compare-and-set on the versions read: two servers of a shared world extending
            // the registries at once cannot both win (the loser's open fails; it reopens).
            let enc = schema.encode();
            let mut batch = Batch::new();
            for ((k, v), version) in SchemaBytes::KEYS
                .iter()
                .zip([enc.blocks, enc.components, enc.entities, enc.structures, enc.layout])
                .zip(&versions)
            {
                batch.expect(tables::WORLD_META, k.as_bytes().to_vec(), *version);
                let next = version.map_or(0, |v| v.saturating_add(1));
                batch.put(tables::WORLD_META, k.as_bytes().to_vec(), next, v);
            }
            store.write(&batch.synced())?;
        }
        let tick = world_tick(&store)?;
        let tick_key = tick_key(config.server.as_deref());
        let opaque = schema.blocks().names().map(|n| (config.opaque)(n)).collect();
        Ok(Self {
            store,
            schema,
            config,
            opaque,
            loaded: HashSet::new(),
            unloaded_at: HashMap::new(),
            players: None,
            tick,
            fence: Vec::new(),
            areas: None,
            tick_key,
        })
    }

    /// The backend.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Closes the tiered store and returns the backend (in-memory load state is dropped).
    pub fn into_store(self) -> S {
        self.store
    }

    /// The world's schema.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// The configuration.
    pub fn config(&self) -> &TierConfig {
        &self.config
    }

    /// The latest game tick seen (saved, loaded or maintained); after a restart, the last
    /// saved one.
    pub fn tick(&self) -> u64 {
        self.tick
    }

    /// Notes game tick `tick` as seen.
    pub(crate) fn see(&mut self, tick: u64) {
        self.tick = self.tick.max(tick);
    }

    /// Checks chunk bytes: they decode against the schema.
    pub(crate) fn check_chunk<'a>(&self, bytes: &'a [u8]) -> Result<ChunkView<'a>> {
        let view = ChunkView::parse(bytes)?;
        for b in view.palette_iter() {
            if !self.schema.has_block(b) {
                return Err(Error::UnknownBlock(b.0));
            }
        }
        view.components(&self.schema)?;
        Ok(view)
    }

    // ---- reads -------------------------------------------------------------------------

    /// Reads chunks `addrs` into `txn` a level at a time, one `multi_get` each: L0, then the
    /// L1 and L2 clusters of the chunks L0 lacks. Later reads of them (`find`, `promote`,
    /// `remove`) are answered from memory: a networked store pays three round trips at most,
    /// whatever the number of chunks. Returns the chunks L0 lacks.
    pub(crate) fn read_levels_ahead(
        txn: &mut Txn<'_, S>,
        addrs: &[ChunkAddr],
    ) -> Result<Vec<ChunkAddr>> {
        let l0: Vec<Vec<u8>> =
            addrs.iter().map(|&(dim, pos)| keys::chunk_key(dim, pos, Level::L0).to_vec()).collect();
        txn.prefetch(tables::CHUNK_L0, &l0)?;
        let mut missing = Vec::new();
        for (&addr, key) in addrs.iter().zip(&l0) {
            if txn.get(tables::CHUNK_L0, key)?.is_none() {
                missing.push(addr);
            }
        }
        if !missing.is_empty() {
            for (table, level) in [(tables::CHUNK_L1, Level::L1), (tables::CHUNK_L2, Level::L2)] {
                let mut clusters: Vec<Vec<u8>> = missing
                    .iter()
                    .map(|&(dim, pos)| keys::chunk_key(dim, pos, level).to_vec())
                    .collect();
                clusters.sort_unstable();
                clusters.dedup();
                txn.prefetch(table, &clusters)?;
            }
        }
        Ok(missing)
    }

    /// Reads through `store` what [`load_chunks`](Self::load_chunks) of `positions` of `dim`
    /// and the tick save after it read: their L0 objects, the L1 and L2 clusters of those L0
    /// lacks, and their opacity tiles. Changes nothing and needs no `TieredStore`, so it runs
    /// on any thread: on a store whose cache keeps what it read (a
    /// [`WritePipeline`](terrane_store::WritePipeline)), the load that follows costs no round
    /// trip ([`ReadAhead`](terrane_store::ReadAhead) runs it on a thread of its own).
    pub fn read_ahead_loads(store: &S, dim: u64, positions: &[ChunkPos]) -> Result<()> {
        let mut txn = Txn::new(store, &[]);
        let addrs: Vec<ChunkAddr> = positions.iter().map(|&p| (dim, p)).collect();
        Self::read_levels_ahead(&mut txn, &addrs)?;
        let mut tiles: Vec<Vec<u8>> =
            positions.iter().map(|p| keys::column_key(dim, p.x, p.z).to_vec()).collect();
        tiles.sort_unstable();
        tiles.dedup();
        txn.prefetch(tables::OPACITY_MAP, &tiles)
    }

    /// Chunk `pos` of `dim` as `txn` sees it, at the finest level holding it.
    pub(crate) fn find(txn: &Txn<'_, S>, dim: u64, pos: ChunkPos) -> Result<Option<Found>> {
        if let Some(o) = txn.get(tables::CHUNK_L0, &keys::chunk_key(dim, pos, Level::L0))? {
            return Ok(Some(Found { level: Level::L0, bytes: o.data }));
        }
        for scale in Scale::ALL {
            let key = keys::chunk_key(dim, pos, scale.level());
            let table = table_of(scale.level());
            // By parts: the offsets, then the chunk (not the whole cluster).
            let index = scale.local_index(pos);
            let first = cluster_part::first_ranges(scale, index);
            let mut then = |p: &Parts| cluster_part::blob_ranges(scale, index, p);
            let Some((a, b)) = txn.get_parts_then(table, &key, &first, &mut then)? else {
                continue;
            };
            let bytes = match cluster_part::chunk_from_parts(scale, index, &a, &b) {
                Some(found) => found,
                // The parts cannot tell: the whole cluster decides (and validates).
                None => match txn.get(table, &key)? {
                    Some(o) => {
                        ClusterView::with_scale(&o.data, scale)?.get(index).map(<[u8]>::to_vec)
                    }
                    None => None,
                },
            };
            if let Some(bytes) = bytes {
                return Ok(Some(Found { level: scale.level(), bytes }));
            }
        }
        Ok(None)
    }

    /// The bytes of chunk `pos` of `dim` and the level it is at; `None` when absent. Does not
    /// move the chunk.
    pub fn get_chunk_at(&self, dim: u64, pos: ChunkPos) -> Result<Option<(Level, Vec<u8>)>> {
        let txn = Txn::new(&self.store, &self.fence);
        Ok(Self::find(&txn, dim, pos)?.map(|f| (f.level, f.bytes)))
    }

    /// The bytes (chunk v1) of chunk `pos` of `dim`, `None` when absent. Looks at L0, then
    /// L1, then L2; does not move the chunk.
    pub fn get_chunk(&self, dim: u64, pos: ChunkPos) -> Result<Option<Vec<u8>>> {
        Ok(self.get_chunk_at(dim, pos)?.map(|(_, b)| b))
    }

    /// Chunk `pos` of `dim`, decoded with the world's schema.
    pub fn get_chunk_decoded(&self, dim: u64, pos: ChunkPos) -> Result<Option<Chunk>> {
        match self.get_chunk(dim, pos)? {
            Some(b) => Ok(Some(Chunk::decode(&b, &self.schema)?)),
            None => Ok(None),
        }
    }

    /// The level chunk `pos` of `dim` is at, `None` when absent.
    pub fn level_of(&self, dim: u64, pos: ChunkPos) -> Result<Option<Level>> {
        Ok(self.get_chunk_at(dim, pos)?.map(|(l, _)| l))
    }

    /// Entity `uuid`'s bytes (single-server layout: keyed by bare UUID).
    pub fn get_entity(&self, uuid: &Uuid) -> Result<Option<Vec<u8>>> {
        Ok(self.store.get(tables::ENTITY, uuid)?.map(|o| o.data))
    }

    /// Entity `uuid` of `area` (shared-world layout), `None` when it is not there.
    pub fn get_area_entity(&self, area: AreaId, uuid: &Uuid) -> Result<Option<Vec<u8>>> {
        Ok(self.store.get(tables::ENTITY, &keys::area_entity_key(area, uuid))?.map(|o| o.data))
    }

    /// Every entity stored in `area` (shared-world layout), in UUID order: one range scan.
    /// A server that takes an area over, or polls for hand-offs into its areas, reads this.
    pub fn area_entities(&self, area: AreaId) -> Result<Vec<(Uuid, Vec<u8>)>> {
        Self::area_entities_in(&self.store, area)
    }

    /// [`area_entities`](Self::area_entities) read from `store` directly: needs no
    /// `TieredStore`, so it runs on any thread (a shared world's balance pass, off the tick).
    pub fn area_entities_in(store: &S, area: AreaId) -> Result<Vec<(Uuid, Vec<u8>)>> {
        let mut out = Vec::new();
        for e in store.scan_prefix(tables::ENTITY, &area.to_bytes())? {
            let (k, o) = e?;
            if let Some((_, uuid)) = keys::parse_area_entity_key(&k) {
                out.push((uuid, o.data));
            }
        }
        Ok(out)
    }

    /// Limits the areas this store writes: tick saves, chunk loads and writes outside them
    /// fail with [`Error::OutOfScope`] (hand-off arrivals excepted), and
    /// [`maintain`](Self::maintain) leaves their chunks alone. A server sharing a world passes
    /// the areas it leases, and again whenever that changes. `None` (the default): every area.
    pub fn set_areas(&mut self, areas: Option<BTreeSet<AreaId>>) {
        self.areas = areas;
    }

    /// The areas this store writes ([`set_areas`](Self::set_areas)); `None`: every area.
    pub fn areas(&self) -> Option<&BTreeSet<AreaId>> {
        self.areas.as_ref()
    }

    /// Whether this store may write `area`.
    pub(crate) fn in_scope(&self, area: AreaId) -> bool {
        self.areas.as_ref().is_none_or(|a| a.contains(&area))
    }

    /// Refuses chunk `pos` when its area is not one this store may write.
    pub(crate) fn check_scope(&self, pos: ChunkPos) -> Result<()> {
        let area = AreaId::of_chunk(pos);
        if self.in_scope(area) { Ok(()) } else { Err(Error::OutOfScope { area }) }
    }

    // ---- promotion ---------------------------------------------------------------------

    /// Moves chunk `pos` to L0 inside `txn`, writing `new` (or keeping its bytes). Returns
    /// whether it existed.
    pub(crate) fn promote(
        txn: &mut Txn<'_, S>,
        dim: u64,
        pos: ChunkPos,
        new: Option<Vec<u8>>,
        tick: u64,
    ) -> Result<bool> {
        let v = tick_version(tick);
        let k0 = keys::chunk_key(dim, pos, Level::L0);
        if txn.get(tables::CHUNK_L0, &k0)?.is_some() {
            if let Some(new) = new {
                txn.put(tables::CHUNK_L0, &k0, v, new);
            }
            return Ok(true);
        }
        let k1 = keys::chunk_key(dim, pos, Level::L1);
        let i1 = Scale::Cube4.local_index(pos);
        let c1 = txn.get(tables::CHUNK_L1, &k1)?;
        if let Some(c1) = &c1 {
            let view = ClusterView::with_scale(&c1.data, Scale::Cube4)?;
            if let Some(blob) = view.get(i1) {
                let mut b = ClusterBuilder::from_view(&view);
                b.remove(i1);
                let bytes = new.unwrap_or_else(|| blob.to_vec());
                Self::put_cluster(txn, &k1, b, c1.version)?;
                txn.put(tables::CHUNK_L0, &k0, v, bytes);
                return Ok(true);
            }
        }
        let k2 = keys::chunk_key(dim, pos, Level::L2);
        if let Some(c2) = txn.get(tables::CHUNK_L2, &k2)? {
            let view2 = ClusterView::with_scale(&c2.data, Scale::Cube16)?;
            if view2.contains(Scale::Cube16.local_index(pos)) {
                // Split the path: the chunk's L1 cell leaves the L2 cluster for L1, the chunk
                // itself goes to L0.
                let cell1 = Scale::Cube4.cluster_of(pos);
                let mut b2 = ClusterBuilder::from_view(&view2);
                let view1 = match &c1 {
                    Some(c1) => Some(ClusterView::with_scale(&c1.data, Scale::Cube4)?),
                    None => None,
                };
                let mut b1 = match &view1 {
                    Some(v1) => ClusterBuilder::from_view(v1),
                    None => ClusterBuilder::new(Scale::Cube4),
                };
                let mut target = None;
                for j in 0..Scale::Cube4.chunk_count() as u16 {
                    let Some(p) = Scale::Cube4.chunk_pos(cell1, j) else { continue };
                    if let Some(blob) = b2.remove(Scale::Cube16.local_index(p)) {
                        if j == i1 {
                            target = Some(blob.into_owned());
                        } else {
                            b1.insert(j, blob).map_err(|_| {
                                Error::Inconsistent(format!(
                                    "chunk {p:?} of dimension {dim} is in both L1 and L2"
                                ))
                            })?;
                        }
                    }
                }
                let bytes = match new {
                    Some(n) => n,
                    None => target.unwrap_or_default(),
                };
                Self::put_cluster(txn, &k2, b2, c2.version)?;
                let v1 = c1.as_ref().map_or(v, |c| c.version.max(v));
                Self::put_cluster(txn, &k1, b1, v1)?;
                txn.put(tables::CHUNK_L0, &k0, v, bytes);
                return Ok(true);
            }
        }
        if let Some(new) = new {
            txn.put(tables::CHUNK_L0, &k0, v, new);
        }
        Ok(false)
    }

    /// Writes cluster `b` under `key` of its level's table, or deletes the key when empty.
    pub(crate) fn put_cluster(
        txn: &mut Txn<'_, S>,
        key: &[u8],
        b: ClusterBuilder<'_>,
        version: i64,
    ) -> Result<()> {
        let table = table_of(b.scale().level());
        if b.is_empty() {
            txn.delete(table, key);
        } else {
            txn.put(table, key, version, b.build()?);
        }
        Ok(())
    }

    /// Removes chunk `pos` from whatever level holds it, inside `txn`. Returns whether it
    /// existed.
    pub(crate) fn remove(txn: &mut Txn<'_, S>, dim: u64, pos: ChunkPos) -> Result<bool> {
        let k0 = keys::chunk_key(dim, pos, Level::L0);
        if txn.get(tables::CHUNK_L0, &k0)?.is_some() {
            txn.delete(tables::CHUNK_L0, &k0);
            return Ok(true);
        }
        for scale in Scale::ALL {
            let key = keys::chunk_key(dim, pos, scale.level());
            let table = table_of(scale.level());
            if let Some(c) = txn.get(table, &key)? {
                let view = ClusterView::with_scale(&c.data, scale)?;
                let i = scale.local_index(pos);
                if view.contains(i) {
                    let mut b = ClusterBuilder::from_view(&view);
                    b.remove(i);
                    Self::put_cluster(txn, &key, b, c.version)?;
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// A player loads chunk `pos` of `dim` (it entered simulation distance): the chunk is
    /// promoted to L0 (one atomic batch) and stays there while loaded. Returns its bytes,
    /// `None` when it does not exist yet.
    pub fn load_chunk(&mut self, dim: u64, pos: ChunkPos, tick: u64) -> Result<Option<Vec<u8>>> {
        self.see(tick);
        self.check_scope(pos)?;
        let mut txn = Txn::new(&self.store, &self.fence);
        Self::promote(&mut txn, dim, pos, None, tick)?;
        txn.commit(false)?;
        self.loaded.insert((dim, pos));
        self.unloaded_at.remove(&(dim, pos));
        self.get_chunk(dim, pos)
    }

    /// Players load chunks `positions` of `dim` together (a column, a player's view of
    /// columns): as [`load_chunk`](Self::load_chunk) for each, but read with one `multi_get`
    /// per level (L0, then the L1 and L2 clusters of the chunks L0 lacks) and promoted in one
    /// atomic batch. A networked store pays a few round trips for the whole set instead of
    /// several per chunk. Returns each chunk's bytes in the order of `positions`, `None` for
    /// those that do not exist yet.
    pub fn load_chunks(
        &mut self,
        dim: u64,
        positions: &[ChunkPos],
        tick: u64,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        self.see(tick);
        for &pos in positions {
            self.check_scope(pos)?;
        }
        let mut txn = Txn::new(&self.store, &self.fence);
        let addrs: Vec<ChunkAddr> = positions.iter().map(|&p| (dim, p)).collect();
        // Every read below is answered from the read-ahead or the promotions before it.
        for (dim, pos) in Self::read_levels_ahead(&mut txn, &addrs)? {
            Self::promote(&mut txn, dim, pos, None, tick)?;
        }
        let mut out = Vec::with_capacity(positions.len());
        for &pos in positions {
            out.push(
                txn.get(tables::CHUNK_L0, &keys::chunk_key(dim, pos, Level::L0))?.map(|o| o.data),
            );
        }
        txn.commit(false)?;
        for &pos in positions {
            self.loaded.insert((dim, pos));
            self.unloaded_at.remove(&(dim, pos));
        }
        Ok(out)
    }

    /// The chunk left every player's simulation distance at `tick`: from now on it ages
    /// towards L1.
    pub fn unload_chunk(&mut self, dim: u64, pos: ChunkPos, tick: u64) {
        self.see(tick);
        if self.loaded.remove(&(dim, pos)) {
            self.unloaded_at.insert((dim, pos), tick);
        }
    }

    /// Whether chunk `pos` of `dim` is marked loaded.
    pub fn is_loaded(&self, dim: u64, pos: ChunkPos) -> bool {
        self.loaded.contains(&(dim, pos))
    }

    /// The id of the server this store saves for in a shared world (`None`: a world with
    /// one writer).
    pub fn server(&self) -> Option<&str> {
        self.tick_key.strip_prefix(META_TICK).and_then(|r| r.strip_prefix('/'))
    }

    /// Whether any chunk of `area` in dimension `dim` is loaded.
    pub fn is_area_loaded(&self, dim: u64, area: AreaId) -> bool {
        self.loaded.iter().any(|(d, p)| *d == dim && AreaId::of_chunk(*p) == area)
    }

    /// The latest player positions, for the distance rule of demotion (replaces the previous
    /// check; with no players at all, every L1 cluster counts as far).
    pub fn set_players(&mut self, players: &[PlayerPos]) {
        self.players = Some(players.to_vec());
    }

    /// Writes one chunk (promoting it to L0) in its own atomic batch; see
    /// [`save_tick`](TieredStore::save_tick) to save chunks with entities and players.
    pub fn put_chunk(&mut self, dim: u64, pos: ChunkPos, bytes: Vec<u8>, tick: u64) -> Result<()> {
        let mut save = TickSave::new();
        save.put_chunk(dim, pos, bytes);
        self.save_tick(tick, &save)
    }

    /// Deletes one chunk, whatever its level, in its own atomic batch.
    pub fn delete_chunk(&mut self, dim: u64, pos: ChunkPos, tick: u64) -> Result<()> {
        let mut save = TickSave::new();
        save.delete_chunk(dim, pos);
        self.save_tick(tick, &save)
    }

    /// Fences every batch this store writes from now on (tick saves, tier moves, chunk
    /// writes): each carries `fence` as preconditions, checked inside the same atomic write.
    /// A server sharing a world passes "each area I write is still mine at my epoch" here
    /// (terrane-lease); once another server takes an area over, the next batch fails with
    /// the store's `PreconditionFailed` and writes nothing. Empty (the default): no fence.
    pub fn set_fence(&mut self, fence: Vec<Precondition>) {
        self.fence = fence;
    }

    /// The preconditions every batch carries ([`set_fence`](Self::set_fence)).
    pub fn fence(&self) -> &[Precondition] {
        &self.fence
    }

    /// Whether each registered block is opaque, by id ([`is_opaque`](Self::is_opaque)).
    pub(crate) fn opaque_table(&self) -> &[bool] {
        &self.opaque
    }

    /// Whether `block` counts as opaque for the opacity map (the configured
    /// [`TieredStoreBuilder::opaque`](crate::TieredStoreBuilder::opaque) rule, decided once per
    /// registered block). Blocks the schema does not know are opaque.
    pub fn is_opaque(&self, block: terrane_chunk::BlockId) -> bool {
        self.opaque.get(block.0 as usize).copied().unwrap_or(true)
    }

    /// The highest opaque block y of block column `(x, z)` in `dim`, as last saved (`None`
    /// when no saved chunk of the column has an opaque block).
    pub fn opacity_at(&self, dim: u64, x: i64, z: i64) -> Result<Option<i64>> {
        let (cx, cz) = (x >> 4, z >> 4);
        Ok(self.opacity_tile(dim, cx, cz)?.and_then(|t| t.get(x & 63, z & 63)))
    }

    /// The opacity tile (64×64 block columns) holding chunk column `(cx, cz)`.
    pub fn opacity_tile(&self, dim: u64, cx: i64, cz: i64) -> Result<Option<OpacityTile>> {
        match self.store.get(tables::OPACITY_MAP, &keys::column_key(dim, cx, cz))? {
            Some(o) => Ok(Some(OpacityTile::from_bytes(&o.data)?)),
            None => Ok(None),
        }
    }

    // ---- level scans -------------------------------------------------------------------

    /// Every key of `level`'s table, parsed: dimension, position (chunk or cluster) and object.
    pub(crate) fn scan_level(&self, level: Level) -> Result<Vec<(u64, ChunkPos, Object)>> {
        self.stream_level(level)?.collect()
    }

    /// [`scan_level`](Self::scan_level) one object at a time: what reads a whole level
    /// (verify, the world's info) holds one object, not the level.
    pub(crate) fn stream_level(
        &self,
        level: Level,
    ) -> Result<impl Iterator<Item = Result<(u64, ChunkPos, Object)>> + '_> {
        let table = table_of(level);
        Ok(self.store.scan(table, KeyRange::all())?.map(move |e| {
            let (key, obj) = e?;
            let (dim, cell) =
                keys::parse_chunk_key(&key).ok_or(Error::CorruptKey { table, len: key.len() })?;
            Ok((dim, cell, obj))
        }))
    }

    // ---- checks ------------------------------------------------------------------------

    /// Reads every level and checks the invariants: every key parses, every cluster is valid
    /// and at its table's scale, every chunk decodes against the schema, and no chunk is at
    /// two levels (or twice at one). Returns per-level counts and bytes.
    ///
    /// Reads a square of 64 × 64 columns at a time ([`column_tiles`](Self::column_tiles)):
    /// a chunk stored twice is stored twice within its square, so memory holds one square's
    /// addresses, not the world's.
    pub fn verify(&self) -> Result<LevelStats> {
        self.verify_each(|_, _, _| Ok(()), |_, _| {})
    }

    /// [`verify`](Self::verify), showing `each` every chunk it checked (address, level and
    /// the checked chunk; each once, a tile after another) and `progress` the tiles done and
    /// the tiles in all after each tile. `each`'s first error stops it and is returned;
    /// `each` may return its caller's error type.
    pub fn verify_each<E: From<Error>>(
        &self,
        mut each: impl FnMut(ChunkAddr, Level, &ChunkView<'_>) -> std::result::Result<(), E>,
        mut progress: impl FnMut(usize, usize),
    ) -> std::result::Result<LevelStats, E> {
        let mut stats = LevelStats::default();
        let mut tiles = Vec::new();
        for dim in self.chunk_dimensions()? {
            tiles.extend(self.column_tiles(dim, VERIFY_TILE_SHIFT)?);
        }
        progress(0, tiles.len());
        for (i, tile) in tiles.iter().enumerate() {
            self.verify_tile(tile, &mut stats, &mut each)?;
            progress(i + 1, tiles.len());
        }
        Ok(stats)
    }

    /// [`verify_each`](Self::verify_each) of one tile, adding to `stats`.
    fn verify_tile<E: From<Error>>(
        &self,
        tile: &ColumnTile,
        stats: &mut LevelStats,
        each: &mut impl FnMut(ChunkAddr, Level, &ChunkView<'_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let mut seen: HashMap<ChunkPos, Level> = HashMap::new();
        for (level, range) in tile.key_ranges() {
            let li = usize::from(level.index());
            for e in self.store.scan(table_of(level), range).map_err(Error::from)? {
                let (key, obj) = e.map_err(Error::from)?;
                stats.keys[li] += 1;
                stats.bytes[li] += obj.data.len() as u64;
                let chunks = chunks_of(level, &key, &obj.data)?;
                if chunks.is_empty() {
                    let cell = keys::parse_chunk_key(&key).map(|(_, c)| c);
                    return Err(Error::Inconsistent(format!(
                        "empty {level:?} cluster {cell:?} of dimension {}",
                        tile.dim
                    ))
                    .into());
                }
                for ((dim, p), _, blob) in chunks {
                    let view = self.check_chunk(blob)?;
                    if let Some(other) = seen.insert(p, level) {
                        return Err(Error::Inconsistent(format!(
                            "chunk {p:?} of dimension {dim} is at {other:?} and {level:?}"
                        ))
                        .into());
                    }
                    stats.chunks[li] += 1;
                    each((dim, p), level, &view)?;
                }
            }
        }
        Ok(())
    }

    /// Every stored chunk with its level, in (dimension, position) order (reads everything:
    /// for tests and tools).
    pub fn all_chunks(&self) -> Result<BTreeMap<ChunkAddr, (Level, Vec<u8>)>> {
        let mut out = BTreeMap::new();
        for level in Level::ALL {
            for (dim, cell, obj) in self.scan_level(level)? {
                match Scale::from_level(level) {
                    None => {
                        out.insert((dim, cell), (level, obj.data));
                    }
                    Some(scale) => {
                        let view = ClusterView::with_scale(&obj.data, scale)?;
                        for (i, blob) in view.iter() {
                            if let Some(p) = scale.chunk_pos(cell, i) {
                                out.insert((dim, p), (level, blob.to_vec()));
                            }
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// Flushes the backend (see `terrane_store::Store::flush`).
    pub fn flush(&self) -> Result<()> {
        Ok(self.store.flush()?)
    }
}
