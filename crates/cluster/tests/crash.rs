//! SIGKILL crash harness with tier moves in flight: a child process (this test binary,
//! re-executed) saves ticks, loads chunks (promotions that split clusters) and runs demotion
//! passes on a persistent backend; the parent kills it at random moments, reopens the store
//! and checks that every chunk is at exactly one level and reads back as of the last
//! committed save, which is at least the last acknowledged one.
//!
//! Backends: terrane-blockfile and PostgreSQL here (the harness: `common/kills.rs`); RocksDB in
//! the terrane-benches package (`benches/tests/crash.rs`), so that this crate's tests do not
//! compile RocksDB's C++.
//!
//! `TERRANE_CRASH_KILLS=N` overrides the number of kills per backend (`cargo xtask crash`).

mod common;

use std::collections::BTreeMap;

use common::kills::{Step, builder, model, run, run_with_env, step};
use terrane_cluster::TieredStore;
use terrane_section::ChunkPos;
use terrane_store::conformance::Rng;
use terrane_store::{Store, StoreConfig};

#[test]
fn crash_blockfile() {
    run("crash_blockfile", 200, |dir| {
        terrane_blockfile::BlockFile::open(
            dir.join("world.tbf"),
            &StoreConfig::new("terrane cluster crash"),
        )
        .unwrap()
    });
}

#[test]
fn crash_postgres() {
    // A child uses the parent's server; the parent starts one (stopped when the test ends).
    let (_server, conninfo) = terrane_postgres::testing::server_or_parents();
    let env = vec![(terrane_postgres::testing::CONNINFO_ENV.to_string(), conninfo.clone())];
    run_with_env("crash_postgres", 200, &env, |_dir| {
        terrane_postgres::PgStore::open_with(
            &conninfo,
            &StoreConfig::new("terrane cluster crash"),
            &terrane_postgres::PgOptions::new().schema("cluster_crash").pool_size(4),
        )
        .unwrap()
    });
}

/// Power loss with tier moves in flight, on the block file: before each of 36 steps (tick
/// saves, promotions, demotion passes) the store is synced; the step runs while a snapshot
/// holds freed blocks (so the bytes that differ afterwards are exactly that step's writes);
/// then every simulated power loss of those writes (`lose_power`: pages kept, dropped or torn
/// by sector) opens cleanly, every chunk is at exactly one level, and the chunks read back as
/// before the step or as after it, never a mix.
#[test]
fn power_loss_during_tier_moves_and_saves_keeps_a_whole_state() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.tbf");
    let cfg = StoreConfig::new("terrane cluster power loss");
    let store = std::sync::Arc::new(terrane_blockfile::BlockFile::open(&path, &cfg).unwrap());
    let mut t = builder().open(store.clone()).unwrap();
    let mut rng = Rng::new(17);
    let read_all = |t: &TieredStore<_>, keys: &BTreeMap<(u64, ChunkPos), Vec<u8>>| {
        keys.keys()
            .filter_map(|(d, p)| t.get_chunk(*d, *p).unwrap().map(|b| ((*d, *p), b)))
            .collect::<BTreeMap<_, _>>()
    };
    let (mut rolled_back, mut kept) = (0, 0);
    for i in 0..60u64 {
        let measured = i >= 24;
        let before = if measured {
            store.sync().unwrap();
            Some(std::fs::read(&path).unwrap())
        } else {
            None
        };
        let pin = store.snapshot().unwrap();
        match step(i) {
            Step::Save(save, _) => t.save_tick(i + 1, &save).unwrap(),
            Step::Load(p) => {
                t.load_chunk(0, p, i + 1).unwrap();
            }
            Step::Maintain(players) => {
                t.set_players(&players);
                t.maintain(i + 1).unwrap();
            }
        }
        let Some(before) = before else { continue };
        let after = std::fs::read(&path).unwrap();
        drop(pin);
        // Every chunk any state holds: the states before and after the step.
        let (old, new) = (model(i), model(i + 1));
        let mut keys = old.clone();
        keys.extend(new.clone());
        for round in 0..4 {
            let odds = [1, 8, 32, 63][round];
            let lost = terrane_store::conformance::lose_power(&before, &after, odds, &mut rng);
            let work = dir.path().join("lost.tbf");
            std::fs::write(&work, &lost).unwrap();
            let bf = terrane_blockfile::BlockFile::open(&work, &cfg)
                .unwrap_or_else(|e| panic!("step {i} round {round}: open failed: {e}"));
            assert!(bf.recovery().is_clean(), "step {i} round {round}: {:?}", bf.recovery());
            let lost_tiered = builder().open(bf).unwrap();
            lost_tiered.verify().unwrap_or_else(|e| panic!("step {i} round {round}: {e}"));
            let got = read_all(&lost_tiered, &keys);
            if got == new {
                kept += 1;
            } else {
                assert!(got == old, "step {i} round {round}: neither before nor after the step");
                rolled_back += 1;
            }
            drop(lost_tiered);
            std::fs::remove_file(&work).unwrap();
        }
    }
    eprintln!("144 power losses: {kept} kept the step, {rolled_back} rolled it back");
    assert!(kept > 0 && rolled_back > 0);
}
