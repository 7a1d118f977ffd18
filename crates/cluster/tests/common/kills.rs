//! The SIGKILL crash harness with tier moves in flight (see `tests/crash.rs`): the child's
//! steps, the model of what each save wrote, and the kill-and-check loop. Shared with the
//! RocksDB run in the terrane-benches package, so that this crate's tests do not compile
//! RocksDB.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use terrane_cluster::{PlayerPos, TickSave, TieredStore, TieredStoreBuilder};
use terrane_section::ChunkPos;
use terrane_store::conformance::Rng;
use terrane_store::conformance::crash::{CHILD_ENV, KILLS_ENV, kill_round};
use terrane_store::{Store, tables};

use super::*;

pub fn builder() -> TieredStoreBuilder {
    TieredStore::builder(schema()).l0_idle_ticks(3).l1_idle_ticks(9).l1_distance_blocks(200)
}

pub fn pos(rng: &mut Rng) -> ChunkPos {
    let c = |rng: &mut Rng, r: u64| rng.below(2 * r) as i64 - r as i64;
    ChunkPos::new(c(rng, 20), c(rng, 2), c(rng, 20))
}

/// Step `i` (game tick `i + 1`): what it does is a pure function of `i`.
pub enum Step {
    Save(TickSave, Vec<(ChunkPos, Option<Vec<u8>>)>),
    Load(ChunkPos),
    Maintain(Vec<PlayerPos>),
}

pub fn step(i: u64) -> Step {
    let mut rng = Rng::new(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xC1u64);
    let s = schema();
    match i % 6 {
        0..=2 => {
            let mut save = TickSave::new();
            let mut changes = Vec::new();
            for j in 0..1 + rng.below(3) {
                let p = pos(&mut rng);
                if rng.below(8) == 0 {
                    save.delete_chunk(0, p);
                    changes.push((p, None));
                } else {
                    let b = chunk_bytes(&s, (i * 4 + j) as u32);
                    save.put_chunk(0, p, b.clone());
                    changes.push((p, Some(b)));
                }
            }
            let uuid = (i as u128).to_be_bytes();
            save.put_entity(uuid, vec![i as u8; 40]);
            save.put_object(
                tables::WORLD_PROPERTIES,
                b"player:0".to_vec(),
                i.to_le_bytes().to_vec(),
            );
            Step::Save(save, changes)
        }
        3 | 4 => Step::Load(pos(&mut rng)),
        _ => Step::Maintain(
            (0..rng.below(3))
                .map(|_| {
                    let p = pos(&mut rng);
                    PlayerPos::new(0, p.x * 16, p.y * 16, p.z * 16)
                })
                .collect(),
        ),
    }
}

/// Chunk contents after every save step `< n`.
pub fn model(n: u64) -> BTreeMap<(u64, ChunkPos), Vec<u8>> {
    let mut m = BTreeMap::new();
    for i in 0..n {
        if let Step::Save(_, changes) = step(i) {
            for (p, b) in changes {
                match b {
                    Some(b) => m.insert((0, p), b),
                    None => m.remove(&(0, p)),
                };
            }
        }
    }
    m
}

pub fn child<S: Store>(store: S) {
    let mut t = builder().open(store).expect("child: open");
    // Tick of step i is i + 1; resume after the last committed save.
    let start = Instant::now();
    let out = std::io::stdout();
    for i in t.tick().. {
        match step(i) {
            Step::Save(save, _) => {
                t.save_tick(i + 1, &save).expect("child: save");
                let mut o = out.lock();
                writeln!(o, "ACK {}", i + 1).unwrap();
                o.flush().unwrap();
            }
            Step::Load(p) => {
                t.load_chunk(0, p, i + 1).expect("child: load");
                if i % 12 == 4 {
                    t.unload_chunk(0, p, i + 1);
                }
            }
            Step::Maintain(players) => {
                t.set_players(&players);
                t.maintain(i + 1).expect("child: maintain");
            }
        }
        if start.elapsed() > Duration::from_secs(20) {
            break;
        }
    }
}

pub fn run<S: Store>(name: &str, default_kills: u64, open: impl Fn(&Path) -> S) {
    run_with_env(name, default_kills, &[], open)
}

/// [`run`], with environment variables for the children (where the PostgreSQL server is).
pub fn run_with_env<S: Store>(
    name: &str,
    default_kills: u64,
    child_env: &[(String, String)],
    open: impl Fn(&Path) -> S,
) {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        child(open(Path::new(&dir)));
        std::process::exit(0);
    }
    let kills = std::env::var(KILLS_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(default_kills);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng::new(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
            as u64,
    );
    let mut acked = 0u64;
    let mut moves = 0usize;
    let started = Instant::now();
    for round in 0..kills {
        // Wait for a few acknowledgements, then kill at a random moment.
        let want = rng.below(4);
        let delay = Duration::from_micros(rng.below(6000));
        for t in kill_round(name, &dir, child_env, want, delay).acks {
            acked = acked.max(u64::try_from(t).unwrap_or(0));
        }
        // Reopen (recovery) and check.
        let t = builder().open(open(&dir)).unwrap_or_else(|e| panic!("round {round}: reopen: {e}"));
        let committed = t.tick();
        assert!(
            committed >= acked,
            "round {round}: acknowledged tick {acked} lost (store at {committed})"
        );
        let stats = t.verify().unwrap_or_else(|e| panic!("round {round}: {e}"));
        moves += stats.keys[1] + stats.keys[2];
        let all: BTreeMap<_, _> =
            t.all_chunks().unwrap().into_iter().map(|(k, (_, b))| (k, b)).collect();
        assert_eq!(
            all,
            model(committed),
            "round {round}: contents differ from the save at tick {committed}"
        );
        let player = t.store().get(tables::WORLD_PROPERTIES, b"player:0").unwrap();
        if committed > 0 {
            // The player object is saved with the chunks: same tick.
            assert_eq!(player.map(|o| o.version), Some(committed as i64), "round {round}");
        }
        drop(t);
    }
    eprintln!(
        "{name}: {kills} kills, last acknowledged tick {acked}, cluster keys seen {moves}, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // A short run (`TERRANE_CRASH_KILLS=1`) may kill every child before its first save; over
    // many kills, a child that never saves means the harness tests nothing.
    assert!(acked > 0 || kills < 20, "the child never saved anything in {kills} kills");
}
