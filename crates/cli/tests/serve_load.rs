//! `terrane serve` under eight real players (mineflayer, survival, `play.js`): tick time and
//! save time from the server's status line, per backend, and beside the same server saving
//! players apart from chunks (`--players-apart`, the field's usual shape).
//!
//! The figures of docs/BENCHMARKS.md come from
//! `TERRANE_GAME_LOAD_SECONDS=60 TERRANE_GAME_LOAD_BACKENDS=blockfile,rocksdb,postgres
//! cargo test --release -p terrane-cli --test serve_load -- --nocapture`
//! (`TERRANE_GAME_LOAD_BOTS` sets the number of players, default 8). The suite runs it short
//! on the block file: the server holds the players, saves, and reports.
//! `TERRANE_GAME_LOAD_DELAYS_MS=0,1,10` runs the PostgreSQL world again behind a
//! [`FaultProxy`](terrane_postgres::testing::FaultProxy) delaying each direction by each of
//! those (a database on another machine).
//!
//! A tick's p50 is the median of the per-second medians; its p99 the highest per-second p99
//! (the status line reports each second's own percentiles).

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::minecraft::{free_port, node_modules, serve};
use common::players::{make_world, start_bots};
use terrane::Backend;

/// One status line: players, tick p50/p99 (ms), saves, save p50/p99 (ms).
#[derive(Clone, Copy, Debug, Default)]
struct Second {
    players: usize,
    tick_p50: f64,
    tick_p99: f64,
    saves: usize,
    save_p50: f64,
    save_p99: f64,
}

fn parse(line: &str) -> Option<Second> {
    let w: Vec<&str> = line.split_whitespace().collect();
    let at = |key: &str, skip: usize| -> Option<f64> {
        let i = w.iter().position(|x| *x == key)?;
        w.get(i + skip)?.parse().ok()
    };
    let saves_at = w.iter().position(|x| *x == "saves")?;
    Some(Second {
        players: at("players", 1)? as usize,
        tick_p50: at("tick", 2)?,
        tick_p99: w.get(w.iter().position(|x| *x == "tick")? + 5)?.parse().ok()?,
        saves: w.get(saves_at - 1)?.parse().ok()?,
        save_p50: w.get(saves_at + 2)?.parse().ok()?,
        save_p99: w.get(saves_at + 5)?.parse().ok()?,
    })
}

struct Load {
    seconds: usize,
    tick_p50: f64,
    tick_p99: f64,
    saves_per_second: f64,
    save_p50: f64,
    save_p99: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    terrane::stats::percentile(&mut v, 0.5).unwrap_or(0.0)
}

/// Serves `location` to `bots` players for `seconds` once they are all in (plus 3 s to settle),
/// and sums the status lines of that stretch.
fn run(location: &Path, tmp: &Path, bots: i32, seconds: u64, extra: &[&str]) -> Load {
    let modules = node_modules();
    let port = free_port();
    let log = tmp.join(format!("serve-{port}.log"));
    let max_players = bots.to_string();
    let mut args = vec![
        "--game-mode",
        "survival",
        "--view-distance",
        "4",
        "--terrain",
        "flat",
        "--max-players",
        &max_players,
    ];
    args.extend(extra);
    let (mut server, _lines) = serve(location, port, &log, &args);
    let (mut driver, bot_lines) = start_bots(port, 11, &modules, bots);
    let text = || std::fs::read_to_string(&log).unwrap_or_default();
    let full = |t: &str| t.lines().filter_map(parse).any(|s| s.players == bots as usize);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !full(&text()) {
        assert!(Instant::now() < deadline, "{bots} players never joined:\n{}", text());
        std::thread::sleep(Duration::from_millis(200));
    }
    let skip = text().lines().filter_map(parse).count() + 3;
    std::thread::sleep(Duration::from_secs(3 + seconds));
    let _ = server.kill();
    let _ = server.wait();
    let _ = driver.kill();
    let all: Vec<Second> = text().lines().filter_map(parse).skip(skip).collect();
    assert!(!all.is_empty(), "no status line after the players joined:\n{}", text());
    // Why a player left, as its bot said (stuck in a step, or kicked).
    let left: Vec<serde_json::Value> =
        bot_lines.try_iter().filter(|v| v["event"] == "stuck" || v["event"] == "kicked").collect();
    assert!(
        all.iter().all(|s| s.players == bots as usize),
        "a player left during the measurement: {all:?}\nbots: {left:?}\n{}",
        text()
    );
    let saves: usize = all.iter().map(|s| s.saves).sum();
    assert!(saves > 0, "the server saved nothing while {bots} players played");
    let with_saves: Vec<&Second> = all.iter().filter(|s| s.saves > 0).collect();
    Load {
        seconds: all.len(),
        tick_p50: median(all.iter().map(|s| s.tick_p50).collect()),
        tick_p99: all.iter().map(|s| s.tick_p99).fold(0.0, f64::max),
        saves_per_second: saves as f64 / all.len() as f64,
        save_p50: median(with_saves.iter().map(|s| s.save_p50).collect()),
        save_p99: with_saves.iter().map(|s| s.save_p99).fold(0.0, f64::max),
    }
}

