//! The SIGKILL crash harness shared by the persistent backends.
//!
//! A child process (the test binary re-executed with [`CHILD_ENV`] set) opens the store and
//! commits synced batches shaped like game saves: chunk blobs, entity blobs, sometimes a large
//! cluster and some deletions, and a player object that names everything the batch wrote.
//! After each `write` returns it prints `ACK <id>` on stdout. The parent kills it with SIGKILL
//! at random moments (while it opens and recovers, writes, syncs or frees space), reopens the
//! store and checks it against a model: the state is exactly the one after some batch `b`
//! with `b >=` every acknowledged batch, so no acknowledged synced batch is lost, no batch is
//! partial and no object is torn.
//!
//! Batch contents are a pure function of the batch id, so the parent rebuilds the expected
//! state without talking to the child.
//!
//! ```ignore
//! #[test]
//! fn crash() {
//!     let report = terrane_store::conformance::crash::run("crash", 300, |dir| open_my_store(dir));
//!     assert!(report.kills >= 1);
//! }
//! ```

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{Rng, collect};
use crate::{Batch, KeyRange, Object, Op, Result, Store, tables};

/// The environment variable that selects the child role (its value: the store directory).
pub const CHILD_ENV: &str = "TERRANE_CRASH_CHILD_DIR";
/// The environment variable that overrides the number of kills.
pub const KILLS_ENV: &str = "TERRANE_CRASH_KILLS";

const CHUNK_KEYS: u64 = 48;
const ENTITY_KEYS: u64 = 16;
pub(crate) const PLAYER_KEY: &[u8] = b"player:0";

/// What a crash run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrashReport {
    /// Children killed with SIGKILL and recovered from.
    pub kills: u64,
    /// The last batch id found committed at the end.
    pub committed: i64,
    /// The highest batch id a child acknowledged.
    pub acknowledged: i64,
    /// Rounds whose child was killed before it acknowledged anything (during open/recovery
    /// or its first write).
    pub early_kills: u64,
}

fn chunk_key(i: u64) -> Vec<u8> {
    let mut k = vec![0u8; 32];
    k[..8].copy_from_slice(&0u64.to_be_bytes());
    k[24..].copy_from_slice(&(i * 0x9E37_79B9).to_be_bytes());
    k
}

fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ *b as u64).wrapping_mul(0x100_0000_01b3))
}

/// A self-checking blob: `id`, the payload, then an FNV-1a hash of everything before it.
fn blob(rng: &mut Rng, id: u64, len: usize) -> Vec<u8> {
    let mut v = id.to_le_bytes().to_vec();
    v.extend(rng.bytes(len));
    let h = fnv(&v);
    v.extend(h.to_le_bytes());
    v
}

/// The game-save batch number `id` (deterministic).
pub fn save_batch(id: u64) -> Batch {
    let mut rng = Rng::new(id ^ 0x5eed);
    let mut b = Batch::new();
    let version = id as i64;
    let mut refs = Vec::new();
    for _ in 0..4 {
        let k = chunk_key(rng.below(CHUNK_KEYS));
        let len = 2000 + rng.below(12_000) as usize;
        b.put(tables::CHUNK_L0, k.clone(), version, blob(&mut rng, id, len));
        refs.push((tables::CHUNK_L0, k));
    }
    for _ in 0..2 {
        let k = (rng.below(ENTITY_KEYS) as u128).to_be_bytes().to_vec();
        let len = 50 + rng.below(2000) as usize;
        b.put(tables::ENTITY, k.clone(), version, blob(&mut rng, id, len));
        refs.push((tables::ENTITY, k));
    }
    if id % 8 == 3 {
        let k = chunk_key(rng.below(4));
        let len = 60_000 + rng.below(140_000) as usize;
        b.put(tables::CHUNK_L2, k.clone(), version, blob(&mut rng, id, len));
        refs.push((tables::CHUNK_L2, k));
    }
    if id % 3 == 1 {
        // Deletions of keys this batch does not write.
        let k = chunk_key(rng.below(CHUNK_KEYS));
        if !refs.iter().any(|r| r.1 == k) {
            b.delete(tables::CHUNK_L0, k);
        }
        let e = (rng.below(ENTITY_KEYS) as u128).to_be_bytes().to_vec();
        if !refs.iter().any(|r| r.1 == e) {
            b.delete(tables::ENTITY, e);
        }
    }
    // The player names what it depends on: a partial batch would leave dangling references.
    let mut player = Vec::new();
    for (t, k) in &refs {
        player.push(t.len() as u8);
        player.extend(t.as_bytes());
        player.push(k.len() as u8);
        player.extend(k);
    }
    let h = fnv(&player);
    player.extend(h.to_le_bytes());
    b.put(tables::WORLD_META, PLAYER_KEY.to_vec(), version, player);
    b.synced()
}

type Model = BTreeMap<(String, Vec<u8>), Object>;

/// The tables the save batches write.
pub(crate) const SAVE_TABLES: [&str; 4] =
    [tables::WORLD_META, tables::CHUNK_L0, tables::CHUNK_L2, tables::ENTITY];

