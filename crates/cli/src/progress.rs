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

/// A progress bar counting bytes (its length the whole job's, when known), drawn as a
/// spinner with the rate while the length is 0; hidden when `quiet`. The caller sets the
/// message; [`grow`] keeps an estimated length ahead of the position.
pub(crate) fn bytes_bar(quiet: bool, length: u64) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(length);
    let template = if length == 0 {
        "{spinner} {msg:>10} {binary_bytes} {binary_bytes_per_sec} ({elapsed}) {prefix}"
    } else {
        "{msg:>10} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta} {prefix}"
    };
    pb.set_style(
        ProgressStyle::with_template(template).expect("valid template").progress_chars("=> "),
    );
    pb
}

/// Moves `pb` to `pos`, lengthening it first when an estimated length fell short.
pub(crate) fn grow(pb: &ProgressBar, pos: u64) {
    if pb.length().is_some_and(|len| len != 0 && pos > len) {
        pb.set_length(pos);
    }
    pb.set_position(pos);
}
