//! Incremental backups of worlds on every backend, taken while the world saves, and whole
//! worlds restored from them: each restored world holds exactly the objects of a reference
//! copy taken at the same tick.

use std::collections::BTreeMap;

use terrane::backup::Repo;
use terrane::postgres::testing::PgServer;
use terrane::store::KeyRange;
use terrane::{Backend, Chunk, ChunkPos, ColumnPos, Error, Object, Store, TickSave, World};

fn schema() -> terrane::Schema {
    let mut s = terrane::Schema::new();
    s.add_block("minecraft:air", &[]).unwrap();
    s.add_block("minecraft:stone", &[]).unwrap();
    s
}

type Objects = BTreeMap<(String, Vec<u8>), Object>;

fn objects(store: &dyn Store) -> Objects {
    let mut out = Objects::new();
    for t in store.tables() {
        for e in store.scan(&t, KeyRange::all()).unwrap() {
            let (k, o) = e.unwrap();
            out.insert((t.clone(), k), o);
        }
    }
    out
}

/// Saves `ticks` ticks from the world's next: each puts a few chunks of its own.
fn play(world: &mut World, ticks: u64) {
    let stone = terrane::BlockId(world.schema().blocks().find("minecraft:stone").unwrap());
    for _ in 0..ticks {
        let tick = world.tick() + 1;
        let mut save = TickSave::new();
        for i in 0..4i64 {
            let mut c = Chunk::new(world.air());
            c.set((tick % 16) as u32, i as u32, 3, stone);
            save.put_chunk(
                0,
                ChunkPos::new(i + (tick as i64 % 20), 4, 2),
                c.encode(world.schema()),
            );
        }
        world.mark_generated(ColumnPos::new(tick as i32 % 20, 2)).unwrap();
        world.save_tick(tick, save).unwrap();
    }
}

/// Backs `world` up into `repo` twice with play between, restores both backups and compares
/// each with what the world held when it was taken.
fn backup_and_restore(
    mut world: World,
    repo: &Repo,
    dest: impl Fn(u64) -> String,
    backend: Backend,
) {
    play(&mut world, 30);
    let first = world.backup_incremental(repo).unwrap();
    let at_first = objects(world.store());
    assert_eq!(first.objects, at_first.len() as u64);
    play(&mut world, 5);
    let saved = world.tick();
    world.maintain(saved + 1000).unwrap(); // demotion rewrites clusters too
    let second = world.backup_incremental(repo).unwrap();
    let at_second = objects(world.store());
    assert!(second.changed > 0 && second.changed < second.objects, "{second:?}");
    assert_eq!(repo.list().unwrap()[1].tick, saved, "the tick of the last save");
    for (id, want) in [(first.id, &at_first), (second.id, &at_second)] {
        let to = dest(id);
        let r = terrane::restore_world(&repo.contents(id).unwrap(), &to, Some(backend)).unwrap();
        assert_eq!(r.objects, want.len() as u64);
        let restored = World::open_read_only(&to).unwrap();
        assert_eq!(&objects(restored.store()), want, "{backend:?}: backup {id}");
        restored.verify().unwrap();
    }
}

#[test]
fn worlds_on_files_restore_exactly_as_backed_up() {
    for backend in [Backend::BlockFile, Backend::RocksDb] {
        let dir = tempfile::tempdir().unwrap();
        let world = World::builder()
            .schema(schema())
            .backend(backend)
            .create(dir.path().join("w"))
            .unwrap();
        let repo = Repo::open_or_create(dir.path().join("repo")).unwrap();
        let base = dir.path().to_path_buf();
        backup_and_restore(
            world,
            &repo,
            |id| base.join(format!("r{id}")).display().to_string(),
            backend,
        );
    }
}

#[test]
fn a_postgres_world_restores_exactly_as_backed_up() {
    let pg = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let world = World::builder()
        .schema(schema())
        .backend(Backend::Postgres)
        .create(format!("{} schema=live", pg.conninfo()))
        .unwrap();
    let repo = Repo::open_or_create(dir.path().join("repo")).unwrap();
    let conninfo = pg.conninfo().to_string();
    backup_and_restore(
        world,
        &repo,
        |id| format!("{conninfo} schema=restored_{id}"),
        Backend::Postgres,
    );
}

#[test]
fn a_restore_that_did_not_finish_never_opens() {
    let dir = tempfile::tempdir().unwrap();
    let mut world = World::builder()
        .schema(schema())
        .backend(Backend::BlockFile)
        .create(dir.path().join("w"))
        .unwrap();
    play(&mut world, 3);
    let repo = Repo::open_or_create(dir.path().join("repo")).unwrap();
    let id = world.backup_incremental(&repo).unwrap().id;
    // Cut short: the key the restore writes first is still there.
    let mut b = terrane::Batch::new();
    b.put(terrane::tables::WORLD_META, terrane::RESTORING_KEY.to_vec(), 0, vec![1]);
    world.store().write(&b.synced()).unwrap();
    drop(world);
    assert!(matches!(World::open(dir.path().join("w")), Err(Error::RestoreUnfinished(_))));
    assert!(matches!(
        World::open_read_only(dir.path().join("w")),
        Err(Error::RestoreUnfinished(_))
    ));
    // Over an existing world, or from damage: refused, nothing left behind.
    let contents = repo.contents(id).unwrap();
    assert!(matches!(
        terrane::restore_world(&contents, dir.path().join("w"), None),
        Err(Error::AlreadyExists(_))
    ));
    let pack = std::fs::read_dir(dir.path().join("repo/packs")).unwrap().next().unwrap().unwrap();
    std::fs::write(pack.path(), b"TBPK\x01\0\0\0 nothing").unwrap();
    let to = dir.path().join("from-damage");
    assert!(matches!(
        terrane::restore_world(&repo.contents(id).unwrap(), &to, Some(Backend::BlockFile)),
        Err(Error::Backup(terrane::backup::Error::DamagedObjects { .. }))
    ));
    assert!(!to.exists());
}

#[test]
fn a_backup_taken_while_the_world_saves_is_a_tick_it_saved() {
    let dir = tempfile::tempdir().unwrap();
    let mut world = World::builder()
        .schema(schema())
        .backend(Backend::BlockFile)
        .create(dir.path().join("w"))
        .unwrap();
    play(&mut world, 5);
    let source = world.backup_source();
    let repo_path = dir.path().join("repo");
    let backups = std::thread::spawn(move || {
        let repo = Repo::open_or_create(&repo_path).unwrap();
        (0..5).map(|_| source.backup(&repo).unwrap().id).collect::<Vec<_>>()
    });
    // Every tick's objects, as saved.
    let mut at: BTreeMap<u64, Objects> = BTreeMap::new();
    at.insert(world.tick(), objects(world.store()));
    while !backups.is_finished() {
        play(&mut world, 1);
        at.insert(world.tick(), objects(world.store()));
    }
    let ids = backups.join().unwrap();
    let repo = Repo::open(dir.path().join("repo")).unwrap();
    for id in ids {
        let c = repo.contents(id).unwrap();
        let want = at.get(&c.tick()).unwrap_or_else(|| panic!("backup {id}: tick {}", c.tick()));
        let to = dir.path().join(format!("r{id}"));
        terrane::restore_world(&c, &to, Some(Backend::BlockFile)).unwrap();
        assert_eq!(&objects(World::open_read_only(&to).unwrap().store()), want, "backup {id}");
    }
}
