//! One game server of several running one world together on PostgreSQL. The world is a
//! strip of `2 M` areas (256 × 256 blocks each) for `M` servers; server `N` is at home in
//! areas `x ≡ N (mod M)` and takes over the others' when their owners are gone
//! ([`SharedWorld::balance`]). Walkers (players and mobs) wander across the strip: a walker
//! crossing into an area of another server is handed off in the crossing tick's save; an
//! area taken over returns to its home server, with its last save, once that server is
//! back. An [`Event::Status`] each second says what the server holds and ticks.
//!
//! Saves are in flight while the next ticks run ([`SharedServerConfig::saves_in_flight`]):
//! what a save changes in the server's memory (walkers handed off, chunks no longer dirty)
//! takes effect when it is accepted, and a save is acknowledged only once
//! [`SharedWorld::landed`] reports it. When a save fails, every save not acknowledged fails
//! with it, and the server reads its chunks and walkers back from the store.
//!
//! With [`SharedServerConfig::log`] every write attempt is logged (before it is made, then
//! its outcome) with the epochs it was fenced on, and each save also stores an audit object
//! (`worldProperties`, `demo:audit:<server>:<seq>`, the fenced epochs): crash tests check the
//! database against those logs.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use terrane::lease::{AreaId, Lease};
use terrane::shared::{AreaEntities, SaveError, SharedWorld, Survey};
use terrane::stats::percentile;
use terrane::worldgen::hills::{self as terrain, Palette};
use terrane::{
    Backend, Batch, ChangesPut, ChunkPos, ColumnPos, LoadedColumns, TickSave, Uuid, World, tables,
};

use crate::walker::{WALK_Y, Walker};
use crate::{Error, Event, Result, ServerStatus};

/// The `worldProperties` key whose absence lets the first server create the walkers.
const POPULATION_KEY: &[u8] = b"demo:shared:population";

/// A shared-world server's settings; [`SharedServerConfig::DEFAULT`] gives each default.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedServerConfig {
    /// How many servers share the world. Default 1.
    pub servers: usize,
    /// How long the server runs, in seconds. Default 10.
    pub seconds: f64,
    /// Lease time to live in milliseconds: an area whose server stops renewing is taken
    /// over this long after its last renewal. Default 3,000.
    pub lease_ms: u64,
    /// Save every this many ticks. Default 5.
    pub save_every: u64,
    /// Log every write attempt and its outcome to this file, and store an audit object per
    /// save (for crash tests). Default `None`.
    pub log: Option<PathBuf>,
    /// Walkers the first server creates in a new world. Default 4.
    pub walkers: usize,
    /// Target ticks per second (at least 1). Default 50.
    pub tps: f64,
    /// Walker speed in blocks per tick. Default 2.5.
    pub speed: f64,
    /// Saves in flight at once (`WorldBuilder::saves_in_flight`; 0: each save waits until
    /// it is durable). Default 4.
    pub saves_in_flight: usize,
}

impl SharedServerConfig {
    /// Every setting at its default.
    pub const DEFAULT: SharedServerConfig = SharedServerConfig {
        servers: 1,
        seconds: 10.0,
        lease_ms: 3000,
        save_every: 5,
        log: None,
        walkers: 4,
        tps: 50.0,
        speed: 2.5,
        saves_in_flight: 4,
    };
}

