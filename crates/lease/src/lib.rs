//! Leased areas for voxel worlds shared by several game servers: who owns which area, at which
//! epoch, until when, and saves fenced by it.
//!
//! # Overview
//!
//! - An [`AreaId`] is 16 × 16 chunk columns (256 × 256 blocks, every height): the L2 column of
//!   the storage levels, whose keys are one contiguous range.
//! - A [`Lease`] object per area lives in the world's own store (`worldMeta`, key
//!   `lease:` ‖ area): the owning server, an epoch that only grows (the object's store
//!   version) and an expiry. [`Leases`] acquires, renews, releases and takes over expired
//!   leases; every change is one store batch whose precondition is the version it read, so
//!   two servers racing for an area cannot both win.
//! - [`fence`] turns the leases a server holds into store preconditions ("area A is
//!   still mine at epoch E"); a batch carrying them is refused whole
//!   ([`terrane_store::Error::PreconditionFailed`]) once another server has taken one of the
//!   areas over, whatever the first server's clock says. `TieredStore::set_fence` puts them on
//!   every tick save and tier move.
//! - [`LeaseKeeper`]: the leases one server holds, renewed as it ticks; after a refused save
//!   it names the areas lost, which the server must stop ticking.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use terrane_lease::{AreaId, Leases, fence};
//! use terrane_store::{Batch, MemStore, Store, tables};
//!
//! let world = Arc::new(MemStore::new());
//! let a = Leases::new(Arc::clone(&world), "server-a", 10_000)?;
//! let b = Leases::new(Arc::clone(&world), "server-b", 10_000)?;
//! let area = AreaId::new(0, 0);
//! let lease = a.acquire(area, 1_000)?;                 // epoch 1, until 11 000 ms
//! assert!(b.acquire(area, 2_000).is_err());            // held
//! let mut save = Batch::new();
//! fence(&mut save, [&lease]);
//! save.put(tables::CHUNK_L0, b"chunk".to_vec(), 1, b"a's blocks".to_vec());
//! world.write(&save)?;                                 // a's save, fenced, applies
//! let taken = b.acquire(area, 20_000)?;                // a paused past its expiry
//! assert_eq!(taken.epoch, 2);
//! assert!(world.write(&save).is_err());                // a's stale save is refused whole
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! None.
//!
//! # What it does not guarantee
//!
//! - Expiry is judged by each server's clock (milliseconds since the Unix epoch, passed in):
//!   clocks that disagree by more than a lease's time to live can let a server take over an
//!   area its owner still believes live. The fence still holds: the old owner's saves are
//!   refused from the takeover on, so nothing is written twice; it only stops ticking late.
//! - Leases do not move players or entities between areas; hand-offs are a batch of their own
//!   fenced on both areas.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod keeper;
mod record;

use terrane_store::{Batch, Error as StoreError, Precondition, Store, tables};

pub use keeper::{LeaseKeeper, Renewal};
pub use record::{KEY_PREFIX, Lease, MAX_SERVER_ID, area_of_lease_key, decode, lease_key};
pub use terrane_section::AreaId;

/// Everything a lease operation can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeaseError {
    /// Another server holds the area and its lease has not expired.
    #[error("area ({}, {}) is held by {owner} until {expires_ms} ms (epoch {epoch}): wait for its expiry or its release", area.x, area.z)]
    Held {
        /// The area.
        area: AreaId,
        /// Its owner.
        owner: String,
        /// Its epoch.
        epoch: i64,
        /// Its expiry.
        expires_ms: u64,
    },
    /// The lease changed since it was read: another server took the area over (or renewed it
    /// first). The caller no longer owns the area and must stop writing it.
    #[error("area ({}, {}) was taken over (the lease is no longer at epoch {epoch}): stop ticking it", area.x, area.z)]
    Lost {
        /// The area.
        area: AreaId,
        /// The epoch the caller held.
        epoch: i64,
    },
    /// A lease record that does not decode.
    #[error("lease record of area ({}, {}) is damaged: {detail}", area.x, area.z)]
    Corrupt {
        /// The area.
        area: AreaId,
        /// What is wrong.
        detail: String,
    },
    /// A server id that is empty, longer than [`MAX_SERVER_ID`] bytes, or not printable ASCII.
    #[error("invalid server id {0:?}: use 1 to 64 printable ASCII characters")]
    InvalidServerId(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A `Result` with [`LeaseError`].
pub type Result<T, E = LeaseError> = std::result::Result<T, E>;

/// Adds "each of `leases` is still at its epoch" to `batch`: it applies whole only while every
/// area is still the holder's.
pub fn fence<'a>(batch: &mut Batch, leases: impl IntoIterator<Item = &'a Lease>) {
    for p in preconditions(leases) {
        batch.expect(&p.table, p.key, p.version);
    }
}

/// The preconditions of holding `leases` (for `TieredStore::set_fence`, which puts them on
/// every tick save and tier move).
pub fn preconditions<'a>(leases: impl IntoIterator<Item = &'a Lease>) -> Vec<Precondition> {
    leases
        .into_iter()
        .map(|l| Precondition {
            table: tables::WORLD_META.to_string(),
            key: lease_key(l.area),
            version: Some(l.epoch),
        })
        .collect()
}

