//! `pgserver`: a throwaway PostgreSQL server for whole-process benchmarks (`cargo xtask
//! worlds`): started from the Debian `postgresql` package in a temporary directory (Unix
//! socket there, run as the `postgres` user under root), its connection string printed on one
//! line of standard output; stopped and removed when standard input closes.

use std::io::{BufRead as _, Write as _};
use std::process::ExitCode;

fn main() -> ExitCode {
    let server = match terrane_postgres::testing::PgServer::start() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("pgserver: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{}", server.conninfo()).and_then(|()| out.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    drop(out);
    // Until the caller closes standard input (or dies): then the server stops.
    for line in std::io::stdin().lock().lines() {
        if line.is_err() {
            break;
        }
    }
    drop(server);
    ExitCode::SUCCESS
}
