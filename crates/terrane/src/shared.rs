//! [`SharedWorld`]: one game server's handle on a world it shares with others — the areas it
//! leases, its saves fenced by them, hand-offs of entities and of whole areas.
//!
//! The rules (`docs/EMBEDDING.md`, "One world, many servers"):
//! - a server writes only the areas it leases: its tiered store refuses other chunks and
//!   entities ([`TieredStore::set_areas`](crate::TieredStore::set_areas)), and every batch
//!   carries "each of my areas is still mine at my epoch";
//! - a refused save writes nothing; the server drops the areas it lost and stops ticking them
//!   ([`SaveError::Refused`]);
//! - an entity crossing into another server's area leaves in the crossing tick's save, one
//!   batch that deletes it from the old area and writes it into the new one, fenced on both
//!   leases; the new owner finds it with [`SharedWorld::arrivals`];
//! - an area changes hands with its last save: [`SharedWorld::hand_over`] writes the save and
//!   the release in one batch;
//! - who takes which area ([`SharedWorld::balance`]): each area has a home server; a server
//!   takes its free home areas, takes another's area only once its lease has been expired for
//!   a whole lease time (its owner is gone), and hands an area back once the home server says
//!   it runs again ([`SharedWorld::announce`], [`SharedWorld::live_servers`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use terrane_chunk::Uuid;
use terrane_cluster::TickSave;
use terrane_lease::{AreaId, Lease, LeaseError, LeaseKeeper, Leases, area_precondition};
use terrane_store::{Batch, Store, tables};

use crate::{Error, World};

/// Why a save of a [`SharedWorld`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SaveError {
    /// The save was refused whole: another server took over `lost` (or the target of a
    /// hand-off changed hands). Nothing was written; the areas lost are no longer this
    /// server's. Reload what the server holds of its remaining areas and go on.
    #[error("save refused: {} area(s) were taken over by another server ({lost:?}); nothing was written", lost.len())]
    Refused {
        /// The areas this server lost.
        lost: Vec<AreaId>,
    },
    /// The save failed otherwise (its outcome is unknown when the store lost its connection
    /// at the commit: it is either whole or absent).
    #[error(transparent)]
    World(#[from] Error),
    /// Reading the leases after a refusal failed.
    #[error(transparent)]
    Lease(#[from] LeaseError),
}

/// The `worldProperties` prefix of each server's presence record (the server's id after it;
/// the value the `u64` little-endian milliseconds since the Unix epoch of its last
/// [`SharedWorld::announce`]). A server writes only its own.
pub const PRESENCE_PREFIX: &[u8] = b"terrane:shared:presence:";

/// The entities stored in an area: each one's UUID and record.
pub type AreaEntities = Vec<(Uuid, Vec<u8>)>;

/// What [`SharedWorld::balance`] says to do with an area.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Balance {
    /// Take it ([`SharedWorld::acquire`], then read its entities with
    /// [`SharedWorld::arrivals`]): it is free, or its owner is gone.
    Acquire,
    /// Hand it back to its home server, which runs again ([`SharedWorld::hand_over`] with
    /// the area's last save).
    HandBack {
        /// The home server's id.
        home: String,
    },
}

/// One server of several sharing a world: a [`World`] opened with
/// [`WorldBuilder::server`](crate::WorldBuilder::server), and the leases of the areas it
/// ticks.
///
/// ```
/// use terrane::shared::SharedWorld;
/// use terrane::section::AreaId;
/// use terrane::{Backend, TickSave, World};
///
/// let world = World::builder().backend(Backend::Memory).server("a").create("unused")?;
/// let mut a = SharedWorld::new(world, 10_000)?;
/// a.acquire(AreaId::new(0, 0), 1_000)?;
/// let mut save = TickSave::new();
/// save.put_area_entity(AreaId::new(0, 0), [7; 16], b"zombie".to_vec());
/// a.save(1, save)?;                                        // fenced by a's lease
/// let mut stray = TickSave::new();
/// stray.put_area_entity(AreaId::new(5, 5), [8; 16], b"elsewhere".to_vec());
/// assert!(a.save(2, stray).is_err());                      // not a's area
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SharedWorld {
    world: World,
    keeper: LeaseKeeper<Arc<dyn Store>>,
    /// The server id (the world's `WorldBuilder::server`); the leases' owner is this id and
    /// an instance mark ([`SharedWorld::new`]).
    id: String,
}

impl std::fmt::Debug for SharedWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held: Vec<&Lease> = self.keeper.held().collect();
        f.debug_struct("SharedWorld").field("server", &self.server()).field("held", &held).finish()
    }
}

