//! Shared test schema.
#![allow(dead_code)]

use terrane_chunk::{BlockId, ComponentId, ComponentKind, Schema};

/// A schema with 5000 blocks; block 1 carries a fixed 4-byte component, block 2 a variable one,
/// block 3 both.
pub struct TestSchema {
    pub schema: Schema,
    pub fixed: ComponentId,
    pub var: ComponentId,
}

pub fn schema() -> TestSchema {
    let mut s = Schema::new();
    let fixed = s.add_component("test:health", ComponentKind::Fixed(4)).unwrap();
    let var = s.add_component("test:text", ComponentKind::Variable).unwrap();
    s.add_block("air", &[]).unwrap();
    s.add_block("chest", &[fixed]).unwrap();
    s.add_block("sign", &[var]).unwrap();
    s.add_block("both", &[var, fixed]).unwrap();
    for i in 4..5000 {
        s.add_block(&format!("block{i}"), &[]).unwrap();
    }
    TestSchema { schema: s, fixed, var }
}

pub fn b(i: u32) -> BlockId {
    BlockId(i)
}

/// Hex dump, 32 bytes per line with the offset, for snapshots.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = format!("{} bytes\n", bytes.len());
    for (i, line) in bytes.chunks(32).enumerate() {
        s.push_str(&format!("{:06x}:", i * 32));
        for (j, b) in line.iter().enumerate() {
            if j % 8 == 0 {
                s.push(' ');
            }
            s.push_str(&format!("{b:02x}"));
        }
        s.push('\n');
    }
    s
}
