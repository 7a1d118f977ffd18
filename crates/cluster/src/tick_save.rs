//! A tick save: what one game tick writes ([`TickSave`]) and how
//! [`TieredStore::save_tick`] writes it as one atomic batch, step by step.

use std::collections::{BTreeMap, HashMap};

use terrane_chunk::{ChunkView, Uuid};
use terrane_section::keys;
use terrane_section::{AreaId, ChunkPos};
use terrane_store::{Batch, Op, Precondition, Store, tables};

use crate::error::{Error, Result};
use crate::opacity::{self, ColumnTops, OpacityTile};
use crate::tiered::{ChunkAddr, TieredStore, tick_version};
use crate::txn::Txn;

/// What one tick save writes, all in one atomic batch: chunks, entities and any other
/// objects the game keeps with them (player data, ...).
#[derive(Clone, Debug, Default)]
pub struct TickSave {
    chunks: Vec<(ChunkAddr, Option<Vec<u8>>)>,
    entities: Vec<(Uuid, Option<Vec<u8>>)>,
    /// Entities of a shared world, keyed by area; `true` marks the arrival of a hand-off
    /// (allowed in an area this server does not own).
    area_entities: Vec<(AreaId, Uuid, Option<Vec<u8>>, bool)>,
    objects: Vec<(String, Vec<u8>, Option<Vec<u8>>)>,
    extra: Batch,
}

impl TickSave {
    /// An empty save.
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes chunk `pos` of `dim` (chunk v1 bytes, as
    /// [`Chunk::encode`](terrane_chunk::Chunk::encode) makes them).
    pub fn put_chunk(&mut self, dim: u64, pos: ChunkPos, bytes: Vec<u8>) -> &mut Self {
        self.chunks.push(((dim, pos), Some(bytes)));
        self
    }

    /// Deletes chunk `pos` of `dim` at whatever level it is.
    pub fn delete_chunk(&mut self, dim: u64, pos: ChunkPos) -> &mut Self {
        self.chunks.push(((dim, pos), None));
        self
    }

    /// Writes entity `uuid` to the `entity` table.
    pub fn put_entity(&mut self, uuid: Uuid, bytes: Vec<u8>) -> &mut Self {
        self.entities.push((uuid, Some(bytes)));
        self
    }

    /// Deletes entity `uuid`.
    pub fn delete_entity(&mut self, uuid: Uuid) -> &mut Self {
        self.entities.push((uuid, None));
        self
    }

    /// Writes entity `uuid` in `area` (shared-world layout: key
    /// [`keys::area_entity_key`]). The area must be one this store may write
    /// ([`TieredStore::set_areas`]).
    pub fn put_area_entity(&mut self, area: AreaId, uuid: Uuid, bytes: Vec<u8>) -> &mut Self {
        self.area_entities.push((area, uuid, Some(bytes), false));
        self
    }

    /// Deletes entity `uuid` of `area` (shared-world layout).
    pub fn delete_area_entity(&mut self, area: AreaId, uuid: Uuid) -> &mut Self {
        self.area_entities.push((area, uuid, None, false));
        self
    }

    /// Hands entity `uuid` over from `from` (an area of this server) to `to` (usually another
    /// server's): it leaves `from` and arrives in `to` with `bytes` in this save's single
    /// batch, so it exists exactly once before and after any crash. Fence the arrival with
    /// [`expect`](Self::expect) on `to`'s lease; its owner finds the entity with
    /// [`TieredStore::area_entities`].
    pub fn hand_off_entity(
        &mut self,
        uuid: Uuid,
        from: AreaId,
        to: AreaId,
        bytes: Vec<u8>,
    ) -> &mut Self {
        self.area_entities.push((from, uuid, None, false));
        self.area_entities.push((to, uuid, Some(bytes), true));
        self
    }

    /// Adds a precondition to the save (e.g. the lease of the area a hand-off goes to): the
    /// save applies only if it holds (see `terrane_store::Batch::expect`).
    pub fn expect(&mut self, p: Precondition) -> &mut Self {
        self.extra.expect(&p.table, p.key, p.version);
        self
    }

    /// Appends raw operations and preconditions to the save's batch, in any table, after the
    /// save's own: e.g. the lease records of an area handed over with its last save. The
    /// caller owns their meaning; nothing here is checked against the schema.
    pub fn append(&mut self, batch: &Batch) -> &mut Self {
        copy_batch(batch, &mut self.extra);
        self
    }

    /// Writes any other object, e.g. a player's inventory in `worldProperties` or a table of
    /// the game's own. The tables this store manages (`chunkl0/1/2`, `entity`, `opacityMap`,
    /// `worldMeta`) are refused.
    pub fn put_object(&mut self, table: &str, key: Vec<u8>, bytes: Vec<u8>) -> &mut Self {
        self.objects.push((table.to_string(), key, Some(bytes)));
        self
    }

    /// Deletes another object (see [`put_object`](TickSave::put_object)).
    pub fn delete_object(&mut self, table: &str, key: Vec<u8>) -> &mut Self {
        self.objects.push((table.to_string(), key, None));
        self
    }

    /// Whether the save writes nothing.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
            && self.entities.is_empty()
            && self.area_entities.is_empty()
            && self.objects.is_empty()
            && self.extra.is_empty()
            && self.extra.preconditions().is_empty()
    }
}

