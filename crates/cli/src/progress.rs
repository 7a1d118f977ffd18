//! The command's progress bar: one look for every long job (imports, exports, conversions,
//! the demo's phases), drawn on stderr, hidden when the output is JSON or quiet.

use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar counting `unit` (" columns", or "" for plain counts); hidden when `quiet`.
/// Its length, message and prefix are the caller's to set.
pub(crate) fn bar(quiet: bool, unit: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(0);
    pb.set_style(
        ProgressStyle::with_template(&format!(
            "{{msg:>12}} [{{bar:30}}] {{pos}}/{{len}}{unit} {{per_sec}} eta {{eta}} {{prefix}}"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb
}
