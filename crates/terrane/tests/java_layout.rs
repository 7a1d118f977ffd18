//! Java world folders in Minecraft 26.1's layout (`testdata/java-worlds/26.1-layout`, made
//! from the region fixtures by the published layout rules): every dimension found where 26.1
//! keeps it, a datapack dimension recorded by name, the players' files kept, and exports that
//! write the layout of the world's version unless told another.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use terrane::anvil::region::{Compression, RegionFile};
use terrane::export::Overwrite;
use terrane::java::{self, JavaLayout};
use terrane::{Backend, World};

fn world_26_1() -> PathBuf {
    terrane_section::testdata::fixture("java-worlds/26.1-layout")
}

/// Every file under `dir`, relative, with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Every chunk as its blocks' names, by dimension and position.
fn chunks(w: &World) -> BTreeMap<(u64, terrane::ChunkPos), Vec<String>> {
    let names: Vec<&str> = w.schema().blocks().names().collect();
    let mut out = BTreeMap::new();
    for ((dim, pos), (_, bytes)) in w.tiered().all_chunks().unwrap() {
        let v = terrane::ChunkView::parse(&bytes).unwrap();
        out.insert(
            (dim, pos),
            (0..4096u16).map(|i| names[v.block(i).0 as usize].to_string()).collect(),
        );
    }
    out
}

fn import(dir: &Path, java: &Path) -> (World, java::JavaImportSummary) {
    let mut w = World::builder().backend(Backend::Memory).create(dir).unwrap();
    let s = java::import_java_world(&mut w, java, &mut |_, _| {}).unwrap();
    (w, s)
}

#[test]
fn a_26_1_world_imports_every_dimension_and_its_players() {
    let dir = tempfile::tempdir().unwrap();
    let (w, s) = import(&dir.path().join("w"), &world_26_1());
    assert_eq!(s.layout, Some(JavaLayout::Dimensions));
    let dims: Vec<(u64, &str)> =
        s.dimensions.iter().map(|(d, _)| (d.id, d.name.as_str())).collect();
    assert_eq!(dims, [(0, "overworld"), (1, "the_nether"), (3, "terrane:mining")]);
    assert!(s.dimensions.iter().all(|(_, s)| s.columns > 0), "{:?}", s.dimensions);
    assert_eq!(s.players, 3);
    assert!(s.level_dat);
    assert_eq!(java::recorded_dimensions(&w).unwrap(), [("terrane:mining".to_string(), 3)]);
    assert!(java::data_version(&w).unwrap().unwrap() >= java::DIMENSIONS_DATA_VERSION);
    // A second import of the same world (resumed) gives the datapack dimension the same id.
    let mut w = w;
    let again = java::import_java_world(&mut w, &world_26_1(), &mut |_, _| {}).unwrap();
    assert_eq!(again.dimensions[2].0.id, 3);
    assert_eq!(again.total().columns, 0, "every column was there already");
}

#[test]
fn exports_keep_the_26_1_layout_or_write_the_classic_one_when_told() {
    let dir = tempfile::tempdir().unwrap();
    let (w, _) = import(&dir.path().join("w"), &world_26_1());
    let before = chunks(&w);
    let src = files(&world_26_1());

    let same = dir.path().join("same");
    let s = java::export_java_world(&w, &same, Overwrite::Refuse, &mut |_, _| {}).unwrap();
    assert_eq!(s.layout, Some(JavaLayout::Dimensions));
    assert_eq!(s.players, 3);
    let out = files(&same);
    assert_eq!(out.keys().collect::<Vec<_>>(), src.keys().collect::<Vec<_>>(), "the same files");
    for f in ["level.dat", "players/data/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0.dat"] {
        assert_eq!(out[Path::new(f)], src[Path::new(f)], "{f} byte for byte");
    }
    assert_eq!(chunks(&import(&dir.path().join("a"), &same).0), before);

    // Classic, and its chunks LZ4-compressed (a server's `region-file-compression=lz4`): the
    // same world reads back.
    let classic = dir.path().join("classic");
    let (layout, lz4) = (JavaLayout::Classic, Compression::Lz4);
    java::export_java_world_in(&w, &classic, layout, lz4, Overwrite::Refuse, &mut |_, _| {})
        .unwrap();
    let region = RegionFile::new(std::fs::read(classic.join("region/r.0.0.mca")).unwrap()).unwrap();
    let first = region.read(&region.entries().next().unwrap()).unwrap();
    assert_eq!(first.compression, Compression::Lz4);
    for f in [
        "region/r.0.0.mca",
        "DIM-1/region/r.-3.-2.mca",
        "dimensions/terrane/mining/region/r.-1.-1.mca",
        "playerdata/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0.dat",
        "stats/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0.json",
        "advancements/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0.json",
    ] {
        assert!(classic.join(f).is_file(), "{f}");
    }
    assert!(!classic.join("dimensions/minecraft").exists());
    let (back, s) = import(&dir.path().join("b"), &classic);
    assert_eq!(s.layout, Some(JavaLayout::Classic));
    assert_eq!(chunks(&back), before);
}

#[test]
fn a_classic_world_exports_classic_unless_told() {
    let dir = tempfile::tempdir().unwrap();
    let java = terrane_section::testdata::java_world(dir.path(), "anvil/1.21.1/r.0.0.mca");
    let (w, s) = import(&dir.path().join("w"), &java);
    assert_eq!(s.layout, Some(JavaLayout::Classic));
    let out = dir.path().join("out");
    java::export_java_world(&w, &out, Overwrite::Refuse, &mut |_, _| {}).unwrap();
    assert!(out.join("region/r.0.0.mca").is_file());
    let new = dir.path().join("new");
    let (layout, zlib) = (JavaLayout::Dimensions, Compression::Zlib);
    java::export_java_world_in(&w, &new, layout, zlib, Overwrite::Refuse, &mut |_, _| {}).unwrap();
    assert!(new.join("dimensions/minecraft/overworld/region/r.0.0.mca").is_file());
    assert!(!new.join("region").exists());
}

#[test]
fn a_26_1_world_converts_to_bedrock_and_names_what_it_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bedrock");
    let s = terrane::convert::java_to_bedrock(&world_26_1(), &out, &mut |_| {}).unwrap();
    assert_eq!(s.per_dimension.keys().copied().collect::<Vec<_>>(), [0, 1]);
    assert_eq!(s.skipped_dimensions, ["terrane:mining"]);
}
