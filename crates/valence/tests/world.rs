//! `TerraneWorld` without a network: columns in, edits out, on an in-memory world.

use terrane::game;
use terrane::worldgen::Terrain;
use terrane::{Backend, Chunk, ChunkPos, ColumnPos, Schema, TickSave, World};
use terrane_valence::valence::prelude::{BlockState, Chunk as _, UnloadedChunk};
use terrane_valence::{Dimension, SaveParts, TerraneWorld};

/// A world whose chunk (0, 4, 0) holds a stone floor at y 64, a gold block at (3, 65, 3)
/// and a state no Minecraft knows at (4, 65, 4).
fn world(dir: &std::path::Path) -> World {
    world_on(dir, Backend::Memory)
}

/// [`world`] on `backend`.
fn world_on(dir: &std::path::Path, backend: Backend) -> World {
    let mut schema = Schema::new();
    let air = schema.add_block("minecraft:air", &[]).unwrap();
    let stone = schema.add_block("minecraft:stone", &[]).unwrap();
    let gold = schema.add_block("minecraft:gold_block", &[]).unwrap();
    let odd = schema.add_block("mymod:glowing_thing[power=9]", &[]).unwrap();
    let mut w = World::builder().backend(backend).schema(schema).create(dir).unwrap();
    let mut c = Chunk::new(air);
    for x in 0..16 {
        for z in 0..16 {
            c.set(x, 0, z, stone);
        }
    }
    c.set(3, 1, 3, gold);
    c.set(4, 1, 4, odd);
    w.mark_generated(ColumnPos::new(0, 0)).unwrap();
    let mut save = TickSave::new();
    save.put_chunk(0, ChunkPos::new(0, 4, 0), c.encode(w.schema()));
    w.save_tick(7, save).unwrap();
    w
}

fn name(w: &World, x: i64, y: i64, z: i64) -> String {
    let c = w.get_chunk(ChunkPos::new(x >> 4, y >> 4, z >> 4)).unwrap().unwrap();
    let id = c.get((x & 15) as u32, (y & 15) as u32, (z & 15) as u32);
    w.schema().blocks().get(id.0).unwrap().to_string()
}

/// Valence's column holds y −64..320 from index 0.
fn at(col: &UnloadedChunk, x: u32, y: i32, z: u32) -> BlockState {
    col.block_state(x, (y + 64) as u32, z)
}

#[test]
fn columns_load_by_name_and_edits_keep_unknown_states() {
    let dir = tempfile::tempdir().unwrap();
    let mut tw = TerraneWorld::new(world(dir.path()), BlockState::BEDROCK, Terrain::Flat).unwrap();
    assert_eq!(tw.durable_tick(), 7);
    assert_eq!(tw.tick_of(0), 8, "ticks count on from the world's");

    let col = tw.load_column(Dimension::Overworld, 0, 0).unwrap();
    assert_eq!(at(&col, 3, 65, 3), BlockState::GOLD_BLOCK);
    assert_eq!(at(&col, 9, 64, 9), BlockState::STONE);
    assert_eq!(at(&col, 9, 65, 9), BlockState::AIR);
    assert_eq!(at(&col, 4, 65, 4), BlockState::BEDROCK, "the stand-in");
    assert!(tw.is_loaded(Dimension::Overworld, 0, 0));
    assert_eq!(tw.unsaved_chunks(), 0, "a stored column is not generated");

    // A block never registered before: the schema grows, the chunk keeps the odd state.
    assert!(tw.block_id(BlockState::DIAMOND_BLOCK).is_none());
    tw.register([BlockState::DIAMOND_BLOCK]).unwrap();
    assert!(tw.set_block(Dimension::Overworld, 5, 65, 5, BlockState::DIAMOND_BLOCK));
    assert!(tw.set_block(Dimension::Overworld, 6, 64, 6, BlockState::AIR));
    assert!(
        !tw.set_block(Dimension::Overworld, 100, 64, 100, BlockState::STONE),
        "not a loaded column"
    );
    assert!(!tw.set_block(Dimension::Overworld, 5, 320, 5, BlockState::STONE), "above the column");
    assert!(tw.save(9).unwrap());
    assert!(!tw.save(10).unwrap(), "nothing changed since");
    assert_eq!(tw.durable_tick(), 9);

    let w = tw.world();
    assert_eq!(w.tick(), 9);
    assert_eq!(name(w, 5, 65, 5), "minecraft:diamond_block");
    assert_eq!(name(w, 6, 64, 6), "minecraft:air");
    assert_eq!(name(w, 4, 65, 4), "mymod:glowing_thing[power=9]", "kept, not the stand-in");
    assert_eq!(name(w, 3, 65, 3), "minecraft:gold_block");
}

