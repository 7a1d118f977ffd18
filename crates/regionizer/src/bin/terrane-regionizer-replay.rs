//! `terrane-regionizer-replay [flags] < ops.txt`: replays a regionizer operation log and prints
//! the state after each operation as JSON lines (see `terrane_regionizer::replay`).

use std::io::{self, BufReader, BufWriter};
use std::process::ExitCode;

use terrane_regionizer::replay::{ReplayOptions, replay, time_line};

fn main() -> ExitCode {
    let opts = match ReplayOptions::from_args(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let stdin = io::stdin();
    let stdout = io::stdout();
    match replay(BufReader::new(stdin.lock()), BufWriter::new(stdout.lock()), &opts) {
        Ok(stats) => {
            if let Some(line) = time_line(&stats) {
                eprintln!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("terrane-regionizer-replay: {e}");
            ExitCode::FAILURE
        }
    }
}
