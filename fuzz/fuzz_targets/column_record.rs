//! Column records of imported Java columns (`docs/format/anvil.md`, zlib-compressed NBT kept
//! beside a column's chunks): read back from stores, so any bytes either fail with a typed
//! error or decode to a record that encodes and decodes to itself. The first byte picks the
//! input: odd, the rest is the record as stored; even, the rest is the record's NBT, deflated
//! here, so that the fuzzer spends its time past zlib.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use terrane_anvil::convert::ColumnRecord;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let stored = if mode & 1 == 1 {
        rest.to_vec()
    } else {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(rest).expect("in memory");
        z.finish().expect("in memory")
    };
    if let Ok(record) = ColumnRecord::decode(&stored) {
        // Compared as bytes: a record may hold NaN doubles, never equal to themselves.
        let again = record.encode().expect("a decoded record encodes");
        let back = ColumnRecord::decode(&again).expect("an encoded record decodes");
        assert_eq!(back.encode().expect("encodes"), again, "encode(decode(encode(r))) == encode(r)");
    }
});
