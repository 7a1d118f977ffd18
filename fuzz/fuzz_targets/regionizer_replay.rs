//! The replay tool's parser and runner on arbitrary text: never panics; either a typed error
//! or one JSON line per operation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_regionizer::replay::{ReplayOptions, replay};

fuzz_target!(|data: &[u8]| {
    let Some((&head, text)) = data.split_first() else { return };
    let mut o = ReplayOptions::default();
    if head & 1 == 1 {
        o.dims = 3;
    }
    o.final_only = head & 2 == 2;
    if head & 4 == 4 {
        o.config = terrane_regionizer::RegionizerConfig::folia_shift2();
    }
    let mut out = Vec::new();
    if let Ok(stats) = replay(text, &mut out, &o) {
        let lines = out.iter().filter(|&&b| b == b'\n').count() as u64;
        assert_eq!(lines, if o.final_only { 1 } else { stats.ops });
    }
});
