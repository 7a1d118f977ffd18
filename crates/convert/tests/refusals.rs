//! What a conversion refuses, and what it does with damaged sources: a destination that
//! holds anything, a folder that is not a world of the source's edition, a `level.dat` that
//! does not read, regions whose columns are damaged. Nothing is ever left half-written.

use std::path::{Path, PathBuf};

use terrane_convert as convert;

fn bedrock_world() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bedrock/tests/data/world")
}

/// The 1.21.1 region of the test data as a Java world folder, every chunk finished.
fn java_world(dir: &Path) -> PathBuf {
    terrane_anvil::testdata::java_world_finished(dir, "anvil/1.21.1/r.0.0.mca")
}

#[test]
fn a_source_of_the_wrong_kind_or_a_destination_without_a_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = dir.path().join("out");
    let e = convert::java_to_bedrock(&empty, &out, &mut |_| {}).unwrap_err();
    assert!(matches!(&e, convert::Error::NoRegionFiles(p) if *p == empty), "{e}");
    let e = convert::bedrock_to_java(&empty, &out, &mut |_| {}).unwrap_err();
    assert!(matches!(&e, convert::Error::NotABedrockWorld(p) if *p == empty), "{e}");
    assert!(e.to_string().contains("not a Bedrock world folder"), "{e}");
    let e = convert::bedrock_to_java(&bedrock_world(), &out.join(".."), &mut |_| {}).unwrap_err();
    assert!(matches!(e, convert::Error::NoFolderName(_)), "{e}");
    assert!(!out.exists());
}

#[test]
fn a_destination_that_holds_anything_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let java = java_world(dir.path());
    let dst = dir.path().join("taken");
    std::fs::create_dir_all(&dst).unwrap();
    std::fs::write(dst.join("notes.txt"), b"mine").unwrap();
    let e = convert::java_to_bedrock(&java, &dst, &mut |_| {}).unwrap_err();
    assert!(matches!(e, convert::Error::Destination { .. }), "{e}");
    assert_eq!(std::fs::read(dst.join("notes.txt")).unwrap(), b"mine");
    let e = convert::bedrock_to_java(&bedrock_world(), &java, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("already holds a Java world"), "{e}");
    // A terrane world (or one being created) by its marker files, as terrane itself says.
    for marker in [terrane_store::file::WORLD_MARKER, terrane_store::file::WORLD_CREATING] {
        std::fs::remove_dir_all(&dst).unwrap();
        std::fs::create_dir_all(&dst).unwrap();
        std::fs::write(dst.join(marker), b"terrane world\nbackend = rocksdb\n").unwrap();
        let e = convert::java_to_bedrock(&java, &dst, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("already holds a terrane world"), "{e}");
    }
    // Nothing half-written beside them.
    let left: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

#[test]
fn damaged_regions_are_named_and_the_rest_converted() {
    let dir = tempfile::tempdir().unwrap();
    let java = java_world(dir.path());
    let r = java.join("region/r.0.0.mca");
    let mut bytes = std::fs::read(&r).unwrap();
    // Garble the first column's compressed data (its sector starts after the 8 KiB header).
    let off = 4096 * u32::from_be_bytes([0, bytes[0], bytes[1], bytes[2]]) as usize;
    for b in &mut bytes[off + 8..off + 64] {
        *b ^= 0x5a;
    }
    std::fs::write(&r, &bytes).unwrap();
    // And a level.dat that does not read: refused, nothing written; told to rebuild it, the
    // conversion says so, never replacing it silently.
    std::fs::write(java.join("level.dat"), b"\x1f\x8b not a level.dat").unwrap();
    let refused = dir.path().join("refused");
    match convert::java_to_bedrock(&java, &refused, &mut |_| {}) {
        Err(convert::Error::DamagedLevelDat(p)) => assert_eq!(p, java.join("level.dat")),
        other => panic!("{other:?}"),
    }
    assert!(!refused.exists());
    let rebuild = convert::ConvertOptions::new().rebuild_level_dat(true);
    let s = convert::java_to_bedrock_with(&java, &dir.path().join("out"), &rebuild, &mut |_| {})
        .unwrap();
    assert_eq!(s.damaged.len(), 2, "{:?}", s.damaged);
    assert!(s.damaged[0].starts_with("level.dat: damaged"), "{:?}", s.damaged);
    assert!(s.damaged[1].contains("r.0.0.mca"), "{:?}", s.damaged);
    assert_eq!(s.columns, 224);

    // Every column damaged: an error naming the source, and no world written.
    let file = terrane_anvil::region::RegionFile::new(bytes.clone()).unwrap();
    // (the first column's is garbled already)
    for e in file.entries().filter(|e| e.index != 0) {
        let off = 4096 * e.sector as usize;
        for b in &mut bytes[off + 8..off + 64] {
            *b ^= 0x5a;
        }
    }
    std::fs::write(&r, &bytes).unwrap();
    let out = dir.path().join("out2");
    match convert::java_to_bedrock_with(&java, &out, &rebuild, &mut |_| {}) {
        Err(convert::Error::NothingConverted { src, damaged }) => {
            assert_eq!((src, damaged.len()), (java.clone(), 225));
        }
        other => panic!("{other:?}"),
    }
    assert!(!out.exists(), "no world is left behind");
}
