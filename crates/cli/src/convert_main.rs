//! `terrane-convert`: `terrane convert` in a binary without RocksDB (see `own_binary.rs`),
//! which `terrane convert` runs. It takes the same arguments, `convert` left out:
//! `terrane-convert JAVA_WORLD NEW_FOLDER --to bedrock`.
#![forbid(unsafe_code)]

#[macro_use]
mod out;

mod convert;
mod fail;
mod logs;
// The byte-counting bars are the other commands'.
#[allow(dead_code)]
mod progress;

use std::process::ExitCode;

use clap::Parser;

pub use fail::Fail;

/// Convert a Java world folder into a new Bedrock world folder, or back (`terrane convert`,
/// without RocksDB in the process).
#[derive(Parser, Debug)]
#[command(name = "terrane-convert", version)]
struct Cli {
    /// More logging on stderr (-v: debug, -vv: trace). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Only errors on stderr.
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    args: convert::ConvertArgs,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    logs::init(cli.verbose, cli.quiet);
    match convert::run(&cli.args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {f}");
            ExitCode::from(f.status)
        }
    }
}