fn report(name: &str, bots: i32, l: &Load) {
    eprintln!(
        "{name}: {bots} players, {} s: tick p50 {:.2} ms p99 {:.2} ms; {:.1} saves/s, save p50 {:.2} ms p99 {:.2} ms",
        l.seconds, l.tick_p50, l.tick_p99, l.saves_per_second, l.save_p50, l.save_p99
    );
}

#[test]
fn eight_players_tick_and_save_per_backend_and_saved_apart() {
    let seconds: u64 =
        std::env::var("TERRANE_GAME_LOAD_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    let bots: i32 =
        std::env::var("TERRANE_GAME_LOAD_BOTS").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    let backends =
        std::env::var("TERRANE_GAME_LOAD_BACKENDS").unwrap_or_else(|_| "blockfile".into());
    let tmp = tempfile::tempdir().unwrap();
    for name in backends.split(',') {
        let backend = Backend::parse(name).unwrap_or_else(|| panic!("unknown backend {name}"));
        #[cfg(feature = "postgres")]
        let pg = (backend == Backend::Postgres).then(|| {
            terrane::postgres::testing::PgServer::start().unwrap_or_else(|e| panic!("{e}"))
        });
        let location = match backend {
            #[cfg(feature = "postgres")]
            Backend::Postgres => PathBuf::from(pg.as_ref().unwrap().conninfo()),
            _ => tmp.path().join(name),
        };
        make_world(&location, backend, bots);
        report(name, bots, &run(&location, tmp.path(), bots, seconds, &[]));
        #[cfg(feature = "postgres")]
        if let (Some(pg), Ok(delays)) = (&pg, std::env::var("TERRANE_GAME_LOAD_DELAYS_MS")) {
            use terrane_postgres::testing::FaultProxy;
            for ms in delays.split(',').map(|d| d.trim().parse::<u64>().expect("delays in ms")) {
                let proxy = FaultProxy::start(pg.upstream()).unwrap();
                let schema = format!("schema=load_{ms}");
                make_world(Path::new(&format!("{} {schema}", pg.conninfo())), backend, bots);
                proxy.set_delay(Duration::from_millis(ms));
                let via = PathBuf::from(format!("{} {schema}", pg.conninfo_via(&proxy)));
                let name = format!("postgres, {ms} ms each way");
                report(&name, bots, &run(&via, tmp.path(), bots, seconds, &[]));
            }
        }
    }
    // The field's usual shape on the block file: chunks and chests every 40 ticks, players
    // every 60, each in its own save.
    let apart = tmp.path().join("apart");
    make_world(&apart, Backend::BlockFile, bots);
    let extra = ["--save-every", "40", "--players-apart", "60"];
    report("blockfile, players saved apart", bots, &run(&apart, tmp.path(), bots, seconds, &extra));
}