impl Default for SharedServerConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What a shared-world server did.
#[derive(Debug, Default, Clone, Serialize)]
#[non_exhaustive]
pub struct SharedServerSummary {
    /// The server's id (`server-N`).
    pub server: String,
    /// Servers sharing the world.
    pub servers: usize,
    /// Seconds run.
    pub seconds: f64,
    /// Ticks run.
    pub ticks: u64,
    /// Saves attempted (tick saves, hand-overs and the last save).
    pub saves_attempted: u64,
    /// Saves the world acknowledged.
    pub saves_acknowledged: u64,
    /// Saves refused whole (an area was taken over).
    pub saves_refused: u64,
    /// Saves that failed otherwise (outcome unknown; the server read its areas back).
    pub saves_failed: u64,
    /// Median save time (from its start until it is durable), milliseconds.
    pub save_p50_ms: f64,
    /// 99th percentile of save time, milliseconds.
    pub save_p99_ms: f64,
    /// Ticks that waited for room among the saves in flight (the store falling behind),
    /// milliseconds in all.
    pub save_wait_ms: f64,
    /// Median tick time (its work, not the sleep after it), milliseconds.
    pub tick_p50_ms: f64,
    /// 99th percentile of tick time, milliseconds.
    pub tick_p99_ms: f64,
    /// Acknowledged saves per second.
    pub saves_per_second: f64,
    /// Walkers handed off to other servers' areas.
    pub hand_offs_out: u64,
    /// Median time of a save carrying hand-offs, milliseconds.
    pub hand_off_p50_ms: f64,
    /// Walkers arrived from other servers.
    pub arrivals: u64,
    /// Areas acquired.
    pub areas_acquired: u64,
    /// Areas handed over to their home server.
    pub areas_handed_over: u64,
    /// Areas lost to another server.
    pub areas_lost: u64,
    /// Walkers held at the end.
    pub walkers_at_end: usize,
}

fn now_us() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The write log (`--log`): one line per event, each written whole with one `write` call.
struct Log(Option<File>);

impl Log {
    fn line(&mut self, s: String) {
        if let Some(f) = &mut self.0 {
            let _ = f.write_all(format!("{s}\n").as_bytes());
        }
    }
}

/// A save being made: the batch, the walkers it hands off (out) or keeps (rewritten in a
/// held area), and the chunks it writes.
struct Built {
    save: TickSave,
    out: Vec<Uuid>,
    kept: Vec<Uuid>,
    chunks: ChangesPut,
}

/// A save accepted and not yet acknowledged: its sequence number, when it started, how many
/// walkers it hands off, and whether it hands an area over.
struct Pending {
    seq: u64,
    started: Instant,
    out: usize,
    hand_over: bool,
}

/// A server of a shared world.
struct Server<'a> {
    /// Where events go.
    on_event: &'a mut dyn FnMut(Event<'_>),
    shared: SharedWorld,
    palette: Palette,
    servers: usize,
    width: f64,
    walkers: BTreeMap<Uuid, Walker>,
    /// The columns around the walkers: one chunk each, at the walkers' height.
    loaded: LoadedColumns,
    log: Log,
    audit: bool,
    run: u64,
    seq: u64,
    /// Saves accepted and not yet acknowledged, oldest first.
    pending: VecDeque<Pending>,
    /// Chunks asked to be read ahead and still near a walker, with the read's ticket.
    read_ahead: HashMap<ChunkPos, u64>,
    /// The tick being run.
    tick: u64,
    /// Walkers handed out, with the tick of the save that did it, since the last survey
    /// asked for.
    handed_out: Vec<(u64, Uuid)>,
    /// The summary so far.
    s: SharedServerSummary,
    save_ms: Vec<f64>,
    hand_off_ms: Vec<f64>,
}

