//! SIGKILL during restores: a child process restores four areas of a live world from a
//! backup, one atomic batch each (`ACK 1`..`ACK 4`), then the whole backup into a new world
//! (`ACK 5`); the parent kills it at random moments. After every kill each area of the live
//! world is exactly as it was before the restore or exactly as the backup holds it, never a
//! mix, and every acknowledged one is restored; the new world either refuses to open or holds
//! exactly the backup, and holds it once acknowledged.
//!
//!
//! SIGKILL during a copy and an import: a child copies a world into a new RocksDB world
//! (`ACK 1`), then imports a real Java region into a world created for it (`ACK 2`). After
//! every kill the copy either refuses to open or holds exactly the source, and the import's
//! world either refuses to open (but to the import, which then goes on to the whole) or
//! holds the whole import.
//!
//! `TERRANE_CRASH_KILLS=N` sets the kills of each test to N / 5 (`cargo xtask crash`: 200);
//! the normal suite runs 20 and 10.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use terrane_store::conformance::dump as objects;

use terrane::backup::Repo;
use terrane::section::AreaId;
use terrane::section::keys;
use terrane::{Backend, Chunk, ChunkPos, Object, Schema, TickSave, World};
use terrane_store::conformance::crash::{CHILD_ENV, KILLS_ENV, kill_round};
use terrane_store::conformance::{Rng, copy_dir};

const TEST: &str = "restores_survive_sigkill";
const AREAS: [AreaId; 4] =
    [AreaId { x: 0, z: 0 }, AreaId { x: 1, z: 0 }, AreaId { x: 0, z: 1 }, AreaId { x: -1, z: -1 }];

type Objects = BTreeMap<(String, Vec<u8>), Object>;

fn schema() -> Schema {
    let mut s = Schema::new();
    s.add_block("minecraft:air", &[]).unwrap();
    s.add_block("minecraft:stone", &[]).unwrap();
    s
}

/// The chunk objects (every level) of `area`.
fn area_chunks(all: &Objects, area: AreaId) -> Objects {
    all.iter()
        .filter(|((t, k), _)| {
            let shift = match t.as_str() {
                "chunkl0" => 0,
                "chunkl1" => 2,
                "chunkl2" => 4,
                _ => return false,
            };
            keys::parse_chunk_key(k).is_some_and(|(_, c)| {
                AreaId::of_chunk(ChunkPos::new(c.x << shift, c.y << shift, c.z << shift)) == area
            })
        })
        .map(|(k, o)| (k.clone(), o.clone()))
        .collect()
}

/// Saves `ticks` ticks, each changing a chunk in every area (`mark` in its block).
fn play(world: &mut World, ticks: u64, mark: u32) {
    let stone = terrane::BlockId(1);
    for _ in 0..ticks {
        let tick = world.tick() + 1;
        let mut save = TickSave::new();
        for a in AREAS {
            let pos =
                ChunkPos::new(i64::from(a.x) * 16 + (tick % 7) as i64, 4, i64::from(a.z) * 16 + 3);
            let mut c = world.load_chunk(pos).unwrap().unwrap_or_else(|| Chunk::new(world.air()));
            c.set(mark, (tick % 16) as u32, 2, stone);
            save.put_chunk(0, pos, c.encode(world.schema()));
            world.unload_chunk(pos).unwrap();
        }
        world.save_tick(tick, save).unwrap();
    }
}

/// The child: restores the areas, then the whole backup into `full`.
fn child(dir: &Path) -> ! {
    let repo = Repo::open(dir.join("repo")).unwrap();
    let contents = repo.contents(1).unwrap();
    let mut world = World::open(dir.join("live")).unwrap();
    for (i, a) in AREAS.iter().enumerate() {
        world.restore_area(&contents, 0, *a).unwrap();
        println!("ACK {}", i + 1);
    }
    terrane::restore_world(&contents, dir.join("full"), Some(Backend::BlockFile)).unwrap();
    println!("ACK 5");
    std::thread::sleep(Duration::from_secs(60));
    std::process::exit(0);
}

