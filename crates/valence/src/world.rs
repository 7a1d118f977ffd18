//! [`TerraneWorld`]: the terrane world a Valence server plays on, and what it has changed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use terrane::{BlockId, Chunk, ChunkPos, ColumnPos, LoadedColumns, TickSave, World, tables};
use valence::prelude::{BlockState, Chunk as _, Resource, UnloadedChunk, bevy_ecs};

use crate::blocks::{BlockMap, state_name};
use crate::{Dimension, Error, Result};
use terrane::worldgen::Terrain;

/// The terrane world behind the Valence [`ChunkLayer`](valence::prelude::ChunkLayer)s of the
/// three [`Dimension`]s: their loaded columns as terrane chunks, the chunks changed since the
/// last save, and the last durable tick. The plugin owns it as a Bevy resource.
#[derive(Resource)]
pub struct TerraneWorld {
    world: World,
    blocks: BlockMap,
    /// Each dimension's columns, in [`Dimension::ALL`]'s order.
    served: [Served; 3],
    /// Columns loaded from what was generated off the tick.
    generated_ahead: u64,
    /// Player and container records changed since the last save (`None`: delete).
    records: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// The bytes each record key holds in the world, as last read or saved.
    written: HashMap<Vec<u8>, Vec<u8>>,
    /// Edits applied since the last [`take_applied`](Self::take_applied), when recorded.
    applied: Option<Vec<Applied>>,
    /// How long each save since the last [`take_save_times`](Self::take_save_times) took.
    save_times: Vec<Duration>,
    base_tick: u64,
    durable_tick: u64,
    /// Ticks whose saves landed, not yet taken by [`take_landed`](Self::take_landed).
    landed: Vec<u64>,
    flush: bool,
    error: Option<Error>,
}

/// One dimension served: its loaded columns, those being read ahead, and what generates the
/// columns the world does not hold.
struct Served {
    dim: Dimension,
    terrain: Terrain,
    /// The terrain's blocks' ids in the world's schema.
    terrain_ids: Vec<BlockId>,
    /// The loaded columns, their chunks and what changed in them.
    loaded: LoadedColumns,
    /// Columns being read ahead ([`TerraneWorld::read_ahead_columns`]), with the world's
    /// ticket of each.
    ahead: HashMap<(i32, i32), u64>,
    /// Columns the world never held, generated on the thread that reads ahead: each
    /// column's chunks, bottom up, with their chunk y.
    generated: Arc<Mutex<GeneratedColumns>>,
}

impl std::fmt::Debug for TerraneWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerraneWorld")
            .field("world", &self.world)
            .field("loaded", &self.loaded_columns())
            .field("durable_tick", &self.durable_tick)
            .finish_non_exhaustive()
    }
}

/// Columns generated off the tick, by column: each one's chunks with their chunk y.
type GeneratedColumns = HashMap<(i32, i32), Vec<(i64, Chunk)>>;

/// The generated columns, whatever a panicking generator left (it inserts whole columns).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The cubic chunks of `columns` of `dim`, column by column, bottom up.
fn column_chunks(dim: Dimension, columns: &[(i32, i32)]) -> Vec<ChunkPos> {
    columns
        .iter()
        .flat_map(|&(x, z)| dim.chunk_ys().map(move |cy| ChunkPos::new(x.into(), cy, z.into())))
        .collect()
}

