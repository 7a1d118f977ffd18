//! `terrane convert` runs in `terrane-convert` (`convert_main.rs`), the command's binary
//! without RocksDB: a conversion never opens a terrane world, yet RocksDB's static
//! initialisers run at every start of a binary that links it and touch code across the
//! library, a third of a conversion's peak memory with the rest of what `terrane` links
//! (docs/BENCHMARKS.md, "Whole worlds").
//!
//! When `terrane-convert` sits beside `terrane` (as `cargo install terrane-cli` and every
//! build put it), `terrane convert` replaces its own process with it, same arguments, same
//! standard streams, same exit status; otherwise it converts in its own process.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::Fail;
use crate::convert::ConvertArgs;

/// The file name of the conversion's binary.
const BINARY: &str = "terrane-convert";

/// Runs `terrane convert` in `terrane-convert` when it is there, else here.
pub(crate) fn convert(a: &ConvertArgs) -> Result<(), Fail> {
    #[cfg(unix)]
    if let Some(bin) = beside() {
        use std::os::unix::process::CommandExt as _;
        let args = without_subcommand(std::env::args_os().skip(1));
        // Returns only when the binary could not be started.
        let e = std::process::Command::new(&bin).args(args).exec();
        tracing::warn!("{}: {e}; converting in this process", bin.display());
    }
    crate::convert::run(a)
}

/// `terrane-convert` in the folder of the running `terrane`, when it is there.
#[cfg_attr(not(unix), allow(dead_code))]
fn beside() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let bin = exe.with_file_name(format!("{BINARY}{}", std::env::consts::EXE_SUFFIX));
    bin.is_file().then_some(bin)
}

/// `terrane`'s arguments (without the program's name) as `terrane-convert` takes them: the
/// first `convert` left out. Only `-v` and `-q` can come before it, and they take no value.
#[cfg_attr(not(unix), allow(dead_code))]
fn without_subcommand(args: impl Iterator<Item = OsString>) -> Vec<OsString> {
    let mut out: Vec<OsString> = Vec::new();
    let mut dropped = false;
    for a in args {
        if !dropped && a == "convert" {
            dropped = true;
        } else {
            out.push(a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_subcommand_goes_and_every_other_argument_stays_in_order() {
        let args = |s: &str| s.split(' ').map(OsString::from).collect::<Vec<_>>();
        let cases = [
            ("convert a b --to java", "a b --to java"),
            ("-q convert convert b --to bedrock", "-q convert b --to bedrock"),
            ("-vv convert a convert --json --to java", "-vv a convert --json --to java"),
        ];
        for (given, passed) in cases {
            assert_eq!(without_subcommand(args(given).into_iter()), args(passed), "{given}");
        }
    }
}
