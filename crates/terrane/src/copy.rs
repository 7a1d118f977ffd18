//! Copying a whole world between backends: a directory (RocksDB, block file) or a PostgreSQL
//! store, in any direction.

use std::fs;
use std::path::Path;

use terrane_store::{Batch, KeyRange, ReadView, Store};

use crate::backend::{Backend, Handle, connection_string};
use crate::error::{Error, Result, io};
use crate::world::World;
use crate::world_dir;

pub use crate::world_dir::COPYING_KEY;

/// Bytes of values per batch written to the destination: enough to cross a network in few
/// round trips (100 MiB/s at 20 ms), small enough that the batch and the store's copy of it
/// stay a few MiB.
const BATCH_BYTES: usize = 2 << 20;

/// What [`copy_world`] copied.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CopyReport {
    /// Objects copied, over every table.
    pub objects: u64,
    /// Bytes of values copied.
    pub bytes: u64,
}

/// Copies every object of `src` (one consistent snapshot) into a new world at `dest`: a
/// directory (which must not exist or be empty) or a PostgreSQL connection string, of
/// `backend` (default: PostgreSQL for a connection string, else [`Backend::default`]).
/// `progress(objects, bytes)` is called after every batch. The copy is synced before it
/// returns; on failure the new world is removed.
///
/// Until its last batch the new world holds [`COPYING_KEY`] (and a folder stays an
/// unfinished creation): a copy cut off (Ctrl-C, a kill, a power loss) leaves a world that
/// refuses to open ([`Error::CopyUnfinished`]), never part of the source that opens. A folder
/// left so is replaced by the next copy or creation into it.
///
/// ```
/// # fn main() -> terrane::Result<()> {
/// use terrane::{Backend, World, copy::copy_world};
/// let tmp = tempfile::tempdir().unwrap();
/// let src = World::builder().backend(Backend::BlockFile).create(tmp.path().join("a"))?;
/// let report = copy_world(&src, tmp.path().join("b"), Some(Backend::BlockFile), |_, _| {})?;
/// assert!(report.objects > 0); // the schema, at least
/// World::open_read_only(tmp.path().join("b"))?.verify()?;
/// # Ok(()) }
/// ```
pub fn copy_world(
    src: &World,
    dest: impl AsRef<Path>,
    backend: Option<Backend>,
    mut progress: impl FnMut(u64, u64),
) -> Result<CopyReport> {
    let dest = dest.as_ref();
    let mut builder =
        World::builder().schema(src.schema().clone()).one_pass(true).fill(world_dir::Fill::Copy);
    if let Some(b) = backend {
        builder = builder.backend(b);
    }
    let dst = builder.create(dest)?;
    let result = copy_objects(src.store(), dst.store(), &mut progress).and_then(|r| {
        if dst.dir().is_some() {
            world_dir::commit_fill(dest, dst.backend())?;
        }
        dst.close()?;
        Ok(r)
    });
    if result.is_err() && connection_string(dest).is_none() {
        let _ = World::remove(dest);
    }
    result
}

fn copy_objects(
    from: &dyn Store,
    to: &dyn Store,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<CopyReport> {
    let snap = from.snapshot()?;
    let to_tables = to.tables();
    let mut report = CopyReport::default();
    world_dir::Fill::Copy.mark(to, Vec::new())?;
    for table in from.tables() {
        if !to_tables.contains(&table) {
            return Err(Error::CopyTableMissing(table));
        }
        let mut batch = Batch::new();
        let mut pending = 0usize;
        for entry in snap.scan(&table, KeyRange::all())? {
            let (key, object) = entry?;
            pending += object.data.len();
            report.objects += 1;
            report.bytes += object.data.len() as u64;
            batch.put(&table, key, object.version, object.data);
            if pending >= BATCH_BYTES {
                to.write(&std::mem::take(&mut batch))?;
                pending = 0;
                progress(report.objects, report.bytes);
            }
        }
        to.write(&batch)?;
        progress(report.objects, report.bytes);
    }
    world_dir::Fill::Copy.unmark(to)?;
    Ok(report)
}

impl World {
    /// An online, consistent copy of the world into `dest` (which must not exist or be
    /// empty), openable with [`World::open`]: a RocksDB checkpoint (hard links where
    /// possible), or for the block file a copy of a store snapshot into a new file.
    pub fn checkpoint(&self, dest: impl AsRef<Path>) -> Result<()> {
        let dest = dest.as_ref();
        if self.backend == Backend::Memory {
            return Err(Error::BackupInMemory);
        }
        let existed = dest.exists();
        if existed && fs::read_dir(dest).map_err(io(dest))?.next().is_some() {
            return Err(Error::AlreadyExists(dest.to_path_buf()));
        }
        // (With no file backend built in, every match arm below ends the closure.)
        #[allow(unreachable_code)]
        let result = (|| {
            fs::create_dir_all(dest).map_err(io(dest))?;
            match &self.handle {
                #[cfg(feature = "rocksdb")]
                Handle::Rocks(r) => r.checkpoint(dest.join("db"))?,
                #[cfg(feature = "blockfile")]
                Handle::Block(_) => {
                    let target = terrane_blockfile::BlockFile::open(
                        dest.join("world.tbf"),
                        &crate::backend::store_config(crate::backend::Mode::Create, false),
                    )?;
                    copy_store(self.store(), &target)?;
                }
                Handle::Mem(_) => unreachable!("checked above"),
                #[cfg(feature = "postgres")]
                Handle::Pg(_) => {
                    // A directory world of the default backend holding a snapshot's copy.
                    crate::copy::copy_world(self, dest, None, |_, _| {})?;
                    return Ok(());
                }
            }
            world_dir::write_marker(dest, self.backend)
        })();
        if result.is_err() {
            world_dir::discard(dest, existed);
        }
        result
    }

    /// The former name of [`checkpoint`](Self::checkpoint) (a backup in terrane is a
    /// `terrane-backup` repository's: [`World::backup_incremental`]).
    #[deprecated(since = "0.1.1", note = "renamed `checkpoint`")]
    pub fn backup(&self, dest: impl AsRef<Path>) -> Result<()> {
        self.checkpoint(dest)
    }
}

/// Copies every table of a snapshot of `from` into `to` in one synced batch.
#[cfg(feature = "blockfile")]
fn copy_store(from: &dyn Store, to: &dyn Store) -> Result<()> {
    let snap = from.snapshot()?;
    let mut batch = terrane_store::Batch::new();
    for t in from.tables() {
        for e in snap.scan(&t, terrane_store::KeyRange::all())? {
            let (k, o) = e?;
            batch.put(&t, k, o.version, o.data);
        }
    }
    to.write(&batch.synced())?;
    Ok(())
}