impl TerraneWorld {
    /// Serves `world` (opened by the caller, nothing loaded yet), showing block states
    /// Valence does not know as `stand_in` and generating the Overworld's columns the world
    /// does not hold with `terrain` (the Nether's and the End's with theirs:
    /// [`Dimension::terrain`]). Registers the terrains' states in the world's schema when
    /// they are missing (registries only grow).
    pub fn new(mut world: World, stand_in: BlockState, terrain: Terrain) -> Result<Self> {
        let terrains = Dimension::ALL.map(|d| d.terrain(terrain));
        if terrains.iter().any(|t| t.ids(world.schema()).is_none()) {
            let mut schema = world.schema().clone();
            for name in terrains.iter().flat_map(|t| t.blocks()) {
                if schema.blocks().find(name).is_none() {
                    schema.add_block(name, &[]).map_err(terrane::Error::from)?;
                }
            }
            world.extend_schema(schema)?;
        }
        let mut served = Vec::with_capacity(3);
        for (dim, terrain) in Dimension::ALL.into_iter().zip(terrains) {
            let terrain_ids = terrain.ids(world.schema()).ok_or_else(|| {
                Error::Setting("the world's schema lost the terrain's blocks".into())
            })?;
            served.push(Served {
                dim,
                terrain,
                terrain_ids,
                loaded: LoadedColumns::new(dim.chunk_ys()).in_dimension(dim.id()),
                ahead: HashMap::new(),
                generated: Arc::new(Mutex::new(HashMap::new())),
            });
        }
        let served: [Served; 3] = served.try_into().map_err(|_| Error::Setting("three".into()))?;
        let base_tick = world.tick();
        Ok(Self {
            world,
            blocks: BlockMap::new(stand_in),
            served,
            generated_ahead: 0,
            records: BTreeMap::new(),
            written: HashMap::new(),
            applied: None,
            save_times: Vec::new(),
            base_tick,
            durable_tick: base_tick,
            landed: Vec::new(),
            flush: false,
            error: None,
        })
    }

    /// The terrane world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The terrain new columns of the Overworld are generated with.
    pub fn terrain(&self) -> Terrain {
        self.served[0].terrain
    }

    /// The terrain new columns of `dim` are generated with ([`Dimension::terrain`]).
    pub fn terrain_of(&self, dim: Dimension) -> Terrain {
        self.served[dim as usize].terrain
    }

    /// The y just above the highest block (not air) at block column (`x`, `z`) of `dim` as
    /// the world holds it (its loaded or unsaved chunks first, else read from the world), or
    /// `None` when the world holds no block there: where a player standing there stands.
    pub fn top_of(&self, dim: Dimension, x: i32, z: i32) -> Result<Option<i32>> {
        let (cx, cz) = (i64::from(x.div_euclid(16)), i64::from(z.div_euclid(16)));
        let (lx, lz) = (x.rem_euclid(16) as u32, z.rem_euclid(16) as u32);
        let air = self.world.air();
        let loaded_here = &self.served[dim as usize].loaded;
        for cy in dim.chunk_ys().rev() {
            let pos = ChunkPos::new(cx, cy, cz);
            let (loaded, read);
            let chunk: &Chunk = if let Some(c) = loaded_here.chunk(pos) {
                loaded = c;
                &loaded
            } else if let Some(c) = loaded_here.unloaded_chunk(pos) {
                c
            } else if let Some(c) = self.world.get_chunk_in(dim.id(), pos)? {
                read = c;
                &read
            } else {
                continue;
            };
            if let Some(ly) = (0..16u32).rev().find(|&ly| chunk.get(lx, ly, lz) != air) {
                return Ok(Some((cy * 16) as i32 + ly as i32 + 1));
            }
        }
        Ok(None)
    }

    /// The last tick whose save the world acknowledged (the world's tick when opened).
    pub fn durable_tick(&self) -> u64 {
        self.durable_tick
    }

    /// The terrane tick of Valence's tick `server_tick`: counted on from the world's last
    /// saved tick, so ticks only grow across restarts.
    pub fn tick_of(&self, server_tick: i64) -> u64 {
        self.base_tick + u64::try_from(server_tick).unwrap_or(0) + 1
    }

    /// Columns loaded, of every dimension.
    pub fn loaded_columns(&self) -> usize {
        self.served.iter().map(|s| s.loaded.len()).sum()
    }

    /// Whether column (`x`, `z`) of `dim` is loaded.
    pub fn is_loaded(&self, dim: Dimension, x: i32, z: i32) -> bool {
        self.served[dim as usize].loaded.is_loaded(ColumnPos::new(x, z))
    }

    /// Changed chunks not saved yet, of every dimension.
    pub fn unsaved_chunks(&self) -> usize {
        self.served.iter().map(|s| s.loaded.unsaved()).sum()
    }

    /// Changed player and container records not saved yet.
    pub fn unsaved_records(&self) -> usize {
        self.records.len()
    }

