//! A world's life across processes: one writer or many readers, read-only opens that write
//! nothing, and creations killed at every point.
//!
//! `TERRANE_CRASH_KILLS=N` overrides the number of creation kills per backend.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use terrane::{Backend, ChunkPos, Error, Schema, TickSave, World};

const CHILD_ENV: &str = "TERRANE_LIFECYCLE_CHILD";

fn backends() -> Vec<Backend> {
    [Backend::RocksDb, Backend::BlockFile].into_iter().filter(|b| b.is_available()).collect()
}

fn schema() -> Schema {
    let mut s = Schema::new();
    s.add_block("minecraft:air", &[]).unwrap();
    s.add_block("minecraft:stone", &[]).unwrap();
    s
}

use terrane_section::testdata::ChildGuard;
use terrane_store::conformance::files;

fn small_world(path: &Path, backend: Backend) {
    let mut w = World::builder().backend(backend).schema(schema()).create(path).unwrap();
    for i in 0..8 {
        let pos = ChunkPos::new(i, 0, -i);
        w.load_chunk(pos).unwrap();
        let mut c = terrane::Chunk::new(w.air());
        c.set(1, 2, 3, terrane::BlockId(1));
        let mut save = TickSave::new();
        save.put_chunk(0, pos, c.encode(w.schema()));
        w.save_tick(i as u64 + 1, save).unwrap();
    }
    w.close().unwrap();
}

fn is_locked(e: &Error) -> bool {
    matches!(e, Error::Store(terrane::store::Error::Locked { .. }))
}

#[test]
fn read_only_opens_write_nothing_and_share_the_world() {
    for backend in backends() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("w");
        small_world(&path, backend);
        let before = files(&path);
        {
            let a = World::open_read_only(&path).unwrap();
            let b = World::open_read_only(&path).unwrap();
            assert!(a.is_read_only());
            assert_eq!(a.info().unwrap().levels, b.info().unwrap().levels);
            a.verify().unwrap();
            assert!(a.get_chunk(ChunkPos::new(3, 0, -3)).unwrap().is_some());
            let backup = tmp.path().join("backup");
            a.checkpoint(&backup).unwrap();
            let copy = World::open_read_only(&backup).unwrap();
            copy.verify().unwrap();
            assert_eq!(copy.info().unwrap().levels, a.info().unwrap().levels, "{backend}");
            let err = World::open(&path).unwrap_err();
            assert!(is_locked(&err), "{backend}: a writer beside readers: {err}");
        }
        assert!(before == files(&path), "{backend}: a read-only open changed the world's files");
        let mut w = World::open(&path).unwrap();
        let err = World::open_read_only(&path).unwrap_err();
        assert!(is_locked(&err), "{backend}: a reader beside a writer: {err}");
        assert!(err.to_string().contains("in use"), "{err}");
        w.save_tick(100, TickSave::new()).unwrap();
    }
}

/// The child role of [`creation_killed_at_any_point_opens_or_is_replaced`]: creates a world.
fn child_creates(dir: &Path, backend: Backend) {
    let w = World::builder().backend(backend).schema(schema()).create(dir).expect("child: create");
    let mut out = std::io::stdout().lock();
    writeln!(out, "CREATED").unwrap();
    out.flush().unwrap();
    drop(w);
    std::process::exit(0);
}

fn spawn(dir: &Path, backend: Backend) -> ChildGuard {
    ChildGuard::spawn(
        Command::new(std::env::current_exe().unwrap())
            .args(["creation_killed_at_any_point_opens_or_is_replaced", "--exact", "--nocapture"])
            .env(CHILD_ENV, format!("{}|{}", backend.name(), dir.display()))
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    )
    .unwrap()
}

#[test]
fn creation_killed_at_any_point_opens_or_is_replaced() {
    if let Ok(v) = std::env::var(CHILD_ENV) {
        let (b, dir) = v.split_once('|').unwrap();
        child_creates(Path::new(dir), Backend::parse(b).unwrap());
    }
    let rounds: u32 =
        std::env::var("TERRANE_CRASH_KILLS").ok().and_then(|v| v.parse().ok()).unwrap_or(40);
    for backend in backends() {
        let tmp = tempfile::tempdir().unwrap();
        // One creation to its end: the span the kills sweep.
        let start = Instant::now();
        let mut probe = spawn(&tmp.path().join("probe"), backend);
        let out = probe.stdout.take().unwrap();
        assert!(BufReader::new(out).lines().map_while(|l| l.ok()).any(|l| l == "CREATED"));
        probe.wait().unwrap();
        let span = start.elapsed().mul_f64(1.2);
        let (mut opened, mut replaced, mut unfinished) = (0, 0, 0);
        for round in 0..rounds {
            let dir = tmp.path().join(format!("round-{round}"));
            let mut child = spawn(&dir, backend);
            std::thread::sleep(span.mul_f64(f64::from(round) / f64::from(rounds)));
            child.kill().unwrap();
            child.wait().unwrap();
            if World::is_unfinished_creation(&dir) {
                unfinished += 1;
            }
            match World::open(&dir) {
                Ok(w) => {
                    w.verify().unwrap();
                    opened += 1;
                }
                Err(open_err) => {
                    let w = World::builder().backend(backend).schema(schema()).create(&dir);
                    let w = w.unwrap_or_else(|e| {
                        panic!("{backend} round {round}: open failed ({open_err}), create too: {e}")
                    });
                    w.verify().unwrap();
                    replaced += 1;
                }
            }
        }
        eprintln!(
            "{backend}: {rounds} kills over {span:?}: {opened} opened, {replaced} replaced, \
             {unfinished} left an unfinished creation"
        );
        assert_eq!(opened + replaced, rounds);
        assert!(unfinished > 0, "{backend}: no kill landed inside the creation");
    }
}

