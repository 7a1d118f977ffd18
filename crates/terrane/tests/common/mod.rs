//! Helpers shared by the facade's tests: fixtures shaped for what a test checks.

use std::path::Path;

/// Sets the `Status` of every chunk of the world's region `r.0.0.mca`, the `n`-th in file
/// order to `status(n)`; returns the chunks' columns in that order.
pub fn set_status(java: &Path, status: impl Fn(usize) -> &'static str) -> Vec<(i32, i32)> {
    use terrane::anvil::region::{RegionFile, RegionWriter};
    use terrane::nbt::Tag;
    let path = java.join("region/r.0.0.mca");
    let file = RegionFile::new(std::fs::read(&path).unwrap()).unwrap();
    let mut region = RegionWriter::new(0, 0);
    let mut columns = Vec::new();
    for (n, e) in file.entries().enumerate() {
        let raw = file.read(&e).unwrap();
        let (name, mut root) = terrane::nbt::from_bytes(&raw.nbt).unwrap();
        if let Tag::Compound(c) = &mut root {
            c.insert("Status", Tag::String(status(n).to_string()));
        }
        region.insert(e.index, terrane::nbt::to_bytes(&name, &root).unwrap(), e.timestamp);
        columns.push(((e.index % 32) as i32, (e.index / 32) as i32));
    }
    std::fs::write(&path, region.finish().unwrap().0).unwrap();
    columns
}
