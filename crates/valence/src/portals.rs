//! Portals between the three [`Dimension`]s, as the game has them:
//!
//! - A player in a Nether portal goes to the other of the Overworld and the Nether, at the
//!   same place scaled (Overworld x and z ÷ 8 in the Nether, Nether × 8 in the Overworld):
//!   at once in creative mode, after standing in it for [`NETHER_PORTAL_TICKS`] otherwise.
//!   They arrive in a Nether portal near that place when one stands in the 3 × 3 columns
//!   around it (the game looks 128 blocks around in the Overworld, 16 in the Nether), else in
//!   one built there: an obsidian frame, lit, on an obsidian ledge, with room to step out.
//! - A player in an End portal goes from the Overworld to the End, onto the obsidian platform
//!   at (100, 48, 0) (built, with air above it, as the game builds it), and from the End back
//!   to the Overworld's spawn.
//! - Flint and steel used on a block of an obsidian frame's inside (2–21 wide, 3–21 high,
//!   standing along x or z) lights it: its inside becomes Nether portal blocks. The flint and
//!   steel is not worn (Valence keeps no item damage).
//!
//! Every block a portal builds or lights goes through [`SetBlock`]: saved with the tick.
//! A player arriving stands in the portal; it takes them again only once they stepped out.

use valence::interact_block::InteractBlockEvent;
use valence::prelude::*;
use valence::protocol::packets::play::PlayerRespawnS2c;
use valence::protocol::{GlobalPos, VarInt, WritePacket};
use valence::spawn::{DeathLocation, HashedSeed, IsDebug, IsFlat, PrevGameMode};

use crate::Dimension;
use crate::edits::SetBlock;
use crate::plugin::{DimensionLayers, Settings, TerraneLayer};
use crate::world::TerraneWorld;

/// Ticks a survival or adventure player stands in a Nether portal before it takes them (the
/// game's 4 seconds).
pub const NETHER_PORTAL_TICKS: u32 = 80;

/// Where the End's arrival platform is: its centre block (the player stands one above).
const END_PLATFORM: BlockPos = BlockPos::new(100, 48, 0);

/// A player standing in a portal: its kind, for how many ticks, and whether they arrived
/// through it (it does not take them back before they step out).
#[derive(Component, Clone, Copy, Debug)]
pub(crate) struct InPortal {
    kind: BlockKind,
    ticks: u32,
    arrived: bool,
}

/// The kind of portal block at a player's feet or head.
fn portal_at(layer: &ChunkLayer, pos: &Position) -> Option<BlockKind> {
    let feet =
        BlockPos::new(pos.0.x.floor() as i32, pos.0.y.floor() as i32, pos.0.z.floor() as i32);
    [feet, BlockPos::new(feet.x, feet.y + 1, feet.z)].into_iter().find_map(|p| {
        let kind = layer.block(p)?.state.to_kind();
        matches!(kind, BlockKind::NetherPortal | BlockKind::EndPortal).then_some(kind)
    })
}

