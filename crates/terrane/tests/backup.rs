//! Incremental backups of worlds on every backend, taken while the world saves, and whole
//! worlds restored from them: each restored world holds exactly the objects of a reference
//! copy taken at the same tick. Copies and restores cut off never open as worlds.

use std::collections::{BTreeMap, BTreeSet};
use terrane_store::conformance::dump as objects;

use terrane::backup::Repo;
use terrane::postgres::testing::PgServer;
use terrane::section::AreaId;
use terrane::{Backend, Chunk, ChunkPos, ColumnPos, Error, Object, TickSave, World};

fn schema() -> terrane::Schema {
    let mut s = terrane::Schema::new();
    s.add_block("minecraft:air", &[]).unwrap();
    s.add_block("minecraft:stone", &[]).unwrap();
    s
}

/// A new block-file world at `path` with [`schema`].
fn block_world(path: &std::path::Path) -> World {
    World::builder().schema(schema()).backend(Backend::BlockFile).create(path).unwrap()
}

type Objects = BTreeMap<(String, Vec<u8>), Object>;

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
    let mut world = block_world(&dir.path().join("w"));
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

/// Restores backup `id` of `repo` into a new world beside it and compares it with `want`.
fn restores_as(repo: &Repo, id: u64, want: &Objects, to: std::path::PathBuf) {
    terrane::restore_world(&repo.contents(id).unwrap(), &to, Some(Backend::BlockFile)).unwrap();
    assert_eq!(&objects(World::open_read_only(&to).unwrap().store()), want, "backup {id}");
}

#[test]
fn a_world_reads_only_what_it_changed_since_its_last_backup() {
    let dir = tempfile::tempdir().unwrap();
    let (w, r1, r2) = (dir.path().join("w"), dir.path().join("r1"), dir.path().join("r2"));
    let (repo1, repo2) = (Repo::open_or_create(&r1).unwrap(), Repo::open_or_create(&r2).unwrap());
    let restored = |name: &str| dir.path().join(name);
    let mut world = block_world(&w);
    play(&mut world, 40);
    // The first backup reads everything, and starts the record.
    let first = world.backup_incremental(&repo1).unwrap();
    assert_eq!(first.read, first.objects);
    play(&mut world, 2);
    let second = world.backup_incremental(&repo1).unwrap();
    let want = objects(world.store());
    assert!(second.read > 0 && second.read * 3 < second.objects, "{second:?}");
    assert_eq!(second.objects, want.len() as u64);
    restores_as(&repo1, second.id, &want, restored("a"));
    // Nothing changed: nothing read.
    let third = world.backup_incremental(&repo1).unwrap();
    assert_eq!((third.read, third.changed, third.removed), (0, 0, 0));
    // Another repository: the whole world, and the record follows it.
    let other = world.backup_incremental(&repo2).unwrap();
    assert_eq!(other.read, other.objects);
    play(&mut world, 2);
    let back = world.backup_incremental(&repo1).unwrap();
    assert_eq!(back.read, back.objects, "the record is since repo2's backup");
    restores_as(&repo1, back.id, &objects(world.store()), restored("b"));
    // The record outlives the process: reopened, the world still reads only its changes.
    drop(world);
    let mut world = World::open(&w).unwrap();
    play(&mut world, 3);
    let reopened = world.backup_incremental(&repo1).unwrap();
    assert!(reopened.read * 3 < reopened.objects, "{reopened:?}");
    restores_as(&repo1, reopened.id, &objects(world.store()), restored("c"));
    // A backup the world could not record (opened read-only): the next reads everything.
    drop(world);
    let ro = World::open_read_only(&w).unwrap();
    let unrecorded = ro.backup_incremental(&repo1).unwrap();
    assert_eq!(unrecorded.read, unrecorded.objects);
    drop(ro);
    let mut world = World::open(&w).unwrap();
    play(&mut world, 1);
    let after = world.backup_incremental(&repo1).unwrap();
    assert_eq!(after.read, after.objects, "the mark names an older backup");
    restores_as(&repo1, after.id, &objects(world.store()), restored("d"));
    // The record is the world's own: copies and backups never carry it.
    let copy = dir.path().join("copy");
    terrane::copy::copy_world(&world, &copy, Some(Backend::BlockFile), |_, _| {}).unwrap();
    assert_eq!(objects(World::open_read_only(&copy).unwrap().store()), objects(world.store()));
    world.verify().unwrap();
}

