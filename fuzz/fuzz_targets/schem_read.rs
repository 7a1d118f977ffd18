//! Sponge schematic reader: arbitrary bytes (gzip or raw NBT) never panic; whatever reads
//! also writes, and the written file reads back to the same blocks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_chunk::block_state::canonical;
use terrane_snapshot::{ReadOptions, Schematic};

fuzz_target!(|data: &[u8]| {
    let opts = ReadOptions::new().max_inflated(1 << 24);
    let Ok(s) = Schematic::read_with(data, &opts) else { return };
    assert_eq!(s.volume(), s.width() as usize * s.height() as usize * s.length() as usize);
    let Ok(bytes) = s.write() else { return };
    let back = Schematic::read(&bytes).expect("a written schematic reads back");
    assert_eq!((back.width(), back.height(), back.length()), (s.width(), s.height(), s.length()));
    for (a, b) in s.ids().iter().zip(back.ids().iter()) {
        assert_eq!(canonical(&s.palette()[a as usize]), back.palette()[b as usize]);
    }
    // Debug text, so that NaN floats compare equal to themselves.
    assert_eq!(format!("{:?}", s.block_entities), format!("{:?}", back.block_entities));
    assert_eq!(format!("{:?}", s.entities), format!("{:?}", back.entities));
});