/// Takes the players who stood long enough in a portal to its other side.
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(crate) fn travel(
    mut commands: Commands,
    mut clients: Query<
        (
            Entity,
            &mut Position,
            &GameMode,
            (&mut EntityLayerId, &mut VisibleChunkLayer, &mut VisibleEntityLayers),
            Option<&mut InPortal>,
        ),
        With<Client>,
    >,
    mut layers: Query<(&mut ChunkLayer, &Dimension), With<TerraneLayer>>,
    (mut net, respawn): (
        Query<&mut Client>,
        Query<(&HashedSeed, &PrevGameMode, &IsDebug, &IsFlat, &DeathLocation)>,
    ),
    dimension_layers: Res<DimensionLayers>,
    mut tw: ResMut<TerraneWorld>,
    settings: Res<Settings>,
    mut edits: EventWriter<SetBlock>,
) {
    for (entity, mut pos, mode, (mut id, mut chunks, mut entities), in_portal) in &mut clients {
        let Ok((layer, &from)) = layers.get(chunks.0) else { continue };
        let Some(kind) = portal_at(layer, &pos) else {
            if in_portal.is_some() {
                commands.entity(entity).remove::<InPortal>();
            }
            continue;
        };
        let mut state = match in_portal {
            Some(p) if p.kind == kind => *p,
            _ => InPortal { kind, ticks: 0, arrived: false },
        };
        state.ticks += 1;
        let due = match kind {
            BlockKind::NetherPortal if *mode != GameMode::Creative => NETHER_PORTAL_TICKS,
            _ => 1,
        };
        if state.arrived || state.ticks < due {
            commands.entity(entity).insert(state);
            continue;
        }
        let to = match (kind, from) {
            (BlockKind::NetherPortal, Dimension::Overworld) => Dimension::Nether,
            (BlockKind::NetherPortal, Dimension::Nether) => Dimension::Overworld,
            (BlockKind::EndPortal, Dimension::Overworld) => Dimension::End,
            (BlockKind::EndPortal, Dimension::End) => Dimension::Overworld,
            _ => continue, // a portal that leads nowhere from here
        };
        let Ok((mut target, _)) = layers.get_mut(dimension_layers.of(to)) else { continue };
        let arrival = match (kind, to) {
            (BlockKind::EndPortal, Dimension::Overworld) => {
                Some(crate::players::spawn_point(&mut tw, &settings))
            }
            (BlockKind::EndPortal, _) => end_platform(&mut target, &mut tw, &mut edits),
            _ => {
                let scale = |v: f64| if to == Dimension::Nether { v / 8.0 } else { v * 8.0 };
                let spot = (scale(pos.0.x).floor() as i32, scale(pos.0.z).floor() as i32);
                nether_arrival(&mut target, to, spot, &mut tw, &mut edits)
            }
        };
        let Some(arrival) = arrival else { continue };
        // The client is told it respawns in the other dimension now, before the chunks of its
        // new layer are written to it: Valence 0.2 writes its own respawn packet after them,
        // and a client drops the chunks it holds when it respawns. The layer changes without
        // Valence seeing a change of it, so it sends no second respawn; it still sends the
        // new layer's chunks (the player moved) and takes the old ones away.
        if let (Ok(mut client), Ok(r)) = (net.get_mut(entity), respawn.get(entity)) {
            client.write_packet(&respawn_packet(to, *mode, r));
        }
        let layer = dimension_layers.of(to);
        entities.0.remove(&chunks.0);
        entities.0.insert(layer);
        id.0 = layer;
        chunks.bypass_change_detection().0 = layer;
        pos.set(arrival);
        commands.entity(entity).insert(InPortal { kind, ticks: 0, arrived: true });
        tracing::info!("a player went from {from:?} to {to:?}, at {arrival:?}");
    }
}

/// The packet that tells a client in game mode `mode` it respawns in dimension `to`, as
/// Valence writes it when a client changes layers.
fn respawn_packet(
    to: Dimension,
    mode: GameMode,
    (seed, previous, debug, flat, death): (
        &HashedSeed,
        &PrevGameMode,
        &IsDebug,
        &IsFlat,
        &DeathLocation,
    ),
) -> PlayerRespawnS2c<'static> {
    let name = to.ident();
    PlayerRespawnS2c {
        dimension_type_name: name.into(),
        dimension_name: name.into(),
        hashed_seed: seed.0,
        game_mode: mode,
        previous_game_mode: previous.0.map_or(-1, |g| g as i8),
        is_debug: debug.0,
        is_flat: flat.0,
        copy_metadata: true,
        last_death_location: death.0.as_ref().map(|(dimension, position)| GlobalPos {
            dimension_name: dimension.as_str_ident().to_string_ident().into(),
            position: *position,
        }),
        portal_cooldown: VarInt(0),
    }
}

