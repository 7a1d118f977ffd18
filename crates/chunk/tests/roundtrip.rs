//! Property tests: random chunks round-trip, and the owned chunk agrees with a plain model.

mod common;

use common::{b, schema};
use proptest::prelude::*;
use terrane_chunk::{BlockId, Chunk, ChunkView, Error};

#[derive(Debug, Clone)]
enum Op {
    Set(u16, u32),
    Push(u16, u32),
    SetLayer(u16, u32, u32),
    Remove(u16, u32),
    Fixed(u16, u32, [u8; 4]),
    Var(u16, u32, Vec<u8>),
    Entity([u8; 16]),
    Compact,
}

fn op(blocks: u32) -> impl Strategy<Value = Op> {
    let cell = 0u16..4096;
    prop_oneof![
        8 => (cell.clone(), 0..blocks).prop_map(|(c, x)| Op::Set(c, x)),
        2 => (0u16..64, 0..blocks).prop_map(|(c, x)| Op::Push(c, x)),
        1 => (0u16..64, 0u32..3, 0..blocks).prop_map(|(c, l, x)| Op::SetLayer(c, l, x)),
        1 => (0u16..64, 0u32..3).prop_map(|(c, l)| Op::Remove(c, l)),
        2 => (0u16..64, 0u32..2, any::<[u8; 4]>()).prop_map(|(c, l, v)| Op::Fixed(c, l, v)),
        2 => (0u16..64, 0u32..2, proptest::collection::vec(any::<u8>(), 0..40))
            .prop_map(|(c, l, v)| Op::Var(c, l, v)),
        1 => any::<[u8; 16]>().prop_map(Op::Entity),
        1 => Just(Op::Compact),
    ]
}

/// Builds a chunk from a fill pattern plus edits, checking it against a model as it goes.
fn build(fill: &[u32], ops: &[Op]) -> Chunk {
    let s = schema();
    let mut c = Chunk::new(b(fill[0]));
    let mut model: Vec<BlockId> = vec![b(fill[0]); 4096];
    for i in 0..4096u16 {
        let x = b(fill[i as usize % fill.len()]);
        c.set_index(i, x);
        model[i as usize] = x;
    }
    let mut layers: std::collections::BTreeMap<u16, Vec<BlockId>> = Default::default();
    for o in ops {
        match *o {
            Op::Set(i, x) => {
                assert_eq!(c.set_index(i, b(x)), model[i as usize]);
                model[i as usize] = b(x);
            }
            Op::Push(i, x) => {
                c.push_layer(i, b(x));
                layers.entry(i).or_default().push(b(x));
            }
            Op::SetLayer(i, l, x) => {
                let r = c.set_layer(i, l, b(x));
                if l == 0 {
                    model[i as usize] = b(x);
                    assert!(r.is_ok());
                } else if let Some(v) = layers.get_mut(&i).and_then(|v| v.get_mut(l as usize - 1)) {
                    assert_eq!(r, Ok(*v));
                    *v = b(x);
                } else {
                    assert!(matches!(r, Err(Error::NoSuchLayer { .. })));
                }
            }
            Op::Remove(i, l) => {
                let r = c.remove_layer(i, l);
                match layers.get_mut(&i) {
                    Some(v) if l >= 1 && (l as usize) <= v.len() => {
                        assert_eq!(r, Ok(v.remove(l as usize - 1)));
                        if v.is_empty() {
                            layers.remove(&i);
                        }
                    }
                    _ => assert!(r.is_err()),
                }
            }
            Op::Fixed(i, l, v) => {
                let _ = c.set_component(&s.schema, i, l, s.fixed, &v);
            }
            Op::Var(i, l, ref v) => {
                let _ = c.set_component(&s.schema, i, l, s.var, v);
            }
            Op::Entity(u) => {
                c.add_entity(u);
            }
            Op::Compact => c.compact(),
        }
    }
    for i in 0..4096u16 {
        assert_eq!(c.get_index(i), model[i as usize]);
        assert_eq!(c.layers(i), layers.get(&i).map_or(&[][..], |v| v.as_slice()));
    }
    c
}

