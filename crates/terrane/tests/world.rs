//! World directory: create, reopen, atomic tick saves with the distance graph, backup,
//! verify, and failures that leave nothing behind.

use terrane::{Backend, Chunk, ChunkPos, ColumnPos, Error, Schema, TickSave, World};

fn schema() -> Schema {
    let mut s = Schema::new();
    s.add_block("minecraft:air", &[]).unwrap();
    s.add_block("minecraft:stone", &[]).unwrap();
    s
}

fn backends() -> Vec<Backend> {
    [Backend::RocksDb, Backend::BlockFile].into_iter().filter(|b| b.is_available()).collect()
}

fn stone_chunk(world: &World) -> Chunk {
    let stone = terrane::BlockId(world.schema().blocks().find("minecraft:stone").unwrap());
    let mut c = Chunk::new(world.air());
    c.set(1, 2, 3, stone);
    c
}

#[test]
fn reopen_keeps_chunks_schema_and_distance_graph() {
    for backend in backends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w");
        {
            let mut w = World::builder().backend(backend).schema(schema()).create(&path).unwrap();
            assert!(w.load_chunk(ChunkPos::new(0, 0, 0)).unwrap().is_none());
            let c = stone_chunk(&w);
            w.mark_generated(ColumnPos::new(0, 0)).unwrap();
            let mut save = TickSave::new();
            save.put_chunk(0, ChunkPos::new(0, 0, 0), c.encode(w.schema()));
            w.save_tick(7, save).unwrap();
            w.close().unwrap();
        }
        let w = World::open(&path).unwrap();
        assert_eq!(w.backend(), backend);
        assert_eq!(w.tick(), 7);
        assert_eq!(w.schema().blocks().len(), 2);
        assert!(w.distance().contains(ColumnPos::new(0, 0)));
        assert_eq!(w.get_chunk(ChunkPos::new(0, 0, 0)).unwrap(), Some(stone_chunk(&w)));
        let report = w.verify().unwrap();
        assert_eq!(report.levels.chunks, [1, 0, 0]);
        assert_eq!(report.generated_columns, 1);
        assert_eq!(w.info().unwrap().generated_columns, 1);
    }
}

#[test]
fn backup_opens_as_a_world() {
    for backend in backends() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = World::builder()
            .backend(backend)
            .schema(schema())
            .create(dir.path().join("w"))
            .unwrap();
        let c = stone_chunk(&w);
        let mut save = TickSave::new();
        save.put_chunk(0, ChunkPos::new(5, -1, 2), c.encode(w.schema()));
        w.save_tick(3, save).unwrap();
        w.checkpoint(dir.path().join("b")).unwrap();
        // The source keeps going; the backup is the state at the time.
        w.save_tick(4, TickSave::new()).unwrap();
        let b = World::open(dir.path().join("b")).unwrap();
        assert_eq!(b.tick(), 3);
        assert_eq!(b.get_chunk(ChunkPos::new(5, -1, 2)).unwrap(), Some(c));
        // A backup into a non-empty directory is refused.
        assert!(matches!(w.checkpoint(dir.path().join("b")), Err(Error::AlreadyExists(_))));
    }
}

#[test]
fn bad_directories_are_refused_and_nothing_is_left() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(World::open(dir.path()), Err(Error::NotAWorld(_))));
    std::fs::write(dir.path().join("x"), b"data").unwrap();
    assert!(matches!(
        World::builder().backend(Backend::Memory).create(dir.path()).map(|_| ()),
        Ok(())
    ));
    for backend in backends() {
        assert!(matches!(
            World::builder().backend(backend).create(dir.path()),
            Err(Error::AlreadyExists(_))
        ));
        assert!(dir.path().join("x").exists());
    }
}

#[test]
fn a_failed_save_writes_nothing() {
    let mut w =
        World::builder().backend(Backend::Memory).schema(schema()).create("unused").unwrap();
    w.mark_generated(ColumnPos::new(1, 1)).unwrap();
    let mut save = TickSave::new();
    // Block id 99 is not registered: the save is refused as a whole, graph included.
    let mut bad = Chunk::new(w.air());
    bad.set(0, 0, 0, terrane::BlockId(99));
    save.put_chunk(0, ChunkPos::new(0, 0, 0), bad.encode(w.schema()));
    assert!(w.save_tick(1, save).is_err());
    assert!(
        w.store().get(terrane::tables::WORLD_PROPERTIES, terrane::DISTANCE_KEY).unwrap().is_none()
    );
    // The next good save carries the graph.
    w.save_tick(2, TickSave::new()).unwrap();
    assert!(
        w.store().get(terrane::tables::WORLD_PROPERTIES, terrane::DISTANCE_KEY).unwrap().is_some()
    );
}