#[test]
fn a_column_the_world_never_held_is_generated_flat_and_saved() {
    let dir = tempfile::tempdir().unwrap();
    let mut tw = TerraneWorld::new(world(dir.path()), BlockState::BEDROCK, Terrain::Flat).unwrap();
    let col = tw.load_column(Dimension::Overworld, 3, -2).unwrap();
    assert_eq!(at(&col, 0, 64, 0), BlockState::GRASS_BLOCK);
    assert_eq!(at(&col, 0, 60, 0), BlockState::STONE);
    assert_eq!(at(&col, 0, -64, 0), BlockState::BEDROCK);
    assert_eq!(at(&col, 0, 65, 0), BlockState::AIR);
    assert!(tw.unsaved_chunks() > 0);
    tw.unload_column(Dimension::Overworld, 3, -2).unwrap();
    assert!(!tw.is_loaded(Dimension::Overworld, 3, -2));
    assert!(tw.save(8).unwrap());
    let w = tw.world();
    assert!(w.distance().contains(ColumnPos::new(3, -2)));
    assert_eq!(name(w, 48, 64, -32), "minecraft:grass_block[snowy=false]");
    assert_eq!(tw.loaded_columns(), 0);
}

#[test]
fn hills_are_generated_from_the_seed_with_the_surface_players_stand_on() {
    let dir = tempfile::tempdir().unwrap();
    let terrain = Terrain::Hills { seed: 7 };
    let mut tw = TerraneWorld::new(world(dir.path()), BlockState::BEDROCK, terrain).unwrap();
    let col = tw.load_column(Dimension::Overworld, 5, 9).unwrap();
    let (x, z) = (5 * 16 + 3, 9 * 16 + 11);
    let top = terrain.surface(x, z) as i32;
    assert_ne!(at(&col, 3, top, 11), BlockState::AIR, "the surface at y {top}");
    assert_eq!(at(&col, 3, top + 1, 11), BlockState::AIR, "air above the surface");
    assert_eq!(at(&col, 3, 0, 11), BlockState::BEDROCK);
    assert!(tw.save(8).unwrap());
    // The same seed gives the same column in another world.
    let other = tempfile::tempdir().unwrap();
    let mut again = TerraneWorld::new(world(other.path()), BlockState::BEDROCK, terrain).unwrap();
    let col2 = again.load_column(Dimension::Overworld, 5, 9).unwrap();
    for y in [0, 40, top, top + 1] {
        assert_eq!(at(&col, 3, y, 11), at(&col2, 3, y, 11), "y {y}");
    }
}

#[test]
fn saved_apart_players_and_the_rest_land_in_their_own_saves_and_deletions_always_land() {
    let dir = tempfile::tempdir().unwrap();
    let mut tw = TerraneWorld::new(world(dir.path()), BlockState::BEDROCK, Terrain::Flat).unwrap();
    tw.load_column(Dimension::Overworld, 0, 0).unwrap();
    let player = game::player_key(1);
    let chest = game::container_key(0, [1, 65, 1]);
    let record = game::encode_container(&game::ContainerRecord::default());
    tw.stage_record(player.clone(), Some(game::encode_player(&game::PlayerRecord::default())));
    tw.stage_record(chest.clone(), Some(record.clone()));
    assert!(tw.set_block(Dimension::Overworld, 6, 64, 6, BlockState::AIR));
    let get = |tw: &TerraneWorld, k: &[u8]| {
        tw.world().store().get(terrane::tables::WORLD_PROPERTIES, k).unwrap().is_some()
    };

    assert!(tw.save_parts(8, SaveParts::Players).unwrap());
    assert!(get(&tw, &player) && !get(&tw, &chest), "players only");
    assert_eq!(name(tw.world(), 6, 64, 6), "minecraft:stone", "the chunk waits");
    assert!(!tw.save_parts(9, SaveParts::Players).unwrap(), "no player changed since");
    assert!(tw.save_parts(9, SaveParts::AllButPlayers).unwrap());
    assert!(get(&tw, &chest));
    assert_eq!(name(tw.world(), 6, 64, 6), "minecraft:air");

    // The same bytes again write nothing; a deletion is written even when unknown bytes.
    tw.stage_record(chest.clone(), Some(record));
    assert_eq!(tw.unsaved_records(), 0);
    let unread = game::container_key(0, [9, 65, 9]);
    tw.stage_record(unread, None);
    tw.stage_record(chest.clone(), None);
    assert_eq!(tw.unsaved_records(), 2);
    assert!(tw.save(10).unwrap());
    assert!(!get(&tw, &chest));
}