fn check_round_trip(c: &Chunk) {
    let s = schema();
    let bytes = c.encode(&s.schema);
    let view = ChunkView::parse(&bytes).expect("encoded chunk parses");
    for i in 0..4096u16 {
        assert_eq!(view.block(i), c.get_index(i));
    }
    for (cell, layers) in c.layered_cells() {
        assert_eq!(view.layers(cell).collect::<Vec<_>>(), layers);
    }
    // The O(1) layer index agrees with the chunk at every cell and layer (and one past).
    let index = view.layer_index();
    for i in 0..4096u16 {
        let want = c.layers(i);
        assert_eq!(index.extra_layers(i) as usize, want.len());
        assert_eq!(index.layers(i).collect::<Vec<_>>(), want);
        assert_eq!(index.block_layer(i, 0), Some(c.get_index(i)));
        for (l, b) in want.iter().enumerate() {
            assert_eq!(index.block_layer(i, l as u32 + 1), Some(*b));
        }
        assert_eq!(index.block_layer(i, want.len() as u32 + 1), None);
    }
    assert_eq!(view.entities(), c.entities());
    let comps = view.components(&s.schema).expect("components validate");
    for (cell, layer, id, v) in c.component_values() {
        assert_eq!(comps.get(cell, layer, id), Some(v));
    }
    let from_view = Chunk::from_view(&view, &s.schema).expect("view converts");
    assert_eq!(&from_view, c);
    let d = Chunk::decode(&bytes, &s.schema).expect("encoded chunk decodes");
    assert_eq!(&d, c, "decode(encode(c)) == c");
    assert_eq!(d.encode(&s.schema), bytes, "encode(decode(x)) == x");
    let mut e = c.clone();
    e.compact();
    assert_eq!(e.encode(&s.schema), bytes, "compaction does not change the encoding");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Palettes of 1..=4096 entries (the fill cycles through `n` distinct ids), then edits.
    #[test]
    fn random_chunks_round_trip(
        n in prop_oneof![Just(1usize), 1usize..20, 1usize..300, Just(4096usize), 3000usize..=4096],
        base in 0u32..900,
        ops in proptest::collection::vec(op(5000), 0..60),
    ) {
        let fill: Vec<u32> = (0..n as u32).map(|i| base + i).collect();
        let c = build(&fill, &ops);
        check_round_trip(&c);
    }

    /// Small block ids so components (blocks 1..=3) are common.
    #[test]
    fn component_heavy_chunks_round_trip(
        fill in proptest::collection::vec(0u32..6, 1..8),
        ops in proptest::collection::vec(op(6), 0..120),
    ) {
        let c = build(&fill, &ops);
        check_round_trip(&c);
    }
}

#[test]
fn palette_grows_and_shrinks_with_repacking() {
    let mut c = Chunk::new(b(0));
    assert_eq!(c.bits_per_block(), 0);
    c.set_index(5, b(10));
    assert_eq!(c.bits_per_block(), 1);
    for i in 0..17u16 {
        c.set_index(i, b(100 + u32::from(i)));
    }
    assert_eq!(c.bits_per_block(), 5);
    for i in 0..17u16 {
        c.set_index(i, b(0));
    }
    // Most of the palette unused: compacted automatically.
    assert!(c.bits_per_block() <= 2, "bits {}", c.bits_per_block());
    assert_eq!(c, Chunk::new(b(0)));
    let s = schema();
    assert_eq!(c.encode(&s.schema), Chunk::new(b(0)).encode(&s.schema));
}

#[test]
fn full_palette_of_4096_then_replacement() {
    let mut c = Chunk::new(b(0));
    for i in 0..4096u16 {
        c.set_index(i, b(u32::from(i) + 1));
    }
    assert_eq!(c.bits_per_block(), 12);
    // Replacing one unique block reuses its slot: 12 bits still suffice.
    c.set_index(7, b(4999));
    assert_eq!(c.bits_per_block(), 12);
    check_round_trip(&c);
}