/// The tables the tiered store manages itself: a tick save's other objects may not be in them.
const MANAGED: [&str; 6] = [
    tables::WORLD_META,
    tables::CHUNK_L0,
    tables::CHUNK_L1,
    tables::CHUNK_L2,
    tables::ENTITY,
    tables::OPACITY_MAP,
];

/// Appends `from`'s preconditions, then its operations, to `into`.
fn copy_batch(from: &Batch, into: &mut Batch) {
    for p in from.preconditions() {
        into.expect(&p.table, p.key.clone(), p.version);
    }
    for op in from.ops() {
        match op {
            Op::Put { table, key, version, data } => {
                into.put(table, key.clone(), *version, data.clone())
            }
            Op::Delete { table, key } => into.delete(table, key.clone()),
        };
    }
}

/// The chunks of a save, the last write of each kept, in address order (`None`: deleted).
type ChunkWrites<'a> = BTreeMap<ChunkAddr, Option<&'a [u8]>>;

/// A save's chunks and entities, the last write of each kept, in key order.
struct LastWrites<'a> {
    /// Chunk bytes by address.
    chunks: ChunkWrites<'a>,
    /// Entities of the single-server layout, by UUID.
    entities: BTreeMap<Uuid, Option<&'a [u8]>>,
    /// Entities of the shared-world layout, by area and UUID.
    area_entities: BTreeMap<(AreaId, Uuid), Option<&'a [u8]>>,
}

/// `pairs` in key order, the last value of a repeated key kept.
fn last_wins<K: Ord, V>(pairs: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut map = BTreeMap::new();
    for (k, v) in pairs {
        map.insert(k, v);
    }
    map
}

impl TickSave {
    /// Refuses other objects in a table the tiered store manages.
    fn check_object_tables(&self) -> Result<()> {
        for (table, _, _) in &self.objects {
            if MANAGED.contains(&table.as_str()) {
                return Err(Error::ReservedTable(table.clone()));
            }
        }
        Ok(())
    }

    /// The last write of each chunk and entity of the save.
    fn last_writes(&self) -> LastWrites<'_> {
        LastWrites {
            chunks: last_wins(self.chunks.iter().map(|(addr, b)| (*addr, b.as_deref()))),
            entities: last_wins(self.entities.iter().map(|(uuid, b)| (*uuid, b.as_deref()))),
            area_entities: last_wins(
                self.area_entities.iter().map(|(area, uuid, b, _)| ((*area, *uuid), b.as_deref())),
            ),
        }
    }
}

/// The opacity tiles holding the save's chunks: column key → (dimension, tile x, tile z).
fn touched_tiles(
    chunks: &ChunkWrites<'_>,
) -> BTreeMap<[u8; keys::COLUMN_KEY_LEN], (u64, i64, i64)> {
    let mut tiles = BTreeMap::new();
    for &(dim, pos) in chunks.keys() {
        tiles.insert(keys::column_key(dim, pos.x, pos.z), (dim, pos.x >> 2, pos.z >> 2));
    }
    tiles
}

