//! Chunk format v1: decode (or start from an empty chunk), apply edits, encode, decode again:
//! never a panic, and the round trip holds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_chunk::{BlockId, Chunk, ComponentId, ComponentKind, Schema};

struct Fixture {
    s: Schema,
    fixed: ComponentId,
    var: ComponentId,
}

/// The schema of the crate's golden tests: block 1 carries a fixed 4-byte component, block 2
/// a variable one, block 3 both; 5000 blocks.
fn fixture() -> &'static Fixture {
    static F: std::sync::OnceLock<Fixture> = std::sync::OnceLock::new();
    F.get_or_init(|| {
        let mut s = Schema::new();
        let fixed = s.add_component("fixed", ComponentKind::Fixed(4)).unwrap();
        let var = s.add_component("var", ComponentKind::Variable).unwrap();
        s.add_block("air", &[]).unwrap();
        s.add_block("fixed", &[fixed]).unwrap();
        s.add_block("var", &[var]).unwrap();
        s.add_block("both", &[fixed, var]).unwrap();
        for i in 4..5000 {
            s.add_block(&format!("b{i}"), &[]).unwrap();
        }
        Fixture { s, fixed, var }
    })
}

fuzz_target!(|data: &[u8]| {
    let Fixture { s, fixed, var } = fixture();
    let (s, fixed, var) = (s, *fixed, *var);
    // `[n_ops] chunk bytes [n_ops × 5 op bytes]`: the edits sit at the end, so a seed made of
    // a zero byte and a golden chunk decodes, and a mutation that appends edits keeps it whole.
    let Some((&n_ops, rest)) = data.split_first() else { return };
    let split = (usize::from(n_ops) * 5).min(rest.len());
    let (bytes, ops) = rest.split_at(rest.len() - split);
    let mut chunk = Chunk::decode(bytes, s).unwrap_or_else(|_| Chunk::new(BlockId(0)));
    for op in ops.chunks_exact(5) {
        let cell = u16::from_le_bytes([op[1], op[2]]) & 0xfff;
        // Half the edits use the few blocks that carry components.
        let raw = u16::from_le_bytes([op[3], op[4]]);
        let block =
            BlockId(if raw & 0x8000 == 0 { u32::from(raw % 6) } else { u32::from(raw) % 5000 });
        let layer = u32::from(op[4] % 4);
        match op[0] % 9 {
            0..=2 => {
                chunk.set_index(cell, block);
            }
            3 => {
                chunk.push_layer(cell, block);
            }
            4 => {
                let _ = chunk.set_layer(cell, layer, block);
            }
            5 => {
                let _ = chunk.remove_layer(cell, layer);
            }
            6 => {
                let id: ComponentId = if op[3] & 1 == 0 { fixed } else { var };
                let len = if id == fixed { 4 } else { usize::from(op[4] % 7) };
                let _ = chunk.set_component(s, cell, layer, id, &op[..len.min(5)]);
            }
            7 => {
                chunk.add_entity([op[1]; 16]);
            }
            _ => chunk.compact(),
        }
    }
    let enc = chunk.encode(s);
    let back = Chunk::decode(&enc, s).expect("encoded chunk decodes");
    assert_eq!(back, chunk, "decode(encode(c)) == c");
    assert_eq!(back.encode(s), enc, "encode(decode(x)) == x");
});
