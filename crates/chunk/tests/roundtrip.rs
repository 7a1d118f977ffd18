//! Property tests: random chunks round-trip, and the owned chunk agrees with a plain model.

mod common;

use common::{b, schema};
use proptest::prelude::*;
use terrane_chunk::{BlockId, Chunk, ChunkView, ComponentId, Error};

#[derive(Debug, Clone)]
enum Op {
    Set(u16, u32),
    Push(u16, u32),
    SetLayer(u16, u32, u32),
    Remove(u16, u32),
    Fixed(u16, u32, Vec<u8>),
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
        2 => (0u16..64, 0u32..2, prop_oneof![Just(vec![0u8; 4]), proptest::collection::vec(any::<u8>(), 4)])
            .prop_map(|(c, l, v)| Op::Fixed(c, l, v)),
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
    // Component values by (cell, layer, component): a replaced block drops its entry's
    // values, a removed layer takes its values along and moves the higher ones down.
    let mut values: std::collections::BTreeMap<(u16, u32, ComponentId), Vec<u8>> =
        Default::default();
    let drop_entry = |values: &mut std::collections::BTreeMap<_, _>, i: u16, l: u32| {
        values.retain(|&(c, ll, _): &(u16, u32, ComponentId), _: &mut Vec<u8>| (c, ll) != (i, l));
    };
    for o in ops {
        match *o {
            Op::Set(i, x) => {
                assert_eq!(c.set_index(i, b(x)), model[i as usize]);
                if model[i as usize] != b(x) {
                    drop_entry(&mut values, i, 0);
                }
                model[i as usize] = b(x);
            }
            Op::Push(i, x) => {
                c.push_layer(i, b(x));
                layers.entry(i).or_default().push(b(x));
            }
            Op::SetLayer(i, l, x) => {
                let r = c.set_layer(i, l, b(x));
                if l == 0 {
                    if model[i as usize] != b(x) {
                        drop_entry(&mut values, i, 0);
                    }
                    model[i as usize] = b(x);
                    assert!(r.is_ok());
                } else if let Some(v) = layers.get_mut(&i).and_then(|v| v.get_mut(l as usize - 1)) {
                    assert_eq!(r, Ok(*v));
                    if *v != b(x) {
                        drop_entry(&mut values, i, l);
                    }
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
                        drop_entry(&mut values, i, l);
                        let above: Vec<_> =
                            values.keys().filter(|k| k.0 == i && k.1 > l).copied().collect();
                        for k in above {
                            let v = values.remove(&k).unwrap();
                            values.insert((k.0, k.1 - 1, k.2), v);
                        }
                    }
                    _ => assert!(r.is_err()),
                }
            }
            Op::Fixed(i, l, ref v) | Op::Var(i, l, ref v) => {
                let id = if matches!(o, Op::Fixed(..)) { s.fixed } else { s.var };
                let r = c.set_component(&s.schema, i, l, id, v);
                // The entry exists and its block carries the component: 1 fixed, 2 var, 3 both.
                let block = if l == 0 {
                    Some(model[i as usize])
                } else {
                    layers.get(&i).and_then(|v| v.get(l as usize - 1)).copied()
                };
                let carries = match block {
                    Some(BlockId(3)) => true,
                    Some(BlockId(1)) => id == s.fixed,
                    Some(BlockId(2)) => id == s.var,
                    _ => false,
                };
                assert_eq!(r.is_ok(), carries, "{o:?} on {block:?}: {r:?}");
                if carries {
                    if v.iter().all(|&x| x == 0) && (id == s.fixed || v.is_empty()) {
                        values.remove(&(i, l, id));
                    } else {
                        values.insert((i, l, id), v.clone());
                    }
                }
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
    let got: Vec<_> = c.component_values().map(|(i, l, id, v)| ((i, l, id), v.to_vec())).collect();
    assert_eq!(got, values.into_iter().collect::<Vec<_>>(), "component values vs the model");
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

    /// The bulk write equals 4096 `set_index` calls (same blocks, same encoding), from any
    /// start (components included), and the bulk read returns what was written.
    #[test]
    fn bulk_write_and_read_match_cell_by_cell(
        fill in proptest::collection::vec(0u32..6, 1..8),
        ops in proptest::collection::vec(op(6), 0..40),
        n in prop_oneof![Just(1u32), 1u32..20, 200u32..600, Just(4096u32)],
        seed in any::<u64>(),
    ) {
        let start = build(&fill, &ops);
        let mut x = seed | 1;
        let blocks: [BlockId; 4096] = std::array::from_fn(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b((x % u64::from(n)) as u32)
        });
        let mut bulk = start.clone();
        bulk.set_blocks(&blocks);
        let mut one = start.clone();
        for (i, &blk) in blocks.iter().enumerate() {
            one.set_index(i as u16, blk);
        }
        prop_assert_eq!(&bulk, &one);
        let s = schema();
        prop_assert_eq!(bulk.encode(&s.schema), one.encode(&s.schema));
        // The paletted bulk write, from a palette in reverse order with a duplicate of the
        // first id (used by every other cell holding it) and an entry no cell uses.
        let mut palette: Vec<BlockId> = (0..n).rev().map(b).collect();
        palette.push(b(n - 1));
        palette.push(b(n + 7));
        let mut seen = 0u32;
        let indices: [u16; 4096] = std::array::from_fn(|i| {
            let id = blocks[i].0;
            if id == n - 1 {
                seen += 1;
                if seen.is_multiple_of(2) { return n as u16 }
            }
            (n - 1 - id) as u16
        });
        let mut paletted = start.clone();
        let counts = paletted.set_blocks_paletted(&palette, &indices);
        prop_assert_eq!(counts, terrane_chunk::count_indices(&indices, palette.len()));
        prop_assert_eq!(&paletted, &one);
        prop_assert_eq!(paletted.encode(&s.schema), one.encode(&s.schema));
        check_round_trip(&paletted);
        let bytes = bulk.encode(&s.schema);
        let mut read = [b(0); 4096];
        ChunkView::parse(&bytes).unwrap().read_blocks(&mut read);
        prop_assert_eq!(read, blocks);
        check_round_trip(&bulk);
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
    // Edits never shrink the packing on their own (no use counts on the hot path) ...
    assert_eq!(c.bits_per_block(), 5);
    assert_eq!(c, Chunk::new(b(0)));
    let s = schema();
    assert_eq!(c.encode(&s.schema), Chunk::new(b(0)).encode(&s.schema));
    // ... compaction does.
    c.compact();
    assert_eq!((c.bits_per_block(), c.palette()), (0, &[b(0)][..]));
}

#[test]
fn a_full_palette_drops_its_unused_entries_before_widening() {
    let mut c = Chunk::new(b(0));
    for (i, id) in [(0u16, 1u32), (1, 2), (2, 3)] {
        c.set_index(i, b(id));
    }
    assert_eq!((c.bits_per_block(), c.palette()), (2, &[b(0), b(1), b(2), b(3)][..]));
    // Block 2 leaves; the palette is full; a new block takes the room its entry left.
    c.set_index(1, b(0));
    c.set_index(5, b(9));
    assert_eq!((c.bits_per_block(), c.palette()), (3, &[b(0), b(1), b(3), b(9)][..]));
    // The cell being overwritten counts as leaving: its block's entry is dropped too.
    let mut d = Chunk::new(b(0));
    d.set_index(0, b(1));
    d.set_index(0, b(2));
    assert_eq!((d.bits_per_block(), d.palette()), (1, &[b(0), b(2)][..]));
    for x in [&c, &d] {
        check_round_trip(x);
    }
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
