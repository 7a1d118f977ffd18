//! Column records of imported Java columns (`docs/format/anvil.md`, compressed NBT kept beside
//! a column's chunks): read back from stores, so any bytes either fail with a typed error or
//! decode to a record that encodes and decodes to itself. The first byte picks the input:
//! odd, the rest is the record as stored; 0 mod 4, the rest is the record's NBT, wrapped here
//! in a stored zlib stream (a record v1); 2 mod 4, the same NBT as a record v2 (LZ4 with its
//! length and CRC-32C). The wrapped inputs let the fuzzer spend its time past the compression.
//! A decoded record's section biomes go through their decoder too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_anvil::biomes::SectionBiomes;
use terrane_anvil::mapping::ColumnRecord;
use terrane_nbt::{Compound, Tag};

/// `bytes` as a zlib stream of stored (uncompressed) blocks: no compressor to set up per
/// input, so the fuzzer's time goes to the record decoder.
fn zlib_stored(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let mut blocks = bytes.chunks(65_535).peekable();
    if blocks.peek().is_none() {
        out.extend([1, 0, 0, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        out.push(u8::from(blocks.peek().is_none()));
        let len = block.len() as u16;
        out.extend(len.to_le_bytes());
        out.extend((!len).to_le_bytes());
        out.extend(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in bytes {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    out.extend(((b << 16) | a).to_be_bytes());
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let stored = match mode & 3 {
        0 => zlib_stored(rest),
        2 => {
            let mut v2 = vec![b'L'];
            v2.extend((rest.len() as u32).to_le_bytes());
            v2.extend(crc32c::crc32c(rest).to_le_bytes());
            v2.extend(lz4_flex::block::compress(rest));
            v2
        }
        _ => rest.to_vec(),
    };
    if let Ok(record) = ColumnRecord::decode(&stored) {
        // Compared as bytes: a record may hold NaN doubles, never equal to themselves.
        let again = record.encode().expect("a decoded record encodes");
        let back = ColumnRecord::decode(&again).expect("an encoded record decodes");
        assert_eq!(back.encode().expect("encodes"), again, "encode(decode(encode(r))) == encode(r)");
        // Its sections' biomes, as `terrane convert` reads them: decoded ones re-encode alike.
        if let Some(Tag::List(_, sections)) = record.rest.get("sections") {
            for s in sections.iter().filter_map(Tag::as_compound) {
                if let Ok(Some(b)) = SectionBiomes::from_section(s) {
                    let mut sec = Compound::new();
                    sec.insert("biomes".to_string(), Tag::Compound(b.to_compound()));
                    let again = SectionBiomes::from_section(&sec).expect("re-encoded biomes");
                    assert_eq!(again, Some(b));
                }
            }
        }
    }
});
