//! Reads arbitrary bytes as a backup repository's manifest and as one pack record
//! (terrane-backup): typed errors only, never a panic, and a record that decodes hashes to
//! the SHA-256 its header names. The first byte picks which (even: manifest, odd: record).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode % 2 == 0 {
        let _ = terrane_backup::decode_manifest(rest);
    } else if let Ok(raw) = terrane_backup::decode_pack_record(rest) {
        assert_eq!(raw.len() as u32, u32::from_le_bytes(rest[4..8].try_into().unwrap()));
    }
});
