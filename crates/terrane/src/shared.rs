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
//!   it runs again ([`SharedWorld::announce`], [`SharedWorld::live_servers`]). A balance
//!   pass's reads can run off the tick: a [`Surveyor`] reads a [`Survey`] on any thread and
//!   [`SharedWorld::balance_from`] plans from it.
//!
//! With saves in flight ([`WorldBuilder::saves_in_flight`](crate::WorldBuilder::saves_in_flight))
//! a save returns once accepted, and its fence is checked when it lands:
//! [`SharedWorld::landed`] reports the saves that landed, in order, and the first failure.
//! The leases and presence records are written around the saves in flight
//! ([`World::durable_store`]): a renewal keeps the epoch the saves in flight are fenced on,
//! and an acquire is durable before any save fenced on it is accepted.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use terrane_chunk::Uuid;
use terrane_cluster::TickSave;
use terrane_lease::{AreaId, Lease, LeaseError, LeaseKeeper, Leases, Renewal, area_precondition};
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
    /// Not written, nor accepted: a save in flight before it failed. [`SharedWorld::landed`]
    /// reports the saves that landed before that failure, then the failure itself.
    #[error("save not written: a save in flight before it failed (see SharedWorld::landed)")]
    Stopped,
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

/// What a balance pass reads ([`Surveyor::survey`]): the lease table, the servers live, and
/// the entities stored in some areas.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Survey {
    /// The moment it was read for, milliseconds since the Unix epoch.
    pub now_ms: u64,
    /// Every lease of the world, in area order.
    pub leases: Vec<Lease>,
    /// The servers live at `now_ms` ([`SharedWorld::live_servers`]).
    pub live: BTreeSet<String>,
    /// The entities stored in each area asked for. A scan begun after the saves accepted
    /// before the survey: it shows them (in flight or landed), hand-offs into the areas
    /// that landed, and none of the saves accepted after it began, which is the caller's to
    /// account for (an entity handed out by a later save is still listed).
    pub arrivals: Vec<(AreaId, AreaEntities)>,
    /// The renewals of the leases asked to be renewed, for [`SharedWorld::note_survey`].
    pub renewals: Vec<Renewal>,
    /// The areas taken by [`Surveyor::balance`] (held from [`SharedWorld::note_survey`] on;
    /// their entities are among `arrivals`).
    pub acquired: Vec<Lease>,
    /// The areas [`Surveyor::balance`] says to hand back to their home server
    /// ([`SharedWorld::hand_over`]), with that server's id.
    pub hand_backs: Vec<(AreaId, String)>,
}

/// Reads a [`Survey`] on any thread: a balance pass's round trips off the tick. From
/// [`SharedWorld::surveyor`]; cheap to clone.
#[derive(Clone)]
pub struct Surveyor {
    /// Where leases and presence records are (durable when written).
    durable: Arc<dyn Store>,
    /// The world's store, with its saves in flight: an area's entities as this server saved
    /// them.
    saves: Arc<dyn Store>,
    id: String,
    owner: String,
    ttl_ms: u64,
}

impl std::fmt::Debug for Surveyor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Surveyor").field("server", &self.id).finish_non_exhaustive()
    }
}

impl Surveyor {
    /// Says this server runs: writes its presence record, `now_ms` (not fenced: the key is
    /// this server's alone).
    pub fn announce(&self, now_ms: u64) -> Result<(), Error> {
        let key = [PRESENCE_PREFIX, self.id.as_bytes()].concat();
        self.durable.put(tables::WORLD_PROPERTIES, &key, 0, &now_ms.to_le_bytes())?;
        Ok(())
    }

    /// The servers that announced themselves within two lease times before `now_ms`.
    pub fn live_servers(&self, now_ms: u64) -> Result<BTreeSet<String>, Error> {
        let mut live = BTreeSet::new();
        for e in self.durable.scan_prefix(tables::WORLD_PROPERTIES, PRESENCE_PREFIX)? {
            let (k, o) = e?;
            let seen = o.data.as_slice().try_into().map(u64::from_le_bytes).unwrap_or(0);
            if seen.saturating_add(2 * self.ttl_ms) >= now_ms {
                live.insert(String::from_utf8_lossy(&k[PRESENCE_PREFIX.len()..]).into_owned());
            }
        }
        Ok(live)
    }

