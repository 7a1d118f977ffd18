//! Incremental backups of a terrane object store into a plain folder.
//!
//! # Overview
//!
//! A backup repository ([`Repo`]) is a folder: one manifest per backup, and pack files
//! holding object values ("pieces"), each addressed by its SHA-256 and covered by a CRC-32C.
//! Its format is specified in `docs/format/backup-repo.md`.
//!
//! - [`Repo::backup`] takes one snapshot of a [`Store`](terrane_store::Store) (which goes on
//!   taking writes meanwhile), walks it in key order beside the newest backup's objects and
//!   writes only the values that changed, then publishes a manifest of the changes (puts and
//!   removals). A backup costs what changed, plus one read of the store;
//!   [`Repo::backup_changes`] reads only the objects its caller says changed.
//! - [`Repo::list`] shows the backups; [`Repo::contents`] reads one back
//!   ([`BackupContents::get`], [`BackupContents::keys`]) and
//!   [`BackupContents::restore_into`] makes a store hold exactly it.
//! - Backups and whole restores hold no list of the store's objects: manifests are written
//!   and read as sorted streams, and a backup's chain of manifests is merged as it is read.
//! - [`Repo::verify`] reads every manifest and piece and says which backups restore whole.
//! - [`Repo::prune`] removes backups by a [`Keep`] rule: a removed backup's changes are
//!   folded into the next one first, so no kept backup ever loses an object it needs; the
//!   packs no kept backup needs are deleted, and a pack kept backups need less than half of
//!   is rewritten with only that part.
//!
//! Publication is crash-safe: files are written in `tmp/`, made durable and renamed into
//! place, the manifest last. A backup cut off anywhere is never listed and leaves the other
//! backups as they were; its leftovers are removed by the next backup or prune.
//!
//! # Example
//!
//! ```
//! use terrane_backup::{BackupOptions, Keep, Repo};
//! use terrane_store::{MemStore, ReadView as _, Store as _, StoreConfig};
//!
//! let config = StoreConfig::new("example").table("chunks");
//! let world = MemStore::open(&config)?;
//! world.put("chunks", b"a", 1, b"stone")?;
//! let dir = tempfile::tempdir()?;
//! let repo = Repo::open_or_create(dir.path().join("repo"))?;
//! let first = repo.backup(&world, &BackupOptions { tick: 1, ..Default::default() })?;
//!
//! world.put("chunks", b"b", 2, b"dirt")?;
//! let second = repo.backup(&world, &BackupOptions { tick: 2, ..Default::default() })?;
//! assert_eq!((second.changed, second.removed), (1, 0)); // only "b" was written
//!
//! let restored = MemStore::open(&config)?;
//! repo.contents(first.id)?.restore_into(&restored, false)?;
//! assert!(restored.get("chunks", b"b")?.is_none()); // as it was at tick 1
//! assert!(repo.verify()?.is_clean());
//! repo.prune(&Keep { last: 1, ..Keep::default() }, false)?;
//! assert_eq!(repo.list()?.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! None.
//!
//! # What it does not guarantee
//!
//! - [`Repo::backup`] reads and hashes every object of the store once: its cost in reads is
//!   the store's size, in writes what changed. [`Repo::backup_changes`] reads only the
//!   objects its caller names, and trusts that every change since the newest backup is among
//!   them (a terrane world records them); it reads the newest backup's manifests through
//!   (about 60 bytes an object), not its packs.
//! - A value is written once per key; an equal value under another key is found only among
//!   the last 131,072 values a backup walks past, so far-apart copies may be stored twice.
//! - [`BackupContents::get`] and [`BackupContents::keys`] (an area's restore) index the
//!   backup's objects in memory at their first use: about 200 bytes per object. Verify and
//!   prune hold every manifest whole (verify also the objects of a backup); list holds one
//!   at a time.
//! - A restore with [`BackupContents::restore_into`] writes in batches: cut short, the target
//!   is partly restored (restore again). A world restored whole goes into a new world, which
//!   terrane's facade does not open until the restore completed.
//! - A prune frees space down to half of each pack: a pack whose needed part is half its
//!   size or more stays whole, with its unneeded pieces.
//! - One writer at a time: backups and prunes lock the repository; a second one waits a
//!   quarter second, then fails with `Locked`.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod backup;
mod contents;
mod error;
mod manifest;
mod pack;
mod prune;
mod repack;
mod repo;
mod verify;

pub use backup::{BackupOptions, BackupReport, ChangedKeys};
pub use contents::{BackupContents, RestoreReport};
pub use error::{Error, Result};
pub use manifest::decode_manifest;
pub use pack::decode_pack_record;
pub use prune::{Keep, PruneReport};
pub use repo::{BackupInfo, FORMAT, Repo};
pub use verify::{BackupCheck, VerifyReport};