/// "`area`'s lease is still at `epoch`" (`None`: the area was never leased) as a store
/// precondition: the fence of a hand-off into an area, taken from [`Leases::epoch_of`].
pub fn area_precondition(area: AreaId, epoch: Option<i64>) -> Precondition {
    Precondition { table: tables::WORLD_META.to_string(), key: lease_key(area), version: epoch }
}

/// One server's view of the lease table of a world's store.
#[derive(Debug)]
pub struct Leases<S> {
    store: S,
    server: String,
    ttl_ms: u64,
}

impl<S: Store> Leases<S> {
    /// Leases taken by `server` for `ttl_ms` milliseconds at a time, in `store`.
    pub fn new(store: S, server: &str, ttl_ms: u64) -> Result<Self> {
        if server.is_empty()
            || server.len() > MAX_SERVER_ID
            || !server.bytes().all(|b| (0x21..0x7f).contains(&b))
        {
            return Err(LeaseError::InvalidServerId(server.to_string()));
        }
        Ok(Leases { store, server: server.to_string(), ttl_ms })
    }

    /// This server's id.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// How long a lease lasts after each acquire or renewal, in milliseconds.
    pub fn ttl_ms(&self) -> u64 {
        self.ttl_ms
    }

    /// The lease of `area`, if it was ever taken.
    pub fn get(&self, area: AreaId) -> Result<Option<Lease>> {
        match self.store.get(tables::WORLD_META, &lease_key(area))? {
            Some(o) => Ok(Some(decode(area, o.version, &o.data)?)),
            None => Ok(None),
        }
    }

    /// The epoch of `area`'s lease (`None`: never leased), for [`area_precondition`].
    pub fn epoch_of(&self, area: AreaId) -> Result<Option<i64>> {
        Ok(self.get(area)?.map(|l| l.epoch))
    }

    /// Every lease of the world, in area order.
    pub fn all(&self) -> Result<Vec<Lease>> {
        let mut out = Vec::new();
        for e in self.store.scan_prefix(tables::WORLD_META, KEY_PREFIX)? {
            let (k, o) = e?;
            let Some(area) = area_of_lease_key(&k) else { continue };
            out.push(decode(area, o.version, &o.data)?);
        }
        Ok(out)
    }

    /// Takes `area` at `now_ms`: when it was never taken, was released, has expired, or is
    /// already this server's (then it is renewed at the same epoch). A change of owner raises
    /// the epoch by one. Fails with [`LeaseError::Held`] while another server's lease lives,
    /// and [`LeaseError::Lost`] when another server changed the lease meanwhile.
    pub fn acquire(&self, area: AreaId, now_ms: u64) -> Result<Lease> {
        let current = self.get(area)?;
        let epoch = match &current {
            Some(l) if l.owner == self.server && l.is_live(now_ms) => l.epoch,
            Some(l) if l.is_live(now_ms) => {
                return Err(LeaseError::Held {
                    area,
                    owner: l.owner.clone(),
                    epoch: l.epoch,
                    expires_ms: l.expires_ms,
                });
            }
            Some(l) => l.epoch + 1,
            None => 1,
        };
        self.write(area, current.map(|l| l.epoch), epoch, now_ms.saturating_add(self.ttl_ms))
    }

    /// Extends this server's lease from `now_ms` (same epoch). [`LeaseError::Lost`] when the
    /// area was taken over: stop writing it.
    pub fn renew(&self, lease: &Lease, now_ms: u64) -> Result<Lease> {
        self.write(lease.area, Some(lease.epoch), lease.epoch, now_ms.saturating_add(self.ttl_ms))
    }

    /// Gives the area up at once (same epoch, expired): another server may take it.
    pub fn release(&self, lease: &Lease) -> Result<()> {
        self.write(lease.area, Some(lease.epoch), lease.epoch, 0).map(|_| ())
    }

    /// Adds the release of `lease` to `batch` instead of writing it: an area handed over
    /// together with its last save, in one atomic batch (`TickSave::append`). The batch
    /// fails whole if the area was taken over meanwhile.
    pub fn release_into(&self, lease: &Lease, batch: &mut Batch) {
        let key = lease_key(lease.area);
        batch.expect(tables::WORLD_META, key.clone(), Some(lease.epoch)).put(
            tables::WORLD_META,
            key,
            lease.epoch,
            record::encode(&self.server, 0),
        );
    }

    /// Writes the lease record at `epoch` if the object is still at `expected`.
    fn write(
        &self,
        area: AreaId,
        expected: Option<i64>,
        epoch: i64,
        expires_ms: u64,
    ) -> Result<Lease> {
        let key = lease_key(area);
        let mut b = Batch::new();
        b.expect(tables::WORLD_META, key.clone(), expected).put(
            tables::WORLD_META,
            key,
            epoch,
            record::encode(&self.server, expires_ms),
        );
        match self.store.write(&b.synced()) {
            Ok(()) => Ok(Lease { area, owner: self.server.clone(), epoch, expires_ms }),
            Err(StoreError::PreconditionFailed { .. }) => {
                Err(LeaseError::Lost { area, epoch: expected.unwrap_or(0) })
            }
            Err(e) => Err(e.into()),
        }
    }
}
