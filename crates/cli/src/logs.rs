//! The logs on stderr of `terrane` and `terrane-convert`: `-v` / `-q` or `RUST_LOG`.

/// Starts logging on stderr: errors only when `quiet`, else info of terrane's crates and
/// warnings of others, more with each `verbose`; `RUST_LOG` overrides.
pub(crate) fn init(verbose: u8, quiet: bool) {
    use tracing_subscriber::EnvFilter;
    let default = if quiet {
        "error"
    } else {
        match verbose {
            0 => "warn,terrane=info",
            1 => "debug",
            _ => "trace",
        }
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // Colour only on a terminal, and never with NO_COLOR set (no-color.org): a log file or a
    // pipe gets plain text.
    use std::io::IsTerminal as _;
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colour)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}
