//! [`TerranePlugin`]: the Bevy plugin that plays a Valence server on a terrane world.

use std::sync::Mutex;

use terrane::worldgen::Terrain;
use valence::inventory::OpenInventory;
use valence::prelude::*;

use crate::Dimension;
use crate::containers::{self, Containers};
use crate::edits::{self, SetBlock};
use crate::players;
use crate::restores::{self, LiveRestoreHandle, LiveRestoreJobs};
use crate::world::{SaveParts, TerraneWorld};

/// The plugin's settings, with their defaults.
#[derive(Resource, Clone, Debug)]
pub struct Settings {
    /// Save every this many ticks (default 1: every tick that changed something).
    pub save_every: u32,
    /// `None` (the default): players are saved with the chunks and containers they changed,
    /// in one save. `Some(n)`: players are saved apart, in their own save every `n` ticks,
    /// and the rest every [`save_every`](Self::save_every) ticks, as vanilla Minecraft and
    /// most servers save player data and chunks separately. Only for comparison: a crash
    /// between the two saves duplicates or loses the items a player moved.
    pub players_apart: Option<u32>,
    /// Where players join for the first time (default `[8.5, 65.0, 8.5]`); raised to stand
    /// on the world's highest block there ([`TerraneWorld::top_of`]), or on the generator's
    /// ground where the world holds no block.
    pub spawn: [f64; 3],
    /// The terrain of the columns the world does not hold yet (default hills of seed 0).
    pub terrain: Terrain,
    /// Players' game mode (default creative).
    pub game_mode: GameMode,
    /// Columns loaded per tick at most, nearest to a player first (default 64); the rest
    /// follow in the next ticks.
    pub columns_per_tick: usize,
    /// How far beyond a player's view columns are read ahead, in chunks (default 2), on a
    /// world with saves in flight: the columns a moving player will see next are in memory
    /// before they are needed, and no tick waits on the store to load one.
    pub read_ahead: u8,
    /// The largest view distance granted, in chunks (default 10); a client asking for more
    /// gets this.
    pub max_view_distance: u8,
    /// What a block state Valence does not know is shown as (default bedrock).
    pub stand_in: BlockState,
    /// Whether players dig and place blocks through the plugin's own systems (default
    /// `true`); without them, send [`SetBlock`] from your own.
    pub player_edits: bool,
    /// Whether [`TerraneWorld::take_applied`] reports every edit with its tick (default
    /// `false`; tests and audits turn it on).
    pub record_edits: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            save_every: 1,
            players_apart: None,
            spawn: [8.5, 65.0, 8.5],
            terrain: Terrain::Hills { seed: 0 },
            game_mode: GameMode::Creative,
            columns_per_tick: 64,
            read_ahead: 2,
            max_view_distance: 10,
            stand_in: BlockState::BEDROCK,
            player_edits: true,
            record_edits: false,
        }
    }
}

/// Marks the chunk layers the plugin fills from terrane, one per [`Dimension`] (a component
/// of the same entity says which).
#[derive(Component, Clone, Copy, Debug, Default)]
pub struct TerraneLayer;

/// The layer entity of each dimension, in [`Dimension::ALL`]'s order (spawned at startup).
#[derive(Resource, Clone, Copy, Debug)]
pub(crate) struct DimensionLayers(pub(crate) [Entity; 3]);

impl DimensionLayers {
    /// The layer of `dim`.
    pub(crate) fn of(&self, dim: Dimension) -> Entity {
        self.0[dim as usize]
    }
}

/// Moves a client's view and entity into `layer` (another dimension's: Valence tells the
/// client it respawned there).
pub(crate) fn enter_layer(
    id: &mut EntityLayerId,
    chunks: &mut VisibleChunkLayer,
    entities: &mut VisibleEntityLayers,
    layer: Entity,
) {
    if chunks.0 != layer {
        entities.0.remove(&chunks.0);
        chunks.0 = layer;
    }
    id.0 = layer;
    entities.0.insert(layer);
}