/// Loads the columns of `dim` within one column of block column (`x`, `z`) into its layer
/// (those not loaded yet); `false` when the world failed.
fn load_around(
    layer: &mut ChunkLayer,
    dim: Dimension,
    x: i32,
    z: i32,
    tw: &mut TerraneWorld,
) -> bool {
    let (cx, cz) = (x.div_euclid(16), z.div_euclid(16));
    let mut missing = Vec::new();
    for dx in -1..=1 {
        for dz in -1..=1 {
            let c = (cx + dx, cz + dz);
            if layer.chunk(ChunkPos::new(c.0, c.1)).is_none() && !tw.is_loaded(dim, c.0, c.1) {
                missing.push(c);
            }
        }
    }
    match tw.load_columns(dim, &missing) {
        Ok(columns) => {
            for (&(x, z), column) in missing.iter().zip(columns) {
                layer.insert_chunk(ChunkPos::new(x, z), column);
            }
            true
        }
        Err(e) => {
            tw.fail(e);
            false
        }
    }
}

/// The End's arrival: the obsidian platform at [`END_PLATFORM`] (5 × 5) with three blocks of
/// air above it, built whatever stands there, as the game does; the player stands on its
/// centre.
fn end_platform(
    layer: &mut ChunkLayer,
    tw: &mut TerraneWorld,
    edits: &mut EventWriter<SetBlock>,
) -> Option<[f64; 3]> {
    let c = END_PLATFORM;
    if !load_around(layer, Dimension::End, c.x, c.z, tw) {
        return None;
    }
    for dx in -2..=2 {
        for dz in -2..=2 {
            for dy in 0..=3 {
                let state = if dy == 0 { BlockState::OBSIDIAN } else { BlockState::AIR };
                let position = BlockPos::new(c.x + dx, c.y + dy, c.z + dz);
                if layer.block(position).map(|b| b.state) != Some(state) {
                    edits.send(SetBlock { dimension: Dimension::End, position, state });
                }
            }
        }
    }
    Some([f64::from(c.x) + 0.5, f64::from(c.y) + 1.0, f64::from(c.z) + 0.5])
}

/// Where a player coming through a Nether portal arrives in `dim` near block column `spot`:
/// in a portal standing in the columns around it, else in one built at `spot`.
fn nether_arrival(
    layer: &mut ChunkLayer,
    dim: Dimension,
    spot: (i32, i32),
    tw: &mut TerraneWorld,
    edits: &mut EventWriter<SetBlock>,
) -> Option<[f64; 3]> {
    if !load_around(layer, dim, spot.0, spot.1, tw) {
        return None;
    }
    if let Some(p) = nearest_portal(layer, dim, spot) {
        return Some([f64::from(p.x) + 0.5, f64::from(p.y), f64::from(p.z) + 0.5]);
    }
    // None: one built on the ground at the spot (in the Nether, on the cavern's floor under
    // its roof; over lava or the void, on the ledge it stands on).
    let (x, z) = spot;
    let top = i32::try_from(i64::from(dim.min_y()) + i64::from(dim.height())).unwrap_or(i32::MAX);
    let roof = if dim == Dimension::Nether { 120 } else { top - 6 };
    let ground = floor_under(layer, dim, x, z, roof).unwrap_or(64);
    let floor = if dim == Dimension::Nether { ground.max(32) } else { ground };
    let y = floor.clamp(dim.min_y() + 1, roof);
    build_portal(dim, BlockPos::new(x, y, z), edits);
    Some([f64::from(x) + 1.0, f64::from(y), f64::from(z) + 0.5])
}

/// The y a player stands at in block column (`x`, `z`) below `y` in the loaded `layer`: on
/// the highest block (not air) with air above it, found going down from `y` (under a
/// cavern's roof, its floor); `None` when there is none.
fn floor_under(layer: &ChunkLayer, dim: Dimension, x: i32, z: i32, y: i32) -> Option<i32> {
    let mut air_above = false;
    for y in (dim.min_y()..y).rev() {
        let state = layer.block(BlockPos::new(x, y, z))?.state;
        if state.is_air() {
            air_above = true;
        } else if air_above {
            return Some(y + 1);
        }
    }
    None
}