/// Every object of the state after save batches `0..=b` (empty for `b = -1`).
pub(crate) fn state_after(b: i64) -> Model {
    let mut model = Model::new();
    for id in 0..=b {
        apply(&mut model, &save_batch(id as u64));
    }
    model
}

fn apply(model: &mut Model, batch: &Batch) {
    for op in batch.ops() {
        match op {
            Op::Put { table, key, version, data } => {
                model.insert((table.clone(), key.clone()), Object::new(*version, data.clone()));
            }
            Op::Delete { table, key } => {
                model.remove(&(table.clone(), key.clone()));
            }
        }
    }
}

/// Starts the child role: this test binary, running only `test_name`, with [`CHILD_ENV`] set
/// to `dir` (and `child_env`), its stdout piped to the parent.
pub(crate) fn spawn_child(
    test_name: &str,
    dir: &Path,
    child_env: &[(String, String)],
) -> super::child::ChildGuard {
    let exe = std::env::current_exe().expect("test binary path");
    let child = Command::new(exe)
        .args([test_name, "--exact", "--nocapture", "--test-threads", "1"])
        .env(CHILD_ENV, dir)
        .envs(child_env.iter().map(|(k, v)| (k, v)))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the child");
    super::child::ChildGuard(child)
}

/// What one round of a kill loop saw: the numbers the child acknowledged (`ACK <n>` lines on
/// its stdout) before and while it was killed, and whether it exited on its own before that.
#[derive(Clone, Debug, Default)]
pub struct KillRound {
    /// Acknowledged numbers, in the order printed.
    pub acks: Vec<i64>,
    /// The child ended by itself (a failed open, most often), not by the SIGKILL.
    pub exited_on_its_own: bool,
}

/// One round of a kill loop, the part every crash harness shares: starts the child role (this
/// test binary running only `test_name`, [`CHILD_ENV`] = `dir`), waits for `wait_acks`
/// acknowledgements (at most 10 s), sleeps `delay`, SIGKILLs the child and collects every
/// acknowledgement it printed. `wait_acks = 0` kills during the child's open and recovery.
pub fn kill_round(
    test_name: &str,
    dir: &Path,
    child_env: &[(String, String)],
    wait_acks: u64,
    delay: Duration,
) -> KillRound {
    let mut child = spawn_child(test_name, dir, child_env);
    let out = child.stdout.take().expect("child stdout");
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            // libtest prints `test crash ... ` before the first line, on the same line.
            let ack = line.find("ACK ").map(|at| &line[at + 4..]);
            if let Some(id) = ack.and_then(|s| s.trim().parse::<i64>().ok())
                && tx.send(id).is_err()
            {
                break;
            }
        }
    });
    let mut round = KillRound::default();
    let deadline = Instant::now() + Duration::from_secs(10);
    while (round.acks.len() as u64) < wait_acks && Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(id) => round.acks.push(id),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    std::thread::sleep(delay);
    child.kill().expect("SIGKILL the child");
    let status = child.wait().expect("reap the child");
    reader.join().expect("reader thread");
    round.acks.extend(rx.try_iter());
    round.exited_on_its_own = status.success();
    round
}

/// Checks that `store` holds exactly the state after save batches `0..=b` ([`save_batch`])
/// for some `b` in `at_least..=at_most` (`-1`: no batch), and returns `b`. A state between
/// two batches (a partial batch), a torn object or a lost acknowledged batch is an `Err`
/// naming what differs.
pub fn check_saves(
    store: &dyn Store,
    at_least: i64,
    at_most: i64,
) -> std::result::Result<i64, String> {
    let b = match store.get(tables::WORLD_META, PLAYER_KEY) {
        Ok(Some(o)) => o.version,
        Ok(None) => -1,
        Err(e) => return Err(format!("reading the player failed: {e}")),
    };
    if b < at_least {
        return Err(format!("batch {at_least} was acknowledged but the store is at batch {b}"));
    }
    if b > at_most {
        return Err(format!("the store is at batch {b}, beyond the last one written ({at_most})"));
    }
    let model = state_after(b);
    for t in SAVE_TABLES {
        let got = collect(store, t, KeyRange::all());
        let want: Vec<(Vec<u8>, Object)> =
            model.iter().filter(|(k, _)| k.0 == t).map(|(k, v)| (k.1.clone(), v.clone())).collect();
        if got != want {
            let got_keys: Vec<_> = got.iter().map(|e| (e.0.clone(), e.1.version)).collect();
            let want_keys: Vec<_> = want.iter().map(|e| (e.0.clone(), e.1.version)).collect();
            return Err(format!(
                "table {t} differs from the state after batch {b} (partial batch or torn \
                 object)\n got: {got_keys:?}\nwant: {want_keys:?}"
            ));
        }
    }
    Ok(b)
}