#[test]
fn loads_feed_the_regionizer() {
    let mut w =
        World::builder().backend(Backend::Memory).schema(schema()).create("unused").unwrap();
    w.load_chunk(ChunkPos::new(0, 0, 0)).unwrap();
    w.load_chunk(ChunkPos::new(1000, 0, 0)).unwrap();
    assert_eq!(w.regionizer().region_count(), 2);
    assert!(w.load_chunk(ChunkPos::new(0, 0, 0)).is_err(), "double load is misuse");
    w.unload_chunk(ChunkPos::new(0, 0, 0)).unwrap();
    assert!(!w.regionizer().is_loaded(ChunkPos::new(0, 0, 0)));
    assert!(w.unload_chunk(ChunkPos::new(0, 0, 0)).is_err());
    w.regionizer().check_invariants().unwrap();
}

#[test]
fn extend_schema_grows_the_registries_and_keeps_them() {
    for backend in backends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w");
        let mut w = World::builder().backend(backend).schema(schema()).create(&path).unwrap();
        let mut grown = w.schema().clone();
        let gold = grown.add_block("minecraft:gold_block", &[]).unwrap();
        // Not an extension: refused, nothing changes.
        let mut other = Schema::new();
        other.add_block("minecraft:dirt", &[]).unwrap();
        assert!(w.extend_schema(other).is_err());
        w.extend_schema(grown).unwrap();
        let mut c = Chunk::new(w.air());
        c.set(0, 0, 0, gold);
        let mut save = TickSave::new();
        save.put_chunk(0, ChunkPos::new(0, 0, 0), c.encode(w.schema()));
        w.save_tick(1, save).unwrap();
        // Refused while chunks are loaded.
        w.load_chunk(ChunkPos::new(3, 3, 3)).unwrap();
        assert!(w.extend_schema(w.schema().clone()).is_err());
        w.close().unwrap();
        let w = World::open(&path).unwrap();
        assert_eq!(w.schema().blocks().find("minecraft:gold_block"), Some(gold.0));
        assert_eq!(w.get_chunk(ChunkPos::new(0, 0, 0)).unwrap().unwrap().get(0, 0, 0), gold);
        w.verify().unwrap();
    }
}

#[test]
fn other_dimensions_have_their_own_chunks_regionizer_and_distance_graph() {
    let backend = Backend::BlockFile;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w");
    let col = ColumnPos::new(2, -3);
    let pos = ChunkPos::new(2, 4, -3);
    {
        let mut w = World::builder().backend(backend).schema(schema()).create(&path).unwrap();
        let stone = stone_chunk(&w);
        // A Nether column generated by a game: its chunk and its mark go to dimension 1.
        let mut nether = terrane::LoadedColumns::new(0..16).in_dimension(1);
        let made = nether.load(&mut w, &[col], &mut |_| Some(vec![(4, stone.clone())])).unwrap();
        assert_eq!(made, vec![col]);
        assert!(w.regionizer_in(1).unwrap().is_loaded(pos));
        assert!(!w.regionizer().is_loaded(pos), "the Overworld's regionizer holds none of it");
        let mut save = TickSave::new();
        let put = nether.put_changes(&mut save, w.schema(), |_| true);
        w.save_tick(1, save).unwrap();
        nether.saved(&put);
        nether.unload(&mut w, col).unwrap();
        assert!(!w.regionizer_in(1).unwrap().is_loaded(pos));
        assert!(w.distance_in(1).unwrap().contains(col));
        assert!(!w.distance().contains(col), "the Overworld's graph is not marked");
        w.close().unwrap();
    }
    let mut w = World::builder().backend(backend).open(&path).unwrap();
    assert_eq!(w.get_chunk_in(1, pos).unwrap(), Some(stone_chunk(&w)));
    assert_eq!(w.get_chunk(pos).unwrap(), None, "nothing written to the Overworld");
    assert!(w.distance_in(1).unwrap().contains(col), "the Nether's graph was saved");
    assert!(!w.distance_in(2).unwrap().contains(col));
    assert!(!terrane::world_distance(w.store()).unwrap().contains(col));
    // Loaded again, the column is not generated again: the world holds it.
    let mut nether = terrane::LoadedColumns::new(0..16).in_dimension(1);
    let made = nether.load(&mut w, &[col], &mut |_| panic!("generated twice")).unwrap();
    assert!(made.is_empty());
    assert_eq!(*nether.chunk(pos).unwrap(), stone_chunk(&w));
}