    /// Renews `renew` (the leases held when it was asked for: [`SharedWorld::held`]), then
    /// reads the lease table, the servers live at `now_ms` and the entities stored in
    /// `areas`: one round trip each on PostgreSQL. A renewal another server's takeover
    /// refused is a [`Renewal::Lost`], not an error.
    pub fn survey(&self, renew: &[Lease], areas: &[AreaId], now_ms: u64) -> Result<Survey, Error> {
        let table = Leases::new(Arc::clone(&self.durable), &self.owner, self.ttl_ms)?;
        let mut renewals = Vec::with_capacity(renew.len());
        for lease in renew {
            renewals.push(match table.renew(lease, now_ms) {
                Ok(renewed) => Renewal::Renewed(renewed),
                Err(LeaseError::Lost { area, epoch }) => Renewal::Lost { area, epoch },
                Err(e) => return Err(e.into()),
            });
        }
        let leases = table.all()?;
        let live = self.live_servers(now_ms)?;
        let arrivals = self.arrivals(areas.iter().copied())?;
        Ok(Survey {
            now_ms,
            leases,
            live,
            arrivals,
            renewals,
            acquired: Vec::new(),
            hand_backs: Vec::new(),
        })
    }

    /// A whole balance pass off the tick, for a server holding `held` among `areas` (home
    /// server of each: `home`): announces it, renews `held`, reads the survey, takes the
    /// areas [`SharedWorld::balance`]'s rules say to take (another server first is no error)
    /// and reads the entities of every area held or taken. The tick then applies it:
    /// [`SharedWorld::note_survey`], and a hand-over per entry of `hand_backs`.
    pub fn balance(
        &self,
        held: &[Lease],
        areas: &[AreaId],
        home: impl Fn(AreaId) -> String,
        now_ms: u64,
    ) -> Result<Survey, Error> {
        self.announce(now_ms)?;
        let mut survey = self.survey(held, &[], now_ms)?;
        let still: BTreeSet<AreaId> = survey
            .renewals
            .iter()
            .filter_map(|r| match r {
                Renewal::Renewed(l) => Some(l.area),
                _ => None,
            })
            .collect();
        let table = Leases::new(Arc::clone(&self.durable), &self.owner, self.ttl_ms)?;
        let mut read = still.clone();
        for (area, action) in plan(
            &self.id,
            self.ttl_ms,
            &survey,
            |a| still.contains(&a),
            areas.iter().copied(),
            home,
        ) {
            match action {
                Balance::HandBack { home } => survey.hand_backs.push((area, home)),
                Balance::Acquire => match table.acquire(area, now_ms) {
                    Ok(lease) => {
                        read.insert(area);
                        survey.acquired.push(lease);
                    }
                    Err(LeaseError::Held { .. } | LeaseError::Lost { .. }) => {}
                    Err(e) => return Err(e.into()),
                },
            }
        }
        survey.arrivals = self.arrivals(read)?;
        Ok(survey)
    }