#[test]
fn a_backup_taken_while_the_world_saves_is_a_tick_it_saved() {
    // Each round races ten backups into one repository, most of them from changes, and three
    // into another against tick saves; a backup that pairs old objects with a newer tick
    // shows within a few rounds.
    for round in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let mut world = block_world(&dir.path().join("w"));
        play(&mut world, 5);
        let backups: Vec<_> = [("repo", 10), ("repo2", 3)]
            .map(|(name, n)| {
                let source = world.backup_source();
                let repo_path = dir.path().join(name);
                std::thread::spawn(move || {
                    let repo = Repo::open_or_create(&repo_path).unwrap();
                    (0..n).map(|_| source.backup(&repo).unwrap()).collect::<Vec<_>>()
                })
            })
            .into();
        // Every tick's objects, as saved.
        let mut at: BTreeMap<u64, Objects> = BTreeMap::new();
        at.insert(world.tick(), objects(world.store()));
        while !backups.iter().all(|b| b.is_finished()) {
            play(&mut world, 1);
            at.insert(world.tick(), objects(world.store()));
        }
        for (name, reports) in ["repo", "repo2"].into_iter().zip(backups) {
            let reports = reports.join().unwrap();
            if name == "repo" {
                assert!(reports.iter().any(|r| r.read < r.objects), "none from changes");
            }
            let repo = Repo::open(dir.path().join(name)).unwrap();
            for id in reports.iter().map(|r| r.id) {
                let c = repo.contents(id).unwrap();
                let tick = c.tick();
                let want = at.get(&tick).unwrap_or_else(|| panic!("{name} {id}: tick {tick}"));
                let to = dir.path().join(format!("{name}-{id}"));
                terrane::restore_world(&c, &to, Some(Backend::BlockFile)).unwrap();
                let got = objects(World::open_read_only(&to).unwrap().store());
                let differ: Vec<_> = want
                    .iter()
                    .filter(|(k, o)| got.get(*k) != Some(*o))
                    .map(|(k, _)| k)
                    .chain(got.keys().filter(|k| !want.contains_key(*k)))
                    .collect();
                assert!(differ.is_empty(), "round {round}, {name} {id} (tick {tick}): {differ:?}");
            }
        }
    }
}

/// Whether the object `key` of `table` belongs to area `a` of dimension 0 (entities: keyed
/// by the area, or listed by a chunk of it in `refs`).
fn in_area(table: &str, key: &[u8], a: AreaId, refs: &BTreeSet<Vec<u8>>) -> bool {
    use terrane::section::keys;
    let shift = match table {
        "chunkl0" => 0,
        "chunkl1" => 2,
        "chunkl2" => 4,
        "opacityMap" => {
            return keys::parse_column_key(key).is_some_and(|(d, tx, tz)| {
                d == 0 && AreaId::new((tx >> 2) as i32, (tz >> 2) as i32) == a
            });
        }
        "entity" => return key.starts_with(&a.to_bytes()) || refs.contains(key),
        "worldProperties" => {
            return terrane::game::parse_container_key(key).is_some_and(|(d, [x, y, z])| {
                d == 0 && AreaId::of_chunk(ChunkPos::new(x >> 4, y >> 4, z >> 4)) == a
            });
        }
        _ => return false,
    };
    keys::parse_chunk_key(key).is_some_and(|(d, c)| {
        d == 0 && AreaId::of_chunk(ChunkPos::new(c.x << shift, c.y << shift, c.z << shift)) == a
    })
}

