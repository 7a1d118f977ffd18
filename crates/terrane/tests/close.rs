//! A RocksDB world closed cleanly holds its data, not a write-ahead log of it: after
//! `World::close` (or a drop), the logs of its `db/` folder are a few bytes, the folder is
//! within a small factor of the data, and `WorldInfo::disk_bytes` is what `du -sb` says.
#![cfg(feature = "rocksdb")]

use std::path::Path;
use std::process::Command;

use terrane::{Backend, Chunk, ChunkPos, TickSave, World};

/// Bytes of the files of `dir` whose name ends with `.log`.
fn log_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

/// `du -sb dir`: the apparent size of the folder, its folders included.
fn du(dir: &Path) -> u64 {
    let out = Command::new("du").arg("-sb").arg(dir).output().expect("du runs");
    assert!(out.status.success(), "du -sb {}: {:?}", dir.display(), out);
    let text = String::from_utf8(out.stdout).unwrap();
    text.split_whitespace().next().unwrap().parse().unwrap()
}

/// Incompressible bytes (the conformance suite's generator).
fn noise(seed: u64, len: usize) -> Vec<u8> {
    terrane_store::conformance::Rng::new(seed).bytes(len)
}

/// Saves 50 ticks of a game: a few chunks and 4 MiB of entity data. Returns the bytes.
fn play(world: &mut World) -> u64 {
    let mut data = 0;
    for tick in 1..=50u64 {
        let mut save = TickSave::new();
        for i in 0..20u64 {
            let n = tick * 20 + i;
            let mut uuid = [0u8; 16];
            uuid[..8].copy_from_slice(&n.to_be_bytes());
            let value = noise(n, 4096);
            data += value.len() as u64;
            save.put_entity(uuid, value);
        }
        let pos = ChunkPos::new(tick as i64, 0, 0);
        save.put_chunk(0, pos, Chunk::new(world.air()).encode(world.schema()));
        world.save_tick(tick, save).unwrap();
    }
    data
}

fn check_closed(path: &Path, data: u64) {
    let logs = log_bytes(&path.join("db"));
    assert!(logs < 64 << 10, "{logs} bytes of write-ahead log in a closed world");
    let info = World::open_read_only(path).unwrap().info().unwrap();
    assert_eq!(info.entities, 1000);
    assert!(info.disk_bytes < data * 3 / 2, "{} bytes on disk for {data}", info.disk_bytes);
    assert_eq!(info.disk_bytes, du(path), "disk_bytes is du's apparent size");
}

#[test]
fn a_closed_world_holds_its_data_not_a_log_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w");
    let mut world = World::builder().backend(Backend::RocksDb).create(&path).unwrap();
    let data = play(&mut world);
    assert!(log_bytes(&path.join("db")) >= data, "open, the writes are in the log");
    world.close().unwrap();
    check_closed(&path, data);
}

#[test]
fn a_dropped_world_holds_its_data_not_a_log_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w");
    let mut world =
        World::builder().backend(Backend::RocksDb).sync_saves(false).create(&path).unwrap();
    let data = play(&mut world);
    drop(world);
    check_closed(&path, data);
}