    /// Stages record `key` (a [`terrane::game`] key) to hold `bytes` (`None`: deleted) in the
    /// next save, unless the world is known to hold exactly those bytes already (a deletion is
    /// always staged).
    pub fn stage_record(&mut self, key: Vec<u8>, bytes: Option<Vec<u8>>) {
        if bytes.is_some() && self.written.get(&key) == bytes.as_ref() {
            self.records.remove(&key);
        } else {
            self.records.insert(key, bytes);
        }
    }

    /// Notes that the world holds `bytes` under record `key` (read at a player's join), so
    /// that staging the same bytes writes nothing.
    pub fn note_record(&mut self, key: Vec<u8>, bytes: Vec<u8>) {
        self.written.insert(key, bytes);
    }

    /// Starts recording the edits applied, for [`take_applied`](Self::take_applied).
    pub fn record_applied(&mut self) {
        self.applied.get_or_insert_with(Vec::new);
    }

    /// The edits applied since the last call, in order (empty unless
    /// [`record_applied`](Self::record_applied) was called).
    pub fn take_applied(&mut self) -> Vec<Applied> {
        self.applied.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// How long each save since the last call took.
    pub fn take_save_times(&mut self) -> Vec<Duration> {
        std::mem::take(&mut self.save_times)
    }

    /// Makes the next save run whatever the save interval (the server is stopping).
    pub fn request_flush(&mut self) {
        self.flush = true;
    }

    pub(crate) fn take_flush(&mut self) -> bool {
        std::mem::take(&mut self.flush)
    }

    /// The error that stopped saving, once.
    pub fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }

    /// Whether an error stopped saving (the server is stopping).
    pub(crate) fn failed(&self) -> bool {
        self.error.is_some()
    }

