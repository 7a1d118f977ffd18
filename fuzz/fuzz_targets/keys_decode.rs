//! Store keys (`docs/format/keys.md`): chunk cell keys, 2D column keys, area entity keys and
//! the imported worlds' column record keys. Keys come back from stores, where damage can reach
//! them: any bytes either do not parse or parse to coordinates whose key is the same bytes
//! (the encodings are bijections; a record key of dimension 0 has a short form too).
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_section::ChunkPos;
use terrane_section::keys::{
    Level, area_entity_key, cell_key, column_key_at, parse_area_entity_key, parse_chunk_key,
    parse_column_key,
};

fuzz_target!(|data: &[u8]| {
    if let Some((dim, cell)) = parse_chunk_key(data) {
        assert_eq!(cell_key(dim, ChunkPos::new(cell.x, cell.y, cell.z)), data);
    }
    if let Some((dim, x, z)) = parse_column_key(data) {
        // Level 0 keys are the coordinates themselves (no shift).
        assert_eq!(column_key_at(dim, x, z, Level::L0), data);
    }
    if let Some((area, uuid)) = parse_area_entity_key(data) {
        assert_eq!(area_entity_key(area, &uuid), data);
    }
    type Parse = fn(&[u8]) -> Option<(u64, terrane_section::ColumnPos)>;
    type Key = fn(u64, terrane_section::ColumnPos) -> Vec<u8>;
    let records: [(Parse, Key); 2] = [
        (terrane::java::parse_record_key, terrane::java::record_key),
        (terrane::bedrock::parse_record_key, terrane::bedrock::record_key),
    ];
    for (parse, key) in records {
        if let Some((dim, pos)) = parse(data) {
            let again = key(dim, pos);
            assert_eq!(parse(&again), Some((dim, pos)));
            if again.len() == data.len() {
                assert_eq!(again, data);
            }
        }
    }
});
