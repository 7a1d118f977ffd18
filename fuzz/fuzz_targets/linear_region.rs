//! Reads arbitrary bytes as a Linear region file (`terrane_anvil::linear`): typed errors
//! only, never a panic; a file that reads converts to an Anvil region holding the same
//! chunks, and writes back (both layouts) to files that read as the same chunks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_anvil::linear::{self, LinearLayout};
use terrane_anvil::region::RegionFile;

fuzz_target!(|data: &[u8]| {
    let Ok(region) = linear::decode(data, 8 << 20) else { return };
    let anvil = linear::to_anvil(data, 8 << 20).expect("a Linear file that decodes converts");
    let anvil = RegionFile::new(anvil).expect("a whole region");
    let indices: Vec<usize> = anvil.entries().map(|e| e.index).collect();
    assert_eq!(indices, region.chunks.iter().map(|c| c.index).collect::<Vec<_>>());
    for layout in [LinearLayout::V1, LinearLayout::V2 { grid: 4 }] {
        let again = linear::encode(&region.chunks, (0, 0), layout, 1);
        let back = linear::decode(&again, usize::MAX).expect("what terrane writes reads");
        assert_eq!(back.chunks.len(), region.chunks.len());
    }
});
