//! Byte flips and truncations over every file of the test world's database: each variant is
//! a typed error or reads exactly what the world holds; never a panic, never fewer records.
//! (Before the table check, 175 variants panicked inside rusty-leveldb and 2,146 read as an
//! empty world without an error.)

use std::path::{Path, PathBuf};

use terrane_bedrock::convert::column_to_terrane;
use terrane_bedrock::db::ReadDb;
use terrane_bedrock::read::read_db;
use terrane_chunk::Schema;

fn db() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/world/db")
}

/// Opens and reads everything, converting every column: what was read, as text.
fn read(dir: &Path) -> Result<String, String> {
    let mut d = ReadDb::open(dir).map_err(|e| e.to_string())?;
    let mut schema = Schema::new();
    let mut seen = String::new();
    let mut others = String::new();
    read_db(
        &mut d,
        |c| {
            let conv = column_to_terrane(&c, &mut schema, 0)?;
            seen.push_str(&format!("{c:?}{:?}\n", conv.damaged));
            Ok(())
        },
        |k, v| {
            others.push_str(&format!("{k:?}={v:?}\n"));
            Ok(())
        },
    )
    .map_err(|e| e.to_string())?;
    Ok(seen + &others)
}

fn variants(f: &Path) -> Vec<(String, Vec<u8>)> {
    let good = std::fs::read(f).unwrap();
    let mut out = Vec::new();
    let step = (good.len() / 700).max(1);
    for i in (0..good.len()).step_by(step) {
        for mask in [0x01u8, 0x80, 0xFF] {
            let mut b = good.clone();
            b[i] ^= mask;
            out.push((format!("byte {i} ^ {mask:#x}"), b));
        }
    }
    for cut in (0..good.len()).step_by((good.len() / 60).max(1)) {
        out.push((format!("cut at {cut}"), good[..cut].to_vec()));
    }
    out
}

#[test]
fn damaged_databases_read_with_errors_never_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = read(&db()).unwrap();
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for e in std::fs::read_dir(db()).unwrap() {
        let f = e.unwrap().path();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if name == "LOCK" {
            continue;
        }
        for (what, bytes) in variants(&f) {
            let dir = tmp.path().join("db");
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir(&dir).unwrap();
            for g in std::fs::read_dir(db()).unwrap() {
                let g = g.unwrap().path();
                std::fs::copy(&g, dir.join(g.file_name().unwrap())).unwrap();
            }
            std::fs::write(dir.join(&name), &bytes).unwrap();
            let r = std::panic::catch_unwind(|| read(&dir));
            match r {
                // A variant that reads must read exactly what the world holds: a damaged
                // table must never read as fewer records.
                Ok(Ok(got)) => {
                    assert!(got == whole, "{name}: {what}: read, but not what the world holds");
                    *outcomes.entry("read, same records".into()).or_default() += 1
                }
                Ok(Err(_)) => *outcomes.entry("typed error".into()).or_default() += 1,
                Err(_) => panic!("{name}: {what}: the reader panicked"),
            }
        }
    }
    eprintln!("{outcomes:?}");
    assert!(outcomes.get("typed error").copied().unwrap_or(0) > 0, "{outcomes:?}");
}
