//! [`TerranePlugin`]: the Bevy plugin that plays a Valence server on a terrane world.

use std::sync::Mutex;

use valence::prelude::*;
use valence::protocol::packets::play::HealthUpdateS2c;
use valence::protocol::{VarInt, WritePacket};

use crate::edits::{self, SetBlock};
use crate::flat::TOP_Y;
use crate::world::TerraneWorld;

/// The plugin's settings, with their defaults.
#[derive(Resource, Clone, Debug)]
pub struct Settings {
    /// Save every this many ticks (default 1: every tick that changed something).
    pub save_every: u32,
    /// Where players appear (default `[8.5, 65.0, 8.5]`, on the flat ground's grass).
    pub spawn: [f64; 3],
    /// Players' game mode (default creative).
    pub game_mode: GameMode,
    /// Columns loaded per tick at most, nearest to a player first (default 64); the rest
    /// follow in the next ticks.
    pub columns_per_tick: usize,
    /// The largest view distance granted, in chunks (default 10); a client asking for more
    /// gets this.
    pub max_view_distance: u8,
    /// What a block state Valence does not know is shown as (default bedrock).
    pub stand_in: BlockState,
    /// Whether players dig and place blocks through the plugin's own systems (default
    /// `true`); without them, send [`SetBlock`] from your own.
    pub player_edits: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            save_every: 1,
            spawn: [8.5, f64::from(TOP_Y + 1), 8.5],
            game_mode: GameMode::Creative,
            columns_per_tick: 64,
            max_view_distance: 10,
            stand_in: BlockState::BEDROCK,
            player_edits: true,
        }
    }
}

/// Marks the chunk layer the plugin fills from terrane.
#[derive(Component, Clone, Copy, Debug, Default)]
pub struct TerraneLayer;

/// Sent after each acknowledged save: every change up to `tick` is durable.
#[derive(Event, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Saved {
    /// The terrane tick saved.
    pub tick: u64,
}

/// The systems of the plugin, in the order they run in `Update`.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TerraneSet;

/// Plays Valence on a terrane world: spawns one chunk and entity layer (Overworld,
/// y −64..320) marked [`TerraneLayer`], puts joining clients in it, loads the columns
/// players see from terrane and unloads those nobody sees, applies [`SetBlock`]s, and saves
/// them as one `TickSave` per tick (or every [`Settings::save_every`] ticks), sending
/// [`Saved`].
pub struct TerranePlugin {
    world: Mutex<Option<TerraneWorld>>,
    settings: Settings,
}

impl TerranePlugin {
    /// The plugin over `world`, with `settings`.
    pub fn new(world: TerraneWorld, settings: Settings) -> Self {
        Self { world: Mutex::new(Some(world)), settings }
    }
}

impl Plugin for TerranePlugin {
    fn build(&self, app: &mut App) {
        let world = self.world.lock().ok().and_then(|mut w| w.take());
        let Some(world) = world else {
            tracing::error!("TerranePlugin added twice: the second one does nothing");
            return;
        };
        let edits_on = self.settings.player_edits;
        app.insert_resource(world)
            .insert_resource(self.settings.clone())
            .add_event::<SetBlock>()
            .add_event::<Saved>()
            .add_systems(Startup, spawn_layer)
            .add_systems(
                Update,
                (
                    init_clients,
                    cap_view_distance,
                    unload_columns,
                    load_columns,
                    edits::dig.run_if(move || edits_on),
                    edits::place.run_if(move || edits_on),
                    apply_edits,
                    save,
                )
                    .chain()
                    .in_set(TerraneSet),
            )
            .add_systems(Update, despawn_disconnected_clients);
    }
}

fn spawn_layer(
    mut commands: Commands,
    server: Res<Server>,
    dimensions: Res<DimensionTypeRegistry>,
    biomes: Res<BiomeRegistry>,
) {
    let layer = LayerBundle::new(ident!("overworld"), &dimensions, &biomes, &server);
    commands.spawn((layer, TerraneLayer));
}

