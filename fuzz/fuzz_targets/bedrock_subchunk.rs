//! Bedrock sub-chunks: arbitrary bytes never panic; what decodes encodes (as version 9) to
//! bytes that decode to the same blocks, storage for storage.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_bedrock::SubChunk;

fuzz_target!(|data: &[u8]| {
    let Ok(sc) = SubChunk::decode(data) else { return };
    let bytes = SubChunk::encode(sc.y.unwrap_or(0), &sc.storages).expect("a decoded sub-chunk encodes");
    let back = SubChunk::decode(&bytes).expect("an encoded sub-chunk decodes");
    assert_eq!(back.storages.len(), sc.storages.len());
    // Entries compared as their NBT bytes (a NaN state value equals itself).
    let bytes = |p: &[terrane_nbt::Compound]| -> Vec<Vec<u8>> {
        p.iter()
            .map(|c| {
                let mut w = terrane_nbt::Writer::sorted().little_endian();
                w.named("", &terrane_nbt::Tag::Compound(c.clone())).expect("encodes");
                w.out
            })
            .collect()
    };
    for (a, b) in sc.storages.iter().zip(&back.storages) {
        let (pa, pb) = (bytes(&a.palette), bytes(&b.palette));
        for i in 0..4096 {
            assert_eq!(pa[a.indices[i] as usize], pb[b.indices[i] as usize]);
        }
    }
});
