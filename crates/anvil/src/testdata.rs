//! Fixtures for tests (feature `testdata`, for dev-dependencies only): the repository's real
//! regions as Java world folders, shaped for what a test checks. They panic when a fixture
//! cannot be read or written: a broken checkout, not data.

use std::path::{Path, PathBuf};

use terrane_nbt::Tag;

use crate::region::{RegionFile, RegionWriter};

/// The fixture region `rel` (a 1.18+ region, `Status` at the top of each chunk) as a Java
/// world folder in `dir` (`terrane_section::testdata::java_world`), the `n`-th chunk in
/// file order given the generation stage `status(n)`; returns the folder and the chunks'
/// columns within their region (x, z), in that order.
pub fn java_world_with_status(
    dir: &Path,
    rel: &str,
    status: impl Fn(usize) -> &'static str,
) -> (PathBuf, Vec<(i32, i32)>) {
    let java = terrane_section::testdata::java_world(dir, rel);
    let name = Path::new(rel).file_name().expect("a region file's name");
    let path = java.join("region").join(name);
    let file = RegionFile::new(std::fs::read(&path).expect("the fixture")).expect("a region");
    let mut region = RegionWriter::new(0, 0);
    let mut columns = Vec::new();
    for (n, e) in file.entries().enumerate() {
        let raw = file.read(&e).expect("a fixture chunk");
        let (root_name, mut root) = terrane_nbt::from_bytes(&raw.nbt).expect("its NBT");
        if let Tag::Compound(c) = &mut root {
            c.insert("Status", Tag::String(status(n).to_string()));
        }
        let nbt = terrane_nbt::to_bytes(&root_name, &root).expect("NBT it read");
        region.insert(e.index, nbt, e.timestamp);
        columns.push(((e.index % 32) as i32, (e.index / 32) as i32));
    }
    std::fs::write(&path, region.finish().expect("a region").0).expect("writing the fixture");
    (java, columns)
}

/// The fixture region `rel` as a Java world folder with every chunk finished (`Status:
/// minecraft:full`): the real regions hold mostly chunks saved at earlier generation stages,
/// which a conversion leaves out, and a test of what is converted is to see every real block.
pub fn java_world_finished(dir: &Path, rel: &str) -> PathBuf {
    java_world_with_status(dir, rel, |_| "minecraft:full").0
}
