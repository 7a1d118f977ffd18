//! Golden chunks: their bytes are snapshotted (hex dumps under `tests/snapshots`) so the
//! layout cannot drift silently, and each one decodes back to the same chunk.

mod common;

use common::{b, hex, schema};
use terrane_chunk::{Chunk, ChunkView};

fn golden(c: &Chunk) -> String {
    let s = schema();
    let bytes = c.encode(&s.schema);
    let d = Chunk::decode(&bytes, &s.schema).expect("golden chunk decodes");
    assert_eq!(&d, c);
    assert_eq!(d.encode(&s.schema), bytes);
    // `TERRANE_CHUNK_SEEDS=<dir>` writes the golden chunks there (a fuzzing seed corpus).
    if let Some(dir) = std::env::var_os("TERRANE_CHUNK_SEEDS") {
        let name = format!("golden-{}-{}", bytes.len(), d.layered_block_count());
        std::fs::write(std::path::Path::new(&dir).join(name), &bytes).unwrap();
    }
    hex(&bytes)
}

#[test]
fn uniform() {
    let c = Chunk::new(b(7));
    let s = schema();
    let bytes = c.encode(&s.schema);
    // Header (40) + one palette entry (8) + no layer-0 bytes + entity count (8).
    assert_eq!(bytes.len(), 56);
    insta::assert_snapshot!(golden(&c));
}

#[test]
fn two_entries() {
    let mut c = Chunk::new(b(0));
    for i in (0..4096u16).step_by(3) {
        c.set_index(i, b(9));
    }
    let s = schema();
    assert_eq!(c.encode(&s.schema).len(), 40 + 16 + 512 + 8);
    insta::assert_snapshot!(golden(&c));
}

#[test]
fn seventeen_entries_five_bits() {
    let mut c = Chunk::new(b(0));
    for i in 0..4096u16 {
        c.set_index(i, b(100 + u32::from(i % 17)));
    }
    let s = schema();
    let bytes = c.encode(&s.schema);
    assert_eq!(ChunkView::parse(&bytes).unwrap().bits_per_block(), 5);
    assert_eq!(bytes.len(), 40 + 17 * 8 + 512 * 5 + 8);
    insta::assert_snapshot!(golden(&c));
}

#[test]
fn full_palette_4096() {
    let mut c = Chunk::new(b(0));
    for i in 0..4096u16 {
        // A permutation, so the packed ids are not simply 0..4096.
        c.set_index(i, b(u32::from(i.wrapping_mul(1597) % 4096) + 10));
    }
    let s = schema();
    let bytes = c.encode(&s.schema);
    assert_eq!(ChunkView::parse(&bytes).unwrap().bits_per_block(), 12);
    insta::assert_snapshot!(golden(&c));
}

#[test]
fn with_layers() {
    let mut c = Chunk::new(b(0));
    c.set(0, 0, 0, b(5));
    c.set(0, 0, 1, b(6));
    // Water in two cells, a second extra layer in one, and a block only used at a layer.
    c.push_layer(1, b(8));
    c.push_layer(1, b(9));
    c.push_layer(0, b(8));
    c.push_layer(4095, b(4000));
    let s = schema();
    let bytes = c.encode(&s.schema);
    let v = ChunkView::parse(&bytes).unwrap();
    assert_eq!(v.layered_block_count(), 4);
    assert_eq!(v.palette_len(), 6);
    assert_eq!(v.layers(1).collect::<Vec<_>>(), [b(8), b(9)]);
    assert_eq!(v.block_layer(4095, 1), Some(b(4000)));
    insta::assert_snapshot!(golden(&c));
}

#[test]
fn with_fixed_and_variable_components() {
    let s = schema();
    let mut c = Chunk::new(b(0));
    c.set_index(0, b(1)); // chest: fixed
    c.set_index(1, b(2)); // sign: variable
    c.set_index(2, b(3)); // both
    c.set_index(3, b(2)); // sign with the default (empty) text
    c.push_layer(2, b(1)); // a chest at layer 1 of cell 2
    c.set_component(&s.schema, 0, 0, s.fixed, &[1, 2, 3, 4]).unwrap();
    c.set_component(&s.schema, 1, 0, s.var, b"hi").unwrap();
    c.set_component(&s.schema, 2, 0, s.var, b"both").unwrap();
    c.set_component(&s.schema, 2, 0, s.fixed, &[9, 9, 9, 9]).unwrap();
    c.set_component(&s.schema, 2, 1, s.fixed, &[5, 6, 7, 8]).unwrap();
    let bytes = c.encode(&s.schema);
    let v = ChunkView::parse(&bytes).unwrap();
    let comps = v.components(&s.schema).unwrap();
    assert_eq!(comps.count(s.fixed), 3);
    assert_eq!(comps.count(s.var), 3);
    assert_eq!(comps.get(2, 1, s.fixed), Some(&[5, 6, 7, 8][..]));
    assert_eq!(comps.get(3, 0, s.var), Some(&[][..]));
    assert_eq!(comps.get(4, 0, s.var), None);
    insta::assert_snapshot!(golden(&c));
}

#[test]
fn with_entities() {
    let mut c = Chunk::new(b(0));
    c.set_index(100, b(1));
    c.add_entity([0xff; 16]);
    c.add_entity([0x11; 16]);
    c.add_entity(*b"0123456789abcdef");
    assert!(!c.add_entity([0x11; 16]));
    let s = schema();
    let bytes = c.encode(&s.schema);
    let v = ChunkView::parse(&bytes).unwrap();
    assert_eq!(v.entities(), &[[0x11; 16], *b"0123456789abcdef", [0xff; 16]]);
    insta::assert_snapshot!(golden(&c));
}
