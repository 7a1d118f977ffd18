//! The Nether and the End served: a player walks into a Nether portal and is in the Nether
//! (at the place scaled by 1/8, in a portal built there, saved with the tick, their record
//! naming the Nether), walks back through it to the portal they came from, and an End portal
//! takes them onto the End's obsidian platform. A Valence app with the plugin and a mock
//! client (Valence's `testing` feature), on a world in memory.

use std::time::Duration;

use terrane::worldgen::Terrain;
use terrane::{Backend, ChunkPos, World, game};
use terrane_valence::{Dimension, SetBlock, Settings, TerraneLayer, TerranePlugin, TerraneWorld};
use valence::ServerSettings;
use valence::keepalive::KeepaliveSettings;
use valence::network::NetworkPlugin;
use valence::prelude::*;
use valence::testing::create_mock_client;

fn app(dir: &std::path::Path) -> App {
    app_with(dir, Settings::default())
}

fn app_with(dir: &std::path::Path, settings: Settings) -> App {
    let world = World::builder().backend(Backend::Memory).create(dir).unwrap();
    let tw = TerraneWorld::new(world, BlockState::BEDROCK, Terrain::Flat).unwrap();
    let mut app = App::new();
    app.insert_resource(KeepaliveSettings { period: Duration::MAX })
        .insert_resource(ServerSettings { compression_threshold: None, ..Default::default() })
        .add_plugins(DefaultPlugins.build().disable::<NetworkPlugin>())
        .add_plugins(TerranePlugin::new(tw, settings));
    app.update(); // the plugins' start: one layer per dimension
    app
}

/// The dimension of the layer `client` sees.
fn dimension_of(app: &mut App, client: Entity) -> Dimension {
    let layer = app.world.get::<VisibleChunkLayer>(client).unwrap().0;
    *app.world.get::<Dimension>(layer).expect("a terrane layer")
}

fn position(app: &App, client: Entity) -> DVec3 {
    app.world.get::<Position>(client).unwrap().0
}

/// The name of the block at `p` of `dim` as the world holds it (saved or loaded).
fn block(app: &App, dim: Dimension, p: [i32; 3]) -> String {
    let tw = app.world.resource::<TerraneWorld>();
    let pos = ChunkPos::new(
        i64::from(p[0].div_euclid(16)),
        i64::from(p[1].div_euclid(16)),
        i64::from(p[2].div_euclid(16)),
    );
    let Some(c) = tw.world().get_chunk_in(dim.id(), pos).unwrap() else {
        return "minecraft:air".into();
    };
    let id =
        c.get(p[0].rem_euclid(16) as u32, p[1].rem_euclid(16) as u32, p[2].rem_euclid(16) as u32);
    tw.world().schema().blocks().get(id.0).unwrap().to_string()
}

fn ticks(app: &mut App, n: usize) {
    for _ in 0..n {
        app.update();
    }
}

#[test]
fn portals_take_a_player_to_the_nether_back_and_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    let layers: Vec<Dimension> = {
        let mut q = app.world.query_filtered::<&Dimension, With<TerraneLayer>>();
        q.iter(&app.world).copied().collect()
    };
    assert_eq!(layers.len(), 3, "a layer per dimension: {layers:?}");

    let (client, _helper) = create_mock_client("Steve");
    let client = app.world.spawn(client).id();
    ticks(&mut app, 3);
    assert_eq!(dimension_of(&mut app, client), Dimension::Overworld);

    // A Nether portal (two blocks high) at (16, 65..67, 16) in the Overworld, and the
    // player (creative: at once) stepping into it.
    for y in 65..67 {
        let state = BlockState::NETHER_PORTAL.set(PropName::Axis, PropValue::X);
        app.world.send_event(SetBlock::overworld(BlockPos::new(16, y, 16), state));
    }
    ticks(&mut app, 2);
    app.world.get_mut::<Position>(client).unwrap().set([16.5, 65.0, 16.5]);
    ticks(&mut app, 3);

    assert_eq!(dimension_of(&mut app, client), Dimension::Nether, "through the portal");
    let at = position(&app, client);
    assert_eq!((at.x, at.z), (3.0, 2.5), "at (16, 16) / 8, in the middle of the portal built");
    let (x, y, z) = (2, at.y as i32, 2);
    assert!(y >= 32, "above the lava sea: {y}");
    // The portal built is saved in the Nether, and the player's record names the Nether.
    assert!(block(&app, Dimension::Nether, [x, y, z]).starts_with("minecraft:nether_portal"));
    // And the Nether's layer shows it (what clients are sent).
    let shown = {
        let mut q = app.world.query::<(&ChunkLayer, &Dimension)>();
        let (layer, _) = q.iter(&app.world).find(|(_, d)| **d == Dimension::Nether).unwrap();
        layer.block(BlockPos::new(x, y, z)).map(|b| b.state.to_kind())
    };
    assert_eq!(shown, Some(BlockKind::NetherPortal));
    assert_eq!(block(&app, Dimension::Nether, [x - 1, y, z]), "minecraft:obsidian");
    assert_eq!(block(&app, Dimension::Nether, [x, y - 1, z]), "minecraft:obsidian");
    assert!(
        block(&app, Dimension::Overworld, [x, y, z]) != block(&app, Dimension::Nether, [x, y, z])
    );
    let id = game::offline_player_id("Steve");
    let record = game::player(app.world.resource::<TerraneWorld>().world(), id).unwrap().unwrap();
    assert_eq!(record.dimension, 1);
    // Still standing in the portal it arrived through: it does not take them back.
    ticks(&mut app, 3);
    assert_eq!(dimension_of(&mut app, client), Dimension::Nether);

    // Out of it and in again: back to the Overworld, into the portal they came from.
    app.world.get_mut::<Position>(client).unwrap().set([x as f64 + 1.0, y as f64, 0.5]);
    ticks(&mut app, 2);
    app.world.get_mut::<Position>(client).unwrap().set([x as f64 + 1.0, y as f64, 2.5]);
    ticks(&mut app, 3);
    assert_eq!(dimension_of(&mut app, client), Dimension::Overworld);
    let back = position(&app, client);
    assert_eq!((back.x, back.y, back.z), (16.5, 65.0, 16.5), "the portal they left");

    // An End portal: onto the End's platform at (100, 48, 0).
    app.world.send_event(SetBlock::overworld(BlockPos::new(30, 65, 30), BlockState::END_PORTAL));
    ticks(&mut app, 2);
    app.world.get_mut::<Position>(client).unwrap().set([30.5, 65.0, 30.5]);
    ticks(&mut app, 3);
    assert_eq!(dimension_of(&mut app, client), Dimension::End);
    let end = position(&app, client);
    assert_eq!((end.x, end.y, end.z), (100.5, 49.0, 0.5));
    assert_eq!(block(&app, Dimension::End, [100, 48, 0]), "minecraft:obsidian");
    assert_eq!(block(&app, Dimension::End, [102, 48, -2]), "minecraft:obsidian");
    assert_eq!(block(&app, Dimension::End, [100, 49, 0]), "minecraft:air");
    let record = game::player(app.world.resource::<TerraneWorld>().world(), id).unwrap().unwrap();
    assert_eq!(record.dimension, 2);
}