impl SharedWorld {
    /// `world` (opened with a server id) with leases of `ttl_ms` milliseconds. Holds no area
    /// yet: it writes nothing until it [acquires](Self::acquire) one.
    ///
    /// The leases are taken in the name of this instance, the server id and a mark unique
    /// to this process and moment (`<id>#<mark>`): a restarted server, or a second process
    /// started by mistake with the same id, is another owner, so it takes an area only once
    /// the previous instance's lease has expired (with a new epoch) and never writes under
    /// the other's epoch. Ids are 1 to 32 printable ASCII characters.
    pub fn new(mut world: World, ttl_ms: u64) -> Result<Self, Error> {
        let id = world.tiered().config().server.clone().ok_or(Error::NoServerId)?;
        if id.is_empty() || id.len() > 32 || !id.bytes().all(|b| (0x21..0x7f).contains(&b)) {
            return Err(Error::InvalidServerId(id));
        }
        let store: Arc<dyn Store> = Arc::clone(world.tiered().store());
        let owner = format!("{id}#{}", instance_mark());
        let leases = Leases::new(store, &owner, ttl_ms)?;
        world.tiered_mut().set_areas(Some(BTreeSet::new()));
        Ok(SharedWorld { world, keeper: LeaseKeeper::new(leases), id })
    }

    /// The world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The world, to load and unload chunks (in this server's areas only).
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    /// This server's id.
    pub fn server(&self) -> &str {
        &self.id
    }

    /// The owner this instance's leases carry (`<id>#<mark>`).
    pub fn lease_owner(&self) -> &str {
        self.keeper.leases().server()
    }

    /// The lease table.
    pub fn leases(&self) -> &Leases<Arc<dyn Store>> {
        self.keeper.leases()
    }

    /// The leases held, in area order.
    pub fn held(&self) -> impl Iterator<Item = &Lease> {
        self.keeper.held()
    }

    /// Whether this server holds `area`.
    pub fn owns(&self, area: AreaId) -> bool {
        self.keeper.owns(area)
    }

    /// Says this server runs: writes its presence record, `now_ms` (not fenced: the key is
    /// this server's alone). Call it every balance pass.
    pub fn announce(&self, now_ms: u64) -> Result<(), Error> {
        let key = [PRESENCE_PREFIX, self.id.as_bytes()].concat();
        self.world.store().put(tables::WORLD_PROPERTIES, &key, 0, &now_ms.to_le_bytes())?;
        Ok(())
    }

    /// The servers that announced themselves within two lease times before `now_ms`.
    pub fn live_servers(&self, now_ms: u64) -> Result<BTreeSet<String>, Error> {
        let ttl = self.leases().ttl_ms();
        let mut live = BTreeSet::new();
        for e in self.world.store().scan_prefix(tables::WORLD_PROPERTIES, PRESENCE_PREFIX)? {
            let (k, o) = e?;
            let seen = o.data.as_slice().try_into().map(u64::from_le_bytes).unwrap_or(0);
            if seen.saturating_add(2 * ttl) >= now_ms {
                live.insert(String::from_utf8_lossy(&k[PRESENCE_PREFIX.len()..]).into_owned());
            }
        }
        Ok(live)
    }

    /// What to do with each of `areas`, whose home server is `home(area)` (a server id), at
    /// `now_ms`:
    /// - an area this server holds goes back to its home server when that is another one
    ///   and [live](Self::live_servers) ([`Balance::HandBack`]);
    /// - a home area is taken when no live lease holds it;
    /// - another server's area is taken only once its lease has been expired for a whole
    ///   lease time (its owner is gone, not slow) ([`Balance::Acquire`]).
    ///
    /// Areas with nothing to do are left out. Taking can still fail (another server was
    /// first): [`acquire`](Self::acquire) says so.
    pub fn balance(
        &self,
        areas: impl IntoIterator<Item = AreaId>,
        home: impl Fn(AreaId) -> String,
        now_ms: u64,
    ) -> Result<Vec<(AreaId, Balance)>, Error> {
        let ttl = self.leases().ttl_ms();
        let leases: BTreeMap<AreaId, Lease> =
            self.leases().all()?.into_iter().map(|l| (l.area, l)).collect();
        let live = self.live_servers(now_ms)?;
        let mut out = Vec::new();
        for area in areas {
            let home = home(area);
            if self.owns(area) {
                if home != self.id && live.contains(&home) {
                    out.push((area, Balance::HandBack { home }));
                }
                continue;
            }
            let free = match leases.get(&area) {
                None => true,
                Some(l) if home == self.id => !l.is_live(now_ms),
                Some(l) => l.expires_ms.saturating_add(ttl) < now_ms,
            };
            if free {
                out.push((area, Balance::Acquire));
            }
        }
        Ok(out)
    }

    /// Takes `area` ([`Leases::acquire`]): from now on this server writes it. Read its
    /// entities with [`arrivals`](Self::arrivals) and load its chunks.
    pub fn acquire(&mut self, area: AreaId, now_ms: u64) -> Result<Lease, LeaseError> {
        let lease = self.keeper.acquire(area, now_ms)?.clone();
        self.sync_scope();
        Ok(lease)
    }