/// Sent after each acknowledged save: every change up to `tick` is durable.
#[derive(Event, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Saved {
    /// The terrane tick saved.
    pub tick: u64,
}

/// The systems of the plugin, in the order they run in `Update`.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TerraneSet;

/// Plays Valence on a terrane world: spawns a chunk and entity layer per [`Dimension`]
/// (the Overworld, y −64..320; the Nether and the End, y 0..256) marked [`TerraneLayer`],
/// puts joining clients in the one their record names, loads the columns
/// players see from terrane and unloads those nobody sees, applies [`SetBlock`]s, and saves
/// them as one `TickSave` per tick (or every [`Settings::save_every`] ticks), sending
/// [`Saved`].
pub struct TerranePlugin {
    world: Mutex<Option<TerraneWorld>>,
    restores: Mutex<Option<LiveRestoreJobs>>,
    handle: LiveRestoreHandle,
    settings: Settings,
}

impl TerranePlugin {
    /// The plugin over `world`, with `settings`.
    pub fn new(world: TerraneWorld, settings: Settings) -> Self {
        let (handle, queue) = restores::queue();
        Self { world: Mutex::new(Some(world)), restores: Mutex::new(Some(queue)), handle, settings }
    }

    /// A handle that asks the running server to restore an area or a box from a backup
    /// ([`LiveRestoreHandle::restore`]); it does so between two ticks, after the tick's save,
    /// and sends the restored columns again to the players viewing them.
    pub fn restore_handle(&self) -> LiveRestoreHandle {
        self.handle.clone()
    }
}

impl Plugin for TerranePlugin {
    fn build(&self, app: &mut App) {
        let world = self.world.lock().ok().and_then(|mut w| w.take());
        let Some(world) = world else {
            tracing::error!("TerranePlugin added twice: the second one does nothing");
            return;
        };
        let Some(restore_queue) = self.restores.lock().ok().and_then(|mut q| q.take()) else {
            return;
        };
        let edits_on = self.settings.player_edits;
        let mut world = world;
        if self.settings.record_edits {
            world.record_applied();
        }
        app.insert_resource(world)
            .insert_resource(restore_queue)
            .init_resource::<Containers>()
            .insert_resource(self.settings.clone())
            .add_plugins((crate::ServerClicks, crate::HotbarSlots))
            .add_event::<SetBlock>()
            .add_event::<crate::signs::SignPlaced>()
            .add_event::<edits::BlockEntityPlaced>()
            .add_event::<Saved>()
            .add_systems(Startup, spawn_layer)
            .add_systems(
                Update,
                (
                    init_clients,
                    players::restore,
                    cap_view_distance,
                    unload_columns,
                    // After the unloading: the columns a traveller arrives in have no viewer
                    // until the tick ends, and their portal's blocks are set this tick.
                    crate::portals::light,
                    crate::portals::travel,
                    load_columns,
                    containers::open,
                    edits::dig.run_if(move || edits_on),
                    edits::place.run_if(move || edits_on),
                    apply_edits,
                    edits::keep_placed_block_entities,
                    crate::signs::open_editors,
                    crate::signs::update,
                    players::stage,
                    containers::stage,
                    save,
                    restores::serve,
                    show_durable_tick,
                )
                    .chain()
                    .in_set(TerraneSet),
            )
            .add_systems(Update, (despawn_disconnected_clients, crate::ender_chests::forget_gone))
            .add_systems(Last, players::send_health);
    }
}

fn spawn_layer(
    mut commands: Commands,
    server: Res<Server>,
    dimensions: Res<DimensionTypeRegistry>,
    biomes: Res<BiomeRegistry>,
) {
    let layers = Dimension::ALL.map(|dim| {
        let layer = LayerBundle::new(dim.ident(), &dimensions, &biomes, &server);
        commands.spawn((layer, TerraneLayer, dim)).id()
    });
    commands.insert_resource(DimensionLayers(layers));
}

