//! What the command prints on stdout, shared by `terrane` and `terrane-convert`: the
//! [`outln!`] macro over [`write_stdout`], and the small formats every report uses.

use std::fmt;

/// `println!` for results on stdout (see [`write_stdout`]).
macro_rules! outln {
    () => { $crate::out::write_stdout(format_args!("\n")) };
    ($($t:tt)*) => { $crate::out::write_stdout(format_args!("{}\n", format_args!($($t)*))) };
}

/// Writes results to stdout. A closed pipe (`terrane schem info f.schem | head -2`) ends the
/// command quietly with status 0, as other Unix tools end; any other write error ends it with
/// a one-line message and status 1 (never a panic, which `println!` would be).
pub fn write_stdout(args: fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to standard output: {e}");
        std::process::exit(1);
    }
}

/// Bytes as MiB.
pub(crate) fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

/// How many damaged chunks or records a human summary lists.
pub(crate) const LISTED: usize = 10;

/// Where the `n` damaged chunks or records of a summary are listed.
pub(crate) fn listed(n: usize, json: bool) -> String {
    match (json, n > LISTED) {
        (true, _) => "listed in the JSON summary's `damaged`".into(),
        (false, false) => "listed above".into(),
        (false, true) => format!("the first {LISTED} listed above; --json lists them all"),
    }
}