/// The lowest block of the Nether portal nearest to `spot` in the loaded columns around it.
fn nearest_portal(layer: &ChunkLayer, dim: Dimension, spot: (i32, i32)) -> Option<BlockPos> {
    let (cx, cz) = (spot.0.div_euclid(16), spot.1.div_euclid(16));
    let mut best: Option<(i64, BlockPos)> = None;
    for dx in -1..=1 {
        for dz in -1..=1 {
            let (x0, z0) = (cx + dx, cz + dz);
            let Some(chunk) = layer.chunk(ChunkPos::new(x0, z0)) else { continue };
            for ly in 0..dim.height() {
                for lz in 0..16u32 {
                    for lx in 0..16u32 {
                        if chunk.block_state(lx, ly, lz).to_kind() != BlockKind::NetherPortal {
                            continue;
                        }
                        let y = dim.min_y() + ly as i32;
                        // Its lowest block: the one with none below it.
                        if ly > 0
                            && chunk.block_state(lx, ly - 1, lz).to_kind()
                                == BlockKind::NetherPortal
                        {
                            continue;
                        }
                        let p = BlockPos::new(x0 * 16 + lx as i32, y, z0 * 16 + lz as i32);
                        let d = i64::from(p.x - spot.0).pow(2) + i64::from(p.z - spot.1).pow(2);
                        if best.is_none_or(|(b, _)| d < b) {
                            best = Some((d, p));
                        }
                    }
                }
            }
        }
    }
    best.map(|(_, p)| p)
}

/// Builds a lit Nether portal standing along x whose lower-left inside block is `at`: an
/// obsidian frame 4 wide and 5 high, an obsidian ledge under it reaching one block to each
/// side, and air where a player steps out.
fn build_portal(dim: Dimension, at: BlockPos, edits: &mut EventWriter<SetBlock>) {
    let portal = BlockState::NETHER_PORTAL.set(PropName::Axis, PropValue::X);
    let mut set = |x: i32, y: i32, z: i32, state: BlockState| {
        edits.send(SetBlock { dimension: dim, position: BlockPos::new(x, y, z), state });
    };
    for dx in -1..=2 {
        for dz in -1..=1 {
            set(at.x + dx, at.y - 1, at.z + dz, BlockState::OBSIDIAN);
            for dy in 0..=3 {
                if dz != 0 {
                    set(at.x + dx, at.y + dy, at.z + dz, BlockState::AIR);
                }
            }
        }
        set(at.x + dx, at.y + 3, at.z, BlockState::OBSIDIAN);
    }
    for dy in 0..3 {
        set(at.x - 1, at.y + dy, at.z, BlockState::OBSIDIAN);
        set(at.x + 2, at.y + dy, at.z, BlockState::OBSIDIAN);
        set(at.x, at.y + dy, at.z, portal);
        set(at.x + 1, at.y + dy, at.z, portal);
    }
}

/// The inside of the obsidian frame around `at` (an air block), when there is one: each
/// block of it, and the axis the frame stands along.
pub(crate) fn frame_inside(
    block: impl Fn(BlockPos) -> Option<BlockState>,
    at: BlockPos,
) -> Option<(Vec<BlockPos>, PropValue)> {
    let open = |p: BlockPos| block(p).is_some_and(|s| s.is_air() || s.to_kind() == BlockKind::Fire);
    let obsidian = |p: BlockPos| block(p).is_some_and(|s| s.to_kind() == BlockKind::Obsidian);
    if !open(at) {
        return None;
    }
    for (axis, step) in [(PropValue::X, (1, 0)), (PropValue::Z, (0, 1))] {
        let along = |p: BlockPos, n: i32| BlockPos::new(p.x + step.0 * n, p.y, p.z + step.1 * n);
        // The inside's bottom row, its left end and width.
        let mut bottom = at;
        while open(BlockPos::new(bottom.x, bottom.y - 1, bottom.z)) && at.y - bottom.y < 21 {
            bottom.y -= 1;
        }
        let mut left = 0;
        while open(along(bottom, left - 1)) && -left < 21 {
            left -= 1;
        }
        let mut width = 1;
        while open(along(bottom, left + width)) && width < 22 {
            width += 1;
        }
        if !(2..=21).contains(&width)
            || !obsidian(along(bottom, left - 1))
            || !obsidian(along(bottom, left + width))
        {
            continue;
        }
        let mut height = 1;
        while open(BlockPos::new(along(bottom, left).x, bottom.y + height, along(bottom, left).z))
            && height < 22
        {
            height += 1;
        }
        if !(3..=21).contains(&height) {
            continue;
        }
        let mut inside = Vec::new();
        let mut whole = true;
        for i in left..left + width {
            let col = along(bottom, i);
            whole &= obsidian(BlockPos::new(col.x, bottom.y - 1, col.z))
                && obsidian(BlockPos::new(col.x, bottom.y + height, col.z));
            for dy in 0..height {
                let p = BlockPos::new(col.x, bottom.y + dy, col.z);
                whole &= open(p);
                inside.push(p);
            }
        }
        for dy in 0..height {
            let y = bottom.y + dy;
            for side in [along(bottom, left - 1), along(bottom, left + width)] {
                whole &= obsidian(BlockPos::new(side.x, y, side.z));
            }
        }
        if whole {
            return Some((inside, axis));
        }
    }
    None
}

