//! Opens arbitrary bytes as a block file (recovering when needed) and reads everything:
//! typed errors only, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_blockfile::BlockFile;
use terrane_store::{KeyRange, OpenMode, ReadView, Store, StoreConfig};

fuzz_target!(|data: &[u8]| {
    let path =
        std::env::temp_dir().join(format!("terrane-fuzz-blockfile-{}.tbf", std::process::id()));
    // Half the inputs get a valid signature line, so the fuzzer reaches blocks and recovery.
    let mut bytes = Vec::with_capacity(data.len() + 32);
    if data.first().is_some_and(|b| b & 1 == 1) {
        bytes.extend_from_slice(b"terrane-blockfile/1 fuzz\n");
        bytes.extend_from_slice(&data[1..]);
    } else {
        bytes.extend_from_slice(data);
    }
    if std::fs::write(&path, &bytes).is_err() {
        return;
    }
    let config = StoreConfig::new("fuzz").mode(OpenMode::Open);
    if let Ok(store) = BlockFile::open(&path, &config) {
        for table in store.tables() {
            if let Ok(scan) = store.scan(&table, KeyRange::all()) {
                for item in scan.take(1000) {
                    if let Ok((k, _)) = item {
                        let _ = store.get(&table, &k);
                    }
                }
            }
        }
        let _ = store.verify();
        let _ = store.put("worldMeta", b"after", 1, b"recovered store accepts writes");
    }
    let _ = std::fs::remove_file(&path);
});