    /// Renews the leases due at `now_ms`; returns the areas lost (stop ticking them).
    pub fn renew(&mut self, now_ms: u64) -> Result<Vec<AreaId>, LeaseError> {
        let lost = self.keeper.tick(now_ms)?;
        if !lost.is_empty() {
            self.sync_scope();
        }
        Ok(lost)
    }

    /// Saves game tick `tick`, fenced by every lease held. A refusal drops the areas lost
    /// ([`SaveError::Refused`]); nothing of the save is written.
    pub fn save(&mut self, tick: u64, save: TickSave) -> Result<(), SaveError> {
        self.world.tiered_mut().set_fence(self.keeper.preconditions());
        match self.world.save_tick(tick, save) {
            Ok(()) => Ok(()),
            Err(e) if is_refusal(&e) => {
                let lost = self.keeper.check()?;
                self.sync_scope();
                Err(SaveError::Refused { lost })
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Adds to `save` the hand-off of entity `uuid` from `from` (this server's) to `to`
    /// (another server's, or nobody's yet): it leaves `from` and arrives in `to` with `bytes`
    /// in the save's single batch, fenced on `to`'s lease as read now. After the save this
    /// server no longer holds the entity.
    pub fn hand_off(
        &self,
        save: &mut TickSave,
        uuid: Uuid,
        from: AreaId,
        to: AreaId,
        bytes: Vec<u8>,
    ) -> Result<(), LeaseError> {
        let epoch = self.keeper.leases().epoch_of(to)?;
        save.hand_off_entity(uuid, from, to, bytes).expect(area_precondition(to, epoch));
        Ok(())
    }

    /// The entities stored in `area`: after acquiring it, and to pick up hand-offs into it.
    pub fn arrivals(&self, area: AreaId) -> Result<AreaEntities, Error> {
        Ok(self.world.tiered().area_entities(area)?)
    }

    /// Every entity stored in the areas this server holds, by area: what a server reads back
    /// when it no longer knows what its areas hold. After a save whose outcome is unknown (the
    /// connection lost at the commit) the save is either whole or absent; forgetting the
    /// held entities and reading them back from here puts the server on whichever it was.
    pub fn held_entities(&self) -> Result<Vec<(AreaId, AreaEntities)>, Error> {
        self.held().map(|l| Ok((l.area, self.arrivals(l.area)?))).collect()
    }

    /// Hands `area` over: `last` (the area's final save) and the release of its lease are one
    /// batch, so the next owner finds everything this server saved. Unload the area's chunks
    /// first. Returns `false` when `area` was not held (nothing written).
    pub fn hand_over(
        &mut self,
        area: AreaId,
        tick: u64,
        last: TickSave,
    ) -> Result<bool, SaveError> {
        self.release_areas(&[area], tick, last)
    }

    /// Releases every area with `last` in one batch (a clean shutdown).
    pub fn release_all(&mut self, tick: u64, last: TickSave) -> Result<(), SaveError> {
        let areas: Vec<AreaId> = self.keeper.areas().into_iter().collect();
        self.release_areas(&areas, tick, last).map(|_| ())
    }

    fn release_areas(
        &mut self,
        areas: &[AreaId],
        tick: u64,
        mut last: TickSave,
    ) -> Result<bool, SaveError> {
        // The fence covers every lease held, the released ones included.
        self.world.tiered_mut().set_fence(self.keeper.preconditions());
        let mut release = Batch::new();
        let held_before: Vec<Lease> = self.keeper.held().cloned().collect();
        let mut any = false;
        for &area in areas {
            if let Some(lease) = held_before.iter().find(|l| l.area == area) {
                self.keeper.leases().release_into(lease, &mut release);
                any = true;
            }
        }
        if !any {
            return Ok(false);
        }
        last.append(&release);
        match self.world.save_tick(tick, last) {
            Ok(()) => {
                for &area in areas {
                    self.keeper.forget(area);
                }
                self.sync_scope();
                Ok(true)
            }
            Err(e) if is_refusal(&e) => {
                let lost = self.keeper.check()?;
                self.sync_scope();
                Err(SaveError::Refused { lost })
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Gives the world back (leases not released: they expire).
    pub fn into_world(self) -> World {
        self.world
    }

    fn sync_scope(&mut self) {
        let areas = self.keeper.areas();
        let t = self.world.tiered_mut();
        t.set_areas(Some(areas));
        t.set_fence(self.keeper.preconditions());
    }
}

/// A mark unique to this process and moment: the process id and the clock, in hex.
fn instance_mark() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    format!("{:x}.{:x}", std::process::id(), nanos)
}

fn is_refusal(e: &Error) -> bool {
    matches!(
        e,
        Error::Store(terrane_store::Error::PreconditionFailed { .. })
            | Error::Cluster(terrane_cluster::Error::Store(
                terrane_store::Error::PreconditionFailed { .. }
            ))
    )
}
