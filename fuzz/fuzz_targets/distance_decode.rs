//! `DistanceGraph::from_bytes` never panics, and anything it accepts re-encodes to the
//! identical bytes (so it accepts only canonical encodings).
//!
//! Most random inputs fail the checksum; when the first byte is odd, the rest of the input is
//! given a valid CRC-32C before decoding, so the structural checks are fuzzed too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_distance::DistanceGraph;

fuzz_target!(|data: &[u8]| {
    let mut input = data.to_vec();
    if let Some((&first, rest)) = data.split_first()
        && first & 1 == 1
    {
        input = rest.to_vec();
        let crc = crc32c::crc32c(&input);
        input.extend_from_slice(&crc.to_le_bytes());
    }
    if let Ok(g) = DistanceGraph::from_bytes(&input) {
        assert_eq!(g.to_bytes(), input, "accepted a non-canonical encoding");
        g.check_invariants().expect("decoded graph breaks an invariant");
    }
});