/// A column unloaded with unsaved changes and loaded again before the next save (a player
/// walks out of view and back within a tick, or Valence's viewer count lags a join) shows
/// those changes, and the save after keeps both them and the edits made since.
#[test]
fn a_column_loaded_again_before_the_save_keeps_its_unsaved_changes() {
    let dir = tempfile::tempdir().unwrap();
    let mut tw = TerraneWorld::new(world(dir.path()), BlockState::BEDROCK, Terrain::Flat).unwrap();
    tw.load_column(Dimension::Overworld, 0, 0).unwrap();
    assert!(tw.set_block(Dimension::Overworld, 6, 64, 6, BlockState::AIR));
    tw.unload_column(Dimension::Overworld, 0, 0).unwrap();
    let col = tw.load_column(Dimension::Overworld, 0, 0).unwrap();
    assert_eq!(at(&col, 6, 64, 6), BlockState::AIR, "the unsaved edit");
    assert!(tw.set_block(Dimension::Overworld, 7, 64, 7, BlockState::AIR));
    // A generated column, never saved, unloaded and loaded again: still the terrain.
    tw.load_column(Dimension::Overworld, 3, -2).unwrap();
    tw.unload_column(Dimension::Overworld, 3, -2).unwrap();
    let generated = tw.load_column(Dimension::Overworld, 3, -2).unwrap();
    assert_eq!(at(&generated, 0, 64, 0), BlockState::GRASS_BLOCK);
    assert!(tw.save(8).unwrap());
    let w = tw.world();
    assert_eq!(name(w, 6, 64, 6), "minecraft:air");
    assert_eq!(name(w, 7, 64, 7), "minecraft:air");
    assert_eq!(name(w, 48, 64, -32), "minecraft:grass_block[snowy=false]");
}

#[test]
fn a_column_loaded_twice_keeps_its_unsaved_changes() {
    let dir = tempfile::tempdir().unwrap();
    let mut tw = TerraneWorld::new(world(dir.path()), BlockState::BEDROCK, Terrain::Flat).unwrap();
    tw.load_column(Dimension::Overworld, 0, 0).unwrap();
    tw.save(1).unwrap();
    assert_ne!(name(tw.world(), 6, 64, 6), "minecraft:air");
    assert!(tw.set_block(Dimension::Overworld, 6, 64, 6, BlockState::AIR));
    // Loaded again while loaded: what it holds here wins over the world's older copy.
    let col = tw.load_column(Dimension::Overworld, 0, 0).unwrap();
    assert_eq!(at(&col, 6, 64, 6), BlockState::AIR, "the unsaved edit");
    assert!(tw.save(2).unwrap());
    assert_eq!(name(tw.world(), 6, 64, 6), "minecraft:air");
}

