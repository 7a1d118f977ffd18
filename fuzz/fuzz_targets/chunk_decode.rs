//! Chunk format v1 decoding: any bytes either fail with a typed error or give a view whose
//! every accessor works, and an accepted chunk (always canonical) re-encodes to the same bytes;
//! the one-pass bulk read (`ChunkView::parse_blocks`) agrees with `parse` on every input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_chunk::{BlockId, Chunk, ChunkView, ComponentKind, Schema};

/// The schema of the crate's golden tests (so its snapshots make a seed corpus): block 1
/// carries a fixed 4-byte component, block 2 a variable one, block 3 both; 5000 blocks.
fn schema() -> &'static Schema {
    static SCHEMA: std::sync::OnceLock<Schema> = std::sync::OnceLock::new();
    SCHEMA.get_or_init(|| {
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
        s
    })
}

fuzz_target!(|data: &[u8]| {
    // The one-pass bulk read accepts and rejects exactly what `parse` does.
    let mut bulk = [BlockId(u32::MAX); 4096];
    let fused = ChunkView::parse_blocks(data, &mut bulk).map(|_| ());
    let view = match ChunkView::parse(data) {
        Ok(view) => view,
        Err(e) => {
            assert_eq!(fused, Err(e), "parse_blocks and parse disagree");
            return;
        }
    };
    assert_eq!(fused, Ok(()), "parse_blocks refused what parse accepted");
    let mut n = 0;
    view.for_each_block(|i, b| {
        assert_eq!(view.block(i), b);
        assert_eq!(bulk[usize::from(i)], b, "parse_blocks read cell {i}");
        n += 1;
    });
    assert_eq!(n, 4096);
    assert_eq!(view.layer_records().count(), view.layered_block_count());
    for r in view.layer_records().take(64) {
        assert_eq!(view.block_layer(r.cell, r.layer), Some(r.block));
    }
    let _ = view.entities().len();
    let schema = schema();
    let Ok(comps) = view.components(schema) else { return };
    for id in comps.ids() {
        for (cell, layer, v) in comps.values(id).take(64) {
            assert_eq!(comps.get(cell, layer, id), Some(v));
        }
    }
    let chunk = Chunk::decode(data, schema).expect("view and components valid: decode succeeds");
    assert_eq!(chunk.encode(schema), data, "accepted input is canonical");
});
