//! Incremental backups of a world of 50,000 chunks while it saves a tick every 50 ms: the
//! bytes and time of the first and of an incremental backup (1 % of the chunks changed)
//! beside a full copy (`World::checkpoint`) and `tar` + `zstd` of the world folder; tick-save
//! latency with and without a backup running, in the same run; and a restored world checked
//! object for object against a reference copy taken at the same tick.
//!
//! `cargo xtask bench terrane -- backup` (a plain harness: each figure is one run of a
//! whole job). `TERRANE_BACKUP_BENCH_CHUNKS` sets the world's size (default 50,000).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use terrane_store::conformance::{Rng, dump as objects};

use terrane::backup::{Keep, Repo};
use terrane::section::AreaId;
use terrane::worldgen::hills::{self as terrain, Palette};
use terrane::{Backend, ChunkPos, ColumnPos, TickSave, World};

fn du(path: &Path) -> u64 {
    let out = Command::new("du").args(["-sb"]).arg(path).output().expect("du");
    String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap().parse().unwrap()
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn pct(v: &mut [f64], q: f64) -> f64 {
    terrane::stats::percentile(v, q).unwrap_or(0.0)
}

/// Plays `ticks` ticks at 20 per second, each changing `per_tick` random chunks of
/// `chunks`; returns each tick's save time in milliseconds.
fn play(
    world: &mut World,
    chunks: &[ChunkPos],
    ticks: u64,
    per_tick: usize,
    rng: &mut Rng,
) -> Vec<f64> {
    let palette = Palette::of(world.schema()).unwrap();
    let mut times = Vec::new();
    for _ in 0..ticks {
        let t0 = Instant::now();
        let tick = world.tick() + 1;
        let mut save = TickSave::new();
        let mut picked = Vec::new();
        for _ in 0..per_tick {
            let pos = chunks[rng.below(chunks.len() as u64) as usize];
            let mut c = world.load_chunk(pos).unwrap().expect("generated");
            let i = rng.below(4096) as u16;
            let b = if c.get_index(i) == palette.cobble { palette.air } else { palette.cobble };
            c.set_index(i, b);
            save.put_chunk(0, pos, c.encode(world.schema()));
            picked.push(pos);
        }
        let t = Instant::now();
        world.save_tick(tick, save).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
        for pos in picked {
            world.unload_chunk(pos).unwrap();
        }
        if let Some(rest) = Duration::from_millis(50).checked_sub(t0.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    times
}

fn run(backend: Backend, target: usize) {
    let tmp = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let path = tmp.path().join("world");
    let schema = terrain::schema();
    let palette = Palette::of(&schema).unwrap();
    let mut world = World::builder().backend(backend).schema(schema).create(&path).unwrap();
    // Generate columns in a square around spawn until the world holds `target` chunks.
    let mut chunks = Vec::new();
    let side = ((target as f64 / 2.0).sqrt().ceil() as i32).max(4);
    let mut tick = 0;
    let mut save = TickSave::new();
    'fill: for z in 0..side {
        for x in 0..side {
            for (p, c) in terrain::column(42, ColumnPos::new(x, z), &palette) {
                save.put_chunk(0, p, c.encode(world.schema()));
                chunks.push(p);
            }
            world.mark_generated(ColumnPos::new(x, z)).unwrap();
            if chunks.len() % 512 < 8 {
                tick += 1;
                world.save_tick(tick, std::mem::take(&mut save)).unwrap();
            }
            if chunks.len() >= target {
                break 'fill;
            }
        }
    }
    tick += 1;
    world.save_tick(tick, save).unwrap();
    // Nobody near: the world settles into warm and cold clusters, as a played world does.
    world.maintain(tick + 100_000).unwrap();
    let n = chunks.len();

    // The first backup, a full copy and tar + zstd of the same world.
    let repo_path = tmp.path().join("repo");
    let repo = Repo::open_or_create(&repo_path).unwrap();
    let t = Instant::now();
    let first = world.backup_incremental(&repo).unwrap();
    let first_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    world.checkpoint(tmp.path().join("copy")).unwrap();
    let copy_s = t.elapsed().as_secs_f64();
    let copy_bytes = du(&tmp.path().join("copy"));
    let tar = |name: &str| {
        let out = tmp.path().join(name);
        let t = Instant::now();
        let ok = Command::new("tar")
            .arg("-I")
            .arg("zstd -3 -T1")
            .arg("-cf")
            .arg(&out)
            .arg("-C")
            .arg(tmp.path())
            .arg("world")
            .status()
            .expect("tar");
        assert!(ok.success());
        (t.elapsed().as_secs_f64(), std::fs::metadata(&out).unwrap().len())
    };
    let (tar_s, tar_bytes) = tar("first.tar.zst");

    // Saves every 50 ms: 1 % of the chunks change over 100 ticks without a backup, then as
    // many ticks with one running.
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let per_tick = (n / 100 / 100).max(1);
    let mut without = play(&mut world, &chunks, 100, per_tick, &mut rng);
    // Then 300 more ticks, a backup starting every 2 s on a thread of its own (the first
    // holds the 1 % changed above); each tick's save is put beside the ticks without a backup
    // running, in the same run.
    let source = world.backup_source();
    let running = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let backup = {
        let (running, done) = (running.clone(), done.clone());
        let repo_path = repo_path.clone();
        std::thread::spawn(move || {
            let repo = Repo::open_or_create(repo_path).unwrap();
            let mut runs = Vec::new();
            while !done.load(Ordering::Relaxed) {
                let t = Instant::now();
                running.store(true, Ordering::SeqCst);
                let r = source.backup(&repo).unwrap();
                running.store(false, Ordering::SeqCst);
                runs.push((r, t.elapsed().as_secs_f64()));
                while t.elapsed() < Duration::from_secs(2) && !done.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            runs
        })
    };
    drop(repo);
    let (mut with, mut beside) = (Vec::new(), Vec::new());
    for _ in 0..300 {
        let during = running.load(Ordering::SeqCst);
        let ms = play(&mut world, &chunks, 1, per_tick, &mut rng)[0];
        if during || running.load(Ordering::SeqCst) { with.push(ms) } else { beside.push(ms) }
    }
    done.store(true, Ordering::Relaxed);
    let runs = backup.join().unwrap();
    let (second, second_s) = runs[0].clone();
    without.extend(beside);
    let (tar2_s, tar2_bytes) = tar("second.tar.zst");

    // A backup and a reference copy at the same tick, and the restore of it compared.
    let repo = Repo::open_or_create(&repo_path).unwrap();
    let third = world.backup_incremental(&repo).unwrap();
    let reference = objects(world.store());
    let restored = tmp.path().join("restored");
    let t = Instant::now();
    terrane::restore_world(&repo.contents(third.id).unwrap(), &restored, Some(backend)).unwrap();
    let restore_s = t.elapsed().as_secs_f64();
    let back = World::open_read_only(&restored).unwrap();
    assert!(objects(back.store()) == reference, "the restored world differs from the reference");

    // One area of the live world back to the first backup: what a server's tick waits for
    // when it restores an area between two ticks.
    let t = Instant::now();
    let area = world.restore_area(&repo.contents(first.id).unwrap(), 0, AreaId::new(0, 0)).unwrap();
    let area_ms = t.elapsed().as_secs_f64() * 1e3;

    // Keep only the newest backup: packs nobody needs go, packs needed little are rewritten.
    let before = du(&repo_path.join("packs"));
    let t = Instant::now();
    let pruned = repo.prune(&Keep { last: 1, ids: vec![] }, false).unwrap();
    let prune_s = t.elapsed().as_secs_f64();
    let after = du(&repo_path.join("packs"));
    let again = tmp.path().join("restored-after-prune");
    terrane::restore_world(&repo.contents(third.id).unwrap(), &again, Some(backend)).unwrap();
    let back = World::open_read_only(&again).unwrap();
    assert!(objects(back.store()) == reference, "after the prune, the kept backup differs");
    assert!(repo.verify().unwrap().is_clean());

    println!(
        "\n{} world: {n} chunks, {} objects, {:.1} MiB of values",
        backend.name(),
        first.objects,
        mib(first.bytes)
    );
    println!("| job | written | time | note |");
    println!("|---|---:|---:|---|");
    println!(
        "| first backup (terrane) | {:.1} MiB | {first_s:.2} s | {} objects |",
        mib(first.written_bytes()),
        first.objects
    );
    println!("| full copy (`World::checkpoint`) | {:.1} MiB | {copy_s:.2} s | |", mib(copy_bytes));
    println!(
        "| tar + zstd -3 of the folder | {:.1} MiB | {tar_s:.2} s | no save running |",
        mib(tar_bytes)
    );
    println!(
        "| incremental backup (terrane), saving every tick | {:.2} MiB | {second_s:.2} s | {} objects changed, {:.2} MiB of changed values: written / changed = {:.3} |",
        mib(second.written_bytes()),
        second.changed,
        mib(second.changed_bytes),
        second.written_bytes() as f64 / second.changed_bytes.max(1) as f64
    );
    println!("| tar + zstd -3 again | {:.1} MiB | {tar2_s:.2} s | |", mib(tar2_bytes));
    println!(
        "| restore of a backup into a new world | | {restore_s:.2} s | equal, object for object, to the world at its tick |"
    );
    println!(
        "| restore of area 0,0 into the live world | {:.2} MiB | {area_ms:.0} ms | {} objects written, {} removed, of {} |",
        mib(area.bytes_written),
        area.objects_written,
        area.objects_removed,
        area.objects_before
    );
    println!(
        "| prune to the newest of {} backups | | {prune_s:.2} s | packs {:.2} MiB before, {:.2} MiB after ({} deleted, {} of them rewritten with the needed part); the first backup was {:.2} MiB |",
        pruned.removed.len() + pruned.kept.len(),
        mib(before),
        mib(after),
        pruned.packs_deleted,
        pruned.packs_rewritten,
        mib(first.pack_bytes)
    );
    println!(
        "tick saves ({} chunks each, one every 50 ms): without a backup running p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} ticks); while one of {} backups ran p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} ticks)",
        per_tick,
        pct(&mut without, 0.5),
        pct(&mut without, 0.99),
        pct(&mut without, 1.0),
        without.len(),
        runs.len(),
        pct(&mut with, 0.5),
        pct(&mut with, 0.99),
        pct(&mut with, 1.0),
        with.len()
    );
}

fn main() {
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if std::env::args().any(|a| a == "--list")
        || (!filters.is_empty() && !filters.iter().any(|f| "backup".contains(f.as_str())))
    {
        return;
    }
    let target = std::env::var("TERRANE_BACKUP_BENCH_CHUNKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000);
    for backend in [Backend::BlockFile, Backend::RocksDb] {
        run(backend, target);
    }
}