/// Puts joining clients in the Overworld's layer ([`players::restore`] moves those whose
/// record says another dimension, in the same tick).
#[allow(clippy::type_complexity)]
fn init_clients(
    mut clients: Query<
        (&mut EntityLayerId, &mut VisibleChunkLayer, &mut VisibleEntityLayers),
        Added<Client>,
    >,
    layers: Res<DimensionLayers>,
) {
    for (mut id, mut chunks, mut entities) in &mut clients {
        let overworld = layers.of(Dimension::Overworld);
        enter_layer(&mut id, &mut chunks, &mut entities, overworld);
    }
}

fn cap_view_distance(
    mut clients: Query<&mut ViewDistance, Changed<ViewDistance>>,
    settings: Res<Settings>,
) {
    for mut d in &mut clients {
        if d.get() > settings.max_view_distance {
            d.set(settings.max_view_distance);
        }
    }
}

fn unload_columns(
    mut layers: Query<(&mut ChunkLayer, &Dimension), With<TerraneLayer>>,
    mut tw: ResMut<TerraneWorld>,
) {
    for (mut layer, &dim) in &mut layers {
        let mut gone = Vec::new();
        layer.retain_chunks(|pos, chunk| {
            let keep = chunk.viewer_count_mut() > 0;
            if !keep {
                gone.push(pos);
            }
            keep
        });
        for pos in gone {
            if let Err(e) = tw.unload_column(dim, pos.x, pos.z) {
                tw.fail(e);
            }
        }
    }
}

fn load_columns(
    mut layers: Query<(Entity, &mut ChunkLayer, &Dimension), With<TerraneLayer>>,
    clients: Query<(View, &VisibleChunkLayer), With<Client>>,
    mut tw: ResMut<TerraneWorld>,
    settings: Res<Settings>,
) {
    for (entity, mut layer, &dim) in &mut layers {
        let views = clients.iter().filter(|(_, v)| v.0 == entity).map(|(view, _)| view.get());
        load_layer_columns(&mut layer, dim, views, &mut tw, &settings);
    }
}

