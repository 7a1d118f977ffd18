//! The seed of the `blockfile_open` fuzz target (`fuzz/seeds/blockfile_open/small-store`): a
//! small real store with history (a synced batch, then unsynced overwrites and a delete whose
//! old blocks still parse), prefixed by mode byte 2 (checksums recomputed), so that mutations
//! of it reach the index, commit-record and recovery code.
//!
//! This test checks that the committed seed is what the current format writes; after a
//! format change, regenerate it with
//! `TERRANE_WRITE_FUZZ_SEED=1 cargo test -p terrane-blockfile --test fuzz_seed`.

use std::path::PathBuf;

use terrane_blockfile::BlockFile;
use terrane_store::{Batch, ReadView, Store, StoreConfig, tables};

fn seed_bytes() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seed.tbf");
    {
        // The fuzz target opens its inputs with the signature `fuzz`.
        let s = BlockFile::open(&path, &StoreConfig::new("fuzz")).unwrap();
        let mut b = Batch::new();
        b.put(tables::CHUNK_L0, b"a".to_vec(), 1, vec![1; 100])
            .put(tables::CHUNK_L0, b"b".to_vec(), 1, vec![2; 5000])
            .put(tables::ENTITY, b"c".to_vec(), 1, b"zombie".to_vec());
        s.write(&b.synced()).unwrap();
        let mut b = Batch::new();
        b.put(tables::CHUNK_L0, b"a".to_vec(), 2, vec![3; 50]).delete(tables::ENTITY, b"c");
        s.write(&b).unwrap();
        s.put(tables::WORLD_META, b"m", 1, b"meta").unwrap();
    }
    let mut out = vec![2u8];
    out.extend(std::fs::read(&path).unwrap());
    out
}

#[test]
fn fuzz_seed_is_current() {
    let seed = seed_bytes();
    assert!(seed.len() < 64 * 1024, "the seed is {} bytes", seed.len());
    // The seed is a store that opens cleanly as it is.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.tbf");
    std::fs::write(&copy, &seed[1..]).unwrap();
    let s = BlockFile::open(&copy, &StoreConfig::new("fuzz")).unwrap();
    assert!(!s.recovery().scanned);
    assert_eq!(s.get(tables::CHUNK_L0, b"a").unwrap().unwrap().version, 2);
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds/blockfile_open/small-store");
    if std::env::var_os("TERRANE_WRITE_FUZZ_SEED").is_some() {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, &seed).unwrap();
    } else if let Ok(committed) = std::fs::read(&file) {
        assert!(
            committed == seed,
            "{} is out of date: regenerate it with \
             `TERRANE_WRITE_FUZZ_SEED=1 cargo test -p terrane-blockfile --test fuzz_seed`",
            file.display()
        );
    }
}
