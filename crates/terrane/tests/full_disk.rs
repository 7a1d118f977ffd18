//! Full disk: a world on a small tmpfs filled by tick saves until the file
//! system is full, on each embedded backend. The save that meets the full disk fails with an
//! error that says so, nothing panics or aborts, the world opens read-only on the full disk
//! and verifies with every acknowledged save there (the failed one whole or absent); once
//! space is freed, it opens for writing and saves again.
//!
//! The tmpfs is mounted by the test (it runs as root, as CI does); when the mount is refused
//! the test fails and says why.

use std::path::PathBuf;

use terrane::{Backend, BlockId, Chunk, ChunkPos, Schema, TickSave, World};
use terrane_store::conformance::Rng;
use terrane_store::conformance::full_disk::Tmpfs;

fn schema() -> Schema {
    let mut s = Schema::new();
    s.add_block("minecraft:air", &[]).unwrap();
    for i in 0..63 {
        s.add_block(&format!("terrane:noise_{i}"), &[]).unwrap();
    }
    s
}

/// A chunk of 64 states in random cells: about 3 KB that no compressor shrinks much.
fn noisy_chunk(rng: &mut Rng) -> Chunk {
    let mut c = Chunk::new(BlockId(0));
    for x in 0..16 {
        for y in 0..16 {
            for z in 0..16 {
                c.set(x, y, z, BlockId(rng.below(64) as u32));
            }
        }
    }
    c
}

/// The saves of tick `t`: 16 chunks of column row `t`.
fn tick_chunks(t: u64) -> Vec<ChunkPos> {
    (0..16).map(|i| ChunkPos::new(i, 0, t as i64)).collect()
}

#[test]
fn a_full_disk_fails_the_save_loses_nothing_acknowledged_and_saving_resumes() {
    for backend in [Backend::BlockFile, Backend::RocksDb] {
        let fs = Tmpfs::mount(12 * 1024);
        let path: PathBuf = fs.path().join("w");
        // Ballast: what an administrator frees once the disk is full. RocksDB's reopen
        // flushes what its log recovered before it writes anything else: 4 MiB leaves it
        // room however far its flushes lagged behind when the disk filled (2 MiB did not
        // always, on a busy machine).
        let ballast = fs.path().join("ballast");
        std::fs::write(&ballast, vec![1u8; 4 << 20]).unwrap();
        let mut rng = Rng::new(28);
        let mut w = World::builder().backend(backend).schema(schema()).create(&path).unwrap();
        let mut acked: Vec<(ChunkPos, Chunk)> = Vec::new();
        let (mut last_acked, mut failed) = (0u64, None);
        for t in 1..10_000u64 {
            let chunks: Vec<(ChunkPos, Chunk)> =
                tick_chunks(t).into_iter().map(|p| (p, noisy_chunk(&mut rng))).collect();
            let mut save = TickSave::new();
            for (p, c) in &chunks {
                save.put_chunk(0, *p, c.encode(w.schema()));
            }
            match w.save_tick(t, save) {
                Ok(()) => {
                    last_acked = t;
                    acked.extend(chunks);
                }
                Err(e) => {
                    assert!(e.is_storage_full(), "{backend}: not a full disk: {e:?}");
                    let msg = e.to_string();
                    assert!(
                        msg.contains("No space left") || msg.contains("os error 28"),
                        "{backend}: the error does not say the disk is full: {msg}"
                    );
                    eprintln!("{backend}: tick {t}: {msg}");
                    failed = Some((t, chunks));
                    break;
                }
            }
        }
        let Some((failed_tick, failed_chunks)) = failed else {
            panic!("{backend}: 10 000 ticks never filled the disk")
        };
        assert!(last_acked >= 10, "{backend}: only {last_acked} saves before the disk was full");
        drop(w);

        // On the full disk: read-only, every acknowledged save there, the failed one whole or
        // absent.
        let check = |w: &World| {
            let tick = w.tick();
            assert!(
                tick == last_acked || tick == failed_tick,
                "{backend}: tick {tick} after acknowledging {last_acked}"
            );
            for (p, c) in &acked {
                assert_eq!(w.get_chunk(*p).unwrap().as_ref(), Some(c), "{backend}: chunk {p}");
            }
            let present = failed_chunks.iter().filter(|(p, _)| w.get_chunk(*p).unwrap().is_some());
            let n = present.count();
            assert!(
                (tick == failed_tick && n == failed_chunks.len()) || (tick == last_acked && n == 0),
                "{backend}: the failed save is partial (tick {tick}, {n} of its chunks)"
            );
            w.verify().unwrap();
        };
        check(&World::open_read_only(&path).unwrap());

        // Space freed: writable again, and saving resumes.
        std::fs::remove_file(&ballast).unwrap();
        let mut w = World::open(&path).unwrap();
        check(&w);
        let next = w.tick() + 1;
        let c = noisy_chunk(&mut rng);
        let mut save = TickSave::new();
        save.put_chunk(0, ChunkPos::new(99, 0, 99), c.encode(w.schema()));
        w.save_tick(next, save).unwrap();
        w.close().unwrap();
        let w = World::open_read_only(&path).unwrap();
        assert_eq!(w.tick(), next);
        assert_eq!(w.get_chunk(ChunkPos::new(99, 0, 99)).unwrap(), Some(c));
        eprintln!("{backend}: {last_acked} tick saves acknowledged before the disk was full");
    }
}

