//! Mojang's LevelDB: the `db/` folder of a Bedrock world, through rusty-leveldb with the two
//! compressions Bedrock adds (`docs/format/bedrock.md`, "The database").
//!
//! Bedrock's fork of LevelDB compresses table blocks with zlib (compression id 2, old
//! worlds) or raw deflate (id 4, every world since 1.2); Snappy (1) is not used. Reading
//! opens a private copy of the folder: opening a LevelDB database replays and rewrites its
//! log, and an import must not change the world it reads.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use flate2::Compression;
use rusty_leveldb::{Compressor, CompressorList, DB, LdbIterator, Options, Status, StatusCode};

use crate::error::{Error, Result};

/// Compression id of zlib table blocks.
pub const ZLIB: u8 = 2;
/// Compression id of raw-deflate table blocks (what Bedrock writes).
pub const RAW_DEFLATE: u8 = 4;

/// A decompressed block may be at most this large (LevelDB blocks are ~4 KiB; Bedrock's
/// up to a few hundred KiB): a bound on what a hostile block can make the reader allocate.
const MAX_BLOCK: u64 = 64 << 20;

struct Deflate {
    zlib: bool,
}

fn corrupt(e: impl std::fmt::Display) -> Status {
    Status::new(StatusCode::Corruption, &e.to_string())
}

impl Compressor for Deflate {
    fn encode(&self, block: Vec<u8>) -> rusty_leveldb::Result<Vec<u8>> {
        let out = Vec::with_capacity(block.len() / 2);
        // Level 3: on real-shaped worlds a converted `db/` 7 % larger than at zlib's default
        // 6, the whole conversion in 0.74 of the time (docs/BENCHMARKS.md, "Whole worlds");
        // the game reads every level alike.
        let level = Compression::new(3);
        if self.zlib {
            let mut e = flate2::write::ZlibEncoder::new(out, level);
            e.write_all(&block).map_err(corrupt)?;
            e.finish().map_err(corrupt)
        } else {
            let mut e = flate2::write::DeflateEncoder::new(out, level);
            e.write_all(&block).map_err(corrupt)?;
            e.finish().map_err(corrupt)
        }
    }

    fn decode(&self, block: Vec<u8>) -> rusty_leveldb::Result<Vec<u8>> {
        let mut out = Vec::with_capacity(block.len() * 4);
        let n = if self.zlib {
            flate2::read::ZlibDecoder::new(&block[..]).take(MAX_BLOCK + 1).read_to_end(&mut out)
        } else {
            flate2::read::DeflateDecoder::new(&block[..]).take(MAX_BLOCK + 1).read_to_end(&mut out)
        };
        match n {
            Ok(n) if n as u64 > MAX_BLOCK => Err(corrupt("a table block inflates past 64 MiB")),
            Ok(_) => {
                // Cached blocks keep their capacity: not four times a well-compressed block.
                out.shrink_to_fit();
                Ok(out)
            }
            Err(e) => Err(corrupt(e)),
        }
    }
}

/// Bytes of records [`WriteDb`] gathers into one LevelDB write (beside LevelDB's own 4 MiB
/// memtable: a write's batch is held twice while it is applied).
pub const BATCH_BYTES: usize = 1 << 20;

/// Tables the database keeps open.
const MAX_OPEN_TABLES: usize = 50;

/// Blocks the database keeps inflated in its cache.
const BLOCK_CACHE_BLOCKS: usize = 4;

fn options(create: bool) -> Options {
    let mut list = CompressorList::new();
    list.set_with_id(0, rusty_leveldb::compressor::NoneCompressor);
    list.set_with_id(1, rusty_leveldb::compressor::SnappyCompressor);
    list.set_with_id(ZLIB, Deflate { zlib: true });
    list.set_with_id(RAW_DEFLATE, Deflate { zlib: false });
    let mut o = Options {
        create_if_missing: create,
        compressor: RAW_DEFLATE,
        compressor_list: Rc::new(list),
        paranoid_checks: true,
        ..Options::default()
    };
    // Bedrock's own settings: 4 MiB write buffer, 160 KiB blocks.
    o.write_buffer_size = 4 << 20;
    o.block_size = 160 << 10;
    // Reads here scan, each block once: a cache of a few blocks, not rusty-leveldb's 25
    // (up to 16 MiB of inflated blocks).
    o.block_cache_capacity_bytes = BLOCK_CACHE_BLOCKS * o.block_size;
    // Open tables keep their index and filter in memory: a bounded number of them, whatever
    // the size of the world (rusty-leveldb's default is about 1,000).
    o.max_open_files = MAX_OPEN_TABLES + 10;
    o
}