/// Loads the columns of `dim`'s layer its viewers see (read ahead first, nearest first).
fn load_layer_columns(
    layer: &mut ChunkLayer,
    dim: Dimension,
    views: impl Iterator<Item = ChunkView>,
    tw: &mut TerraneWorld,
    settings: &Settings,
) {
    // Every column a player sees or will soon see (its view and a ring beyond), and those
    // of them it sees, each nearest first.
    let mut ahead = Vec::new();
    let mut wanted = Vec::new();
    for view in views {
        let wide = view.with_dist(view.dist().saturating_add(settings.read_ahead));
        for pos in wide.iter() {
            if layer.chunk(pos).is_none() {
                let d = view.pos.distance_squared(pos);
                ahead.push((d, pos));
                if view.contains(pos) {
                    wanted.push((d, pos));
                }
            }
        }
    }
    ahead.sort_unstable_by_key(|w| w.0);
    let ahead: Vec<(i32, i32)> = ahead.into_iter().map(|(_, p)| (p.x, p.z)).collect();
    tw.read_ahead_columns(dim, &ahead);
    // Of the columns seen, those read ahead: nearest first, at most `columns_per_tick`, all
    // read from the world together (from memory when read ahead).
    wanted.sort_unstable_by_key(|w| w.0);
    let mut batch: Vec<(i32, i32)> = Vec::new();
    for (_, pos) in wanted {
        if batch.len() == settings.columns_per_tick {
            break;
        }
        if !batch.contains(&(pos.x, pos.z)) && tw.is_column_ready(dim, pos.x, pos.z) {
            batch.push((pos.x, pos.z));
        }
    }
    if batch.is_empty() {
        return;
    }
    match tw.load_columns(dim, &batch) {
        Ok(columns) => {
            for (&(x, z), chunk) in batch.iter().zip(columns) {
                layer.insert_chunk(ChunkPos::new(x, z), chunk);
            }
        }
        Err(e) => tw.fail(e),
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn apply_edits(
    mut commands: Commands,
    mut edits: EventReader<SetBlock>,
    mut layers: Query<&mut ChunkLayer, With<TerraneLayer>>,
    dimension_layers: Res<DimensionLayers>,
    mut tw: ResMut<TerraneWorld>,
    mut containers: ResMut<Containers>,
    viewers: Query<(Entity, &OpenInventory)>,
    server: Res<Server>,
) {
    let edits: Vec<SetBlock> = edits.iter().copied().collect();
    if edits.is_empty() {
        return;
    }
    let new: Vec<BlockState> =
        edits.iter().map(|e| e.state).filter(|s| tw.block_id(*s).is_none()).collect();
    if !new.is_empty()
        && let Err(e) = tw.register(new)
    {
        tw.fail(e);
        return;
    }
    let tick = tw.tick_of(server.current_tick());
    for e in edits {
        let (p, dim) = (e.position, e.dimension);
        let Ok(mut layer) = layers.get_mut(dimension_layers.of(dim)) else { continue };
        // Recorded for the save first: an edit terrane cannot record is not shown either, so
        // what a player sees after a save is what the world holds.
        if layer.block(p).is_none() || !tw.set_block(dim, p.x, p.y, p.z, e.state) {
            continue;
        }
        let Some(old) = layer.set_block(p, e.state) else { continue };
        tw.note_applied(tick, dim, [p.x, p.y, p.z], e.state);
        if containers::is_container(old.state) && old.state.to_kind() != e.state.to_kind() {
            containers::remove(&mut commands, &mut containers, &viewers, &mut tw, dim, p);
        }
    }
}

pub(crate) fn save(
    server: Res<Server>,
    mut tw: ResMut<TerraneWorld>,
    settings: Res<Settings>,
    mut saved: EventWriter<Saved>,
) {
    let tick = tw.tick_of(server.current_tick());
    let due = |every: u32| tick.is_multiple_of(u64::from(every.max(1)));
    let flush = tw.take_flush();
    let parts: &[SaveParts] = match settings.players_apart {
        _ if flush => &[SaveParts::All],
        None if due(settings.save_every) => &[SaveParts::All],
        None => &[],
        Some(n) => match (due(settings.save_every), due(n)) {
            (true, true) => &[SaveParts::AllButPlayers, SaveParts::Players],
            (true, false) => &[SaveParts::AllButPlayers],
            (false, true) => &[SaveParts::Players],
            (false, false) => &[],
        },
    };
    for &p in parts {
        if let Err(e) = tw.save_parts(tick, p) {
            return tw.fail(e);
        }
    }
    send_landed(&mut tw, &mut saved);
}

/// Sends [`Saved`] for every save that became durable since the last call (at once on a
/// world that saves synchronously, as they land with saves in flight).
pub(crate) fn send_landed(tw: &mut TerraneWorld, saved: &mut EventWriter<Saved>) {
    match tw.take_landed() {
        Ok(ticks) => {
            for tick in ticks {
                saved.send(Saved { tick });
            }
        }
        Err(e) => tw.fail(e),
    }
}

/// Shows the last durable tick in the tab list's footer (`saved <tick>`), at most once a
/// second: clients learn what is saved without a line of chat.
fn show_durable_tick(
    server: Res<Server>,
    tw: Res<TerraneWorld>,
    list: Option<ResMut<valence::player_list::PlayerList>>,
    mut shown: Local<(u64, i64)>,
) {
    let Some(mut list) = list else { return };
    let now = server.current_tick();
    let rate = i64::from(server.tick_rate().get());
    if tw.durable_tick() != shown.0 && now - shown.1 >= rate {
        *shown = (tw.durable_tick(), now);
        list.set_footer(format!("saved {}", tw.durable_tick()));
    }
}