/// The child role of [`a_second_process_is_refused_until_the_holder_dies`]: holds the world.
fn child_holds(dir: &Path) {
    let _w = World::open(dir).expect("child: open");
    println!("HOLDING");
    std::io::stdout().flush().unwrap();
    std::thread::sleep(Duration::from_secs(60));
    std::process::exit(0);
}

#[test]
fn a_second_process_is_refused_until_the_holder_dies() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        child_holds(Path::new(&dir));
    }
    for backend in backends() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("w");
        small_world(&path, backend);
        let mut child = ChildGuard::spawn(
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "a_second_process_is_refused_until_the_holder_dies",
                    "--exact",
                    "--nocapture",
                ])
                .env(CHILD_ENV, &path)
                .stdout(Stdio::piped())
                .stderr(Stdio::null()),
        )
        .unwrap();
        let out = child.stdout.take().unwrap();
        assert!(BufReader::new(out).lines().map_while(|l| l.ok()).any(|l| l.contains("HOLDING")));
        let writer = World::open(&path).unwrap_err();
        let reader = World::open_read_only(&path).unwrap_err();
        child.kill().unwrap();
        child.wait().unwrap();
        for err in [writer, reader] {
            assert!(is_locked(&err), "{backend}: {err}");
            assert!(err.to_string().contains(&format!("pid {}", child.id())), "{err}");
        }
        let w = World::open(&path).expect("the lock dies with its holder");
        w.verify().unwrap();
    }
}

/// A creation cut off after its backend was made (the intent file still there, no marker): a
/// read-only open refuses it and changes nothing, a writable open finishes it, and a world in
/// use cannot be removed.
#[test]
fn an_unfinished_creation_is_finished_by_a_writer_and_refused_by_a_reader() {
    for backend in backends() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("w");
        small_world(&path, backend);
        std::fs::rename(path.join("terrane-world"), path.join("terrane-world.creating")).unwrap();
        assert!(World::is_unfinished_creation(&path));
        let before = files(&path);
        let err = World::open_read_only(&path).unwrap_err();
        assert!(err.to_string().contains("cut off"), "{backend}: {err}");
        assert!(before == files(&path), "{backend}: the refused read-only open wrote");
        let w = World::open(&path).unwrap();
        assert!(path.join("terrane-world").exists() && !World::is_unfinished_creation(&path));
        assert!(w.get_chunk(ChunkPos::new(3, 0, -3)).unwrap().is_some(), "{backend}: data kept");
        let err = World::remove(&path).unwrap_err();
        assert!(is_locked(&err), "{backend}: removing a world in use: {err}");
        drop(w);
        World::remove(&path).unwrap();
        assert!(!path.exists());
    }
}

/// An import cut off (a panic in its progress, where a kill would land) leaves a world that
/// opens only to import again; that import goes on where it stopped, and then the world
/// opens holding what one whole import writes.
#[test]
fn an_import_cut_off_opens_only_to_import_again() {
    use terrane::java::import_java_world;
    let java = terrane_section::testdata::fixture("java-worlds/26.1-layout");
    let dir = tempfile::tempdir().unwrap();
    let create = |name: &str| {
        World::builder().backend(Backend::RocksDb).sync_saves(false).create(dir.path().join(name))
    };
    let mut w = create("cut").unwrap();
    let cut = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        import_java_world(&mut w, &java, &mut |_, p| assert!(p.columns_done < 3, "cut off"))
    }));
    assert!(cut.is_err(), "the import ran to its end");
    drop(w);
    let path = dir.path().join("cut");
    assert!(matches!(World::open(&path), Err(Error::ImportUnfinished(_))));
    assert!(matches!(World::open_read_only(&path), Err(Error::ImportUnfinished(_))));
    let mut w = World::builder().sync_saves(false).for_import(true).open(&path).unwrap();
    let again = import_java_world(&mut w, &java, &mut |_, _| {}).unwrap();
    assert!(again.total().columns_skipped > 0, "the import went on where it stopped");
    w.close().unwrap();

    let mut whole = create("whole").unwrap();
    import_java_world(&mut whole, &java, &mut |_, _| {}).unwrap();
    let chunks = |w: &World| -> Vec<(Vec<u8>, Vec<u8>)> {
        let scan = w.store().scan(terrane::tables::CHUNK_L0, terrane_store::KeyRange::all());
        let scan = scan.unwrap();
        scan.map(|e| e.map(|(k, o)| (k, o.data)).unwrap()).collect()
    };
    let resumed = World::open_read_only(&path).unwrap();
    drop(resumed);
    // A region folder that cannot be read is refused before the world is marked.
    let mut w = World::open(&path).unwrap();
    let missing = dir.path().join("no-such-region-folder");
    let options = terrane::anvil::ImportOptions::new();
    assert!(terrane::java::import_region_dir(&mut w, 0, &missing, &options, &mut |_| {}).is_err());
    drop(w);
    let resumed = World::open_read_only(&path).unwrap();
    assert_eq!(chunks(&resumed), chunks(&whole));
    assert!(!chunks(&whole).is_empty());
}
