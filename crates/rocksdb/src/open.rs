//! Opening a store: the directory lock, the signature, one column family per table, and
//! what an open in each mode may find.

use std::collections::BTreeSet;
use std::path::Path;

use rocksdb::{
    Cache, ColumnFamilyDescriptor, DB, DBRecoveryMode, Options, WriteBufferManager, WriteOptions,
};
use terrane_store::lock::{LockMode, lock_path};
use terrane_store::{OpenMode, StoreConfig};

use crate::error::{open_err, rocks_err};
use crate::{Error, Result, RocksOptions, RocksStore, SIGNATURE_KEY};

/// Whether the `default` column family and every column family in `names` hold no key.
fn all_empty(db: &DB, names: &BTreeSet<String>) -> Result<bool> {
    let mut default = db.raw_iterator();
    default.seek_to_first();
    if default.valid() {
        return Ok(false);
    }
    default.status().map_err(rocks_err)?;
    for name in names {
        let Some(cf) = db.cf_handle(name) else { continue };
        let mut it = db.raw_iterator_cf(cf);
        it.seek_to_first();
        if it.valid() {
            return Ok(false);
        }
        it.status().map_err(rocks_err)?;
    }
    Ok(true)
}

impl RocksStore {
    /// Opens (or creates, per `config.mode`) the store in directory `path` with the default
    /// [`RocksOptions`].
    pub fn open(path: impl AsRef<Path>, config: &StoreConfig) -> Result<Self> {
        RocksStore::open_with(path, config, &RocksOptions::default())
    }

