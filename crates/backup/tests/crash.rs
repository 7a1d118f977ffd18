//! SIGKILL during backups and prunes: a child process saves batches into a block-file store,
//! backs it up every few batches and prunes now and then, printing `ACK <batch>` after each
//! backup returns; the parent kills it at random moments. After every kill, the repository
//! verifies clean, every listed backup restores exactly the store after its batch, and the
//! last acknowledged backup is listed. The prunes rewrite packs (repack), which the test
//! checks happened.
//!
//! `TERRANE_CRASH_KILLS=N` sets the kills to N / 4 (`cargo xtask crash`: 250); the normal
//! suite runs 24.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use terrane_backup::{BackupOptions, Keep, Repo};
use terrane_store::conformance::crash::{CHILD_ENV, KILLS_ENV, kill_round, save_batch};
use terrane_store::conformance::dump;
use terrane_store::conformance::{Rng, config};
use terrane_store::{MemStore, Object, ReadView as _, Store, tables};

type Model = BTreeMap<(String, Vec<u8>), Object>;

const TEST: &str = "backups_and_prunes_survive_sigkill";

fn open_store(dir: &Path) -> terrane_blockfile::BlockFile {
    terrane_blockfile::BlockFile::open(dir.join("world.tbf"), &config("backup-crash")).unwrap()
}

/// The child: saves, backs up every third batch (acknowledging it), prunes every fifth
/// backup down to the last three.
fn child(dir: &Path) -> ! {
    let store = open_store(dir);
    let mut next = match store.get(tables::WORLD_META, b"player:0").unwrap() {
        Some(o) => o.version as u64 + 1,
        None => 0,
    };
    let repo = Repo::open_or_create(dir.join("repo")).unwrap();
    loop {
        store.write(&save_batch(next)).unwrap();
        if next % 3 == 2 {
            let r = repo.backup(&store, &BackupOptions { tick: next, source: String::new() });
            r.unwrap();
            println!("ACK {next}");
            if next % 15 == 14 {
                let p = repo.prune(&Keep { last: 3, ids: vec![] }, false).unwrap();
                if p.packs_rewritten > 0 {
                    std::fs::write(dir.join("repacked"), b"").unwrap();
                }
            }
        }
        next += 1;
    }
}

/// Model states after each batch, kept for the batches still asked for.
struct States {
    store: MemStore,
    at: i64,
    kept: BTreeMap<u64, Model>,
}

impl States {
    fn at(&mut self, batch: u64) -> Model {
        if let Some(m) = self.kept.get(&batch) {
            return m.clone();
        }
        assert!(batch as i64 > self.at, "batch {batch} is behind the model ({})", self.at);
        while self.at < batch as i64 {
            self.at += 1;
            self.store.write(&save_batch(self.at as u64)).unwrap();
        }
        let m = dump(&self.store);
        self.kept.insert(batch, m.clone());
        m
    }
}

#[test]
fn backups_and_prunes_survive_sigkill() {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        child(Path::new(&dir));
    }
    let kills: u64 = std::env::var(KILLS_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(24, |n| (n / 4).max(1));
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(0xbac);
    let mut states = States {
        store: MemStore::open(&config("backup-crash")).unwrap(),
        at: -1,
        kept: BTreeMap::new(),
    };
    let mut last_ack = None;
    let mut backups_checked = 0;
    for round in 0..kills {
        let delay = Duration::from_millis(rng.below(60));
        let r = kill_round(TEST, dir.path(), &[], 1 + rng.below(4), delay);
        assert!(!r.exited_on_its_own, "round {round}: the child stopped by itself");
        last_ack = r.acks.iter().copied().max().or(last_ack);
        if !dir.path().join("repo/terrane-backup-repo").exists() {
            assert!(last_ack.is_none(), "round {round}: acknowledged, yet no repository");
            continue;
        }
        let repo = Repo::open(dir.path().join("repo")).unwrap();
        let v = repo.verify().unwrap();
        assert!(v.is_clean(), "round {round}: {v:?}");
        let listed = repo.list().unwrap();
        if let Some(ack) = last_ack {
            assert!(
                listed.iter().any(|b| b.tick == ack as u64),
                "round {round}: backup of batch {ack} acknowledged, not listed: {listed:?}"
            );
        }
        for b in &listed {
            let target = MemStore::open(&config("backup-crash")).unwrap();
            repo.contents(b.id).unwrap().restore_into(&target, false).unwrap();
            assert_eq!(
                dump(&target),
                states.at(b.tick),
                "round {round}: backup {} is not the store after batch {}",
                b.id,
                b.tick
            );
            backups_checked += 1;
        }
        let ticks: Vec<u64> = listed.iter().map(|b| b.tick).collect();
        states.kept.retain(|t, _| ticks.contains(t));
    }
    assert!(last_ack.is_some() && backups_checked >= kills, "{backups_checked} backups checked");
    assert!(
        dir.path().join("repacked").exists(),
        "no prune rewrote a pack: the workload does not test repacking"
    );
}