/// A restore into the served world: what changed is saved first, the area's loaded column
/// comes back as the backup holds it (for the layer to show), an edit after it is saved as
/// usual; a restore the world refuses changes nothing and leaves the column loaded.
#[test]
fn an_area_restored_while_served_comes_back_loaded() {
    use terrane_valence::{LiveRestoreReport, LiveRestoreRequest};
    let dir = tempfile::tempdir().unwrap();
    let repo_dir = dir.path().join("backups");
    let repo = terrane::backup::Repo::open_or_create(&repo_dir).unwrap();
    let w = world(&dir.path().join("w"));
    w.backup_incremental(&repo).unwrap();
    drop(repo);
    let mut tw = TerraneWorld::new(w, BlockState::BEDROCK, Terrain::Flat).unwrap();
    tw.load_column(Dimension::Overworld, 0, 0).unwrap();
    assert!(tw.set_block(Dimension::Overworld, 3, 65, 3, BlockState::AIR), "the grief");
    let area = |at| LiveRestoreRequest::Area { repo: repo_dir.clone(), at, dim: 0, x: 0, z: 0 };

    // Boxes beyond the served height or too large are refused before anything is done.
    let huge = LiveRestoreRequest::Box {
        repo: repo_dir.clone(),
        at: None,
        from: [-(1 << 40), 0, -(1 << 40)],
        to: [1 << 40, 10, 1 << 40],
    };
    let high = LiveRestoreRequest::Box {
        repo: repo_dir.clone(),
        at: None,
        from: [0, 0, 0],
        to: [1, 400, 1],
    };
    for r in [huge, high] {
        let refused = tw.restore(19, &r).unwrap();
        assert!(refused.outcome.is_err() && !refused.saved && refused.columns.is_empty());
    }
    assert_eq!(tw.unsaved_chunks(), 1, "nothing saved by a refusal");

    let refused = tw.restore(20, &area(Some(99))).unwrap();
    assert!(refused.outcome.is_err(), "no backup 99");
    assert!(refused.saved, "the grief was saved first");
    assert_eq!(name(tw.world(), 3, 65, 3), "minecraft:air");
    assert!(tw.is_loaded(Dimension::Overworld, 0, 0), "loaded again after a refusal");

    let done = tw.restore(21, &area(None)).unwrap();
    assert!(!done.saved, "nothing changed since");
    let report = done.outcome.unwrap();
    assert!(
        matches!(
            report,
            LiveRestoreReport::Area { backup: 1, columns_resent: 1, objects_written: 1.., .. }
        ),
        "{report:?}"
    );
    assert_eq!(done.columns.len(), 1);
    assert_eq!(at(&done.columns[0].1, 3, 65, 3), BlockState::GOLD_BLOCK, "shown as restored");
    assert_eq!(name(tw.world(), 3, 65, 3), "minecraft:gold_block");
    assert!(tw.is_loaded(Dimension::Overworld, 0, 0));
    assert!(tw.set_block(Dimension::Overworld, 9, 64, 9, BlockState::AIR), "playing on after it");
    assert!(tw.save(22).unwrap());
    assert_eq!(name(tw.world(), 9, 64, 9), "minecraft:air");
    assert_eq!(name(tw.world(), 3, 65, 3), "minecraft:gold_block");
}

/// A Nether area restored while served: the Nether's column comes back as the backup holds
/// it and is shown again; the Overworld's column at the same x and z keeps its saved edit.
#[test]
fn a_nether_area_restored_while_served_leaves_the_overworld_alone() {
    use terrane_valence::{LiveRestoreReport, LiveRestoreRequest};
    let dir = tempfile::tempdir().unwrap();
    let repo_dir = dir.path().join("backups");
    let repo = terrane::backup::Repo::open_or_create(&repo_dir).unwrap();
    let mut w = world(&dir.path().join("w"));
    // The Nether's chunk (0, 4, 0): a gold block at (3, 65, 3) on air.
    let id = |name| terrane::BlockId(w.schema().blocks().find(name).unwrap());
    let (air, gold) = (id("minecraft:air"), id("minecraft:gold_block"));
    let mut c = Chunk::new(air);
    c.set(3, 1, 3, gold);
    w.mark_generated_in(1, ColumnPos::new(0, 0)).unwrap();
    let mut save = TickSave::new();
    save.put_chunk(1, ChunkPos::new(0, 4, 0), c.encode(w.schema()));
    w.save_tick(8, save).unwrap();
    w.backup_incremental(&repo).unwrap();
    drop(repo);

    let mut tw = TerraneWorld::new(w, BlockState::BEDROCK, Terrain::Flat).unwrap();
    for dim in [Dimension::Overworld, Dimension::Nether] {
        tw.load_column(dim, 0, 0).unwrap();
        assert!(tw.set_block(dim, 3, 65, 3, BlockState::AIR), "the grief in {dim:?}");
    }
    let nether = LiveRestoreRequest::Area { repo: repo_dir, at: None, dim: 1, x: 0, z: 0 };
    let done = tw.restore(30, &nether).unwrap();
    assert!(done.saved, "both griefs were saved first");
    assert_eq!(done.dimension, Dimension::Nether);
    let report = done.outcome.unwrap();
    assert!(
        matches!(report, LiveRestoreReport::Area { columns_resent: 1, objects_written: 1.., .. }),
        "{report:?}"
    );
    assert_eq!(done.columns.len(), 1);
    // The Nether's column holds y 0..256 from index 0.
    assert_eq!(done.columns[0].1.block_state(3, 65, 3), BlockState::GOLD_BLOCK, "shown");
    let block = |dim: u64| {
        let c = tw.world().get_chunk_in(dim, ChunkPos::new(0, 4, 0)).unwrap().unwrap();
        tw.world().schema().blocks().get(c.get(3, 1, 3).0).unwrap().to_string()
    };
    assert_eq!(block(1), "minecraft:gold_block", "the Nether restored");
    assert_eq!(block(0), "minecraft:air", "the Overworld's grief stays: another dimension");
    assert!(tw.is_loaded(Dimension::Nether, 0, 0) && tw.is_loaded(Dimension::Overworld, 0, 0));
}

