//! `terrane serve` on a PostgreSQL world on another machine: the database behind a
//! [`FaultProxy`] that delays each direction, and a real client (mineflayer, `join.js`) joining
//! at view distance 10, once with every column generated and once with every column read back
//! from the store (the server restarted between).
//!
//! What a join costs is counted in round trips through the proxy (exact whatever the machine's
//! load) and timed. The figures of docs/BENCHMARKS.md ("A database on another machine") come
//! from
//! `TERRANE_NETWORK_DELAYS_MS=0,1,10 cargo test --release -p terrane-cli --features postgres
//! --test serve_network -- --nocapture`; the suite runs 10 ms each way.
#![cfg(feature = "postgres")]

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::minecraft::{bots, child_stdout, free_port, node_modules, serve};
use common::players::make_world;
use terrane::Backend;
use terrane::postgres::testing::{FaultProxy, PgServer};
use terrane_section::testdata::ChildGuard;

/// The view distance of the join, in columns.
const VIEW: u32 = 10;

/// One join: when the client spawned and when it held its whole view, from the start of its
/// connection; the round trips to the database meanwhile.
#[derive(Debug)]
struct Join {
    spawn: Duration,
    view: Duration,
    columns: u64,
    round_trips: u64,
    /// The slowest tick the server's status lines report (the highest per-second p99).
    slowest_tick: Duration,
}

/// The highest tick p99 among the status lines of the server log `log`
/// (`… tick p50 1.2 ms p99 3.4 ms …`).
fn slowest_tick(log: &Path) -> Duration {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let p99s = text.lines().filter_map(|l| {
        let rest = &l[l.find("tick p50 ")?..];
        let p99 = &rest[rest.find(" p99 ")? + 5..];
        p99.split(' ').next()?.parse::<f64>().ok()
    });
    Duration::from_secs_f64(p99s.fold(0.0, f64::max) / 1e3)
}

/// Joins the server on `port` with `join.js` and waits for its report.
fn join(port: u16, modules: &Path, proxy: &FaultProxy, log: &Path) -> Join {
    let spec = serde_json::json!({
        "host": "127.0.0.1", "port": port, "username": "joiner",
        "viewDistance": VIEW, "timeoutMs": 110_000,
    });
    let before = proxy.round_trips();
    let mut child = ChildGuard::spawn(
        Command::new("node")
            .arg(bots().join("join.js"))
            .arg(spec.to_string())
            .env("NODE_PATH", modules)
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    )
    .expect("start node join.js");
    let out = std::io::read_to_string(child_stdout(&mut child)).unwrap_or_default();
    let round_trips = proxy.round_trips() - before;
    let events: Vec<serde_json::Value> =
        out.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let find = |name: &str| {
        events.iter().find(|e| e["event"] == name).unwrap_or_else(|| {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            panic!("no {name}: {out}\nthe server's log:\n{log}")
        })
    };
    let ms = |e: &serde_json::Value| Duration::from_millis(e["ms"].as_u64().unwrap());
    let view = find("view");
    Join {
        spawn: ms(find("spawn")),
        view: ms(view),
        columns: view["columns"].as_u64().unwrap(),
        round_trips,
        slowest_tick: Duration::ZERO,
    }
}

/// Stops a server with SIGINT (it saves first) and waits for it.
fn stop(server: &mut ChildGuard, log: &Path) {
    let sent = Command::new("kill").args(["-INT", &server.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "terrane serve did not stop on SIGINT");
        std::thread::sleep(Duration::from_millis(50));
    }
    let err = std::fs::read_to_string(log).unwrap_or_default();
    assert!(err.contains("stopped: every change up to tick"), "{err}");
}

/// A first join and a join from the store at `delay` each way, on a world of its own.
fn joins_at(server: &PgServer, delay: Duration, tmp: &Path) -> (Join, Join) {
    let modules = node_modules();
    let schema = format!("network_{}", delay.as_micros());
    let direct = format!("{} schema={schema}", server.conninfo());
    make_world(Path::new(&direct), Backend::Postgres, 1);
    let proxy = FaultProxy::start(server.upstream()).unwrap();
    proxy.set_delay(delay);
    let world = format!("{} schema={schema}", server.conninfo_via(&proxy));
    let args = ["--terrain", "flat", "--view-distance", "10"];
    let run = |what: &str| {
        let port = free_port();
        let log = tmp.join(format!("serve-{schema}-{what}.log"));
        let (mut child, _lines) = serve(Path::new(&world), port, &log, &args);
        let mut j = join(port, &modules, &proxy, &log);
        stop(&mut child, &log);
        j.slowest_tick = slowest_tick(&log);
        j
    };
    (run("first"), run("again"))
}

fn report(delay: Duration, what: &str, j: &Join) {
    eprintln!(
        "{} ms each way, {what}: spawn {:.2} s, view of {} columns {:.2} s, {} round trips, \
         slowest tick {:.1} ms",
        delay.as_millis(),
        j.spawn.as_secs_f64(),
        j.columns,
        j.view.as_secs_f64(),
        j.round_trips,
        j.slowest_tick.as_secs_f64() * 1e3
    );
}

/// A join costs round trips per view, not per column: the whole view of a returning player
/// (over 300 columns of 24 chunks) is read in a few dozen round trips, so a database 20 ms
/// away lets the player in within seconds.
#[test]
fn a_join_costs_round_trips_per_view_not_per_chunk() {
    let delays: Vec<u64> = std::env::var("TERRANE_NETWORK_DELAYS_MS")
        .ok()
        .map(|s| s.split(',').map(|d| d.trim().parse().expect("delays in ms")).collect())
        .unwrap_or_else(|| vec![10]);
    let server = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let tmp = tempfile::tempdir().unwrap();
    for ms in delays {
        let delay = Duration::from_millis(ms);
        let (first, again) = joins_at(&server, delay, tmp.path());
        report(delay, "columns generated", &first);
        report(delay, "columns from the store", &again);
        for j in [&first, &again] {
            assert!(j.columns > 300, "{j:?}");
            // Per chunk, a view would cost over 7,000 round trips; per view, a few dozen
            // (the server reads up to 64 columns a tick in one query).
            assert!(j.round_trips < 200, "{j:?}");
        }
    }
}

/// A returning player joins without a tick waiting on the database: with 100 ms each way,
/// their record is read while they log in, their columns ahead, and no tick of the join
/// lasts a round trip (200 ms; 406 ms with the record read in the join's tick).
///
/// The tick bound holds in an optimized build (`cargo test --release`, as the figures'
/// command runs it), where converting a tick's 64 columns takes a few milliseconds; in a
/// debug build under the whole suite's load that CPU alone can pass a round trip, so there
/// the test checks the join.
#[test]
fn a_returning_player_joins_without_a_tick_waiting_on_the_database() {
    let server = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let tmp = tempfile::tempdir().unwrap();
    let delay = Duration::from_millis(100);
    let (_, again) = joins_at(&server, delay, tmp.path());
    report(delay, "columns from the store", &again);
    assert!(again.columns > 300, "{again:?}");
    assert!(again.round_trips < 200, "{again:?}");
    if !cfg!(debug_assertions) {
        assert!(again.slowest_tick < 2 * delay, "a tick waited on the database: {again:?}");
    }
}
