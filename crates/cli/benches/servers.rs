//! Aggregate tick saves per second of 1, 2 and 3 game servers on one PostgreSQL world
//! (`terrane demo --server N --servers M`, real processes over a Unix socket), each saving
//! after every tick as fast as it can (synced, fenced by its leases), walkers handed off
//! between them. Each server has two areas and 8 walkers whatever the number of servers, so
//! every run saves the same world per server. Prints each server's summary and the sum.
//!
//! `cargo xtask bench terrane-cli` (a plain harness: criterion's repetitions would not add
//! anything to a 10-second run of whole processes).

use std::process::{Command, Stdio};

fn main() {
    // `cargo bench -- FILTER`: run only when FILTER names this bench.
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if std::env::args().any(|a| a == "--list")
        || (!filters.is_empty() && !filters.iter().any(|f| "servers".contains(f.as_str())))
    {
        return;
    }
    let pg = terrane_postgres::testing::PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let seconds = std::env::var("TERRANE_SERVERS_BENCH_SECONDS").unwrap_or_else(|_| "10".into());
    // The same world per server whatever M: two areas and 8 walkers each. A first run warms
    // the database up (its figures are not printed).
    for (m, warm) in [(1usize, true), (1, false), (2, false), (3, false)] {
        let walkers = (8 * m).to_string();
        let conninfo =
            format!("{} schema=servers{m}{}", pg.conninfo(), if warm { "warm" } else { "" });
        let children: Vec<_> = (0..m)
            .map(|n| {
                Command::new(env!("CARGO_BIN_EXE_terrane"))
                    .args(["demo", "--store", &conninfo, "--servers", &m.to_string()])
                    .args(["--server", &n.to_string(), "--seconds", &seconds])
                    .args([
                        "--players",
                        &walkers,
                        "--speed",
                        "6",
                        "--tps",
                        "1000",
                        "--save-every",
                        "1",
                    ])
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
                "{}: {:.0} saves/s, p50 {:.2} ms, p99 {:.2} ms, {} hand-offs (p50 {:.2} ms)",
                s["server"].as_str().unwrap(),
                s["saves_per_second"].as_f64().unwrap(),
                s["save_p50_ms"].as_f64().unwrap(),
                s["save_p99_ms"].as_f64().unwrap(),
                s["hand_offs_out"],
                s["hand_off_p50_ms"].as_f64().unwrap(),
            ));
        }
        if !warm {
            println!("servers/{m}: {total:.0} tick saves/s in all ({})", lines.join("; "));
        }
    }
}