fn db_error(path: &Path) -> impl Fn(Status) -> Error + '_ {
    move |s| Error::Db { path: path.to_path_buf(), message: s.to_string() }
}

/// `e` with the paths of the private `copy` of a database folder (in its paths and its
/// message) replaced by the folder it copies, `original`.
fn of_original(e: Error, copy: &Path, original: &Path) -> Error {
    let path = |p: PathBuf| match p.strip_prefix(copy) {
        Ok(rest) => original.join(rest),
        Err(_) => p,
    };
    match e {
        Error::Io { path: p, source } => Error::Io { path: path(p), source },
        Error::Db { path: p, message } => Error::Db {
            path: path(p),
            message: message.replace(&*copy.to_string_lossy(), &original.to_string_lossy()),
        },
        e => e,
    }
}

/// A temporary folder removed when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A Bedrock world's database opened for reading, through a private copy of its `db/`
/// folder (removed when dropped).
pub struct ReadDb {
    db: DB,
    notes: Vec<String>,
    _copy: TempDir,
}

impl ReadDb {
    /// Opens `db_dir` (a world's `db/` folder) by copying it to a temporary folder first.
    pub fn open(db_dir: &Path) -> Result<ReadDb> {
        if !db_dir.join("CURRENT").is_file() {
            return Err(Error::Db {
                path: db_dir.to_path_buf(),
                message: "no CURRENT file: not a LevelDB database".into(),
            });
        }
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let copy = std::env::temp_dir().join(format!("terrane-bedrock-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&copy);
        let guard = TempDir(copy.clone());
        std::fs::create_dir_all(&copy).map_err(|e| Error::Io { path: copy.clone(), source: e })?;
        let rd =
            std::fs::read_dir(db_dir).map_err(|e| Error::Io { path: db_dir.into(), source: e })?;
        for e in rd {
            let e = e.map_err(|e| Error::Io { path: db_dir.into(), source: e })?;
            if e.file_type().is_ok_and(|t| t.is_file()) {
                let from = e.path();
                std::fs::copy(&from, copy.join(e.file_name()))
                    .map_err(|e| Error::Io { path: from.clone(), source: e })?;
            }
        }
        // Errors and notes name the user's folder, never the private copy.
        let named = |e| of_original(e, &copy, db_dir);
        crate::table_check::check_tables(&copy).map_err(named)?;
        let notes = check_logs(&copy)
            .map_err(named)?
            .into_iter()
            .map(|n| n.replace(&*copy.to_string_lossy(), &db_dir.to_string_lossy()))
            .collect();
        let db = DB::open(&copy, options(false)).map_err(db_error(db_dir)).map_err(named)?;
        Ok(ReadDb { db, notes, _copy: guard })
    }

    /// What the checks found and tolerated (a log ending inside its last write), one line
    /// each, for the import's report.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Every live key and value, in key order (the newest entry per key; deleted keys are
    /// left out), passed to `f`.
    pub fn for_each(&mut self, f: impl FnMut(&[u8], &[u8]) -> Result<()>) -> Result<()> {
        self.for_each_prefix(&[], f)
    }

    /// [`for_each`](Self::for_each) over the keys that start with `prefix` only.
    pub fn for_each_prefix(
        &mut self,
        prefix: &[u8],
        mut f: impl FnMut(&[u8], &[u8]) -> Result<()>,
    ) -> Result<()> {
        let mut it = self
            .db
            .new_iter()
            .map_err(|s| Error::Db { path: PathBuf::from("db"), message: s.to_string() })?;
        it.seek(prefix);
        while it.valid() {
            match it.current() {
                Some((k, v)) if k.starts_with(prefix) => f(&k, &v)?,
                _ => break,
            }
            if !it.advance() {
                break;
            }
        }
        Ok(())
    }

    /// The value of `key`, if present.
    pub fn get(&mut self, key: &[u8]) -> Option<Vec<u8>> {
        self.db.get(key).map(|b| b.to_vec())
    }
}

/// Checks every log of a database folder ([`crate::log_check`]); returns a note per torn tail.
fn check_logs(dir: &Path) -> Result<Vec<String>> {
    cut_torn_logs(dir, false)
}

/// Checks every log of a database folder (and with `manifest`, the manifest, in the same
/// format) and cuts a torn tail off: rusty-leveldb would replay part of that incomplete write,
/// or stop on it. Returns a note per torn tail; a damaged log is an error.
fn cut_torn_logs(dir: &Path, manifest: bool) -> Result<Vec<String>> {
    let io = |e| Error::Io { path: dir.to_path_buf(), source: e };
    let mut notes = Vec::new();
    for e in std::fs::read_dir(dir).map_err(io)? {
        let path = e.map_err(io)?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        if !(name.ends_with(".log") || manifest && name.starts_with("MANIFEST-")) {
            continue;
        }
        let bytes =
            std::fs::read(&path).map_err(|e| Error::Io { path: path.clone(), source: e })?;
        match crate::log_check::check_log(&bytes) {
            Ok(crate::log_check::LogEnd::Clean) => {}
            Ok(crate::log_check::LogEnd::Torn { at }) => {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map_err(|e| Error::Io { path: path.clone(), source: e })?;
                f.set_len(at as u64).map_err(|e| Error::Io { path: path.clone(), source: e })?;
                notes.push(format!(
                    "db/{name}: the log ends inside a write (from byte {at} of {}): the game \
                     stopped while writing it; that incomplete write is left out",
                    bytes.len()
                ));
            }
            Err(why) => {
                return Err(Error::Db {
                    path,
                    message: format!("damaged log: {why}; the writes after it cannot be read"),
                });
            }
        }
    }
    Ok(notes)
}

/// A new Bedrock database being written (raw-deflate tables, as Bedrock writes them).
pub struct WriteDb {
    db: DB,
    path: PathBuf,
    batch: rusty_leveldb::WriteBatch,
    batched: usize,
    /// When the last batch was written.
    written: std::time::Instant,
}

impl WriteDb {
    /// The writer of the open database `db` in `db_dir`, nothing pending.
    fn over(db: DB, db_dir: &Path) -> WriteDb {
        WriteDb {
            db,
            path: db_dir.to_path_buf(),
            batch: Default::default(),
            batched: 0,
            written: std::time::Instant::now(),
        }
    }

    /// Creates the database in `db_dir` (created; it must not exist yet).
    pub fn create(db_dir: &Path) -> Result<WriteDb> {
        if db_dir.exists() {
            return Err(Error::Db {
                path: db_dir.to_path_buf(),
                message: "already exists: a new database goes into a new folder".into(),
            });
        }
        let db = DB::open(db_dir, options(true)).map_err(db_error(db_dir))?;
        Ok(WriteDb::over(db, db_dir))
    }

    /// Opens the database in `db_dir` to go on writing it (a conversion interrupted by a
    /// crash: what its last complete batch held is there), or creates it when missing.
    ///
    /// A crash can leave a log (or the manifest, in the same format) ending inside a write:
    /// that incomplete write is cut off first ([`crate::log_check`]), as rusty-leveldb would
    /// otherwise replay part of it (or stop on it). A damaged log is an error: start over.
    pub fn resume(db_dir: &Path) -> Result<WriteDb> {
        cut_torn_logs(db_dir, true)?;
        // rusty-leveldb panics on some damage its own checks miss: that is an error here too.
        let opened = std::panic::catch_unwind(|| DB::open(db_dir, options(true)));
        let db = match opened {
            Ok(r) => r.map_err(db_error(db_dir))?,
            Err(_) => {
                return Err(Error::Db {
                    path: db_dir.to_path_buf(),
                    message: "LevelDB could not recover it".into(),
                });
            }
        };
        Ok(WriteDb::over(db, db_dir))
    }

    /// Whether the database holds `key` (written before this one's pending batch).
    pub fn contains(&mut self, key: &[u8]) -> bool {
        self.db.get(key).is_some()
    }

    /// Adds one record. Records are written in batches, each one LevelDB write (whole or
    /// not at all after a crash): at [`end_group`](Self::end_group) once about 1 MiB is
    /// pending ([`BATCH_BYTES`]), or here past 64 MiB.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.batch.put(key, value);
        self.batched += key.len() + value.len();
        if self.batched >= 64 << 20 {
            self.write_batch()?;
        }
        Ok(())
    }

    /// Ends a group of records that belong together (a column's): they are written in one
    /// batch with the groups before it once about 1 MiB is pending or a second has passed
    /// since the last batch (what a crash loses, and a resumed conversion does again).
    pub fn end_group(&mut self) -> Result<()> {
        if self.batched >= BATCH_BYTES || self.written.elapsed().as_secs() >= 1 {
            self.write_batch()?;
        }
        Ok(())
    }

    fn write_batch(&mut self) -> Result<()> {
        let b = std::mem::take(&mut self.batch);
        self.batched = 0;
        self.written = std::time::Instant::now();
        self.db.write(b, false).map_err(db_error(&self.path))
    }

    /// Writes what is batched, moves the log into tables (as Bedrock leaves a database it
    /// closes), closes, and syncs every file and the folder.
    pub fn finish(mut self) -> Result<()> {
        self.write_batch()?;
        let e = db_error(&self.path);
        self.db.compact_range(&[], &[]).map_err(&e)?;
        self.db.flush().map_err(&e)?;
        self.db.close().map_err(&e)?;
        let io = |e| Error::Io { path: self.path.clone(), source: e };
        for f in std::fs::read_dir(&self.path).map_err(io)? {
            let f = f.map_err(io)?;
            if f.file_type().map_err(io)?.is_file() {
                std::fs::File::open(f.path()).and_then(|f| f.sync_all()).map_err(io)?;
            }
        }
        std::fs::File::open(&self.path).and_then(|d| d.sync_all()).map_err(io)
    }
}

/// Writes `records` into a new database at `db_dir` and leaves them in its log, as a world
/// whose game stopped before LevelDB compacted it (for tests of damaged logs).
#[doc(hidden)]
pub fn write_log_only(db_dir: &Path, records: &[(Vec<u8>, Vec<u8>)]) -> Result<()> {
    let mut w = WriteDb::create(db_dir)?;
    for (k, v) in records {
        w.batch.put(k, v);
    }
    w.write_batch()?;
    let e = db_error(db_dir);
    w.db.flush().map_err(&e)?;
    w.db.close().map_err(&e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_inflating_past_64_mib_is_damage_not_an_allocation() {
        for zlib in [false, true] {
            let c = Deflate { zlib };
            let small = c.encode(vec![7u8; 100_000]).unwrap();
            assert_eq!(c.decode(small).unwrap(), vec![7u8; 100_000]);
            let bomb = c.encode(vec![0u8; (MAX_BLOCK + 1) as usize]).unwrap();
            assert!(bomb.len() < 1 << 20);
            let e = c.decode(bomb).unwrap_err();
            assert!(e.to_string().contains("64 MiB"), "{e}");
        }
    }

    #[test]
    fn a_new_database_goes_into_a_new_folder() {
        let dir = tempfile::tempdir().unwrap();
        let e = WriteDb::create(dir.path()).err().expect("an existing folder is refused");
        assert!(e.to_string().contains("already exists"), "{e}");
        let w = WriteDb::create(&dir.path().join("db")).unwrap();
        w.finish().unwrap();
        assert!(dir.path().join("db/CURRENT").is_file());
    }

    /// Groups are written once [`BATCH_BYTES`] are pending or a second has passed: what a
    /// crash can lose.
    #[test]
    fn groups_are_written_by_size_or_after_a_second() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WriteDb::create(&dir.path().join("db")).unwrap();
        w.put(b"a", b"small").unwrap();
        w.end_group().unwrap();
        assert!(!w.contains(b"a"), "a small group waits for more");
        w.put(b"b", &vec![7; BATCH_BYTES]).unwrap();
        w.end_group().unwrap();
        assert!(w.contains(b"a") && w.contains(b"b"), "a full batch is written");
        w.put(b"c", b"small").unwrap();
        w.end_group().unwrap();
        assert!(!w.contains(b"c"));
        std::thread::sleep(std::time::Duration::from_millis(1100));
        w.put(b"d", b"small").unwrap();
        w.end_group().unwrap();
        assert!(w.contains(b"c") && w.contains(b"d"), "a second later, the groups are written");
    }
}
