//! Opens arbitrary bytes as a block file (recovering when needed) and reads everything:
//! typed errors only, never a panic. Bit 2 of the first byte opens in repair mode (damaged
//! files are refused by default), bit 3 read-only, bit 4 a version 1 signature line (modes 1 and
//! 3).
//!
//! Four modes, by the first byte:
//! - `% 4 == 0`: the whole input as the file (a real block file starts with `t`, 0x74);
//! - `% 4 == 1`: a valid signature line, then the rest of the input;
//! - `% 4 == 2`: the rest of the input, with the CRC-32C of every whole 4 KiB block
//!   recomputed (`docs/format/blockfile.md`: bytes 4092..4096 hold the CRC of 0..4092), so
//!   that mutated blocks still parse and the fuzzer reaches the index and commit-record
//!   parsers and the recovery scan;
//! - `% 4 == 3`: a valid signature line, then the rest, checksums recomputed.
//!
//! Seeds: `fuzz/seeds/blockfile_open/` (a small real store in mode 2, written by
//! `TERRANE_WRITE_FUZZ_SEED=1 cargo test -p terrane-blockfile --test fuzz_seed`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_blockfile::{BLOCK_SIZE, BlockFile, BlockFileOptions};
use terrane_store::{KeyRange, OpenMode, ReadView, Store, StoreConfig};

/// Recomputes the checksum of every whole block (a partial last block is cut at open).
fn reseal(bytes: &mut [u8]) {
    for block in bytes.chunks_exact_mut(BLOCK_SIZE) {
        let crc = crc32c::crc32c(&block[..BLOCK_SIZE - 4]);
        block[BLOCK_SIZE - 4..].copy_from_slice(&crc.to_le_bytes());
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let path =
        std::env::temp_dir().join(format!("terrane-fuzz-blockfile-{}.tbf", std::process::id()));
    let mut bytes = Vec::with_capacity(data.len() + 32);
    match mode % 4 {
        0 => bytes.extend_from_slice(data),
        // Version 2, or version 1 (read, and upgraded by a writer) by bit 4.
        1 | 3 if mode & 16 != 0 => {
            bytes.extend_from_slice(b"terrane-blockfile/1 fuzz\n");
            bytes.extend_from_slice(rest);
        }
        1 | 3 => {
            bytes.extend_from_slice(b"terrane-blockfile/2 fuzz\n");
            bytes.extend_from_slice(rest);
        }
        _ => bytes.extend_from_slice(rest),
    }
    if mode % 4 >= 2 {
        reseal(&mut bytes);
    }
    if std::fs::write(&path, &bytes).is_err() {
        return;
    }
    let config = StoreConfig::new("fuzz").mode(OpenMode::Open).read_only(mode & 8 != 0);
    let options = BlockFileOptions::new().repair(mode & 4 != 0);
    if let Ok(store) = BlockFile::open_with(&path, &config, &options) {
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