    pub(crate) fn fail(&mut self, e: Error) {
        tracing::error!("{e}");
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    /// Loads column (`x`, `z`) of `dim` from terrane into a Valence chunk: its cubic chunks
    /// are loaded (the tiered store keeps them hot, the dimension's regionizer adds them); a
    /// column the world has never held is generated with the dimension's terrain and saved
    /// with the next tick. A chunk changed since the last save and unloaded comes back as
    /// changed, not as the world holds it.
    pub fn load_column(&mut self, dim: Dimension, x: i32, z: i32) -> Result<UnloadedChunk> {
        self.load_from_world(dim, &[(x, z)])?;
        Ok(self.valence_column(dim, x, z))
    }

    /// Loads `columns` of `dim` as [`load_column`](Self::load_column) does each, reading all
    /// their chunks from the world together (a few round trips on a networked store, whatever
    /// the number of columns: [`World::load_chunks_in`]). Returns the columns in the order
    /// asked.
    pub fn load_columns(
        &mut self,
        dim: Dimension,
        columns: &[(i32, i32)],
    ) -> Result<Vec<UnloadedChunk>> {
        self.load_from_world(dim, columns)?;
        Ok(columns.iter().map(|&(x, z)| self.valence_column(dim, x, z)).collect())
    }

    /// The columns of `dim` players will need soon (their views and a ring beyond), nearest
    /// first: those neither loaded nor read ahead yet start to be read ahead, off the tick
    /// thread ([`World::read_ahead_chunks_in`]), and those the world never held are generated
    /// there too ([`World::run_ahead`]); columns of `dim` no longer among them are forgotten.
    /// Nothing happens on a world without saves in flight (it has no thread to read on).
    pub fn read_ahead_columns(&mut self, dim: Dimension, columns: &[(i32, i32)]) {
        if !self.world.reads_ahead() {
            return;
        }
        // The dimension's graph, read now if this is its first column (a world error shows
        // at the load that follows).
        let Ok(distance) = self.world.distance_in(dim.id()) else { return };
        let here = &mut self.served[dim as usize];
        let wanted: HashSet<(i32, i32)> = columns.iter().copied().collect();
        here.ahead.retain(|c, _| wanted.contains(c));
        lock(&here.generated).retain(|c, _| wanted.contains(c));
        let mut asked = HashSet::new();
        let new: Vec<(i32, i32)> = columns
            .iter()
            .copied()
            .filter(|c| {
                !here.loaded.is_loaded(ColumnPos::new(c.0, c.1))
                    && !here.ahead.contains_key(c)
                    && asked.insert(*c)
            })
            .collect();
        if new.is_empty() {
            return;
        }
        let Some(mut ticket) = self.world.read_ahead_chunks_in(dim.id(), &column_chunks(dim, &new))
        else {
            return;
        };
        // Generated after the reads (its ticket done means theirs are too).
        let fresh: Vec<(i32, i32)> = new
            .iter()
            .copied()
            .filter(|&(x, z)| !distance.contains(ColumnPos::new(x, z)))
            .collect();
        if !fresh.is_empty() {
            let (terrain, ids, out) =
                (here.terrain, here.terrain_ids.clone(), Arc::clone(&here.generated));
            let job = move || {
                for (x, z) in fresh {
                    let chunks = terrain.column(ColumnPos::new(x, z), &ids);
                    lock(&out).insert((x, z), chunks);
                }
                Ok(())
            };
            if let Some(t) = self.world.run_ahead(job) {
                ticket = t;
            }
        }
        here.ahead.extend(new.into_iter().map(|c| (c, ticket)));
    }

    /// Columns loaded whose generation ran off the tick ([`read_ahead_columns`](Self::read_ahead_columns)).
    pub fn columns_generated_ahead(&self) -> u64 {
        self.generated_ahead
    }

    /// Whether column (`x`, `z`) of `dim` loads without waiting on the store: its read ahead
    /// finished, or the world does not read ahead (its loads read at once).
    pub fn is_column_ready(&self, dim: Dimension, x: i32, z: i32) -> bool {
        match self.served[dim as usize].ahead.get(&(x, z)) {
            Some(&ticket) => self.world.is_read_ahead(ticket),
            None => !self.world.reads_ahead(),
        }
    }

    /// Loads the columns of `columns` of `dim` not loaded yet, in one read of the world
    /// ([`LoadedColumns::load`]); a column the world never held comes from the thread that
    /// read ahead when it was generated there, else from the terrain now.
    fn load_from_world(&mut self, dim: Dimension, columns: &[(i32, i32)]) -> Result<()> {
        let here = &mut self.served[dim as usize];
        let mut new: Vec<ColumnPos> = Vec::with_capacity(columns.len());
        for &(x, z) in columns {
            let col = ColumnPos::new(x, z);
            if here.loaded.is_loaded(col) {
                // Loaded already: what it holds here (unsaved changes included) is the truth;
                // the world's copy may be older.
                tracing::warn!(
                    "column ({x}, {z}) of {dim:?} loaded twice; its loaded chunks are kept"
                );
            } else {
                new.push(col);
            }
        }
        let (terrain, ids, generated) = (here.terrain, &here.terrain_ids, &here.generated);
        let mut ahead = 0;
        let mut generate = |col: ColumnPos| match lock(generated).remove(&(col.x, col.z)) {
            Some(chunks) => {
                ahead += 1;
                Some(chunks)
            }
            None => Some(terrain.column(col, ids)),
        };
        here.loaded.load(&mut self.world, &new, &mut generate)?;
        self.generated_ahead += ahead;
        let mut generated = lock(&here.generated);
        for c in new {
            here.ahead.remove(&(c.x, c.z));
            generated.remove(&(c.x, c.z));
        }
        Ok(())
    }

    /// Column (`x`, `z`) of `dim` as Valence shows it, from the chunks loaded here; the
    /// records of its containers start to be read ahead (a player opening one then waits on
    /// no round trip).
    fn valence_column(&mut self, dim: Dimension, x: i32, z: i32) -> UnloadedChunk {
        let mut containers: Vec<[i64; 3]> = Vec::new();
        let mut out = UnloadedChunk::with_height(dim.height());
        let air = self.world.air();
        let be = self.block_entity_component();
        let ys = dim.chunk_ys();
        let loaded = &self.served[dim as usize].loaded;
        for cy in ys.clone() {
            let Some(c) = loaded.chunk(ChunkPos::new(x.into(), cy, z.into())) else {
                continue;
            };
            let base = u32::try_from((cy - ys.start) * 16).unwrap_or(0);
            for ly in 0..16 {
                for lz in 0..16 {
                    for lx in 0..16 {
                        let id = c.get(lx, ly, lz);
                        if id != air {
                            let s = self.blocks.to_valence(self.world.schema(), id);
                            out.set_block_state(lx, base + ly, lz, s);
                            // What a client draws of an imported block entity goes with it.
                            if let Some(be) = be
                                && crate::block_entities::client_draws(s.to_kind().to_str())
                                && let Some(nbt) = c
                                    .component(terrane::section::cell_index(lx, ly, lz), 0, be)
                                    .and_then(crate::block_entities::parse)
                            {
                                let nbt = crate::block_entities::for_client(nbt);
                                out.set_block_entity(lx, base + ly, lz, Some(nbt));
                            }
                            if crate::containers::is_container(s) {
                                containers.push([
                                    i64::from(x) * 16 + i64::from(lx),
                                    i64::from(dim.min_y()) + i64::from(base + ly),
                                    i64::from(z) * 16 + i64::from(lz),
                                ]);
                            }
                        }
                    }
                }
            }
        }
        if !containers.is_empty() {
            terrane::game::read_ahead_containers(&self.world, dim.id(), &containers);
        }
        out
    }

    /// The component an import keeps block entities in, when the world's schema has it.
    fn block_entity_component(&self) -> Option<terrane::chunk::ComponentId> {
        let name = terrane::anvil::mapping::BLOCK_ENTITY_COMPONENT;
        self.world.schema().components().find(name).map(terrane::chunk::ComponentId::variable)
    }

    /// Keeps `nbt` as the block entity of the block at (`x`, `y`, `z`) of `dim` for the next
    /// save (the component an import keeps block entities in); `false` when its column is not
    /// loaded or its block carries no block entity.
    pub(crate) fn set_block_entity(
        &mut self,
        dim: Dimension,
        x: i32,
        y: i32,
        z: i32,
        nbt: &valence::nbt::Compound,
    ) -> bool {
        let Some(be) = self.block_entity_component() else { return false };
        let (pos, cell) = chunk_and_cell(x, y, z);
        let mut bytes = Vec::new();
        if nbt.to_binary(&mut bytes, "").is_err() {
            return false;
        }
        let schema = self.world.schema();
        let loaded = &mut self.served[dim as usize].loaded;
        let Some(chunk) = loaded.chunk_mut(pos) else { return false };
        if chunk.set_component(schema, cell, 0, be, &bytes).is_err() {
            return false;
        }
        loaded.mark_changed(pos);
        true
    }

    /// The block entity a Java world's import kept at (`x`, `y`, `z`) of `dim`, when its
    /// column is loaded and it has one.
    pub(crate) fn imported_block_entity(
        &self,
        dim: Dimension,
        x: i32,
        y: i32,
        z: i32,
    ) -> Option<valence::nbt::Compound> {
        let be = self.block_entity_component()?;
        let (pos, cell) = chunk_and_cell(x, y, z);
        let chunk = self.served[dim as usize].loaded.chunk(pos)?;
        chunk.component(cell, 0, be).and_then(crate::block_entities::parse)
    }

    /// The loaded columns of the areas `areas` of `dim`.
    pub(crate) fn loaded_columns_in(
        &self,
        dim: Dimension,
        areas: &std::collections::BTreeSet<terrane::section::AreaId>,
    ) -> Vec<(i32, i32)> {
        let mut v: Vec<(i32, i32)> = self.served[dim as usize]
            .loaded
            .columns()
            .filter(|c| areas.contains(&terrane::section::AreaId::new(c.x >> 4, c.z >> 4)))
            .map(|c| (c.x, c.z))
            .collect();
        v.sort_unstable();
        v
    }

    /// Forgets what is known of the record keys `gone` matches (staged changes, the bytes
    /// last read or saved): the world's copy changed under the server.
    pub(crate) fn forget_records(&mut self, gone: impl Fn(&[u8]) -> bool) {
        self.records.retain(|k, _| !gone(k));
        self.written.retain(|k, _| !gone(k));
    }

    pub(crate) fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    /// Column (`x`, `z`) of `dim` left every player's view: its changed chunks go to the next
    /// save, its chunks are unloaded from terrane.
    pub fn unload_column(&mut self, dim: Dimension, x: i32, z: i32) -> Result<()> {
        self.served[dim as usize].loaded.unload(&mut self.world, ColumnPos::new(x, z))?;
        Ok(())
    }

    /// Registers the states of `states` the world's schema lacks. The registries grow only
    /// while nothing is loaded, so the loaded chunks are unloaded from terrane and loaded
    /// again around it (their contents stay here; ids never change).
    pub fn register(&mut self, states: impl IntoIterator<Item = BlockState>) -> Result<()> {
        use terrane::anvil::mapping::{block_entity_component, is_block_entity_block};
        let mut schema = self.world.schema().clone();
        let mut added = false;
        for s in states {
            let name = state_name(s);
            if schema.blocks().find(&name).is_none() {
                // A block with a block entity (a sign, a chest) carries the component its
                // data is kept in, as an import registers it.
                let comps = if is_block_entity_block(&name) {
                    vec![block_entity_component(&mut schema).map_err(terrane::Error::from)?]
                } else {
                    Vec::new()
                };
                schema.add_block(&name, &comps).map_err(terrane::Error::from)?;
                added = true;
            }
        }
        if !added {
            return Ok(());
        }
        let loaded: Vec<(u64, Vec<ChunkPos>)> =
            self.served.iter().map(|s| (s.dim.id(), s.loaded.chunk_positions())).collect();
        for (dim, positions) in &loaded {
            for p in positions {
                self.world.unload_chunk_in(*dim, *p)?;
            }
        }
        self.world.extend_schema(schema)?;
        for (dim, positions) in &loaded {
            self.world.load_chunks_in(*dim, positions)?;
        }
        Ok(())
    }

    /// The terrane id of `state`, `None` when the schema does not register it yet
    /// ([`register`](Self::register) it first).
    pub fn block_id(&mut self, state: BlockState) -> Option<BlockId> {
        self.blocks.to_terrane(self.world.schema(), state)
    }

    /// Records that the block at (`x`, `y`, `z`) of `dim` is now `state`, for the next save.
    /// Positions outside the loaded columns or the column's height, and states not registered,
    /// are ignored (returns `false`).
    pub fn set_block(&mut self, dim: Dimension, x: i32, y: i32, z: i32, state: BlockState) -> bool {
        let Some(id) = self.block_id(state) else { return false };
        let (cx, cz) = (x.div_euclid(16), z.div_euclid(16));
        let pos = ChunkPos::new(cx.into(), i64::from(y.div_euclid(16)), cz.into());
        let air = self.world.air();
        let loaded = &mut self.served[dim as usize].loaded;
        // Outside the loaded columns and their height: nothing to set.
        let Some(chunk) = loaded.chunk_or_air(pos, air) else { return false };
        let (lx, ly, lz) =
            (x.rem_euclid(16) as u32, y.rem_euclid(16) as u32, z.rem_euclid(16) as u32);
        if chunk.set(lx, ly, lz, id) != id {
            loaded.mark_changed(pos);
        }
        true
    }

    pub(crate) fn note_applied(
        &mut self,
        tick: u64,
        dimension: Dimension,
        position: [i32; 3],
        state: BlockState,
    ) {
        if let Some(a) = &mut self.applied {
            a.push(Applied { tick, dimension, position, state: state_name(state) });
        }
    }

    /// Saves what changed as tick `tick`, in one atomic [`TickSave`]: the changed chunks of
    /// loaded columns, the chunks of unloaded and generated columns, the changed player and
    /// container records, and the distance graph. Returns `false` (and writes nothing) when
    /// nothing changed.
    pub fn save(&mut self, tick: u64) -> Result<bool> {
        self.save_parts(tick, SaveParts::All)
    }

    /// Saves part of what changed as tick `tick`, in one atomic [`TickSave`]: see
    /// [`SaveParts`]. Returns `false` (and writes nothing) when that part did not change.
    pub fn save_parts(&mut self, tick: u64, parts: SaveParts) -> Result<bool> {
        let players = |key: &[u8]| key.starts_with(terrane::game::PLAYER_PREFIX);
        let wanted = |key: &[u8]| match parts {
            SaveParts::All => true,
            SaveParts::Players => players(key),
            SaveParts::AllButPlayers => !players(key),
        };
        let with_chunks = parts != SaveParts::Players;
        let records: Vec<Vec<u8>> = self.records.keys().filter(|k| wanted(k)).cloned().collect();
        if records.is_empty() && (!with_chunks || self.unsaved_chunks() == 0) {
            return Ok(false);
        }
        let started = Instant::now();
        let mut save = TickSave::new();
        for key in &records {
            match &self.records[key] {
                Some(b) => save.put_object(tables::WORLD_PROPERTIES, key.clone(), b.clone()),
                None => save.delete_object(tables::WORLD_PROPERTIES, key.clone()),
            };
        }
        let chunks: Vec<terrane::ChangesPut> = match with_chunks {
            true => self
                .served
                .iter()
                .map(|s| s.loaded.put_changes(&mut save, self.world.schema(), |_| true))
                .collect(),
            false => Vec::new(),
        };
        self.world.save_tick(tick, save)?;
        for (s, put) in self.served.iter_mut().zip(&chunks) {
            s.loaded.saved(put);
        }
        for key in records {
            match self.records.remove(&key).flatten() {
                Some(b) => self.written.insert(key, b),
                None => self.written.remove(&key),
            };
        }
        self.save_times.push(started.elapsed());
        self.poll_landed()?;
        Ok(true)
    }

    /// Moves the ticks whose saves landed into `landed`, advancing the durable tick.
    fn poll_landed(&mut self) -> Result<()> {
        let ticks = self.world.landed_saves()?;
        if let Some(&last) = ticks.last() {
            self.durable_tick = last;
        }
        self.landed.extend(ticks);
        Ok(())
    }

    /// The ticks whose saves became durable since the last call, in order (the durable tick
    /// follows them): at once on a world that saves synchronously, as they land on one with
    /// saves in flight ([`World::landed_saves`]). Send [`Saved`](crate::Saved) for these
    /// only. `Err` when a save in flight failed: the server must stop.
    pub fn take_landed(&mut self) -> Result<Vec<u64>> {
        self.poll_landed()?;
        Ok(std::mem::take(&mut self.landed))
    }

    /// Waits for every save in flight, then [`take_landed`](Self::take_landed).
    pub fn settle(&mut self) -> Result<Vec<u64>> {
        self.world.settle_saves()?;
        self.take_landed()
    }

    /// Saves accepted and not yet durable.
    pub fn saves_in_flight(&self) -> u64 {
        self.world.saves_in_flight()
    }

    /// How long saves waited for room since the last call (the store falling behind).
    pub fn take_save_wait(&self) -> Duration {
        self.world.take_save_wait()
    }
}

/// What one save writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaveParts {
    /// Everything that changed: chunks, players and containers together (terrane's way, and
    /// the only one that keeps an item moved between a chest and a player whole).
    All,
    /// The player records only.
    Players,
    /// Everything but the player records.
    AllButPlayers,
}

/// One edit as the server applied it: the tick it is saved with, where, and the state's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// The terrane tick whose save holds it.
    pub tick: u64,
    /// The dimension of the block.
    pub dimension: Dimension,
    /// The block: x, y, z.
    pub position: [i32; 3],
    /// The new state, `minecraft:name[k=v,...]`.
    pub state: String,
}

/// The cubic chunk holding block (`x`, `y`, `z`) and its cell there.
fn chunk_and_cell(x: i32, y: i32, z: i32) -> (ChunkPos, u16) {
    let pos =
        ChunkPos::new(x.div_euclid(16).into(), y.div_euclid(16).into(), z.div_euclid(16).into());
    let cell = terrane::section::cell_index(
        x.rem_euclid(16) as u32,
        y.rem_euclid(16) as u32,
        z.rem_euclid(16) as u32,
    );
    (pos, cell)
}