/// The entities the chunks of area `a` list, in `objects`.
fn area_refs(objects: &Objects, a: AreaId) -> BTreeSet<Vec<u8>> {
    let mut out = BTreeSet::new();
    for ((t, k), o) in objects {
        let shift = match t.as_str() {
            "chunkl0" => 0,
            "chunkl1" => 2,
            "chunkl2" => 4,
            _ => continue,
        };
        if !in_area(t, k, a, &BTreeSet::new()) {
            continue;
        }
        let mut add = |b: &[u8]| {
            for u in terrane::ChunkView::parse(b).unwrap().entities() {
                out.insert(u.to_vec());
            }
        };
        match terrane::cluster::Scale::from_level(
            terrane::Level::from_index((shift / 2) as u8).unwrap(),
        ) {
            None => add(&o.data),
            Some(s) => {
                for (_, c) in terrane::cluster::ClusterView::with_scale(&o.data, s).unwrap().iter()
                {
                    add(c);
                }
            }
        }
    }
    out
}

fn split(objects: &Objects, a: AreaId) -> (Objects, Objects) {
    let refs = area_refs(objects, a);
    objects
        .iter()
        .map(|(k, o)| (k.clone(), o.clone()))
        .partition(|((t, k), _)| in_area(t, k, a, &refs))
}

/// Saves a tick writing chunks (each listing one entity) in areas (0, 0) and (1, 0).
fn play_two_areas(world: &mut World, ticks: u64) {
    let stone = terrane::BlockId(world.schema().blocks().find("minecraft:stone").unwrap());
    for _ in 0..ticks {
        let tick = world.tick() + 1;
        let mut save = TickSave::new();
        for (i, x) in [3i64, 20].into_iter().enumerate() {
            let pos = ChunkPos::new(x + (tick as i64 % 5), 4, 2);
            let mut c = world.load_chunk(pos).unwrap().unwrap_or_else(|| Chunk::new(world.air()));
            c.set((tick % 16) as u32, 1, 1, stone);
            let uuid = [tick as u8, i as u8, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7];
            c.add_entity(uuid);
            save.put_entity(uuid, format!("mob {tick}").into_bytes());
            save.put_chunk(0, pos, c.encode(world.schema()));
            world.unload_chunk(pos).unwrap();
        }
        world.save_tick(tick, save).unwrap();
    }
}

