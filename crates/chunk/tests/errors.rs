//! Every kind of malformed or non-canonical input maps to its typed error.

mod common;

use common::{b, schema};
use terrane_chunk::{Chunk, ChunkView, ComponentKind, Error, Schema, SchemaBytes};

fn put_u64(bytes: &mut [u8], at: usize, v: u64) {
    bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

/// Palette [0, 9], 1 bit, one layer record, one entity.
fn sample() -> Vec<u8> {
    let mut c = Chunk::new(b(0));
    c.set_index(1, b(9));
    c.push_layer(3, b(9));
    c.add_entity([1; 16]);
    c.encode(&schema().schema)
}

/// The error of `parse`, checked equal to the one-pass bulk read's.
fn parse_err(bytes: &[u8]) -> Error {
    let e = ChunkView::parse(bytes).expect_err("must be rejected");
    let mut out = [b(0); 4096];
    assert_eq!(ChunkView::parse_blocks(bytes, &mut out).err(), Some(e.clone()), "parse_blocks");
    e
}

/// Writes local id `v` into cell `i` of layer 0 (`bits` wide, after a palette of `n`).
fn put_local(bytes: &mut [u8], n: usize, bits: usize, i: usize, v: u64) {
    let start = 40 + 8 * n;
    for k in 0..bits {
        let bit = i * bits + k;
        let byte = &mut bytes[start + bit / 8];
        *byte = (*byte & !(1 << (bit % 8))) | (((v >> k) & 1) as u8) << (bit % 8);
    }
}

/// The bulk read takes a different loop per width (pairs up to 4 bits, single cells up to
/// 6, marks in an array up to 12): at each, it reads what `parse` + `read_blocks` read, and
/// rejects what `parse` rejects with the same error.
#[test]
fn the_bulk_read_agrees_with_parse_at_every_width() {
    let s = schema();
    for n in [1usize, 2, 3, 5, 16, 17, 33, 64, 65, 129, 300, 513, 1025, 2049, 4096] {
        let bits = if n <= 1 { 0 } else { (usize::BITS - (n - 1).leading_zeros()) as usize };
        let mut c = Chunk::new(b(0));
        for i in 0..4096u16 {
            c.set_index(i, b(10 + (u32::from(i) * 7) % n as u32));
        }
        let bytes = c.encode(&s.schema);
        // Against the cell-by-cell read (`block`), which shares no loop with the bulk ones.
        let view = ChunkView::parse(&bytes).unwrap();
        let want: Vec<_> = (0..4096u16).map(|i| view.block(i)).collect();
        let mut got = [b(1); 4096];
        ChunkView::parse_blocks(&bytes, &mut got).unwrap();
        assert_eq!(got.to_vec(), want, "palette of {n}: parse_blocks");
        let mut read = [b(1); 4096];
        view.read_blocks(&mut read);
        assert_eq!(read.to_vec(), want, "palette of {n}: read_blocks");
        if bits == 0 {
            continue;
        }
        // A local id past the palette, where the width leaves room for one.
        if n < 1 << bits {
            let mut bad = bytes.clone();
            put_local(&mut bad, n, bits, 4000, n as u64);
            assert!(matches!(parse_err(&bad), Error::LocalIdOutOfRange { cell: 4000, .. }));
        }
        // Local id 1 used nowhere: its cells take local id 0.
        let mut bad = bytes.clone();
        for i in (0..4096).filter(|i| (i * 7) % n == 1) {
            put_local(&mut bad, n, bits, i, 0);
        }
        assert!(matches!(parse_err(&bad), Error::UnusedPaletteEntry { index: 1, .. }), "{n}");
    }
}

#[test]
fn sample_is_valid() {
    let s = sample();
    assert!(ChunkView::parse(&s).is_ok());
    assert_eq!(get_u64(&s, 8), 40 + 16 + 512 + 8, "componentOffset: records padded to 8");
}

#[test]
fn version() {
    let mut s = sample();
    put_u64(&mut s, 0, 2);
    assert_eq!(parse_err(&s), Error::UnsupportedVersion { found: 2 });
}

#[test]
fn truncation_anywhere_is_an_error() {
    let s = sample();
    for len in 0..s.len() {
        assert!(ChunkView::parse(&s[..len]).is_err(), "prefix of {len} bytes");
    }
    let mut longer = s.clone();
    longer.push(0);
    assert!(matches!(parse_err(&longer), Error::LengthMismatch { .. }));
}

#[test]
fn offsets() {
    let s = sample();
    let mut t = s.clone();
    put_u64(&mut t, 8, 1 << 40);
    assert!(matches!(parse_err(&t), Error::OffsetOutOfBounds { field: "componentOffset", .. }));
    let mut t = s.clone();
    put_u64(&mut t, 16, u64::MAX);
    assert!(matches!(parse_err(&t), Error::OffsetOutOfBounds { field: "entityOffset", .. }));
    let mut t = s.clone();
    put_u64(&mut t, 16, get_u64(&s, 8) - 8);
    assert!(matches!(parse_err(&t), Error::OffsetsOutOfOrder { .. }));
    let mut t = s.clone();
    put_u64(&mut t, 8, get_u64(&s, 8) - 8);
    assert!(matches!(parse_err(&t), Error::LengthMismatch { .. }));
}

#[test]
fn palette() {
    let s = sample();
    let mut t = s.clone();
    put_u64(&mut t, 32, 0);
    assert_eq!(parse_err(&t), Error::EmptyPalette);
    let mut t = s.clone();
    put_u64(&mut t, 32, u64::MAX);
    assert!(matches!(parse_err(&t), Error::Truncated { what: "block palette", .. }));
    let mut t = s.clone();
    put_u64(&mut t, 48, 1 << 33);
    assert!(matches!(parse_err(&t), Error::BlockIdTooLarge { index: 1, .. }));
    let mut t = s.clone();
    put_u64(&mut t, 48, 0);
    assert_eq!(parse_err(&t), Error::PaletteNotSorted { index: 1 });
}

/// The same palette checks past 64 entries, where the bulk read keeps the palette's low halves
/// as its lookup table (a path of its own): 300 entries, 9 bits.
#[test]
fn palette_past_64_entries() {
    let mut c = Chunk::new(b(0));
    for i in 1..300u32 {
        c.set_index(i as u16, b(2 * i));
    }
    let s = c.encode(&schema().schema);
    assert_eq!(get_u64(&s, 32), 300);
    let mut out = [b(0); 4096];
    ChunkView::parse_blocks(&s, &mut out).expect("valid");
    assert_eq!(out[299], b(598));
    let entry = |i: usize| 40 + 8 * i;
    let mut t = s.clone();
    put_u64(&mut t, entry(200), 1 << 33);
    assert!(matches!(parse_err(&t), Error::BlockIdTooLarge { index: 200, .. }));
    // Ascending on the low halves alone, not as 64-bit values: too large, not "sorted".
    let mut t = s.clone();
    put_u64(&mut t, entry(299), (1 << 32) + 1000);
    assert!(matches!(parse_err(&t), Error::BlockIdTooLarge { index: 299, .. }));
    let mut t = s.clone();
    put_u64(&mut t, entry(150), get_u64(&s, entry(149)));
    assert_eq!(parse_err(&t), Error::PaletteNotSorted { index: 150 });
    let mut t = s.clone();
    put_u64(&mut t, entry(1), 0);
    assert_eq!(parse_err(&t), Error::PaletteNotSorted { index: 1 });
}

#[test]
fn local_ids_beyond_the_palette() {
    // Three entries: 2 bits, so local id 3 is out of range.
    let mut c = Chunk::new(b(0));
    c.set_index(0, b(1));
    c.set_index(1, b(2));
    let mut t = c.encode(&schema().schema);
    let l0 = 40 + 24;
    t[l0] |= 0b11 << 4; // cell 2 := 3
    assert_eq!(
        parse_err(&t),
        Error::LocalIdOutOfRange { cell: 2, layer: 0, local: 3, palette_len: 3 }
    );
}

#[test]
fn unused_palette_entry() {
    let mut s = sample();
    // Cell 1 back to local id 0: block 9 is still used by the layer record. Clear the record's
    // block too (local id bit 12 of the 13-bit record).
    let l0 = 40 + 16;
    s[l0] = 0;
    let rec = l0 + 512;
    s[rec + 1] &= !(1 << 4);
    assert_eq!(parse_err(&s), Error::UnusedPaletteEntry { index: 1, id: 9 });
}

#[test]
fn layer_records() {
    let mut c = Chunk::new(b(0));
    c.push_layer(5, b(0));
    c.push_layer(9, b(0));
    let mut t = c.encode(&schema().schema);
    // b = 0: records are 12 bits: cell 5 then cell 9. Swap them to 9, 5.
    let rec = 40 + 8;
    t[rec] = 9;
    t[rec + 1] = 5 << 4;
    t[rec + 2] = 0;
    assert_eq!(parse_err(&t), Error::LayerRecordsUnsorted { index: 1, cell: 5 });
    let mut t = c.encode(&schema().schema);
    t[rec + 3] = 1; // padding after 3 record bytes
    assert_eq!(parse_err(&t), Error::NonZeroPadding { offset: (rec + 3) as u64 });
    // A count too large for the input.
    let mut t = c.encode(&schema().schema);
    put_u64(&mut t, 24, u64::MAX);
    assert!(matches!(parse_err(&t), Error::Truncated { what: "layer records", .. }));
}

#[test]
fn entities() {
    let mut c = Chunk::new(b(0));
    c.add_entity([1; 16]);
    c.add_entity([2; 16]);
    let mut t = c.encode(&schema().schema);
    let n = t.len();
    t[n - 32..n - 16].copy_from_slice(&[3; 16]);
    assert_eq!(parse_err(&t), Error::EntitiesUnsorted { index: 1 });
    let mut t = c.encode(&schema().schema);
    put_u64(&mut t, n - 40, 3);
    assert!(matches!(parse_err(&t), Error::LengthMismatch { .. }));
    put_u64(&mut t, n - 40, u64::MAX);
    assert!(matches!(parse_err(&t), Error::LengthMismatch { .. }));
}

#[test]
fn components_against_the_schema() {
    let s = schema();
    let mut c = Chunk::new(b(0));
    c.set_index(0, b(2));
    c.set_index(1, b(2));
    c.set_component(&s.schema, 0, 0, s.var, b"abc").unwrap();
    let good = c.encode(&s.schema);
    let co = get_u64(&good, 8) as usize;
    assert_eq!(Chunk::decode(&good, &s.schema).unwrap(), c);

    // Unknown component id.
    let mut t = good.clone();
    put_u64(&mut t, co, 77);
    assert_eq!(Chunk::decode(&t, &s.schema).unwrap_err(), Error::UnknownComponent { id: 77 });
    // The fixed component instead: no block carries it.
    let mut t = good.clone();
    put_u64(&mut t, co, s.fixed.0);
    assert!(matches!(Chunk::decode(&t, &s.schema).unwrap_err(), Error::UnexpectedComponent { .. }));
    // Offset width: 3 is not allowed, 2 is not canonical for 3 bytes of data.
    let mut t = good.clone();
    t[co + 8] = 3;
    assert!(matches!(Chunk::decode(&t, &s.schema).unwrap_err(), Error::BadOffsetWidth { .. }));
    // Offsets: [0, 3, 3]; make the first non-zero, then the table decreasing.
    let mut t = good.clone();
    t[co + 9] = 1;
    assert!(matches!(
        Chunk::decode(&t, &s.schema).unwrap_err(),
        Error::OffsetTableNotMonotone { index: 0, .. }
    ));
    let mut t = good.clone();
    t[co + 11] = 2;
    assert!(matches!(
        Chunk::decode(&t, &s.schema).unwrap_err(),
        Error::OffsetTableNotMonotone { index: 2, .. }
    ));
    // Offsets [0, 2, 2]: one byte left over before entityOffset.
    t[co + 10] = 2;
    assert!(matches!(Chunk::decode(&t, &s.schema).unwrap_err(), Error::LengthMismatch { .. }));
    // Offsets [0, 3, 4]: data runs past entityOffset.
    let mut t = good.clone();
    t[co + 11] = 4;
    assert!(matches!(Chunk::decode(&t, &s.schema).unwrap_err(), Error::Truncated { .. }));
    // Component section missing entirely.
    let mut t = good[..co].to_vec();
    put_u64(&mut t, 16, co as u64);
    t.extend_from_slice(&0u64.to_le_bytes());
    assert!(matches!(Chunk::decode(&t, &s.schema).unwrap_err(), Error::MissingComponent { .. }));
    // A block the schema does not know.
    let small = Schema::new();
    assert!(matches!(Chunk::decode(&good, &small).unwrap_err(), Error::UnknownBlock { id: 0, .. }));
}

#[test]
fn schema_encoding_round_trips_and_rejects_garbage() {
    let s = schema().schema;
    let bytes = s.encode();
    assert_eq!(Schema::decode(&bytes).unwrap(), s);
    let mut reg = s.encode();
    reg.blocks.push(0);
    assert!(matches!(Schema::decode(&reg), Err(Error::BadSchema(_))));
    let mut reg = s.encode();
    reg.blocks[0] = 0xff;
    assert!(Schema::decode(&reg).is_err());
    let utf = SchemaBytes { blocks: vec![1, 1, 0xff], ..SchemaBytes::default() };
    assert!(matches!(Schema::decode(&utf), Err(Error::BadUtf8 { .. })));
    let dup = SchemaBytes { blocks: vec![2, 1, b'a', 1, b'a'], ..SchemaBytes::default() };
    assert!(matches!(Schema::decode(&dup), Err(Error::DuplicateName { .. })));
    // The registry encoding of the spec: LEB128 count, LEB128 length, UTF-8.
    let mut r = Schema::new();
    r.add_block("air", &[]).unwrap();
    r.add_block(&"x".repeat(200), &[]).unwrap();
    let enc = r.encode().blocks;
    assert_eq!(&enc[..5], &[2, 3, b'a', b'i', b'r']);
    assert_eq!(&enc[5..7], &[200, 1]);
}

#[test]
fn schemas_only_grow() {
    let old = schema().schema;
    let mut grown = old.clone();
    grown.add_block("new", &[]).unwrap();
    grown.add_component("new", ComponentKind::Fixed(1)).unwrap();
    grown.add_entity("pig").unwrap();
    grown.add_structure("village").unwrap();
    assert_eq!(grown.check_extends(&old), Ok(()));
    assert!(matches!(old.check_extends(&grown), Err(Error::RegistryShrunk { .. })));

    let mut renamed = Schema::new();
    let f = renamed.add_component("test:health", ComponentKind::Fixed(4)).unwrap();
    let v = renamed.add_component("test:text", ComponentKind::Variable).unwrap();
    renamed.add_block("vacuum", &[]).unwrap();
    renamed.add_block("chest", &[f]).unwrap();
    renamed.add_block("sign", &[v]).unwrap();
    let mut small = Schema::new();
    let f2 = small.add_component("test:health", ComponentKind::Fixed(4)).unwrap();
    small.add_component("test:text", ComponentKind::Variable).unwrap();
    small.add_block("air", &[]).unwrap();
    small.add_block("chest", &[f2]).unwrap();
    assert!(matches!(
        renamed.check_extends(&small),
        Err(Error::RegistryEntryChanged { registry: "blocks", index: 0, .. })
    ));

    let mut resized = Schema::new();
    resized.add_component("test:health", ComponentKind::Fixed(8)).unwrap();
    resized.add_component("test:text", ComponentKind::Variable).unwrap();
    let mut base = Schema::new();
    base.add_component("test:health", ComponentKind::Fixed(4)).unwrap();
    assert!(matches!(resized.check_extends(&base), Err(Error::ComponentResized { .. })));

    let mut moved = Schema::new();
    let c = moved.add_component("test:health", ComponentKind::Fixed(4)).unwrap();
    moved.add_block("air", &[c]).unwrap();
    let mut orig = Schema::new();
    orig.add_component("test:health", ComponentKind::Fixed(4)).unwrap();
    orig.add_block("air", &[]).unwrap();
    assert!(matches!(moved.check_extends(&orig), Err(Error::BlockComponentsChanged { .. })));
}

#[test]
fn edits_report_bad_layers_and_values() {
    let s = schema();
    let mut c = Chunk::new(b(0));
    assert!(matches!(c.set_layer(0, 1, b(1)), Err(Error::NoSuchLayer { .. })));
    assert!(matches!(c.remove_layer(0, 0), Err(Error::NoSuchLayer { .. })));
    assert!(matches!(
        c.set_component(&s.schema, 0, 0, s.fixed, &[0; 4]),
        Err(Error::BadComponentValue { .. })
    ));
    c.set_index(0, b(1));
    assert!(matches!(
        c.set_component(&s.schema, 0, 0, s.fixed, &[0; 3]),
        Err(Error::BadComponentValue { .. })
    ));
    c.set_component(&s.schema, 0, 0, s.fixed, &[1; 4]).unwrap();
    assert_eq!(c.component(0, 0, s.fixed), Some(&[1u8; 4][..]));
    // Replacing the block drops its values.
    c.set_index(0, b(3));
    assert_eq!(c.component(0, 0, s.fixed), None);
}