impl<S: Store> TieredStore<S> {
    /// Saves a game tick as one atomic batch: every chunk written is promoted to L0 (with the
    /// cluster splits that takes), deleted chunks leave their level, entities and other
    /// objects are written, the opacity map is updated and `gameTick` set. A crash keeps all
    /// of it or none.
    ///
    /// Chunk bytes are checked against the schema first; with
    /// [`check_entity_refs`](crate::TierConfig::check_entity_refs), every UUID a saved chunk lists
    /// must be an entity written by this save or already stored.
    pub fn save_tick(&mut self, tick: u64, save: &TickSave) -> Result<()> {
        self.see(tick);
        save.check_object_tables()?;
        let writes = save.last_writes();
        self.check_save_scope(save, &writes.chunks)?;
        self.check_saved_chunks(&writes.chunks)?;
        let mut txn = Txn::new(&self.store, &self.fence);
        Self::read_ahead(&mut txn, &writes.chunks)?;
        if self.config.check_entity_refs {
            Self::refuse_dangling_entities(&txn, &writes)?;
        }
        Self::place_chunks(&mut txn, &writes.chunks, tick)?;
        self.update_opacity(&mut txn, &writes.chunks, tick)?;
        Self::stage_entities(&mut txn, &writes, tick);
        self.stage_tick(&mut txn, tick);
        let batch = self.save_batch(txn, save, tick);
        // A saved chunk's unload clock starts at its L0 version (this tick): nothing is kept
        // in memory per saved chunk, so a save of millions of chunks (an import) holds none.
        self.store.write(&batch)?;
        Ok(())
    }

    /// Refuses a save writing outside this store's areas (hand-off arrivals excepted).
    fn check_save_scope(&self, save: &TickSave, chunks: &ChunkWrites<'_>) -> Result<()> {
        for (area, _, _, arrival) in &save.area_entities {
            if !arrival && !self.in_scope(*area) {
                return Err(Error::OutOfScope { area: *area });
            }
        }
        for &(_, pos) in chunks.keys() {
            self.check_scope(pos)?;
        }
        Ok(())
    }

    /// Checks the bytes of every chunk written against the schema.
    fn check_saved_chunks(&self, chunks: &ChunkWrites<'_>) -> Result<()> {
        for bytes in chunks.values().flatten() {
            self.check_chunk(bytes)?;
        }
        Ok(())
    }

    /// Reads what placing the save's chunks reads, a level at a time, one `multi_get` each:
    /// the chunks at L0 (most chunks of a save are loaded), then the L1 and L2 clusters of
    /// those L0 lacks (new and demoted chunks), then the opacity tiles the save touches. A
    /// networked store pays a few round trips for the whole save, whatever its size.
    fn read_ahead(txn: &mut Txn<'_, S>, chunks: &ChunkWrites<'_>) -> Result<()> {
        let addrs: Vec<ChunkAddr> = chunks.keys().copied().collect();
        Self::read_levels_ahead(txn, &addrs)?;
        let tiles: Vec<Vec<u8>> = touched_tiles(chunks).into_keys().map(|k| k.to_vec()).collect();
        txn.prefetch(tables::OPACITY_MAP, &tiles)
    }

    /// Refuses a chunk listing an entity neither written by the save nor stored.
    fn refuse_dangling_entities(txn: &Txn<'_, S>, writes: &LastWrites<'_>) -> Result<()> {
        for ((dim, pos), bytes) in &writes.chunks {
            let Some(bytes) = bytes else { continue };
            let view = ChunkView::parse(bytes)?;
            for uuid in view.entities() {
                if !Self::entity_is_there(txn, writes, AreaId::of_chunk(*pos), uuid)? {
                    return Err(Error::DanglingEntity { uuid: *uuid, dim: *dim, pos: *pos });
                }
            }
        }
        Ok(())
    }

    /// Whether entity `uuid` of a chunk in `area` is written by the save, else already stored.
    fn entity_is_there(
        txn: &Txn<'_, S>,
        writes: &LastWrites<'_>,
        area: AreaId,
        uuid: &Uuid,
    ) -> Result<bool> {
        Ok(match (writes.entities.get(uuid), writes.area_entities.get(&(area, *uuid))) {
            (Some(e), _) | (None, Some(e)) => e.is_some(),
            (None, None) => {
                txn.get(tables::ENTITY, uuid)?.is_some()
                    || txn.get(tables::ENTITY, &keys::area_entity_key(area, uuid))?.is_some()
            }
        })
    }

    /// Promotes every chunk written to L0 with its new bytes; deleted chunks leave their level.
    fn place_chunks(txn: &mut Txn<'_, S>, chunks: &ChunkWrites<'_>, tick: u64) -> Result<()> {
        for (&(dim, pos), bytes) in chunks {
            match bytes {
                Some(b) => {
                    Self::promote(txn, dim, pos, Some(b.to_vec()), tick)?;
                }
                None => {
                    Self::remove(txn, dim, pos)?;
                }
            }
        }
        Ok(())
    }