    /// The entities stored in each of `areas`, as this server's saves (in flight included)
    /// left them.
    fn arrivals(
        &self,
        areas: impl IntoIterator<Item = AreaId>,
    ) -> Result<Vec<(AreaId, AreaEntities)>, Error> {
        areas
            .into_iter()
            .map(|area| {
                let stored = terrane_cluster::TieredStore::<Arc<dyn Store>>::area_entities_in(
                    &self.saves,
                    area,
                )?;
                Ok((area, stored))
            })
            .collect()
    }
}

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
        let store = world.durable_store();
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
        self.surveyor().announce(now_ms)
    }

    /// The servers that announced themselves within two lease times before `now_ms`.
    pub fn live_servers(&self, now_ms: u64) -> Result<BTreeSet<String>, Error> {
        self.surveyor().live_servers(now_ms)
    }

    /// A [`Surveyor`] of this server: reads balance passes on another thread.
    pub fn surveyor(&self) -> Surveyor {
        Surveyor {
            durable: self.world.durable_store(),
            saves: Arc::clone(self.world.tiered().store()),
            id: self.id.clone(),
            owner: self.lease_owner().to_string(),
            ttl_ms: self.leases().ttl_ms(),
        }
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
        let survey = Survey {
            now_ms,
            leases: self.leases().all()?,
            live: self.live_servers(now_ms)?,
            arrivals: Vec::new(),
            renewals: Vec::new(),
            acquired: Vec::new(),
            hand_backs: Vec::new(),
        };
        Ok(self.balance_from(&survey, areas, home))
    }

    /// [`balance`](Self::balance) planned from a [`Survey`] read beforehand (off the tick),
    /// as of its `now_ms`, with the leases this server holds now.
    pub fn balance_from(
        &self,
        survey: &Survey,
        areas: impl IntoIterator<Item = AreaId>,
        home: impl Fn(AreaId) -> String,
    ) -> Vec<(AreaId, Balance)> {
        plan(&self.id, self.leases().ttl_ms(), survey, |a| self.owns(a), areas, home)
    }

    /// Takes `area` ([`Leases::acquire`]): from now on this server writes it. Read its
    /// entities with [`arrivals`](Self::arrivals) and load its chunks. What the writes in
    /// flight cached is forgotten: another server may have written the area since.
    pub fn acquire(&mut self, area: AreaId, now_ms: u64) -> Result<Lease, LeaseError> {
        let lease = self.keeper.acquire(area, now_ms)?.clone();
        self.world.forget_cached_reads();
        self.sync_scope();
        Ok(lease)
    }

    /// Takes the renewals of `survey` (made off the tick, [`Surveyor::survey`]): a lease
    /// renewed there is not due here; returns the areas its renewals found lost (stop ticking
    /// them).
    ///
    /// The areas `survey` took ([`Surveyor::balance`]) are held from here on; what the writes
    /// in flight cached is forgotten, as [`acquire`](Self::acquire) does.
    pub fn note_survey(&mut self, survey: &Survey) -> Vec<AreaId> {
        let mut lost = Vec::new();
        for r in &survey.renewals {
            if self.keeper.note_renewal(r)
                && let Renewal::Lost { area, .. } = r
            {
                lost.push(*area);
            }
        }
        for lease in &survey.acquired {
            self.keeper.hold(lease.clone());
        }
        if !survey.acquired.is_empty() {
            self.world.forget_cached_reads();
        }
        if !lost.is_empty() || !survey.acquired.is_empty() {
            self.sync_scope();
        }
        lost
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
    /// ([`SaveError::Refused`]); nothing of the save is written. With saves in flight it
    /// returns once the save is accepted, and [`landed`](Self::landed) reports its outcome.
    pub fn save(&mut self, tick: u64, save: TickSave) -> Result<(), SaveError> {
        self.world.tiered_mut().set_fence(self.keeper.preconditions());
        match self.world.save_tick(tick, save) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.failed(e)),
        }
    }

    /// The ticks whose saves (and hand-overs) are durable since the last call, in order:
    /// report a save only from here. Without saves in flight every save that returned `Ok`.
    ///
    /// With saves in flight, when one failed: the saves that landed before it are reported
    /// first; the next call returns the failure, which stands for every save not reported:
    /// - [`SaveError::Refused`]: none of them was written; the areas lost are dropped;
    /// - any other error: the first one's outcome is unknown (whole or absent), none after
    ///   it was written.
    ///
    /// Saves are accepted again from then on. Read back what the server holds first (its
    /// chunks and, with [`held_entities`](Self::held_entities), its entities): its state was
    /// ahead of the store.
    pub fn landed(&mut self) -> Result<Vec<u64>, SaveError> {
        match self.world.landed_saves() {
            Ok(ticks) => Ok(ticks),
            Err(e) => {
                let failure = self.failed(e);
                self.world.resume_saves();
                Err(failure)
            }
        }
    }

    /// What a save's failure `e` means for this server: a refusal names the areas lost (and
    /// drops them); a save refused because one in flight failed is [`SaveError::Stopped`].
    fn failed(&mut self, e: Error) -> SaveError {
        if is_poisoned(&e) {
            return SaveError::Stopped;
        }
        if !is_refusal(&e) {
            return e.into();
        }
        match self.keeper.check() {
            Ok(lost) => {
                self.sync_scope();
                SaveError::Refused { lost }
            }
            Err(e) => e.into(),
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
    /// first. Returns `false` when `area` was not held (nothing written). The area is no
    /// longer this server's from the return on; with saves in flight the batch's outcome
    /// comes from [`landed`](Self::landed) as a save's does (a hand-over that failed leaves
    /// the lease to expire).
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
            Err(e) => Err(self.failed(e)),
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

/// The balance of `areas` for server `id` (leases of `ttl` ms) holding the areas `owns` says,
/// as of `survey` ([`SharedWorld::balance`]'s rules).
fn plan(
    id: &str,
    ttl: u64,
    survey: &Survey,
    owns: impl Fn(AreaId) -> bool,
    areas: impl IntoIterator<Item = AreaId>,
    home: impl Fn(AreaId) -> String,
) -> Vec<(AreaId, Balance)> {
    let (now_ms, live) = (survey.now_ms, &survey.live);
    let leases: BTreeMap<AreaId, &Lease> = survey.leases.iter().map(|l| (l.area, l)).collect();
    let mut out = Vec::new();
    for area in areas {
        let home = home(area);
        if owns(area) {
            if home != id && live.contains(&home) {
                out.push((area, Balance::HandBack { home }));
            }
            continue;
        }
        let free = match leases.get(&area) {
            None => true,
            Some(l) if home == id => !l.is_live(now_ms),
            Some(l) => l.expires_ms.saturating_add(ttl) < now_ms,
        };
        if free {
            out.push((area, Balance::Acquire));
        }
    }
    out
}

/// A mark unique to this process and moment: the process id and the clock, in hex.
fn instance_mark() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    format!("{:x}.{:x}", std::process::id(), nanos)
}

/// A write refused because one in flight before it failed.
fn is_poisoned(e: &Error) -> bool {
    matches!(
        e,
        Error::Store(terrane_store::Error::Poisoned(_))
            | Error::Cluster(terrane_cluster::Error::Store(terrane_store::Error::Poisoned(_)))
    )
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