#[test]
fn one_area_goes_back_to_its_backup_and_the_rest_stays() {
    let dir = tempfile::tempdir().unwrap();
    let mut world = block_world(&dir.path().join("w"));
    let (a, b) = (AreaId::new(0, 0), AreaId::new(1, 0));
    play_two_areas(&mut world, 12);
    world.maintain(world.tick() + 100_000).unwrap(); // some of it cold, in clusters
    play_two_areas(&mut world, 3);
    // A chest in each area.
    let chest = |item: &str, count: u8| terrane::game::ContainerRecord {
        items: vec![terrane::game::ItemSlot::new(0, item, count)],
    };
    let mut save = TickSave::new();
    terrane::game::put_container(&mut save, 0, [40, 64, 40], &chest("minecraft:diamond", 3));
    terrane::game::put_container(&mut save, 0, [300, 64, 40], &chest("minecraft:emerald", 5));
    let tick = world.tick() + 1;
    world.save_tick(tick, save).unwrap();
    let repo = Repo::open_or_create(dir.path().join("repo")).unwrap();
    let id = world.backup_incremental(&repo).unwrap().id;
    let (a_then, _) = split(&objects(world.store()), a);
    assert!(a_then.keys().any(|(t, _)| t == "entity") && a_then.len() > 5, "{a_then:?}");
    assert!(a_then.keys().any(|(t, _)| t == "chunkl1" || t == "chunkl2"), "clusters too");

    // Griefing: both areas change, chests are looted or filled; the restore puts area a
    // back and leaves b as it is now.
    play_two_areas(&mut world, 9);
    let mut save = TickSave::new();
    terrane::game::delete_container(&mut save, 0, [40, 64, 40]);
    terrane::game::put_container(&mut save, 0, [41, 64, 40], &chest("minecraft:dirt", 1));
    terrane::game::put_container(&mut save, 0, [300, 64, 40], &chest("minecraft:emerald", 1));
    let tick = world.tick() + 1;
    world.save_tick(tick, save).unwrap();
    let (a_now, b_now) = split(&objects(world.store()), a);
    assert_ne!(a_now, a_then);
    let contents = repo.contents(id).unwrap();
    world.load_chunk(ChunkPos::new(4, 4, 2)).unwrap();
    match world.restore_area(&contents, 0, a) {
        Err(Error::AreaBusy { area, .. }) => assert_eq!(area, a),
        other => panic!("a loaded area was restored: {other:?}"),
    }
    world.unload_chunk(ChunkPos::new(4, 4, 2)).unwrap();
    let report = world.restore_area(&contents, 0, a).unwrap();
    assert!(report.objects_written > 0 && report.objects_removed > 0, "{report:?}");
    let (a_after, b_after) = split(&objects(world.store()), a);
    assert_eq!(a_after, a_then, "area a is as backed up");
    let chests = terrane::game::containers(&world).unwrap();
    assert_eq!(chests[&(0, [40, 64, 40])], chest("minecraft:diamond", 3), "the chest is back");
    assert!(!chests.contains_key(&(0, [41, 64, 40])), "the griefer's chest is gone");
    assert_eq!(chests[&(0, [300, 64, 40])], chest("minecraft:emerald", 1), "area b's as it is");
    assert_eq!(b_after, b_now, "area b is untouched");
    world.verify().unwrap();
    // Again: nothing left to change.
    let again = world.restore_area(&contents, 0, a).unwrap();
    assert_eq!((again.objects_written, again.objects_removed), (0, 0), "{again:?}");
    // Another server's live lease on the area refuses the restore.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let leases =
        terrane::lease::Leases::new(std::sync::Arc::clone(world.tiered().store()), "other", 60_000)
            .unwrap();
    leases.acquire(a, now.as_millis() as u64).unwrap();
    match world.restore_area(&contents, 0, a) {
        Err(Error::AreaBusy { why, .. }) => assert!(why.contains("other"), "{why}"),
        other => panic!("a leased area was restored: {other:?}"),
    }
    let _ = b;
}

#[test]
fn a_running_world_is_backed_up_on_schedule() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    let dir = tempfile::tempdir().unwrap();
    let mut world = block_world(&dir.path().join("w"));
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    // Keep the newest 2 and backup 1: each backup is followed by a prune.
    let keep = terrane::backup::Keep { last: 2, ids: vec![1] };
    let thread = world
        .backup_source()
        .spawn_every(
            dir.path().join("repo"),
            std::time::Duration::from_millis(100),
            Some(keep),
            Arc::clone(&stop),
            move |r| {
                log.lock().unwrap().push(r.map(|s| (s.backup.id, s.backup.tick, s.pruned)));
            },
        )
        .unwrap();
    while seen.lock().unwrap().len() < 4 {
        play(&mut world, 1);
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    stop.store(true, Ordering::Relaxed);
    thread.join().unwrap();
    let seen = seen.lock().unwrap();
    let ticks: Vec<u64> = seen.iter().map(|r| r.as_ref().unwrap().1).collect();
    assert!(ticks.windows(2).all(|w| w[0] <= w[1]) && ticks.last() > ticks.first(), "{ticks:?}");
    // Between backups the repository is free to read; it holds what the schedule keeps.
    let repo = Repo::open(dir.path().join("repo")).unwrap();
    let newest = seen.last().unwrap().as_ref().unwrap().0;
    let ids: Vec<u64> = repo.list().unwrap().iter().map(|b| b.id).collect();
    assert_eq!(ids, [1, newest - 1, newest], "{seen:?}");
    let removed: usize =
        seen.iter().filter_map(|r| r.as_ref().unwrap().2.as_ref()).map(|p| p.removed.len()).sum();
    assert_eq!(removed, seen.len() - 3, "each prune removed what fell out");
    assert!(repo.verify().unwrap().is_clean());
}

