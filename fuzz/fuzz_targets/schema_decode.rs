//! The world's schema as stored in `worldMeta` (four registries and the layout): any bytes
//! either fail with a typed error or give a schema that re-encodes, decodes to itself, and
//! extends itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_chunk::{Schema, SchemaBytes};

fuzz_target!(|data: &[u8]| {
    // Four one-byte lengths pick the registries' bytes; the rest is the layout.
    let Some((lens, mut rest)) = data.split_at_checked(4) else { return };
    let mut take = |n: u8| {
        let (a, b) = rest.split_at(usize::from(n).min(rest.len()));
        rest = b;
        a.to_vec()
    };
    let blocks = take(lens[0]);
    let components = take(lens[1]);
    let entities = take(lens[2]);
    let structures = take(lens[3]);
    let bytes = SchemaBytes { blocks, components, entities, structures, layout: rest.to_vec() };
    let Ok(schema) = Schema::decode(&bytes) else { return };
    let again = schema.encode();
    let back = Schema::decode(&again).expect("an encoded schema decodes");
    assert_eq!(back.encode(), again, "encoding is stable");
    schema.check_extends(&back).expect("a schema extends itself");
});