#[test]
fn restores_survive_sigkill() {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        child(Path::new(&dir));
    }
    let kills: u64 = std::env::var(KILLS_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(20, |n| (n / 5).max(1));
    let tmp = tempfile::tempdir().unwrap();
    let pristine = tmp.path().join("pristine");
    // A world with the four areas, backed up, then changed in each.
    let (backup, before) = {
        let mut w = World::builder()
            .schema(schema())
            .backend(Backend::BlockFile)
            .create(pristine.join("live"))
            .unwrap();
        play(&mut w, 10, 1);
        w.maintain(w.tick() + 100_000).unwrap();
        play(&mut w, 2, 2);
        let repo = Repo::open_or_create(pristine.join("repo")).unwrap();
        w.backup_incremental(&repo).unwrap();
        let backup = objects(w.store());
        play(&mut w, 6, 9);
        let before = objects(w.store());
        w.close().unwrap();
        (backup, before)
    };
    for a in AREAS {
        assert_ne!(area_chunks(&before, a), area_chunks(&backup, a), "area {a:?} changed");
    }
    let dir = tmp.path().join("round");
    let mut rng = Rng::new(0x5e57);
    let (mut mid_areas, mut mid_full, mut acked_all) = (0, 0, 0);
    for round in 0..kills {
        let _ = std::fs::remove_dir_all(&dir);
        copy_dir(&pristine, &dir).unwrap();
        let delay = Duration::from_millis(rng.below(120));
        let r = kill_round(TEST, &dir, &[], 0, delay);
        assert!(!r.exited_on_its_own, "round {round}: the child stopped by itself");
        let acked = r.acks.iter().copied().max().unwrap_or(0);
        let live = World::open_read_only(dir.join("live")).unwrap();
        let now = objects(live.store());
        let mut restored = 0;
        for (i, a) in AREAS.iter().enumerate() {
            let got = area_chunks(&now, *a);
            if got == area_chunks(&backup, *a) {
                restored += 1;
            } else {
                assert_eq!(got, area_chunks(&before, *a), "round {round}: area {a:?} is a mix");
                assert!(acked <= i as i64, "round {round}: area {a:?} acknowledged, not restored");
            }
        }
        mid_areas += u64::from(restored > 0 && restored < AREAS.len());
        drop(live);
        let full = dir.join("full");
        match World::open_read_only(&full) {
            Ok(w) => {
                assert_eq!(objects(w.store()), backup, "round {round}: the restored world");
                acked_all += u64::from(acked == 5);
            }
            Err(e) => {
                assert!(acked < 5, "round {round}: restore acknowledged, world refused: {e}");
                mid_full += u64::from(full.exists());
            }
        }
    }
    eprintln!(
        "{kills} kills: {mid_areas} between two areas, {mid_full} during the whole-world restore, {acked_all} after it"
    );
}

const COPY_TEST: &str = "copies_and_imports_survive_sigkill";

/// Kills of [`copies_and_imports_survive_sigkill`] in the normal suite (each round that cuts
/// the import imports again).
const COPY_KILLS: u64 = 10;

/// The region the import child imports: 1,024 real 1.18.2 chunk columns' worth of a file.
fn java_region() -> std::path::PathBuf {
    terrane_section::testdata::fixture("anvil/1.18.2")
}

/// Opens (or creates) the import's world at `path` and imports [`java_region`] into it.
fn import_region(path: &Path) -> terrane::anvil::ImportSummary {
    let mut w = World::builder()
        .backend(Backend::RocksDb)
        .sync_saves(false)
        .for_import(true)
        .open_or_create(path)
        .unwrap();
    let options = terrane::anvil::ImportOptions::new();
    let s =
        terrane::java::import_region_dir(&mut w, 0, &java_region(), &options, &mut |_| {}).unwrap();
    w.close().unwrap();
    s
}