/// With saves in flight, a column a player will need is read ahead off the tick thread and
/// is ready to load once read; a column not asked for is not ready (the tick loads it once
/// read, never waiting); a column no longer asked for is forgotten. Without saves in flight
/// every column is ready at once (loads read the world themselves).
#[test]
fn columns_are_read_ahead_and_ready_once_read() {
    let dir = tempfile::tempdir().unwrap();
    world_on(dir.path(), Backend::BlockFile).close().unwrap();
    let w = World::builder().saves_in_flight(2).open(dir.path()).unwrap();
    let mut tw = TerraneWorld::new(w, BlockState::BEDROCK, Terrain::Flat).unwrap();
    assert!(!tw.is_column_ready(Dimension::Overworld, 0, 0), "not asked for yet");
    tw.read_ahead_columns(Dimension::Overworld, &[(0, 0), (1, 0)]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !(tw.is_column_ready(Dimension::Overworld, 0, 0)
        && tw.is_column_ready(Dimension::Overworld, 1, 0))
    {
        assert!(std::time::Instant::now() < deadline, "the read ahead never finished");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let col = tw.load_column(Dimension::Overworld, 0, 0).unwrap();
    assert_eq!(at(&col, 3, 65, 3), BlockState::GOLD_BLOCK, "the world's column, read ahead");
    tw.read_ahead_columns(Dimension::Overworld, &[(2, 0)]);
    assert!(!tw.is_column_ready(Dimension::Overworld, 1, 0), "no longer asked for: forgotten");

    // Columns the world never held are generated off the tick, then loaded as generated.
    let far = [(40, 40), (41, 40)];
    tw.read_ahead_columns(Dimension::Overworld, &far);
    while !far.iter().all(|&(x, z)| tw.is_column_ready(Dimension::Overworld, x, z)) {
        assert!(std::time::Instant::now() < deadline, "the generation never finished");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let generated = tw.load_columns(Dimension::Overworld, &far).unwrap();
    assert_eq!(tw.columns_generated_ahead(), 2, "both generated on the read-ahead thread");
    let inline = tw.load_column(Dimension::Overworld, 42, 40).unwrap();
    assert_eq!(tw.columns_generated_ahead(), 2, "a column not read ahead is generated inline");
    for col in &generated {
        for y in [-64, -60, 0, 3, 64] {
            assert_eq!(at(col, 3, y, 3), at(&inline, 3, y, 3), "the same terrain at y {y}");
        }
    }

    let other = tempfile::tempdir().unwrap();
    let tw = TerraneWorld::new(world(other.path()), BlockState::BEDROCK, Terrain::Flat).unwrap();
    assert!(
        tw.is_column_ready(Dimension::Overworld, 5, 5),
        "no saves in flight: loads read at once"
    );
}