#[allow(clippy::type_complexity)]
fn init_clients(
    mut clients: Query<
        (
            &mut Client,
            &mut EntityLayerId,
            &mut VisibleChunkLayer,
            &mut VisibleEntityLayers,
            &mut Position,
            &mut GameMode,
        ),
        Added<Client>,
    >,
    layers: Query<Entity, (With<ChunkLayer>, With<EntityLayer>, With<TerraneLayer>)>,
    settings: Res<Settings>,
) {
    let Ok(layer) = layers.get_single() else { return };
    for (mut client, mut id, mut chunks, mut entities, mut pos, mut mode) in &mut clients {
        id.0 = layer;
        chunks.0 = layer;
        entities.0.insert(layer);
        pos.set(settings.spawn);
        *mode = settings.game_mode;
        // As a vanilla server does on joining: clients (mineflayer's `spawn`) wait for it.
        client.write_packet(&HealthUpdateS2c {
            health: 20.0,
            food: VarInt(20),
            food_saturation: 5.0,
        });
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
    mut layers: Query<&mut ChunkLayer, With<TerraneLayer>>,
    mut tw: ResMut<TerraneWorld>,
) {
    let Ok(mut layer) = layers.get_single_mut() else { return };
    let mut gone = Vec::new();
    layer.retain_chunks(|pos, chunk| {
        let keep = chunk.viewer_count_mut() > 0;
        if !keep {
            gone.push(pos);
        }
        keep
    });
    for pos in gone {
        if let Err(e) = tw.unload_column(pos.x, pos.z) {
            tw.fail(e);
        }
    }
}

fn load_columns(
    mut layers: Query<&mut ChunkLayer, With<TerraneLayer>>,
    clients: Query<View, With<Client>>,
    mut tw: ResMut<TerraneWorld>,
    settings: Res<Settings>,
) {
    let Ok(mut layer) = layers.get_single_mut() else { return };
    let mut wanted = Vec::new();
    for view in &clients {
        let view = view.get();
        for pos in view.iter() {
            if layer.chunk(pos).is_none() {
                wanted.push((view.pos.distance_squared(pos), pos));
            }
        }
    }
    wanted.sort_unstable_by_key(|w| w.0);
    wanted.dedup_by_key(|w| w.1);
    let mut loaded = 0;
    for (_, pos) in wanted {
        if loaded == settings.columns_per_tick || layer.chunk(pos).is_some() {
            continue;
        }
        match tw.load_column(pos.x, pos.z) {
            Ok(chunk) => {
                layer.insert_chunk(pos, chunk);
                loaded += 1;
            }
            Err(e) => {
                tw.fail(e);
                return;
            }
        }
    }
}

fn apply_edits(
    mut edits: EventReader<SetBlock>,
    mut layers: Query<&mut ChunkLayer, With<TerraneLayer>>,
    mut tw: ResMut<TerraneWorld>,
) {
    let edits: Vec<SetBlock> = edits.iter().copied().collect();
    if edits.is_empty() {
        return;
    }
    let Ok(mut layer) = layers.get_single_mut() else { return };
    let new: Vec<BlockState> =
        edits.iter().map(|e| e.state).filter(|s| tw.block_id(*s).is_none()).collect();
    if !new.is_empty()
        && let Err(e) = tw.register(new)
    {
        tw.fail(e);
        return;
    }
    for e in edits {
        if layer.set_block(e.position, e.state).is_some() {
            tw.set_block(e.position.x, e.position.y, e.position.z, e.state);
        }
    }
}

fn save(
    server: Res<Server>,
    mut tw: ResMut<TerraneWorld>,
    settings: Res<Settings>,
    mut saved: EventWriter<Saved>,
) {
    let tick = tw.tick_of(server.current_tick());
    let flush = tw.take_flush();
    if !flush && !tick.is_multiple_of(u64::from(settings.save_every.max(1))) {
        return;
    }
    match tw.save(tick) {
        Ok(true) => saved.send(Saved { tick }),
        Ok(false) => {}
        Err(e) => tw.fail(e),
    }
}