impl Server<'_> {
    fn areas(&self) -> Vec<AreaId> {
        (0..2 * self.servers as i32).map(|x| AreaId::new(x, 0)).collect()
    }

    fn now_ms() -> u64 {
        now_us() / 1000
    }

    /// Applies a balance pass made off the tick ([`terrane::shared::Surveyor::balance`], asked for at tick
    /// `asked`, its areas taken at `taken_us`): drops the areas its renewals found lost,
    /// holds the areas it took, hands back the areas whose home server runs again, and holds
    /// the walkers stored in the held areas, less those this server handed out since it was
    /// asked for (the survey may predate their hand-off).
    fn balance(&mut self, tick: u64, asked: u64, taken_us: u64, survey: Survey) -> Result<()> {
        let lost = self.shared.note_survey(&survey);
        if !lost.is_empty() {
            self.s.areas_lost += lost.len() as u64;
            self.drop_areas(&lost)?;
        }
        for lease in &survey.acquired {
            let (x, z) = (lease.area.x, lease.area.z);
            self.log.line(format!("acquired {x} {z} {} {taken_us}", lease.epoch));
            self.s.areas_acquired += 1;
        }
        for (area, _) in &survey.hand_backs {
            self.hand_over(*area, tick)?;
        }
        self.handed_out.retain(|(t, _)| *t >= asked);
        for (area, mut stored) in survey.arrivals {
            if !self.shared.owns(area) {
                continue;
            }
            stored.retain(|(uuid, _)| !self.handed_out.iter().any(|(_, u)| u == uuid));
            self.s.arrivals += self.take_walkers(area, stored)? as u64;
        }
        Ok(())
    }

    /// Holds the walkers of `stored` (records of `area`) not held yet; returns how many.
    fn take_walkers(&mut self, area: AreaId, stored: AreaEntities) -> Result<usize> {
        let mut n = 0;
        for (uuid, bytes) in stored {
            if self.walkers.contains_key(&uuid) {
                continue;
            }
            let w = Walker::decode(uuid, area, &bytes)
                .ok_or_else(|| Error::DamagedWalker(hex(&uuid)))?;
            self.walkers.insert(uuid, w);
            n += 1;
        }
        Ok(n)
    }

    /// Forgets what this server held of `areas` (lost or handed over).
    fn drop_areas(&mut self, areas: &[AreaId]) -> Result<()> {
        self.walkers.retain(|_, w| !areas.contains(&w.stored_in));
        let world = self.shared.world_mut();
        self.loaded.forget(world, |c| areas.contains(&area_of(c)))?;
        Ok(())
    }

    /// Forgets the walkers and reads the held areas' back (after a tick that failed).
    fn resync(&mut self) -> Result<()> {
        self.walkers.clear();
        for (area, stored) in self.shared.held_entities()? {
            self.take_walkers(area, stored)?;
        }
        Ok(())
    }

    /// Forgets everything and reads it back from the store (after a save failed: the saves
    /// not acknowledged are lost or, for the failed one, unknown; the server's state was
    /// ahead of the store). The chunks are loaded again by the next tick.
    fn read_back(&mut self) -> Result<()> {
        self.loaded.forget(self.shared.world_mut(), |_| true)?;
        self.read_ahead.clear();
        self.resync()
    }

    /// Loads the chunks under and around the walkers of held areas; unloads saved chunks no
    /// walker needs. The regionizer therefore only ever holds chunks of this server's areas.
    ///
    /// The chunks within two of each walker are read ahead (off the tick, into the cache of
    /// the saves in flight), and loaded once read: a walker stepping into a new chunk finds
    /// it read, and the tick never waits on the network for a chunk.
    fn load_around(&mut self) -> Result<()> {
        let mut needed = HashSet::new();
        let mut near = HashSet::new();
        for w in self.walkers.values() {
            let c = w.block().chunk();
            for dx in -2..=2 {
                for dz in -2..=2 {
                    let p = ChunkPos::new(c.x + dx, c.y, c.z + dz);
                    if !self.shared.owns(AreaId::of_chunk(p)) {
                        continue;
                    }
                    near.insert(p);
                    if dx * dx + dz * dz <= 1 {
                        needed.insert(p);
                    }
                }
            }
        }
        self.read_ahead.retain(|p, _| near.contains(p));
        let mut ask: Vec<ChunkPos> = near
            .iter()
            .filter(|p| !self.loaded.is_loaded(column_of(**p)) && !self.read_ahead.contains_key(p))
            .copied()
            .collect();
        ask.sort_unstable();
        // Without saves in flight there is nothing to read into (no ticket): load at once.
        if !ask.is_empty()
            && let Some(ticket) = self.shared.world().read_ahead_chunks(&ask)
        {
            self.read_ahead.extend(ask.iter().map(|p| (*p, ticket)));
        }
        // The tick's new chunks that are read (all of them in one read without reads ahead:
        // a few round trips, however many); a walker waits for its chunk.
        let world = self.shared.world();
        let mut new: Vec<ColumnPos> = needed
            .iter()
            .filter(|p| !self.loaded.is_loaded(column_of(**p)))
            .filter(|p| self.read_ahead.get(p).is_none_or(|t| world.is_read_ahead(*t)))
            .map(|p| column_of(*p))
            .collect();
        new.sort_unstable();
        // Nothing is generated here: a chunk the world does not hold is air.
        self.loaded.load(self.shared.world_mut(), &new, &mut |_| None)?;
        // Columns no walker needs go (their changes wait for the next save).
        let needed: HashSet<ColumnPos> = needed.iter().map(|p| column_of(*p)).collect();
        let idle: Vec<ColumnPos> = self.loaded.columns().filter(|c| !needed.contains(c)).collect();
        for c in idle {
            self.loaded.unload(self.shared.world_mut(), c)?;
        }
        Ok(())
    }

    /// One game tick of the walkers this server holds: each region's walkers step and wear a
    /// path into the ground.
    fn tick_walkers(&mut self, speed: f64) {
        let rz = std::sync::Arc::clone(self.shared.world().regionizer());
        for w in self.walkers.values_mut() {
            // A walker ticks with the region of the chunk it stands in.
            if rz.owner_of_chunk(w.block().chunk()).is_none() {
                continue;
            }
            w.step(speed, self.width);
            let b = w.block();
            if let Some(c) = self.loaded.chunk_or_air(b.chunk(), self.palette.air) {
                let (lx, ly, lz) = b.local();
                let next = if c.get(lx, ly, lz) == self.palette.gravel {
                    self.palette.cobble
                } else {
                    self.palette.gravel
                };
                c.set(lx, ly, lz, next);
                self.loaded.mark_changed(b.chunk());
            }
        }
    }

    fn epochs(&self) -> String {
        self.shared
            .held()
            .map(|l| format!("{},{},{}", l.area.x, l.area.z, l.epoch))
            .collect::<Vec<_>>()
            .join(";")
    }

    /// Builds the save of `areas` (every held area when `None`): dirty chunks and walkers,
    /// with hand-offs of walkers now standing in another server's area.
    fn build_save(&mut self, seq: u64, areas: Option<&[AreaId]>) -> Result<Built> {
        let mut save = TickSave::new();
        let in_scope = |a: AreaId| areas.is_none_or(|s| s.contains(&a));
        let chunks = self.loaded.put_changes(&mut save, self.shared.world().schema(), |p| {
            in_scope(AreaId::of_chunk(p))
        });
        let server = self.shared.server().to_string();
        let epoch_of: HashMap<AreaId, i64> =
            self.shared.held().map(|l| (l.area, l.epoch)).collect();
        let mut out = Vec::new();
        let mut kept = Vec::new();
        let mut ents = Vec::new();
        for w in self.walkers.values() {
            if !in_scope(w.stored_in) {
                continue;
            }
            let now = w.area();
            let epoch = epoch_of.get(&now).copied().unwrap_or(0);
            ents.push(format!("{},{},{},{}", hex(&w.uuid), w.steps, now.x, now.z));
            if self.shared.owns(now) {
                if now != w.stored_in {
                    save.delete_area_entity(w.stored_in, w.uuid);
                }
                save.put_area_entity(now, w.uuid, w.encode(epoch, seq, &server));
                kept.push(w.uuid);
            } else {
                let bytes = w.encode(epoch_of[&w.stored_in], seq, &server);
                self.shared.hand_off(&mut save, w.uuid, w.stored_in, now, bytes)?;
                out.push(w.uuid);
            }
        }
        let epochs = self.epochs();
        if self.audit {
            save.put_object(
                tables::WORLD_PROPERTIES,
                format!("demo:audit:{server}:{seq:020}").into_bytes(),
                epochs.clone().into_bytes(),
            );
        }
        self.log.line(format!("attempt {seq} {} {epochs} {}", now_us(), ents.join(";")));
        Ok(Built { save, out, kept, chunks })
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.run * 1_000_000 + self.seq
    }

    /// Saves every held area (acknowledged once it lands: [`Server::drain`]).
    fn save(&mut self, tick: u64) -> Result<()> {
        let seq = self.next_seq();
        let built = self.build_save(seq, None)?;
        let started = Instant::now();
        let result = self.shared.save(tick, built.save.clone());
        self.submitted(seq, started, result, built, false)
    }

    /// After a save was submitted: accepted, its effects on memory apply now and it waits to
    /// be acknowledged; not accepted, it and every save in flight failed.
    fn submitted(
        &mut self,
        seq: u64,
        started: Instant,
        result: Result<(), SaveError>,
        built: Built,
        hand_over: bool,
    ) -> Result<()> {
        self.s.saves_attempted += 1;
        match result {
            Ok(()) => {
                let Built { out, kept, chunks, .. } = built;
                for u in &out {
                    self.walkers.remove(u);
                    self.handed_out.push((self.tick, *u));
                }
                for u in &kept {
                    if let Some(w) = self.walkers.get_mut(u) {
                        w.stored_in = w.area();
                    }
                }
                self.loaded.saved(&chunks);
                self.pending.push_back(Pending { seq, started, out: out.len(), hand_over });
                self.drain()
            }
            Err(SaveError::Stopped) => {
                // Not written: a save in flight before it failed, which draining reports.
                self.log.line(format!("refused {seq} {}", now_us()));
                self.s.saves_refused += 1;
                self.drain()
            }
            Err(e) => {
                // Not accepted (with saves in flight), or of unknown outcome (without): the
                // saves in flight before it are settled and reported first.
                let _ = self.shared.world().settle_saves();
                self.drain()?;
                self.pending.push_back(Pending { seq, started, out: 0, hand_over });
                self.fail_pending(e)
            }
        }
    }

    /// Acknowledges the saves that landed; on a failure, fails every save not acknowledged.
    fn drain(&mut self) -> Result<()> {
        loop {
            match self.shared.landed() {
                Ok(ticks) if ticks.is_empty() => return Ok(()),
                Ok(ticks) => {
                    for _ in ticks {
                        let Some(p) = self.pending.pop_front() else { break };
                        self.log.line(format!("ack {} {}", p.seq, now_us()));
                        self.s.saves_acknowledged += 1;
                        let ms = p.started.elapsed().as_secs_f64() * 1e3;
                        self.save_ms.push(ms);
                        if p.out > 0 {
                            self.hand_off_ms.push(ms);
                        }
                        self.s.hand_offs_out += p.out as u64;
                        if p.hand_over {
                            self.s.areas_handed_over += 1;
                        }
                    }
                }
                Err(e) => return self.fail_pending(e),
            }
        }
    }

    /// Every save not acknowledged failed with `e`: logs each (refused: not written; error:
    /// outcome unknown), drops the areas lost and reads everything back.
    fn fail_pending(&mut self, e: SaveError) -> Result<()> {
        let (word, lost) = match &e {
            SaveError::Refused { lost } => ("refused", lost.clone()),
            _ => ("error", Vec::new()),
        };
        for p in std::mem::take(&mut self.pending) {
            self.log.line(format!("{word} {} {}", p.seq, now_us()));
            match word {
                "refused" => self.s.saves_refused += 1,
                _ => self.s.saves_failed += 1,
            }
        }
        if !lost.is_empty() {
            (self.on_event)(Event::AreasLost { server: self.shared.server(), areas: &lost });
            self.s.areas_lost += lost.len() as u64;
            self.drop_areas(&lost)?;
        }
        if word == "error" {
            tracing::warn!("a save failed ({e}); reading the held areas back");
        }
        self.read_back()
    }

    /// Hands `area` over with its last save (walkers and chunks of the area, and the lease's
    /// release, in one batch).
    fn hand_over(&mut self, area: AreaId, tick: u64) -> Result<()> {
        // An earlier save of this pass may have lost it (refused): nothing to hand over, and
        // nothing would be written.
        if !self.shared.owns(area) {
            return Ok(());
        }
        let seq = self.next_seq();
        let built = self.build_save(seq, Some(&[area]))?;
        self.log.line(format!("handover {seq} {} {}", area.x, area.z));
        let started = Instant::now();
        let result = match self.shared.hand_over(area, tick, built.save.clone()) {
            // Not held after all: nothing was written, nothing to acknowledge.
            Ok(false) => return Ok(()),
            r => r.map(|_| ()),
        };
        let accepted = result.is_ok();
        self.submitted(seq, started, result, built, true)?;
        if accepted {
            // No longer this server's, whatever the batch's outcome (a hand-over that fails
            // leaves the lease to expire).
            self.drop_areas(&[area])?;
        }
        Ok(())
    }
}

