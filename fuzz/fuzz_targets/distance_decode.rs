//! `DistanceGraph::from_bytes` never panics, and anything it accepts re-encodes to the
//! identical bytes (so it accepts only canonical encodings).
//!
//! Three modes, by the first byte:
//! - `% 3 == 0`: the raw input (mostly fails the checksum: exercises the header checks);
//! - `% 3 == 1`: the rest of the input with a valid CRC-32C appended (structural checks);
//! - `% 3 == 2`: a real encoding of a graph built from the input's coordinate pairs, then
//!   bytes of it XORed by the input's tail, and resealed (deep, nearly valid encodings).
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_distance::{ColumnPos, DistanceGraph};

fn seal(mut body: Vec<u8>) -> Vec<u8> {
    let crc = crc32c::crc32c(&body);
    body.extend_from_slice(&crc.to_le_bytes());
    body
}

fn check(input: &[u8]) {
    if let Ok(g) = DistanceGraph::from_bytes(input) {
        assert_eq!(g.to_bytes(), input, "accepted a non-canonical encoding");
        g.check_invariants().expect("decoded graph breaks an invariant");
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        check(data);
        return;
    };
    match mode % 3 {
        0 => check(data),
        1 => check(&seal(rest.to_vec())),
        _ => {
            // First half: coordinates (i8 pairs, spread over a few nodes); second half: edits.
            let (coords, edits) = rest.split_at(rest.len() / 2);
            let mut g = DistanceGraph::new();
            for p in coords.chunks_exact(2) {
                let (x, z) = (p[0] as i8 as i32 * 37, p[1] as i8 as i32 * 29);
                let _ = g.insert(ColumnPos::new(x, z));
            }
            let mut bytes = g.to_bytes();
            bytes.truncate(bytes.len() - 4);
            for e in edits.chunks_exact(3) {
                let at = u16::from_le_bytes([e[0], e[1]]) as usize;
                if !bytes.is_empty() {
                    let i = at % bytes.len();
                    bytes[i] ^= e[2];
                }
            }
            check(&seal(bytes));
        }
    }
});