/// A survival player goes through a Nether portal only after standing in it for the game's
/// 4 seconds (80 ticks); creative players go at once (above).
#[test]
fn a_survival_player_waits_in_a_nether_portal_before_it_takes_them() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings { game_mode: GameMode::Survival, ..Settings::default() };
    let mut app = app_with(dir.path(), settings);
    let (client, _helper) = create_mock_client("Alex");
    let client = app.world.spawn(client).id();
    ticks(&mut app, 3);
    for y in 65..67 {
        let state = BlockState::NETHER_PORTAL.set(PropName::Axis, PropValue::X);
        app.world.send_event(SetBlock::overworld(BlockPos::new(16, y, 16), state));
    }
    ticks(&mut app, 2);
    app.world.get_mut::<Position>(client).unwrap().set([16.5, 65.0, 16.5]);
    ticks(&mut app, 70);
    assert_eq!(dimension_of(&mut app, client), Dimension::Overworld, "70 ticks: not yet");
    ticks(&mut app, 15);
    assert_eq!(dimension_of(&mut app, client), Dimension::Nether, "past 80 ticks");
}

/// Flint and steel used on an obsidian frame lights its inside as Nether portal blocks,
/// saved with the tick; used on a frame with a side missing it lights nothing.
#[test]
fn flint_and_steel_lights_a_whole_obsidian_frame() {
    use valence::interact_block::InteractBlockEvent;
    let dir = tempfile::tempdir().unwrap();
    let mut app = app(dir.path());
    let (client, _helper) = create_mock_client("Sam");
    let client = app.world.spawn(client).id();
    ticks(&mut app, 3);
    // Two frames standing along x on the stone floor (y 64): 4 wide, 5 high; the second
    // without its right side's middle block.
    for (z, whole) in [(4, true), (10, false)] {
        for x in 0..4 {
            for y in 65..70 {
                let edge = x == 0 || x == 3 || y == 65 || y == 69;
                if edge && (whole || (x, y) != (3, 67)) {
                    let at = BlockPos::new(x, y, z);
                    app.world.send_event(SetBlock::overworld(at, BlockState::OBSIDIAN));
                }
            }
        }
    }
    app.world
        .get_mut::<Inventory>(client)
        .unwrap()
        .set_slot(36, Some(ItemStack::new(ItemKind::FlintAndSteel, 1, None)));
    ticks(&mut app, 2);
    for z in [4, 10] {
        // Used against the top of the frame's bottom, inside it.
        app.world.send_event(InteractBlockEvent {
            client,
            hand: Hand::Main,
            position: BlockPos::new(1, 65, z),
            face: Direction::Up,
            cursor_pos: Vec3::new(0.5, 1.0, 0.5),
            head_inside_block: false,
            sequence: 0,
        });
    }
    ticks(&mut app, 2);
    for x in 1..3 {
        for y in 66..69 {
            assert_eq!(
                block(&app, Dimension::Overworld, [x, y, 4]),
                "minecraft:nether_portal[axis=x]",
                "({x}, {y}, 4)"
            );
            assert_eq!(block(&app, Dimension::Overworld, [x, y, 10]), "minecraft:air");
        }
    }
}