fn open_world(
    conninfo: &str,
    server: &str,
    schema: terrane::Schema,
    saves_in_flight: usize,
) -> Result<World> {
    let mut last = None;
    for _ in 0..20 {
        let b = World::builder()
            .backend(Backend::Postgres)
            .schema(schema.clone())
            .server(server)
            .saves_in_flight(saves_in_flight)
            .tiers(|b| b.l0_idle_ticks(100).l1_idle_ticks(300));
        // Three servers starting at once: one creates, the others may find it half made.
        match b.open_or_create(conninfo) {
            Ok(w) => return Ok(w),
            Err(e) => last = Some(e),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(last.expect("twenty attempts").into())
}

/// Creates the walkers, once per world (the first server to get here wins).
fn populate(world: &World, walkers: usize, width: f64) -> Result<()> {
    let store = world.durable_store();
    if store.get(tables::WORLD_PROPERTIES, POPULATION_KEY)?.is_some() {
        return Ok(());
    }
    let mut b = Batch::new();
    b.expect(tables::WORLD_PROPERTIES, POPULATION_KEY.to_vec(), None);
    b.put(
        tables::WORLD_PROPERTIES,
        POPULATION_KEY.to_vec(),
        1,
        (walkers as u64).to_le_bytes().to_vec(),
    );
    for i in 0..walkers {
        let mut uuid = [0x7e; 16];
        uuid[..8].copy_from_slice(&(i as u64).to_be_bytes());
        let x = (i as f64 + 0.5) * width / walkers as f64;
        let heading = i as f64 * 2.399_963; // the golden angle: every direction
        let w = Walker { uuid, x, z: 128.0, heading, steps: 0, stored_in: AreaId::new(0, 0) };
        let area = w.area();
        b.put(
            tables::ENTITY,
            terrane::section::keys::area_entity_key(area, &uuid).to_vec(),
            0,
            w.encode(0, 0, "init"),
        );
    }
    match store.write(&b.synced()) {
        Ok(()) | Err(terrane::store::Error::PreconditionFailed { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Runs server `n` (`server-n`) of [`SharedServerConfig::servers`] on the PostgreSQL world
/// at `conninfo` (created by the first server to come), for [`SharedServerConfig::seconds`];
/// then saves everything and releases every area in one batch. Returns what it did.
///
/// Status lines, areas lost and failed ticks go to `on_event`. A database that does not
/// answer is waited for a minute ([`Error::Unreachable`] after it).
pub fn run(
    conninfo: &str,
    n: usize,
    config: &SharedServerConfig,
    mut on_event: impl FnMut(Event<'_>),
) -> Result<SharedServerSummary> {
    if terrane::connection_string(Path::new(conninfo)).is_none() {
        return Err(Error::Setting(format!(
            "{conninfo:?} is not a PostgreSQL connection string: a shared world lives on PostgreSQL"
        )));
    }
    let servers = config.servers.max(1);
    if n >= servers {
        return Err(Error::Setting(format!(
            "server {n} must be below the servers' count {servers}"
        )));
    }
    let id = format!("server-{n}");
    let schema = terrain::schema();
    let palette = Palette::of(&schema).expect("the demo schema registers its blocks");
    let world = open_world(conninfo, &id, schema, config.saves_in_flight)?;
    let width = 2.0 * servers as f64 * 256.0;
    populate(&world, config.walkers, width)?;
    let shared = SharedWorld::new(world, config.lease_ms)?;
    let log = match &config.log {
        Some(p) => Log(Some(
            OpenOptions::new().create(true).append(true).open(p).map_err(|e| Error::io(p, e))?,
        )),
        None => Log(None),
    };
    let mut srv = Server {
        on_event: &mut on_event,
        shared,
        palette,
        servers,
        width,
        walkers: BTreeMap::new(),
        loaded: LoadedColumns::new(WALK_Y >> 4..(WALK_Y >> 4) + 1),
        log,
        audit: config.log.is_some(),
        run: now_us() / 1000,
        seq: 0,
        pending: VecDeque::new(),
        read_ahead: HashMap::new(),
        tick: 0,
        handed_out: Vec::new(),
        s: SharedServerSummary { server: id.clone(), servers, ..SharedServerSummary::default() },
        save_ms: Vec::new(),
        hand_off_ms: Vec::new(),
    };
    srv.log.line(format!("start {id} {}", now_us()));
    let period = Duration::from_secs_f64(1.0 / config.tps.max(1.0));
    let started = Instant::now();
    let mut next_line = Duration::from_secs(1);
    let mut tick = srv.shared.world().tick();
    let mut last_saves = 0;
    // Balance passes (presence, leases, arrivals: a few round trips) four times a lease.
    let balance_every = Duration::from_millis((config.lease_ms / 4).max(1));
    let mut last_balance: Option<Instant> = None;
    // The balance passes' reads (presence, leases, arrivals) run on a thread of their own.
    let surveyor = srv.shared.surveyor();
    let (ask, asked_rx) = std::sync::mpsc::channel::<(u64, Vec<Lease>)>();
    let (answer, surveys) = std::sync::mpsc::channel::<(u64, u64, terrane::Result<Survey>)>();
    let areas = srv.areas();
    let survey_thread = std::thread::Builder::new()
        .name(format!("{id}-survey"))
        .spawn(move || {
            let home = |a: AreaId| format!("server-{}", a.x.rem_euclid(servers as i32));
            for (tick, held) in asked_rx {
                let survey = surveyor.balance(&held, &areas, home, Server::now_ms());
                if answer.send((tick, now_us(), survey)).is_err() {
                    return;
                }
            }
        })
        .map_err(|e| Error::Setting(format!("cannot start the balance thread: {e}")))?;
    let mut surveying = false;
    let mut save_wait = Duration::ZERO;
    let mut tick_ms = Vec::new();
    // When the database is unreachable (a restart, a failover), ticks fail: the server
    // reads its areas back once it answers again, and gives up after a minute without it.
    let mut failing_since: Option<Instant> = None;
    while started.elapsed().as_secs_f64() < config.seconds {
        let t0 = Instant::now();
        tick += 1;
        let mut step = |srv: &mut Server<'_>| -> Result<()> {
            // Saves that landed are acknowledged first, whatever fails later in the tick.
            srv.drain()?;
            if failing_since.is_some() {
                srv.resync()?;
            }
            srv.tick = tick;
            if !surveying && last_balance.is_none_or(|t| t.elapsed() >= balance_every) {
                last_balance = Some(Instant::now());
                let held: Vec<Lease> = srv.shared.held().cloned().collect();
                surveying = ask.send((tick, held)).is_ok();
            }
            if let Ok((asked, taken_us, survey)) = surveys.try_recv() {
                surveying = false;
                srv.balance(tick, asked, taken_us, survey?)?;
            }
            let lost = srv.shared.renew(Server::now_ms())?;
            if !lost.is_empty() {
                srv.s.areas_lost += lost.len() as u64;
                srv.drop_areas(&lost)?;
            }
            srv.load_around()?;
            srv.tick_walkers(config.speed);
            if tick.is_multiple_of(config.save_every.max(1)) {
                srv.save(tick)?;
            }
            save_wait += srv.shared.world().take_save_wait();
            Ok(())
        };
        match step(&mut srv) {
            Ok(()) => failing_since = None,
            Err(e) => {
                let since = *failing_since.get_or_insert_with(Instant::now);
                (srv.on_event)(Event::TickFailed { server: &id, tick, error: &e });
                if since.elapsed() > Duration::from_secs(60) {
                    return Err(Error::Unreachable(Box::new(e)));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        srv.s.ticks += 1;
        if started.elapsed() >= next_line {
            next_line += Duration::from_secs(1);
            let status = ServerStatus {
                server: id.clone(),
                seconds: started.elapsed().as_secs_f64(),
                tick,
                areas: srv.shared.held().map(|l| (l.area, l.epoch)).collect(),
                walkers: srv.walkers.len(),
                regions: srv.shared.world().regionizer().region_count(),
                chunks: srv.loaded.len(),
                saves_last_second: srv.s.saves_acknowledged - last_saves,
                hand_offs_out: srv.s.hand_offs_out,
                arrivals: srv.s.arrivals,
                saves_refused: srv.s.saves_refused,
            };
            last_saves = srv.s.saves_acknowledged;
            (srv.on_event)(Event::Status(&status));
        }
        tick_ms.push(t0.elapsed().as_secs_f64() * 1e3);
        if let Some(rest) = period.checked_sub(t0.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    drop(ask);
    let _ = survey_thread.join();
    // A clean stop: everything saved and every area released, in one batch.
    let seq = srv.next_seq();
    let built = srv.build_save(seq, None)?;
    srv.log.line(format!("release {seq}"));
    let result = srv.shared.release_all(tick, built.save.clone());
    srv.submitted(seq, Instant::now(), result, built, false)?;
    // Its failure, if any, is reported by draining.
    let _ = srv.shared.world().settle_saves();
    srv.drain()?;
    srv.log.line(format!("stop {id} {}", now_us()));
    let mut s = std::mem::take(&mut srv.s);
    s.seconds = started.elapsed().as_secs_f64();
    s.saves_per_second = s.saves_acknowledged as f64 / s.seconds.max(1e-9);
    s.save_p50_ms = percentile(&mut srv.save_ms, 0.5).unwrap_or(0.0);
    s.save_p99_ms = percentile(&mut srv.save_ms, 0.99).unwrap_or(0.0);
    s.hand_off_p50_ms = percentile(&mut srv.hand_off_ms, 0.5).unwrap_or(0.0);
    s.save_wait_ms = save_wait.as_secs_f64() * 1e3;
    s.tick_p50_ms = percentile(&mut tick_ms, 0.5).unwrap_or(0.0);
    s.tick_p99_ms = percentile(&mut tick_ms, 0.99).unwrap_or(0.0);
    s.walkers_at_end = srv.walkers.len();
    Ok(s)
}

/// The column chunk `p` is in.
fn column_of(p: ChunkPos) -> ColumnPos {
    ColumnPos::new(p.x as i32, p.z as i32)
}

/// The area column `c` is in.
fn area_of(c: ColumnPos) -> AreaId {
    AreaId::of_chunk(ChunkPos::new(c.x.into(), 0, c.z.into()))
}
