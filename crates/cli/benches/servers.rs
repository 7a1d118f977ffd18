//! Aggregate tick saves per second of 1, 2 and 3 game servers on one PostgreSQL world
//! (`terrane demo --server N --servers M`, real processes over a Unix socket), each saving
//! after every tick as fast as it can (synced, fenced by its leases), walkers handed off
//! between them. Each server has two areas and 8 walkers whatever the number of servers, so
//! every run saves the same world per server. Prints each server's summary and the sum.
//!
//! With `TERRANE_SERVERS_DELAYS_MS=0,1,10` it then runs the three servers again, each
//! reaching the database through a loopback proxy of its own that delays each direction by
//! that much (a database on another machine), and times lease renewals through such a proxy.
//!
//! `cargo xtask bench terrane-cli` (a plain harness: criterion's repetitions would not add
//! anything to a 10-second run of whole processes).

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use terrane_postgres::testing::{FaultProxy, PgServer};

/// How fast the servers run: as fast as they can (`FLAT_OUT`: up to 1,000 ticks a second,
/// walkers at 6 blocks a tick), or a game's pace (`GAME`: 20 ticks a second, walkers at a
/// sprinting player's 5.6 blocks a second). A save after every tick either way.
struct Pace {
    tps: &'static str,
    speed: &'static str,
}

const FLAT_OUT: Pace = Pace { tps: "1000", speed: "6" };
const GAME: Pace = Pace { tps: "20", speed: "0.28" };

/// Runs `conninfos.len()` servers on one world, server `n` at `conninfos[n]`, at `pace`,
/// and prints their summaries under `name`.
fn run(name: &str, conninfos: &[String], seconds: &str, pace: &Pace, print: bool) {
    let m = conninfos.len();
    let walkers = (8 * m).to_string();
    let children: Vec<_> = conninfos
        .iter()
        .enumerate()
        .map(|(n, conninfo)| {
            Command::new(env!("CARGO_BIN_EXE_terrane"))
                .args(["demo", "--store", conninfo, "--servers", &m.to_string()])
                .args(["--server", &n.to_string(), "--seconds", seconds])
                .args(["--players", &walkers, "--speed", pace.speed, "--tps", pace.tps])
                .args(["--save-every", "1"])
                .arg("--json")
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn terrane demo --server")
        })
        .collect();
    let mut total = 0.0;
    let mut lines = Vec::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "a server failed");
        let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        total += s["saves_per_second"].as_f64().unwrap();
        lines.push(format!(
            "{}: {:.0} saves/s, p50 {:.2} ms, p99 {:.2} ms, {} hand-offs (p50 {:.2} ms), \
             {:.0} ms waiting for room among the saves in flight, ticks p50 {:.2} ms, p99 {:.2} ms",
            s["server"].as_str().unwrap(),
            s["saves_per_second"].as_f64().unwrap(),
            s["save_p50_ms"].as_f64().unwrap(),
            s["save_p99_ms"].as_f64().unwrap(),
            s["hand_offs_out"],
            s["hand_off_p50_ms"].as_f64().unwrap(),
            s["save_wait_ms"].as_f64().unwrap(),
            s["tick_p50_ms"].as_f64().unwrap(),
            s["tick_p99_ms"].as_f64().unwrap(),
        ));
    }
    if print {
        println!("{name}: {total:.0} tick saves/s in all ({})", lines.join("; "));
    }
}

/// p50 and p99 of 200 lease renewals (a synced, fenced batch of one small object) by a
/// shared writer reaching `pg` through a proxy delaying each direction by `delay`.
fn renewals(pg: &PgServer, delay: Duration) -> (f64, f64) {
    use terrane::lease::{AreaId, Leases};
    use terrane::store::StoreConfig;
    let proxy = FaultProxy::start(pg.upstream()).unwrap();
    proxy.set_delay(delay);
    let store = terrane_postgres::PgStore::open_with(
        &format!("{} schema=renewals{}", pg.conninfo_via(&proxy), delay.as_millis()),
        &StoreConfig::new("terrane lease renewals"),
        &terrane_postgres::PgOptions::new().shared_writers(true).pool_size(2),
    )
    .unwrap();
    let now = || {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis()
            as u64
    };
    let leases = Leases::new(Arc::new(store), "server-0", 3_000).unwrap();
    let mut lease = leases.acquire(AreaId::new(0, 0), now()).unwrap();
    let mut times = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        lease = leases.renew(&lease, now()).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let p50 = terrane::stats::percentile(&mut times, 0.5).unwrap();
    let p99 = terrane::stats::percentile(&mut times, 0.99).unwrap();
    (p50, p99)
}

fn main() {
    // `cargo bench -- FILTER`: run only when FILTER names this bench.
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if std::env::args().any(|a| a == "--list")
        || (!filters.is_empty() && !filters.iter().any(|f| "servers".contains(f.as_str())))
    {
        return;
    }
    let pg = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let seconds = std::env::var("TERRANE_SERVERS_BENCH_SECONDS").unwrap_or_else(|_| "10".into());
    // The same world per server whatever M: two areas and 8 walkers each. A first run warms
    // the database up (its figures are not printed).
    for (m, warm) in [(1usize, true), (1, false), (2, false), (3, false)] {
        let conninfo =
            format!("{} schema=servers{m}{}", pg.conninfo(), if warm { "warm" } else { "" });
        run(&format!("servers/{m}"), &vec![conninfo; m], &seconds, &FLAT_OUT, !warm);
    }
    let Ok(delays) = std::env::var("TERRANE_SERVERS_DELAYS_MS") else { return };
    for ms in delays.split(',').map(|d| d.trim().parse::<u64>().expect("delays in ms")) {
        let delay = Duration::from_millis(ms);
        let proxies: Vec<FaultProxy> =
            (0..3).map(|_| FaultProxy::start(pg.upstream()).unwrap()).collect();
        let conninfos: Vec<String> = proxies
            .iter()
            .map(|p| {
                p.set_delay(delay);
                format!("{} schema=servers3via{ms}", pg.conninfo_via(p))
            })
            .collect();
        run(&format!("servers/3, {ms} ms each way"), &conninfos, &seconds, &FLAT_OUT, true);
        let game: Vec<String> =
            conninfos.iter().map(|c| c.replace("servers3via", "game3via")).collect();
        run(&format!("servers/3 at 20 tps, {ms} ms each way"), &game, &seconds, &GAME, true);
        let (p50, p99) = renewals(&pg, delay);
        println!("lease renewal, {ms} ms each way: p50 {p50:.2} ms, p99 {p99:.2} ms");
    }
}