/// An import that fills the disk (docs/RELIABILITY.md, Full disk): the Java world
/// import stops with an error that says the disk is full; the world does not open (its import
/// is unfinished) but to import again, and then verifies, and every column it recorded has
/// all its chunks (a column is one atomic save); with space freed, the same import resumes,
/// skips what is there and completes.
#[test]
fn an_import_that_fills_the_disk_stops_cleanly_and_resumes() {
    let java = terrane_section::testdata::fixture("anvil/1.21.1");
    // The file system's size and the ballast freed later, MiB: the whole import takes about
    // 26 MiB as a block file (an object takes at least one 4 KiB block: RELIABILITY.md) and
    // 3 MiB in RocksDB.
    for (backend, mib, ballast_mib) in [(Backend::BlockFile, 40, 28), (Backend::RocksDb, 8, 6)] {
        let fs = Tmpfs::mount(mib * 1024);
        let path: PathBuf = fs.path().join("w");
        let ballast = fs.path().join("ballast");
        std::fs::write(&ballast, vec![1u8; ballast_mib << 20]).unwrap();
        let mut w = World::builder().backend(backend).sync_saves(false).create(&path).unwrap();
        let options = terrane::anvil::ImportOptions::new();
        let err = terrane::java::import_region_dir(&mut w, 0, &java, &options, &mut |_| {})
            .expect_err("the space left beside the ballast cannot hold the region's columns");
        assert!(err.is_storage_full(), "{backend}: not a full disk: {err:?}");
        let msg = err.to_string();
        assert!(
            msg.contains("No space left") || msg.contains("os error 28"),
            "{backend}: the error does not say the disk is full: {msg}"
        );
        drop(w);

        let count = |w: &World| -> usize {
            let mut columns = 0;
            for e in
                w.store().scan_prefix(terrane::tables::WORLD_PROPERTIES, b"anvil:column:").unwrap()
            {
                let (k, _) = e.unwrap();
                let (_, pos) = terrane::java::parse_record_key(&k).unwrap();
                let chunks = (-4..20)
                    .filter(|&y| {
                        w.get_chunk(ChunkPos::new(pos.x.into(), y, pos.z.into())).unwrap().is_some()
                    })
                    .count();
                assert!(chunks > 0, "{backend}: column {pos} recorded without its chunks");
                columns += 1;
            }
            columns
        };
        assert!(matches!(World::open_read_only(&path), Err(terrane::Error::ImportUnfinished(_))));
        let r = World::builder().read_only(true).for_import(true).open(&path).unwrap();
        r.verify().unwrap();
        let before = count(&r);
        assert!(before > 0, "{backend}: nothing was imported before the disk was full");
        drop(r);

        std::fs::remove_file(&ballast).unwrap();
        let mut w = World::builder().sync_saves(false).for_import(true).open(&path).unwrap();
        let s = terrane::java::import_region_dir(&mut w, 0, &java, &options, &mut |_| {}).unwrap();
        assert_eq!(
            s.columns_skipped as usize, before,
            "{backend}: the resumed import skips what is there"
        );
        w.close().unwrap();
        let r = World::open_read_only(&path).unwrap();
        r.verify().unwrap();
        assert_eq!(count(&r), before + s.columns as usize);
        eprintln!(
            "{backend}: {before} columns before the disk was full, {} after resuming",
            s.columns
        );
    }
}