/// Flint and steel used against a block lights the obsidian frame whose inside is the
/// block beside the face clicked.
pub(crate) fn light(
    clients: Query<(&Inventory, &crate::SelectedSlot, &VisibleChunkLayer)>,
    layers: Query<(&ChunkLayer, &Dimension), With<TerraneLayer>>,
    mut uses: EventReader<InteractBlockEvent>,
    mut edits: EventWriter<SetBlock>,
) {
    for e in uses.iter() {
        let Ok((inventory, held, seen)) = clients.get(e.client) else { continue };
        let Ok((layer, &dimension)) = layers.get(seen.0) else { continue };
        let lit = inventory
            .slot(held.inventory_slot())
            .is_some_and(|s| s.item == ItemKind::FlintAndSteel);
        if e.hand != Hand::Main || !lit || dimension == Dimension::End {
            continue;
        }
        let at = e.position.get_in_direction(e.face);
        let Some((inside, axis)) = frame_inside(|p| layer.block(p).map(|b| b.state), at) else {
            continue;
        };
        let state = BlockState::NETHER_PORTAL.set(PropName::Axis, axis);
        for position in inside {
            edits.send(SetBlock { dimension, position, state });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// A frame 4 wide and 5 high of obsidian standing along `z` at x = 0, from (0, 64, 0).
    fn frame() -> HashMap<BlockPos, BlockState> {
        let mut m = HashMap::new();
        for z in 0..4 {
            for y in 64..69 {
                let edge = z == 0 || z == 3 || y == 64 || y == 68;
                let s = if edge { BlockState::OBSIDIAN } else { BlockState::AIR };
                m.insert(BlockPos::new(0, y, z), s);
            }
        }
        m
    }

    #[test]
    fn a_whole_frame_lights_along_its_axis_and_a_broken_one_does_not() {
        let m = frame();
        let at = |m: &HashMap<BlockPos, BlockState>| {
            let m = m.clone();
            move |p: BlockPos| Some(m.get(&p).copied().unwrap_or(BlockState::AIR))
        };
        let (inside, axis) = frame_inside(at(&m), BlockPos::new(0, 66, 2)).expect("lit");
        assert_eq!(axis, PropValue::Z);
        assert_eq!(inside.len(), 6, "2 wide, 3 high: {inside:?}");
        assert!(
            inside.contains(&BlockPos::new(0, 65, 1)) && inside.contains(&BlockPos::new(0, 67, 2))
        );
        // A corner missing is still a frame (the game needs no corners); a side block is not.
        let mut corner = m.clone();
        corner.insert(BlockPos::new(0, 68, 3), BlockState::AIR);
        assert!(frame_inside(at(&corner), BlockPos::new(0, 65, 1)).is_some());
        let mut broken = m.clone();
        broken.insert(BlockPos::new(0, 66, 3), BlockState::AIR);
        assert!(frame_inside(at(&broken), BlockPos::new(0, 65, 1)).is_none());
        // Not inside any frame.
        assert!(frame_inside(at(&m), BlockPos::new(5, 65, 5)).is_none());
    }
}
