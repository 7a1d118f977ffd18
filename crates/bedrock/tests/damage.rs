//! Byte flips and truncations over every file of the test world's database: each variant is
//! a typed error or reads exactly what the world holds; never a panic, never fewer records.
//! (Before the table check, 175 variants panicked inside rusty-leveldb and 2,146 read as an
//! empty world without an error; before the log check, a flipped byte in a log dropped its
//! records without a word.)

use std::path::{Path, PathBuf};

use terrane_bedrock::db::ReadDb;
use terrane_bedrock::mapping::column_to_terrane;
use terrane_bedrock::read::read_db;
use terrane_chunk::Schema;

fn db() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/world/db")
}

/// Opens and reads everything, converting every column: what was read, as text (after the
/// reader's notes, if any).
fn read(dir: &Path) -> Result<String, String> {
    let mut d = ReadDb::open(dir).map_err(|e| e.to_string())?;
    if !d.notes().is_empty() {
        return Ok(format!("noted: {:?}", d.notes()));
    }
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

/// A database whose records are still in its log (Bedrock killed before a compaction): a
/// damaged log record is a typed error or the exact records, never fewer without a word.
#[test]
fn a_damaged_log_is_an_error_or_reads_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    // The test world's records, rewritten into a log by a database that is never compacted.
    let mut records = Vec::new();
    let mut d = ReadDb::open(&db()).unwrap();
    d.for_each(|k, v| {
        records.push((k.to_vec(), v.to_vec()));
        Ok(())
    })
    .unwrap();
    terrane_bedrock::db::write_log_only(&src, &records).unwrap();
    let whole = read(&src).unwrap();
    let log = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "log"))
        .unwrap();
    let name = log.file_name().unwrap().to_owned();
    let mut outcomes = std::collections::BTreeMap::<&str, usize>::new();
    for (what, bytes) in variants(&log) {
        let dir = tmp.path().join("db");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        for g in std::fs::read_dir(&src).unwrap() {
            let g = g.unwrap().path();
            std::fs::copy(&g, dir.join(g.file_name().unwrap())).unwrap();
        }
        std::fs::write(dir.join(&name), &bytes).unwrap();
        match std::panic::catch_unwind(|| read(&dir)) {
            Ok(Ok(got)) if got.starts_with("noted: ") => {
                assert!(what.starts_with("cut"), "log {what}: {got}");
                *outcomes.entry("torn tail, reported").or_default() += 1
            }
            // A log cut exactly between two writes looks like one written up to there:
            // nothing tells it apart (LevelDB's manifest does not record a log's length).
            Ok(Ok(got)) if what.starts_with("cut") && got != whole => {
                *outcomes.entry("cut between writes: the writes before it").or_default() += 1
            }
            Ok(Ok(got)) => {
                assert!(got == whole, "log {what}: read, but not what the world holds");
                *outcomes.entry("read, same records").or_default() += 1
            }
            Ok(Err(_)) => *outcomes.entry("typed error").or_default() += 1,
            Err(_) => panic!("log {what}: the reader panicked"),
        }
    }
    eprintln!("{outcomes:?}");
    assert!(outcomes.get("typed error").copied().unwrap_or(0) > 0, "{outcomes:?}");
}