#[test]
fn a_box_goes_back_to_its_backup_block_for_block() {
    let dir = tempfile::tempdir().unwrap();
    let mut world = block_world(&dir.path().join("w"));
    play_two_areas(&mut world, 8);
    world.maintain(world.tick() + 100_000).unwrap();
    let repo = Repo::open_or_create(dir.path().join("repo")).unwrap();
    let id = world.backup_incremental(&repo).unwrap().id;
    let bbox = terrane::BlockBox::new(
        terrane::BlockPos::new(40, 60, 20),
        terrane::BlockPos::new(90, 75, 40),
    );
    let reference = dir.path().join("reference");
    terrane::restore_world(&repo.contents(id).unwrap(), &reference, Some(Backend::BlockFile))
        .unwrap();
    let then = World::open_read_only(&reference).unwrap().capture(bbox).unwrap();
    // Griefing inside the box and beside it.
    let stone = terrane::BlockId(1);
    let outside = terrane::BlockPos::new(100, 70, 30);
    let mut arena =
        world.arena(terrane::BlockBox::new(terrane::BlockPos::new(40, 60, 20), outside)).unwrap();
    use terrane::snapshot::ChunkAccess as _;
    for x in 40..=100 {
        arena.set_block(terrane::BlockPos::new(x, 70, 30), stone);
    }
    let tick = world.tick() + 1;
    world.save_arena(tick, &arena).unwrap();
    assert_ne!(
        world.capture(bbox).unwrap().block(terrane::BlockPos::new(45, 70, 30)),
        then.block(terrane::BlockPos::new(45, 70, 30))
    );
    let r = world.restore_box(&repo.contents(id).unwrap(), bbox).unwrap();
    assert_eq!(r.blocks_changed, 51, "{r:?}");
    let now = world.capture(bbox).unwrap();
    for x in 40..=90 {
        for y in 60..=75 {
            for z in 20..=40 {
                let p = terrane::BlockPos::new(x, y, z);
                assert_eq!(now.block(p), then.block(p), "{p:?}");
            }
        }
    }
    let beside = world.capture(terrane::BlockBox::new(outside, outside)).unwrap();
    assert_eq!(beside.block(outside), Some("minecraft:stone"), "outside the box: as griefed");
    world.verify().unwrap();
}

/// The distance graph's marks of a restored area go back too: a column generated after the
/// backup is listed missing again (a server generates it again instead of showing it empty),
/// a column removed from the graph since (a trim) is listed generated again; other areas'
/// marks stay.
#[test]
fn an_area_restore_puts_the_generated_marks_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut world = block_world(&dir.path().join("w"));
    let stone = terrane::BlockId(world.schema().blocks().find("minecraft:stone").unwrap());
    let generate = |world: &mut World, x: i32, tick: u64| {
        let mut c = Chunk::new(world.air());
        c.set(0, 0, 0, stone);
        let mut save = TickSave::new();
        save.put_chunk(0, ChunkPos::new(x.into(), 4, 0), c.encode(world.schema()));
        world.mark_generated(ColumnPos::new(x, 0)).unwrap();
        world.save_tick(tick, save).unwrap();
    };
    generate(&mut world, 1, 1);
    generate(&mut world, 2, 2);
    let repo = Repo::open_or_create(dir.path().join("repo")).unwrap();
    let id = world.backup_incremental(&repo).unwrap().id;
    // Since the backup: column 3 generated, column 2 trimmed, column 40 (area 2) generated.
    generate(&mut world, 3, 3);
    generate(&mut world, 40, 4);
    world.distance().remove(ColumnPos::new(2, 0)).unwrap();
    world.mark_distance_dirty();
    world.save_tick(5, TickSave::new()).unwrap();

    let report = world.restore_area(&repo.contents(id).unwrap(), 0, AreaId::new(0, 0)).unwrap();
    assert_eq!(report.columns_regenerated, 1, "{report:?}");
    let marked = |w: &World, x| w.distance().contains(ColumnPos::new(x, 0));
    assert!(marked(&world, 1) && marked(&world, 2), "as backed up");
    assert!(!marked(&world, 3), "generated after the backup: to generate again");
    assert!(marked(&world, 40), "another area's mark stays");
    assert!(world.get_chunk(ChunkPos::new(3, 4, 0)).unwrap().is_none());
    // Saved in the restore's batch: the reopened world has the same marks.
    world.close().unwrap();
    let world = World::open(dir.path().join("w")).unwrap();
    assert!(marked(&world, 1) && marked(&world, 2) && !marked(&world, 3) && marked(&world, 40));
}