    /// Updates the opacity map, tile by tile, once every chunk of the save is in place.
    fn update_opacity(
        &self,
        txn: &mut Txn<'_, S>,
        chunks: &ChunkWrites<'_>,
        tick: u64,
    ) -> Result<()> {
        for (key, tile) in touched_tiles(chunks) {
            self.update_opacity_tile(txn, chunks, &key, tile, tick)?;
        }
        Ok(())
    }

    /// Updates tile `key` (at `(dim, tx, tz)`) for the save's chunks in it, staged if changed.
    fn update_opacity_tile(
        &self,
        txn: &mut Txn<'_, S>,
        chunks: &ChunkWrites<'_>,
        key: &[u8],
        (dim, tx, tz): (u64, i64, i64),
        tick: u64,
    ) -> Result<()> {
        let mut tile = match txn.get(tables::OPACITY_MAP, key)? {
            Some(o) => OpacityTile::from_bytes(&o.data)?,
            None => OpacityTile::empty(),
        };
        let mut cache: HashMap<ChunkPos, Option<ColumnTops>> = HashMap::new();
        let before = tile.clone();
        for (&(d, pos), bytes) in chunks.range((dim, ChunkPos::new(tx << 2, i64::MIN, i64::MIN))..)
        {
            if d != dim || pos.x >> 2 != tx {
                break;
            }
            if pos.z >> 2 != tz {
                continue;
            }
            opacity::update(
                &mut tile,
                pos,
                bytes.map(ChunkView::parse).transpose()?.as_ref(),
                &self.opaque,
                self.config.opacity_search_chunks,
                &mut |p| self.column_tops_of(txn, &mut cache, dim, p),
            )?;
        }
        if tile != before {
            if tile.is_empty() {
                txn.delete(tables::OPACITY_MAP, key);
            } else {
                txn.put(tables::OPACITY_MAP, key, tick_version(tick), tile.to_bytes());
            }
        }
        Ok(())
    }

    /// The column tops of chunk `p` of `dim` as the save leaves it, read once per tile.
    fn column_tops_of(
        &self,
        txn: &Txn<'_, S>,
        cache: &mut HashMap<ChunkPos, Option<ColumnTops>>,
        dim: u64,
        p: ChunkPos,
    ) -> Result<Option<ColumnTops>> {
        if let Some(c) = cache.get(&p) {
            return Ok(*c);
        }
        let c = match Self::find(txn, dim, p)? {
            Some(f) => Some(opacity::column_tops(&ChunkView::parse(&f.bytes)?, &self.opaque)),
            None => None,
        };
        cache.insert(p, c);
        Ok(c)
    }

    /// Stages the save's entities, both layouts, at version `tick`.
    fn stage_entities(txn: &mut Txn<'_, S>, writes: &LastWrites<'_>, tick: u64) {
        for (uuid, bytes) in &writes.entities {
            match bytes {
                Some(b) => txn.put(tables::ENTITY, uuid, tick_version(tick), b.to_vec()),
                None => txn.delete(tables::ENTITY, uuid),
            }
        }
        for ((area, uuid), bytes) in &writes.area_entities {
            let key = keys::area_entity_key(*area, uuid);
            match bytes {
                Some(b) => txn.put(tables::ENTITY, &key, tick_version(tick), b.to_vec()),
                None => txn.delete(tables::ENTITY, &key),
            }
        }
    }

    /// Stages `tick` as this server's game tick in `worldMeta`.
    fn stage_tick(&self, txn: &mut Txn<'_, S>, tick: u64) {
        txn.put(tables::WORLD_META, self.tick_key.as_bytes(), 0, tick.to_le_bytes().to_vec());
    }

    /// The save's one batch: the staged writes, its other objects, then its raw operations.
    fn save_batch(&self, txn: Txn<'_, S>, save: &TickSave, tick: u64) -> Batch {
        let mut batch = txn.into_batch();
        for (table, key, bytes) in &save.objects {
            match bytes {
                Some(b) => batch.put(table, key.clone(), tick_version(tick), b.clone()),
                None => batch.delete(table, key.clone()),
            };
        }
        copy_batch(&save.extra, &mut batch);
        batch.set_sync(self.config.sync_saves);
        batch
    }
}