    /// Opens (or creates) the store in directory `path`: checks the signature, opens every
    /// existing column family and creates the missing tables of `config`.
    pub fn open_with(
        path: impl AsRef<Path>,
        config: &StoreConfig,
        options: &RocksOptions,
    ) -> Result<Self> {
        config.validate()?;
        options.validate()?;
        let path = path.as_ref();
        let read_only = config.read_only;
        let may_create = !read_only && config.mode != OpenMode::Open;
        if !path.exists() {
            if !may_create {
                return Err(Error::NotFound(path.into()));
            }
            std::fs::create_dir_all(path)?;
        }
        // The lock comes first: nothing below reads or changes the directory while another
        // process has the store open for writing (or, for a writer, open at all).
        let lock = lock_path(path, LockMode::for_read_only(read_only))?;
        let exists = path.join("CURRENT").exists();
        match (config.mode, exists) {
            (OpenMode::Create, true) => return Err(Error::AlreadyExists(path.into())),
            (_, false) if !may_create => return Err(Error::NotFound(path.into())),
            _ => {}
        }
        if !exists && std::fs::read_dir(path)?.next().is_some() {
            if !crate::create::is_unfinished_creation(path)? {
                return Err(Error::NotAStore {
                    backend: "terrane-rocksdb",
                    detail: format!(
                        "{} is a non-empty directory without a RocksDB CURRENT file",
                        path.display()
                    ),
                });
            }
            // A creation killed before RocksDB wrote CURRENT: it holds no data. Start again.
            crate::create::clear(path)?;
        }
        let mut db_opts = Options::default();
        db_opts.create_if_missing(!exists);
        // A new database gets every table at once; an existing one is opened with the column
        // families it has, so a stranger's database is refused below without being changed.
        db_opts.create_missing_column_families(!exists);
        db_opts.set_paranoid_checks(true);
        // A record torn by a crash at the log's tail is dropped (it was never acknowledged as
        // synced); a damaged record before the tail is an error at open. The default
        // (point-in-time recovery) would silently stop replaying there and drop every later,
        // acknowledged batch.
        db_opts.set_wal_recovery_mode(DBRecoveryMode::TolerateCorruptedTailRecords);
        // Logs are deleted once flushed: a MANIFEST cut short (damage, not a crash) would
        // name them again and open without what they held. With the closed logs and their
        // sizes recorded in the MANIFEST, a recorded log that is missing is an error at open
        // (`docs/format/rocksdb-v1.md`, "Crash safety", says what this leaves).
        db_opts.set_track_and_verify_wals_in_manifest(true);
        db_opts.set_max_background_jobs(options.background_jobs);
        // A family that gets few writes (world properties, one key per save) would keep every
        // log alive until RocksDB's own bound (four times all the memtables, over a GiB): past
        // four memtables of logs, the families holding the oldest one are flushed.
        db_opts.set_max_total_wal_size(4 * options.write_buffer_bytes as u64);
        db_opts.set_keep_log_file_num(4);
        if read_only {
            // A read-only open writes nothing into the store's directory: RocksDB's info log
            // (which it would create and rotate there) goes to the temporary directory.
            let logs = std::env::temp_dir().join("terrane-rocksdb-read-only-logs");
            std::fs::create_dir_all(&logs)?;
            db_opts.set_db_log_dir(logs);
        }
        if options.memtables_bytes > 0 {
            db_opts.set_write_buffer_manager(&WriteBufferManager::new_write_buffer_manager(
                options.memtables_bytes,
                false,
            ));
        }
        let cache = Cache::new_lru_cache(options.block_cache_bytes);
        let row_cache =
            (options.row_cache_bytes > 0).then(|| Cache::new_lru_cache(options.row_cache_bytes));
        if let Some(rc) = &row_cache {
            db_opts.set_row_cache(rc);
        }
        let mut names: BTreeSet<String> = BTreeSet::new();
        if exists {
            for cf in DB::list_cf(&db_opts, path).map_err(rocks_err)? {
                if cf != "default" {
                    names.insert(cf);
                }
            }
        } else {
            names.extend(config.tables.iter().cloned());
        }
        // `default` holds the signature alone: memtables of the tables' size. RocksDB's 64 MiB
        // would set the preallocation of the logs (1.1 times the largest memtable; the unused
        // part is given back when a log is closed).
        let mut default_opts = Options::default();
        default_opts.set_write_buffer_size(options.write_buffer_bytes);
        let cfs = std::iter::once(ColumnFamilyDescriptor::new("default", default_opts)).chain(
            names.iter().map(|t| ColumnFamilyDescriptor::new(t, options.cf_options(t, &cache))),
        );
        let mut db = if read_only {
            DB::open_cf_descriptors_read_only(&db_opts, path, cfs, false)
        } else {
            DB::open_cf_descriptors(&db_opts, path, cfs)
        }
        .map_err(|e| open_err(e, path))?;
        let found = db.get(SIGNATURE_KEY).map_err(rocks_err)?;
        match found {
            Some(sig) if sig != config.signature.as_bytes() => {
                return Err(Error::SignatureMismatch {
                    expected: config.signature.clone(),
                    found: String::from_utf8_lossy(&sig).into_owned(),
                });
            }
            Some(_) => {}
            // A database without a signature that holds data is a stranger's. An empty one is
            // a creation cut off before its signature was written (a crash between RocksDB
            // creating its files and the synced signature write): finish it.
            None if exists && !all_empty(&db, &names)? => {
                return Err(Error::NotAStore {
                    backend: "terrane-rocksdb",
                    detail: "a RocksDB database without a terrane signature".into(),
                });
            }
            None if read_only => {
                return Err(Error::NotFound(path.into()));
            }
            None => {
                let mut wo = WriteOptions::default();
                wo.set_sync(true);
                db.put_opt(SIGNATURE_KEY, config.signature.as_bytes(), &wo).map_err(rocks_err)?;
                // The signature is the `default` family's only write: flushed now, it never
                // keeps a write-ahead log (and every later one) alive while the store is open.
                db.flush_opt(&rocksdb::FlushOptions::default()).map_err(rocks_err)?;
            }
        }
        if !read_only {
            for table in &config.tables {
                if names.insert(table.clone()) {
                    db.create_cf(table, &options.cf_options(table, &cache)).map_err(rocks_err)?;
                }
            }
        }
        Ok(RocksStore {
            db,
            path: path.into(),
            signature: config.signature.clone(),
            tables: names,
            read_only,
            write_lock: std::sync::Mutex::new(()),
            _lock: lock,
            _cache: cache,
            row_cache,
            scans_fill_cache: options.scans_fill_cache,
        })
    }
}