/// The child role: opens the store in `dir` and commits save batches until killed.
fn child<S: Store>(dir: &Path, open: &dyn Fn(&Path) -> Result<S>) {
    let store = open(dir).expect("child: open");
    let next = match store.get(tables::WORLD_META, PLAYER_KEY).expect("child: read player") {
        Some(o) => o.version as u64 + 1,
        None => 0,
    };
    let stdout = std::io::stdout();
    let start = Instant::now();
    for id in next.. {
        store.write(&save_batch(id)).expect("child: write");
        let mut out = stdout.lock();
        writeln!(out, "ACK {id}").expect("child: report");
        out.flush().expect("child: report");
        if start.elapsed() > Duration::from_secs(20) {
            break; // the parent is gone: never run forever
        }
    }
}

/// Runs the harness: `kills` SIGKILLs (overridden by [`KILLS_ENV`]), or the child role when
/// [`CHILD_ENV`] is set. `test_name` is the name of the calling `#[test]` function (the child
/// is the same test binary running only that test). `open` opens or creates the store in the
/// given directory. Panics when a check fails; prints and returns the report.
pub fn run<S: Store>(
    test_name: &str,
    kills: u64,
    open: impl Fn(&Path) -> Result<S>,
) -> CrashReport {
    run_with_env(test_name, kills, &[], open)
}

/// [`run`], with environment variables set for every child (e.g. where its server is).
pub fn run_with_env<S: Store>(
    test_name: &str,
    kills: u64,
    child_env: &[(String, String)],
    open: impl Fn(&Path) -> Result<S>,
) -> CrashReport {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        child(Path::new(&dir), &open);
        std::process::exit(0);
    }
    let kills = std::env::var(KILLS_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(kills);
    let tmp = tempfile::tempdir().expect("temporary directory");
    let dir = tmp.path().join("store");
    std::fs::create_dir_all(&dir).expect("store directory");
    let mut rng = Rng::new(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
            as u64,
    );
    let mut model = Model::new();
    let mut committed: i64 = -1;
    let mut report = CrashReport { committed: -1, acknowledged: -1, ..CrashReport::default() };
    let mut history: Vec<String> = Vec::new();
    for round in 0..kills {
        // Kill after a random number of acknowledgements and a random delay, or early (while
        // the child opens and recovers).
        let wait_acks = rng.below(4);
        let delay = if wait_acks > 0 { rng.below(4000) } else { rng.below(25_000) };
        let killed =
            kill_round(test_name, &dir, child_env, wait_acks, Duration::from_micros(delay));
        let (acks, seen) = (killed.acks.len(), killed.acks);
        for &id in &seen {
            report.acknowledged = report.acknowledged.max(id);
        }
        if acks == 0 {
            report.early_kills += 1;
        }
        assert!(
            !killed.exited_on_its_own || acks > 0,
            "round {round}: the child exited on its own before acknowledging anything (it \
             probably failed to open the store: run the test with {CHILD_ENV}={} to see why)",
            dir.display()
        );
        report.kills += 1;
        // Reopen and check against the model.
        let store = open(&dir).unwrap_or_else(|e| panic!("round {round}: reopen failed: {e}"));
        let b = match store.get(tables::WORLD_META, PLAYER_KEY) {
            Ok(Some(o)) => o.version,
            Ok(None) => -1,
            Err(e) => panic!("round {round}: reading the player failed: {e}"),
        };
        assert!(
            b >= report.acknowledged,
            "round {round}: batch {} was acknowledged (synced) but the store is at batch {b}",
            report.acknowledged
        );
        assert!(b >= committed, "round {round}: the store went back from batch {committed} to {b}");
        // Each child starts after the committed state; only its last batch may be unacknowledged.
        let base = report.acknowledged.max(committed);
        history.push(format!("round {round}: acks {seen:?}, store at {b}"));
        assert!(
            b <= base + 1,
            "round {round}: batch {b} is beyond the last acknowledged ({}) + 1 and the last \
             committed ({committed}) + 1; history:\n{}",
            report.acknowledged,
            history[history.len().saturating_sub(6)..].join("\n")
        );
        while committed < b {
            committed += 1;
            apply(&mut model, &save_batch(committed as u64));
        }
        for t in [tables::WORLD_META, tables::CHUNK_L0, tables::CHUNK_L2, tables::ENTITY] {
            let got = collect(&store, t, KeyRange::all());
            let want: Vec<(Vec<u8>, Object)> = model
                .iter()
                .filter(|(k, _)| k.0 == t)
                .map(|(k, v)| (k.1.clone(), v.clone()))
                .collect();
            if got != want {
                let got_keys: Vec<_> = got.iter().map(|e| (e.0.clone(), e.1.version)).collect();
                let want_keys: Vec<_> = want.iter().map(|e| (e.0.clone(), e.1.version)).collect();
                panic!(
                    "round {round}: table {t} differs from the state after batch {b} \
                     (partial batch or torn object)\n got: {got_keys:?}\nwant: {want_keys:?}"
                );
            }
        }
        drop(store);
    }
    report.committed = committed;
    println!(
        "crash: survived {} SIGKILLs ({} before the first acknowledgement); {} batches \
         committed, the last acknowledged was {}",
        report.kills,
        report.early_kills,
        report.committed + 1,
        report.acknowledged
    );
    report
}
