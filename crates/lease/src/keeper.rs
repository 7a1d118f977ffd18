//! [`LeaseKeeper`]: the leases one server holds, kept alive tick after tick, and the areas it
//! lost when a save is refused.

use std::collections::BTreeMap;

use terrane_store::{Precondition, Store};

use crate::{AreaId, Lease, LeaseError, Leases, Result, preconditions};

/// What a renewal made off the game's tick came to ([`LeaseKeeper::note_renewal`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Renewal {
    /// Renewed: the lease, with its new expiry.
    Renewed(Lease),
    /// Another server took the area over: the lease is no longer at `epoch`.
    Lost {
        /// The area.
        area: AreaId,
        /// The epoch that was held.
        epoch: i64,
    },
}

/// The leases one server holds. Call [`tick`](Self::tick) every game tick (it renews a lease
/// once a third of its time to live is left), fence every save with
/// [`preconditions`](Self::preconditions), and when a save is refused call
/// [`check`](Self::check): it drops the areas another server took and returns them, so that
/// the server stops ticking them.
#[derive(Debug)]
pub struct LeaseKeeper<S> {
    leases: Leases<S>,
    held: BTreeMap<AreaId, Lease>,
}

impl<S: Store> LeaseKeeper<S> {
    /// A keeper holding nothing yet.
    pub fn new(leases: Leases<S>) -> Self {
        LeaseKeeper { leases, held: BTreeMap::new() }
    }

    /// The lease table this keeper works on.
    pub fn leases(&self) -> &Leases<S> {
        &self.leases
    }

    /// Takes `area` (see [`Leases::acquire`]) and keeps it.
    pub fn acquire(&mut self, area: AreaId, now_ms: u64) -> Result<&Lease> {
        let lease = self.leases.acquire(area, now_ms)?;
        self.held.insert(area, lease);
        Ok(&self.held[&area])
    }

    /// Whether this server holds `area`.
    pub fn owns(&self, area: AreaId) -> bool {
        self.held.contains_key(&area)
    }

    /// The leases held, in area order.
    pub fn held(&self) -> impl Iterator<Item = &Lease> {
        self.held.values()
    }

    /// The preconditions of every lease held: put them on every save
    /// (`TieredStore::set_fence`, or [`crate::fence`] on a batch).
    pub fn preconditions(&self) -> Vec<Precondition> {
        preconditions(self.held.values())
    }

    /// Renews every lease with less than a third of its time to live left at `now_ms`.
    /// Returns the areas lost meanwhile (taken over by another server), no longer held.
    pub fn tick(&mut self, now_ms: u64) -> Result<Vec<AreaId>> {
        let ttl = self.leases.ttl_ms();
        let due: Vec<Lease> = self
            .held
            .values()
            .filter(|l| l.expires_ms.saturating_sub(now_ms) < ttl / 3)
            .cloned()
            .collect();
        let mut lost = Vec::new();
        for lease in due {
            match self.leases.renew(&lease, now_ms) {
                Ok(renewed) => {
                    self.held.insert(lease.area, renewed);
                }
                Err(LeaseError::Lost { area, .. }) => {
                    self.held.remove(&area);
                    lost.push(area);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(lost)
    }

    /// After a refused save: re-reads every lease held and drops (and returns) the areas whose
    /// lease is no longer this server's epoch.
    pub fn check(&mut self) -> Result<Vec<AreaId>> {
        let mut lost = Vec::new();
        for (area, lease) in &self.held {
            let now = self.leases.get(*area)?;
            if now.as_ref().map(|l| l.epoch) != Some(lease.epoch) {
                lost.push(*area);
            }
        }
        for area in &lost {
            self.held.remove(area);
        }
        Ok(lost)
    }

    /// Stops holding `area` and adds its release to `batch` ([`Leases::release_into`]): write
    /// the area's last save and the release as one batch, and another server takes the area
    /// with everything saved. Returns `false` (and adds nothing) when `area` is not held.
    pub fn release_into(&mut self, area: AreaId, batch: &mut terrane_store::Batch) -> bool {
        match self.held.remove(&area) {
            Some(lease) => {
                self.leases.release_into(&lease, batch);
                true
            }
            None => false,
        }
    }

    /// The areas held, in order (for `TieredStore::set_areas`).
    pub fn areas(&self) -> std::collections::BTreeSet<AreaId> {
        self.held.keys().copied().collect()
    }

    /// Takes the outcome of a renewal made elsewhere (another thread, off the game's tick:
    /// [`Leases::renew`] of a lease this keeper held): a renewed lease replaces the one held
    /// when it is the same area at the same epoch and lasts longer; a lost one is dropped
    /// (returns `true`: stop ticking it) when still held at that epoch.
    pub fn note_renewal(&mut self, renewal: &Renewal) -> bool {
        match renewal {
            Renewal::Renewed(lease) => {
                if let Some(held) = self.held.get_mut(&lease.area)
                    && held.epoch == lease.epoch
                    && held.expires_ms < lease.expires_ms
                {
                    *held = lease.clone();
                }
                false
            }
            Renewal::Lost { area, epoch } => {
                if self.held.get(area).is_some_and(|l| l.epoch == *epoch) {
                    self.held.remove(area);
                    return true;
                }
                false
            }
        }
    }

    /// Holds `lease`, taken elsewhere ([`Leases::acquire`] on another thread, off the game's
    /// tick) by this keeper's server: from now on saves are fenced by it.
    pub fn hold(&mut self, lease: Lease) {
        self.held.insert(lease.area, lease);
    }

    /// Forgets `area` without writing anything (its save was refused, or the process hands
    /// it over by other means); its lease expires on its own.
    pub fn forget(&mut self, area: AreaId) -> Option<Lease> {
        self.held.remove(&area)
    }

    /// Releases every lease held (a clean shutdown): other servers may take the areas at once.
    pub fn release_all(&mut self) -> Result<()> {
        for lease in std::mem::take(&mut self.held).into_values() {
            match self.leases.release(&lease) {
                Ok(()) | Err(LeaseError::Lost { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}
