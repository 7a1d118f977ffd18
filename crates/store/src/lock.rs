//! One process writes a store at a time: the advisory lock every file backend takes.
//!
//! A backend that keeps a store in files locks the store's own file (the block file) or
//! directory (RocksDB's) with the operating system's advisory lock (`flock` on Unix), through
//! [`std::fs::File::try_lock`]:
//!
//! - a **writer** takes it exclusively, at open, for the life of the store;
//! - a **reader** ([`StoreConfig::read_only`](crate::StoreConfig::read_only)) takes it shared:
//!   readers open beside each other, never beside a writer, so a read never sees a store that
//!   another process is changing (no torn reads, nothing to retry);
//! - the kernel releases it when the process exits or is killed: a crash never leaves a stale
//!   lock behind, and the next open succeeds at once.
//!
//! A refused open is [`Error::Locked`], naming the path and, on Linux, the process that holds
//! the lock (read from `/proc/locks`).
//!
//! ```
//! use terrane_store::{Error, lock::{LockMode, lock_path}};
//!
//! let dir = tempfile::tempdir()?;
//! let writer = lock_path(dir.path(), LockMode::Exclusive)?;
//! match lock_path(dir.path(), LockMode::Shared) {
//!     Err(Error::Locked { holder, .. }) => assert_eq!(holder, Some(std::process::id())),
//!     other => panic!("expected Locked, got {other:?}"),
//! }
//! drop(writer);
//! let _reader = lock_path(dir.path(), LockMode::Shared)?;
//! let _another_reader = lock_path(dir.path(), LockMode::Shared)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::{File, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::{Error, Result};

/// How a store is locked.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LockMode {
    /// A writer: nobody else may open the store.
    Exclusive,
    /// A reader: other readers may open the store, writers may not.
    Shared,
}

impl LockMode {
    /// The mode for a store opened with `read_only`.
    pub fn for_read_only(read_only: bool) -> Self {
        if read_only { LockMode::Shared } else { LockMode::Exclusive }
    }
}

/// How long [`lock_file`] waits for a lock that is held only for a moment.
///
/// A process that starts a program copies its open files into the child between `fork` and
/// `exec` (std closes them at `exec`); for that moment the child holds a copy of every lock.
/// A store closed by one thread while another starts a process can therefore look locked for
/// a few milliseconds. A real second writer holds its lock far longer.
pub const LOCK_GRACE: Duration = Duration::from_millis(250);

/// Locks an open file (or directory) `file`, found at `path`: at once when it is free, else
/// [`Error::Locked`] once it stayed locked for [`LOCK_GRACE`]. The lock lasts as long as
/// `file` (and every handle cloned from it) stays open.
pub fn lock_file(file: &File, path: &Path, mode: LockMode) -> Result<()> {
    let deadline = Instant::now() + LOCK_GRACE;
    loop {
        let result = match mode {
            LockMode::Exclusive => file.try_lock(),
            LockMode::Shared => file.try_lock_shared(),
        };
        match result {
            Ok(()) => return Ok(()),
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(TryLockError::WouldBlock) => {
                return Err(Error::Locked { path: path.to_path_buf(), holder: holder(file) });
            }
            Err(TryLockError::Error(e)) => {
                return Err(Error::Io(std::io::Error::new(
                    e.kind(),
                    format!("locking {}: {e}", path.display()),
                )));
            }
        }
    }
}

/// Opens `path` (a file or a directory) for reading and locks it: the returned handle holds
/// the lock until it is dropped.
pub fn lock_path(path: &Path, mode: LockMode) -> Result<File> {
    let file = File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound(path.to_path_buf()),
        _ => Error::Io(std::io::Error::new(e.kind(), format!("opening {}: {e}", path.display()))),
    })?;
    lock_file(&file, path, mode)?;
    Ok(file)
}

/// The process holding a lock on `file`, from `/proc/locks` (Linux); `None` elsewhere or when
/// it cannot tell.
fn holder(file: &File) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = file.metadata().ok()?;
        let dev = meta.dev();
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
        let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
        let id = format!("{major:02x}:{minor:02x}:{}", meta.ino());
        let locks = std::fs::read_to_string("/proc/locks").ok()?;
        parse_proc_locks(&locks, &id)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

/// The pid of the first `FLOCK` line of `/proc/locks` on the file `id` (`major:minor:inode`,
/// the device numbers in hex).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn parse_proc_locks(locks: &str, id: &str) -> Option<u32> {
    locks.lines().find_map(|line| {
        // "1: FLOCK  ADVISORY  WRITE 2310 00:1f:1234 0 EOF"; blocked waiters carry "->".
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) != Some(&"FLOCK") || fields.contains(&"->") {
            return None;
        }
        let (pid, file) = (fields.get(4)?, fields.get(5)?);
        if !file.eq_ignore_ascii_case(id) {
            return None;
        }
        pid.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_locks_lines_name_the_holder_of_the_file() {
        let text = "1: POSIX  ADVISORY  WRITE 77 08:01:42 0 EOF\n\
                    2: FLOCK  ADVISORY  WRITE 4242 08:01:42 0 EOF\n\
                    3: FLOCK  ADVISORY  READ 99 08:01:43 0 EOF\n";
        assert_eq!(parse_proc_locks(text, "08:01:42"), Some(4242));
        assert_eq!(parse_proc_locks(text, "08:01:43"), Some(99));
        assert_eq!(parse_proc_locks(text, "08:01:44"), None);
    }

    #[test]
    fn a_lock_released_within_the_grace_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let held = lock_path(dir.path(), LockMode::Exclusive).unwrap();
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(LOCK_GRACE / 5);
            drop(held);
        });
        lock_path(dir.path(), LockMode::Exclusive).expect("the lock was free within the grace");
        releaser.join().unwrap();
    }

    #[test]
    fn writers_exclude_everyone_and_readers_share() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store");
        std::fs::write(&path, b"x").unwrap();
        let w = lock_path(&path, LockMode::Exclusive).unwrap();
        for mode in [LockMode::Exclusive, LockMode::Shared] {
            let err = lock_path(&path, mode).unwrap_err();
            assert!(matches!(err, Error::Locked { .. }), "{err}");
            assert!(err.to_string().contains("already open in this process"), "{err}");
        }
        drop(w);
        let r1 = lock_path(&path, LockMode::Shared).unwrap();
        let _r2 = lock_path(&path, LockMode::Shared).unwrap();
        assert!(matches!(lock_path(&path, LockMode::Exclusive), Err(Error::Locked { .. })));
        drop(r1);
        assert!(matches!(
            lock_path(&dir.path().join("missing"), LockMode::Shared),
            Err(Error::NotFound(_))
        ));
    }
}