/// Copies `world` into `to`, cut off (a panic, as a kill would) after its first batch.
fn cut_off_copy(world: &World, to: &std::path::Path) {
    let cut = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        terrane::copy::copy_world(world, to, None, |_, _| panic!("cut off"))
    }));
    assert!(cut.is_err(), "the copy ran to its end");
}

#[test]
fn a_copy_cut_off_never_opens_and_the_next_copy_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut world = block_world(&dir.path().join("w"));
    play(&mut world, 40);
    let to = dir.path().join("copy");
    cut_off_copy(&world, &to);
    assert!(World::is_unfinished_creation(&to));
    assert!(matches!(World::open(&to), Err(Error::CopyUnfinished(_))));
    assert!(matches!(World::open_read_only(&to), Err(Error::CopyUnfinished(_))));
    // Refused twice, still the cut-off copy; the next copy replaces it, whole.
    assert!(World::is_unfinished_creation(&to));
    terrane::copy::copy_world(&world, &to, None, |_, _| {}).unwrap();
    assert!(!World::is_unfinished_creation(&to));
    let copy = World::open_read_only(&to).unwrap();
    assert_eq!(objects(copy.store()), objects(world.store()));
    copy.verify().unwrap();
}

#[test]
fn a_postgres_copy_cut_off_never_opens() {
    let pg = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let mut world = block_world(&dir.path().join("w"));
    play(&mut world, 40);
    let cut = format!("{} schema=cut", pg.conninfo());
    cut_off_copy(&world, cut.as_ref());
    assert!(matches!(World::open(&cut), Err(Error::CopyUnfinished(_))));
    assert!(matches!(World::open_read_only(&cut), Err(Error::CopyUnfinished(_))));
    let whole = format!("{} schema=whole", pg.conninfo());
    terrane::copy::copy_world(&world, &whole, None, |_, _| {}).unwrap();
    assert_eq!(objects(World::open_read_only(&whole).unwrap().store()), objects(world.store()));
}

#[test]
fn a_postgres_world_made_for_an_import_opens_only_for_it_until_the_import_ends() {
    let pg = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let region = terrane_section::testdata::fixture("anvil/1.21.1");
    for (schema, create) in [("made", true), ("made_or_opened", false)] {
        let at = format!("{} schema={schema}", pg.conninfo());
        let builder = World::builder().sync_saves(false).for_import(true);
        let w = if create { builder.create(&at) } else { builder.open_or_create(&at) }.unwrap();
        drop(w);
        // Cut off before its first column: refused, but to the import.
        assert!(matches!(World::open(&at), Err(Error::ImportUnfinished(_))), "{schema}");
        let mut w = World::builder().sync_saves(false).for_import(true).open(&at).unwrap();
        let s =
            terrane::java::import_region_dir(&mut w, 0, &region, &Default::default(), &mut |_| {})
                .unwrap();
        assert!(s.columns > 0);
        drop(w);
        World::open(&at).unwrap();
    }
}