/// Keys and bytes, in key order.
type KeyBytes = Vec<(Vec<u8>, Vec<u8>)>;

/// What an import leaves that a resumed one must equal: the chunks' keys and bytes, and the
/// column records' keys (versions differ with the saves that wrote them).
fn imported(w: &World) -> (KeyBytes, Vec<Vec<u8>>) {
    use terrane_store::KeyRange;
    let chunks = w.store().scan(terrane::tables::CHUNK_L0, KeyRange::all()).unwrap();
    let records = w.store().scan_prefix(terrane::tables::WORLD_PROPERTIES, b"anvil:column:");
    (
        chunks.map(|e| e.map(|(k, o)| (k, o.data)).unwrap()).collect(),
        records.unwrap().map(|e| e.unwrap().0).collect(),
    )
}

/// The child: copies `live` into `copy`, then imports the region into `imported`.
fn copy_child(dir: &Path) -> ! {
    let live = World::open_read_only(dir.join("live")).unwrap();
    terrane::copy::copy_world(&live, dir.join("copy"), Some(Backend::RocksDb), |_, _| {}).unwrap();
    println!("ACK 1");
    import_region(&dir.join("imported"));
    println!("ACK 2");
    std::thread::sleep(Duration::from_secs(60));
    std::process::exit(0);
}

#[test]
fn copies_and_imports_survive_sigkill() {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        copy_child(Path::new(&dir));
    }
    let kills: u64 = std::env::var(KILLS_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(COPY_KILLS, |n| (n / 5).max(1));
    let tmp = tempfile::tempdir().unwrap();
    let pristine = tmp.path().join("pristine");
    // The copy's source is a whole import, whose objects the import's world must end with.
    import_region(&pristine.join("live"));
    let live = World::open_read_only(pristine.join("live")).unwrap();
    let (source, whole) = (objects(live.store()), imported(&live));
    drop(live);
    assert!(!whole.0.is_empty() && !whole.1.is_empty());
    let dir = tmp.path().join("round");
    let mut rng = Rng::new(0xc0b1);
    let (mut cut_copies, mut cut_imports, mut acked_all) = (0, 0, 0);
    for round in 0..kills {
        let _ = std::fs::remove_dir_all(&dir);
        copy_dir(&pristine, &dir).unwrap();
        // The child starts and copies within a few hundred milliseconds, and imports within
        // about two seconds: every other kill lands in the first part.
        let delay = Duration::from_millis(rng.below(if round % 2 == 0 { 400 } else { 2500 }));
        let r = kill_round(COPY_TEST, &dir, &[], 0, delay);
        assert!(!r.exited_on_its_own, "round {round}: the child stopped by itself");
        let acked = r.acks.iter().copied().max().unwrap_or(0);
        match World::open_read_only(dir.join("copy")) {
            Ok(w) => assert_eq!(objects(w.store()), source, "round {round}: the copy opened"),
            Err(e) => {
                assert!(acked < 1, "round {round}: copy acknowledged, world refused: {e}");
                cut_copies += u64::from(dir.join("copy").exists());
            }
        }
        let at = dir.join("imported");
        match World::open_read_only(&at) {
            Ok(w) => {
                assert_eq!(imported(&w), whole, "round {round}: the imported world opened");
                acked_all += u64::from(acked == 2);
            }
            Err(e) => {
                assert!(acked < 2, "round {round}: import acknowledged, world refused: {e}");
                if at.exists() {
                    cut_imports += 1;
                    assert!(matches!(e, terrane::Error::ImportUnfinished(_)), "round {round}: {e}");
                    // The import goes on where it stopped, to the whole.
                    import_region(&at);
                    let w = World::open_read_only(&at).unwrap();
                    assert_eq!(imported(&w), whole, "round {round}: the import went on");
                }
            }
        }
    }
    eprintln!(
        "{kills} kills: {cut_copies} during the copy, {cut_imports} during the import, {acked_all} after it"
    );
}
