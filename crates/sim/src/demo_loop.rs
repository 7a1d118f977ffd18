//! The demo's main loop: each tick players walk, columns load and unload at the edge of the
//! view distance, pre-generated columns arrive, the arena moves through its life, and the
//! tick's changes are saved as one atomic batch; then everyone logs out.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use terrane::snapshot::ChunkAccess as _;
use terrane::worldgen::hills::{self as terrain, Palette};
use terrane::{
    BlockPos, Chunk, ChunkPos, ColumnPos, PlayerPos, SharedDistanceGraph, TickSave, Uuid, World,
};

use crate::arena::{Arena, SOAK_ARENA_EVERY, arena_positions};
use crate::demo::{DemoConfig, DemoSummary};
use crate::pregen::{Pregen, start_pregen};
use crate::region_tick::{Shared, mix};
use crate::soak::{SoakRecorder, verdict};
use crate::{Error, Event, Result};

/// A walking player.
struct Player {
    uuid: Uuid,
    x: f64,
    z: f64,
    heading: f64,
    chunk: ChunkPos,
}

impl Player {
    fn block(&self, seed: u64) -> BlockPos {
        let (x, z) = (self.x.floor() as i64, self.z.floor() as i64);
        BlockPos::new(x, terrain::height(seed, x, z) + 1, z)
    }
}

/// The columns within `view` chunks of `p` (a square).
fn columns_around(p: BlockPos, view: i64) -> impl Iterator<Item = ColumnPos> {
    let (cx, cz) = (p.x >> 4, p.z >> 4);
    (cz - view..=cz + view)
        .flat_map(move |z| (cx - view..=cx + view).map(move |x| ColumnPos::new(x as i32, z as i32)))
}

/// Runs the demo on `world`: set-up, the main tick loop, shut-down; returns the summary.
pub(crate) fn simulate(
    location: &Path,
    config: &DemoConfig,
    world: &mut World,
    shared: &Arc<Shared>,
    palette: Palette,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<DemoSummary> {
    let started = Instant::now();
    let mut sim = Sim::new(location, config, world, shared, palette, on_event)?;
    sim.run_ticks()?;
    sim.pregen.shut_down();
    sim.tally_ticks();
    sim.log_out()?;
    sim.finish(started)
}

/// A demo run: the state its set-up, ticks and shut-down share, and the summary it fills in.
struct Sim<'a> {
    location: &'a Path,
    config: &'a DemoConfig,
    /// Where progress goes.
    on_event: &'a mut dyn FnMut(Event<'_>),
    world: &'a mut World,
    shared: &'a Shared,
    palette: Palette,
    /// The world's distance graph: which columns are generated.
    graph: Arc<SharedDistanceGraph>,
    /// Target duration of a tick (zero: no pacing).
    period: Duration,
    /// The regionizer history: a line per chunk added or removed.
    region_log: Box<dyn Write>,
    /// Players stay within this many blocks of spawn.
    walk: f64,
    players: Vec<Player>,
    arena: Arena,
    pregen: Pregen,
    pregen_start: Instant,
    /// Columns in the disc the pre-generator fills.
    disc: u64,
    /// How long after its start the pre-generator's disc was complete.
    pregen_done_at: Option<Duration>,
    /// How long each tick's save took.
    save_nanos: Vec<u64>,
    /// The current game tick, and the first one this run simulates.
    tick: u64,
    first_tick: u64,
    /// The chunk each player's entity is listed in.
    entity_chunk: HashMap<Uuid, ChunkPos>,
    /// State of the players' random turns.
    rng: u64,
    /// In a soak: the per-interval recorder.
    soak: Option<SoakRecorder>,
    summary: DemoSummary,
}

/// its header.
fn open_region_log(location: &Path, config: &DemoConfig) -> Result<Box<dyn Write>> {
    // The region history goes beside the world; a PostgreSQL world has no directory.
    let mut region_log: Box<dyn Write> = if terrane::connection_string(location).is_some() {
        Box::new(std::io::sink())
    } else {
        Box::new(
            fs::File::create(location.join("regions.log")).map_err(|e| Error::io(location, e))?,
        )
    };
    writeln!(
        region_log,
        "# terrane demo: regionizer history (replay: terrane regionizer replay --dim 3 --shift {})",
        config.region_shift
    )
    .map_err(|e| Error::io(location, e))?;
    Ok(region_log)
}

/// The players, spread evenly on a circle of 0.8 times `walk` around spawn, each heading
/// across it.
fn spawn_players(config: &DemoConfig, walk: f64) -> Vec<Player> {
    (0..config.players)
        .map(|i| {
            let a = i as f64 / config.players.max(1) as f64 * std::f64::consts::TAU;
            let (x, z) = (a.cos() * walk * 0.8, a.sin() * walk * 0.8);
            let mut uuid = [0u8; 16];
            uuid[..8].copy_from_slice(&(0xdead_0000 + i as u64).to_be_bytes());
            uuid[8..].copy_from_slice(&config.seed.to_be_bytes());
            Player {
                uuid,
                x,
                z,
                heading: a + std::f64::consts::PI,
                chunk: ChunkPos::new(i64::MIN, 0, 0),
            }
        })
        .collect()
}

impl<'a> Sim<'a> {
    /// Sets the run up: summary, region log, players, arena and restore queue, the
    /// pre-generator's threads and the progress bars.
    fn new(
        location: &'a Path,
        config: &'a DemoConfig,
        world: &'a mut World,
        shared: &'a Shared,
        palette: Palette,
        on_event: &'a mut dyn FnMut(Event<'_>),
    ) -> Result<Sim<'a>> {
        let mut summary = DemoSummary {
            dir: location.display().to_string(),
            backend: config.backend.unwrap_or_default().name().to_string(),
            seed: config.seed,
            restore_budget_ms: config.restore_budget_ms,
            ..DemoSummary::default()
        };
        let graph = world.distance().clone();
        let period = if config.tps > 0.0 {
            Duration::from_secs_f64(1.0 / config.tps)
        } else {
            Duration::ZERO
        };
        let region_log = open_region_log(location, config)?;

        // Players: spread around spawn, walking; they stay within `walk` blocks of it.
        let walk = config.walk.max(16.0);
        let players = spawn_players(config, walk);

        let arena = Arena::new(config, walk);
        summary.arena_blocks = arena.bounds.volume() as u64;

        let pregen = start_pregen(
            graph.clone(),
            world.schema(),
            (config.seed, config.pregen_radius, config.pregen_threads),
            palette,
        );
        let pregen_start = Instant::now();
        let disc = terrane::DistanceGraph::disc_size(ColumnPos::new(0, 0), config.pregen_radius)?;
        let tick = world.tick();
        Ok(Sim {
            location,
            config,
            on_event,
            world,
            shared,
            palette,
            graph,
            period,
            region_log,
            walk,
            players,
            arena,
            pregen,
            pregen_start,
            disc,
            pregen_done_at: None,
            save_nanos: Vec::new(),
            tick,
            first_tick: tick + 1,
            entity_chunk: HashMap::new(),
            rng: config.seed,
            soak: config
                .soak
                .map(|s| SoakRecorder::new(Duration::from_secs_f64(s.row_seconds.max(0.1)))),
            summary,
        })
    }

    /// The main loop, paced to --tps: tick after tick until the ticks asked for have run, the
    /// pre-generator has filled its disc and the arena is restored.
    fn run_ticks(&mut self) -> Result<()> {
        loop {
            self.tick += 1;
            let t0 = Instant::now();
            let mut save = TickSave::new();

            // 1. Players walk.
            let blocks = self.walk_players();

            // 2. Chunks load and unload at the edges of the view distance.
            let want: HashSet<ColumnPos> =
                blocks.iter().flat_map(|b| columns_around(*b, self.config.view)).collect();
            self.unload_columns(&want)?;
            self.load_columns(&want)?;

            // 3. Players are entities: the chunk they stand in lists them; saved every tick.
            self.record_players(&mut save);

            // 4. Pre-generated columns arrive; those generated meanwhile by a load are dropped.
            self.receive_pregen(&mut save)?;

            // 5. The arena: captured, damaged, restored under the tick budget.
            self.tick_arena(&mut save)?;

            // 6. Chunks changed: by region ticks, by players, generated by loads, and those of
            //    columns unloaded.
            let changed = self.shared.loaded.read().expect("loaded").put_changes(
                &mut save,
                self.world.schema(),
                |_| true,
            );

            // 7. The tick's save: one atomic batch.
            self.save_tick(save)?;
            self.shared.loaded.write().expect("loaded").saved(&changed);

            self.sample_and_maintain()?;
            if let Some(soak) = &mut self.soak {
                soak.tick(&self.save_nanos, || self.world.store().cache_bytes());
            }
            if self.progress()? {
                break;
            }
            if let Some(rest) = self.period.checked_sub(t0.elapsed()) {
                std::thread::sleep(rest);
            }
        }
        Ok(())
    }

    /// Moves each player a step (turning now and then, back towards spawn at the edge) and
    /// tells the region ticks and the world where they stand; returns their blocks.
    fn walk_players(&mut self) -> Vec<BlockPos> {
        let (seed, tick) = (self.config.seed, self.tick);
        for p in &mut self.players {
            self.rng = mix(self.rng, tick as i64, 7);
            if self.rng.is_multiple_of(40) {
                p.heading += ((self.rng >> 16) as f64 / (u64::MAX >> 16) as f64 - 0.5) * 0.6;
            }
            p.x += p.heading.cos() * self.config.speed;
            p.z += p.heading.sin() * self.config.speed;
            if p.x.hypot(p.z) > self.walk {
                p.heading = p.z.atan2(p.x) + std::f64::consts::PI + 0.3;
            }
        }
        let blocks: Vec<BlockPos> = self.players.iter().map(|p| p.block(seed)).collect();
        *self.shared.players.write().expect("players lock") = blocks.clone();
        self.world.set_players(
            &blocks.iter().map(|b| PlayerPos::new(0, b.x, b.y, b.z)).collect::<Vec<_>>(),
        );
        blocks
    }

    /// Unloads the loaded columns outside `want` (their changed chunks wait for the tick's
    /// save).
    fn unload_columns(&mut self, want: &HashSet<ColumnPos>) -> Result<()> {
        let mut loaded = self.shared.loaded.write().expect("loaded");
        let mut leaving: Vec<ColumnPos> = loaded.columns().filter(|c| !want.contains(c)).collect();
        leaving.sort();
        for col in leaving {
            for pos in loaded.column_chunks(col) {
                writeln!(self.region_log, "remove {} {} {}", pos.x, pos.y, pos.z)
                    .map_err(|e| Error::io(self.location, e))?;
                self.summary.player_chunk_unloads += 1;
            }
            loaded.unload(self.world, col)?;
        }
        Ok(())
    }

    /// Loads the columns of `want` not loaded yet, in one read of the world, generating
    /// those never generated (saved with the tick).
    fn load_columns(&mut self, want: &HashSet<ColumnPos>) -> Result<()> {
        let (seed, palette) = (self.config.seed, self.palette);
        let mut loaded = self.shared.loaded.write().expect("loaded");
        let mut arriving: Vec<ColumnPos> =
            want.iter().filter(|c| !loaded.is_loaded(**c)).copied().collect();
        arriving.sort();
        let (mut chunks, mut nanos) = (0u64, 0u64);
        let generated = loaded.load(self.world, &arriving, &mut |col| {
            let t = Instant::now();
            let fresh: Vec<(i64, Chunk)> =
                terrain::column(seed, col, &palette).into_iter().map(|(p, c)| (p.y, c)).collect();
            nanos += t.elapsed().as_nanos() as u64;
            chunks += fresh.len() as u64;
            Some(fresh)
        })?;
        self.pregen.gen_nanos.fetch_add(nanos, Ordering::Relaxed);
        self.summary.chunks_generated += chunks;
        self.summary.columns_generated += generated.len() as u64;
        for col in arriving {
            for pos in loaded.column_chunks(col) {
                writeln!(self.region_log, "add {} {} {}", pos.x, pos.y, pos.z)
                    .map_err(|e| Error::io(self.location, e))?;
                self.summary.player_chunk_loads += 1;
            }
        }
        Ok(())
    }

    /// Lists each player in the chunk it stands in (taking it off the last one) and puts its
    /// position in `save`, as an entity and as a world property.
    fn record_players(&mut self, save: &mut TickSave) {
        let (seed, shared) = (self.config.seed, self.shared);
        for p in &mut self.players {
            let b = p.block(seed);
            let now = b.chunk();
            let loaded = shared.loaded.read().expect("loaded");
            if now != p.chunk && loaded.chunk(now).is_some() {
                if let Some(mut old) = self.entity_chunk.get(&p.uuid).and_then(|c| loaded.chunk(*c))
                {
                    old.remove_entity(&p.uuid);
                    loaded.mark_changed(p.chunk);
                }
                if let Some(mut c) = loaded.chunk(now) {
                    c.add_entity(p.uuid);
                }
                loaded.mark_changed(now);
                self.entity_chunk.insert(p.uuid, now);
                p.chunk = now;
            }
            let mut record = Vec::with_capacity(24);
            for v in [b.x, b.y, b.z] {
                record.extend_from_slice(&v.to_le_bytes());
            }
            save.put_entity(p.uuid, record.clone());
            save.put_object(
                terrane::tables::WORLD_PROPERTIES,
                [b"demo:player:".as_slice(), &p.uuid].concat(),
                record,
            );
        }
    }

    /// Puts up to 64 pre-generated columns in `save` (except chunks it already holds), marks
    /// them generated and reports the pre-generation progress.
    fn receive_pregen(&mut self, save: &mut TickSave) -> Result<()> {
        let mut cols = Vec::new();
        while cols.len() < 64 {
            let Some((col, chunks)) = self.pregen.try_recv() else { break };
            if self.graph.contains(col) {
                continue;
            }
            self.summary.chunks_generated += chunks.len() as u64;
            self.summary.columns_generated += 1;
            self.summary.pregen_columns += 1;
            // A column loaded meanwhile was generated by its load (the graph holds it).
            for (pos, bytes) in chunks {
                save.put_chunk(0, pos, bytes);
            }
            cols.push(col);
        }
        self.graph.complete_many(cols.iter().copied())?;
        let completed =
            self.graph.count_completed(ColumnPos::new(0, 0), self.config.pregen_radius)?;
        (self.on_event)(Event::Pregenerated { completed, disc: self.disc });
        if completed >= self.disc && self.pregen_done_at.is_none() {
            self.pregen_done_at = Some(self.pregen_start.elapsed());
        }
        Ok(())
    }

    /// The arena's part of the tick: its capture, its damage, or a slice of its restore.
    fn tick_arena(&mut self, save: &mut TickSave) -> Result<()> {
        if self.tick == self.first_tick + self.arena.capture_tick {
            self.capture_arena(save)?;
        }
        let captured = self.arena.world.is_some() && self.arena.snapshot.is_some();
        if self.tick == self.first_tick + self.arena.damage_tick && captured {
            self.damage_arena(save);
        } else if self.arena.restore_pending && self.arena.world.is_some() {
            self.restore_arena(save)?;
        }
        Ok(())
    }

    /// Generates the arena's missing columns (into `save`), loads its chunks and captures its
    /// snapshot.
    fn capture_arena(&mut self, save: &mut TickSave) -> Result<()> {
        let (seed, palette, arena) = (self.config.seed, self.palette, self.arena.bounds);
        let cols: HashSet<ColumnPos> = arena
            .sub_regions()
            .map(|r| ColumnPos::new(r.chunk.x as i32, r.chunk.z as i32))
            .collect();
        let mut cols: Vec<_> = cols.into_iter().collect();
        cols.sort();
        let mut fresh = Vec::new();
        for col in cols {
            if !self.graph.contains(col) {
                for (p, c) in terrain::column(seed, col, &palette) {
                    fresh.push((p, c));
                }
                self.summary.columns_generated += 1;
                self.world.mark_generated(col)?;
            }
        }
        self.summary.chunks_generated += fresh.len() as u64;
        let mut aw = self.world.arena(arena)?;
        for (p, c) in fresh {
            if aw.chunks.contains_key(&p) {
                aw.chunks.insert(p, c.clone());
            }
            save.put_chunk(0, p, c.encode(self.world.schema()));
        }
        let t = Instant::now();
        let snap = terrane::Snapshot::capture(&aw, arena)?;
        self.summary.arena_capture_ms = t.elapsed().as_secs_f64() * 1e3;
        self.arena.snapshot = Some(Arc::new(snap));
        self.arena.world = Some(aw);
        Ok(())
    }

    /// Blows a crater into the captured arena, puts its chunks in `save` and queues its
    /// restore, which runs from the next tick on.
    fn damage_arena(&mut self, save: &mut TickSave) {
        let (arena, arena_edge, palette) = (self.arena.bounds, self.arena.edge, self.palette);
        let aw = self.arena.world.as_mut().expect("captured");
        let snap = self.arena.snapshot.as_ref().expect("captured");
        // An explosion in the middle and a crater of cobblestone rubble.
        let c = BlockPos::new(arena.min().x + arena_edge / 2, 68, 0);
        let r = (arena_edge / 3).max(2);
        for x in -r..=r {
            for y in -r..=r {
                for z in -r..=r {
                    let d2 = x * x + y * y + z * z;
                    let p = BlockPos::new(c.x + x, c.y + y, c.z + z);
                    if d2 <= r * r && arena.contains(p) {
                        let b = if d2 > (r - 2) * (r - 2) && (x + z) % 3 == 0 {
                            palette.cobble
                        } else {
                            palette.air
                        };
                        if aw.get_block(p) != Some(b) {
                            aw.set_block(p, b);
                            self.summary.arena_damaged_blocks += 1;
                        }
                    }
                }
            }
        }
        for (pos, ch) in &aw.chunks {
            save.put_chunk(0, *pos, ch.encode(self.world.schema()));
        }
        let (done, written) = (self.arena.restore_done.clone(), self.arena.restore_written.clone());
        self.arena.queue.on_complete(move |_, r| {
            if let Ok(stats) = r {
                written.store(stats.written, Ordering::Relaxed);
                done.store(true, Ordering::Relaxed);
            }
        });
        self.arena.queue.push(snap.clone(), true);
        self.arena.restore_pending = true;
        self.arena.restore_first_tick = self.tick + 1;
    }

    /// Runs the restore queue within the tick budget; once it is empty, puts the arena's
    /// chunks in `save` and checks the arena against the snapshot.
    fn restore_arena(&mut self, save: &mut TickSave) -> Result<()> {
        let (tick, s, arena) = (self.tick, &mut self.summary, &mut self.arena);
        let aw = arena.world.as_mut().expect("captured");
        let report = arena.queue.tick(aw);
        let ms = report.elapsed.as_secs_f64() * 1e3;
        s.restore_ms += ms;
        s.restore_max_tick_ms = s.restore_max_tick_ms.max(ms);
        s.restore_ticks += 1;
        if arena.queue.is_empty() {
            arena.restore_pending = false;
            for (pos, ch) in &aw.chunks {
                save.put_chunk(0, *pos, ch.encode(self.world.schema()));
            }
            let snap = arena.snapshot.as_ref().expect("captured");
            let again = terrane::Snapshot::capture(&*aw, arena.bounds)?;
            s.restore_exact = arena.restore_done.load(Ordering::Relaxed)
                && arena_positions(arena.bounds).all(|p| again.block(p) == snap.block(p));
            s.restore_blocks_written = arena.restore_written.load(Ordering::Relaxed);
            tracing::info!(tick, ticks = tick + 1 - arena.restore_first_tick, "arena restored");
            if let Some(soak) = &mut self.soak {
                // Continuous play: the arena is damaged again a while later.
                soak.restored(s.restore_exact);
                arena.damage_tick = tick - self.first_tick + SOAK_ARENA_EVERY;
                arena.restore_done.store(false, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// Writes the tick's save and times it.
    fn save_tick(&mut self, save: TickSave) -> Result<()> {
        let t = Instant::now();
        self.world.save_tick(self.tick, save).map_err(|source| Error::SaveTick {
            world: self.location.display().to_string(),
            tick: self.tick,
            source,
        })?;
        self.save_nanos.push(t.elapsed().as_nanos() as u64);
        Ok(())
    }

    /// Samples the region count every 10 ticks; runs a maintenance pass every 50.
    fn sample_and_maintain(&mut self) -> Result<()> {
        if self.tick.is_multiple_of(10) {
            self.summary
                .regions_over_time
                .push((self.tick, self.world.regionizer().region_count()));
        }
        if self.tick.is_multiple_of(50) {
            let m = self.world.maintain(self.tick)?;
            self.summary.maintenance_l0_to_l1 += m.l0_to_l1 as u64;
            self.summary.maintenance_l1_to_l2 += m.l1_to_l2 as u64;
        }
        Ok(())
    }

    /// Reports the ticks run; returns whether the run is done (its ticks ran, the disc is
    /// pre-generated, the arena restored), and fails when it runs far too long.
    fn progress(&mut self) -> Result<bool> {
        let ran = self.tick + 1 - self.first_tick;
        if let (Some(soak), Some(minutes)) = (&self.soak, self.config.soak.map(|s| s.minutes)) {
            // A soak ends on time, between two arena cycles, once a row has counted a
            // restore: a slow machine plays longer instead of ending with nothing to judge.
            return Ok(soak.elapsed().as_secs_f64() >= minutes * 60.0
                && !self.arena.restore_pending
                && soak.restores_in_rows() >= 1);
        }
        if ran <= self.config.ticks {
            (self.on_event)(Event::Ticked { ran, ticks: self.config.ticks });
        }
        let arena_finished =
            self.tick > self.first_tick + self.arena.damage_tick && !self.arena.restore_pending;
        if ran >= self.config.ticks && self.pregen_done_at.is_some() && arena_finished {
            return Ok(true);
        }
        if ran > self.config.ticks.saturating_mul(20).max(20_000) {
            return Err(Error::Stuck);
        }
        Ok(false)
    }

    /// Fills in the summary's numbers of the main loop: ticks, pre-generation, region ticks,
    /// generation and save rates.
    fn tally_ticks(&mut self) {
        let s = &mut self.summary;
        let save_nanos = &self.save_nanos;
        s.pregen_seconds = self.pregen_done_at.map_or(0.0, |d| d.as_secs_f64());
        s.ticks = self.tick + 1 - self.first_tick;
        s.region_ticks = self.world.scheduler().map_or(0, |sc| sc.ticks());
        s.region_edits = self.shared.edits.load(Ordering::Relaxed);
        s.max_parallel_region_ticks = self.shared.max_running.load(Ordering::SeqCst);
        let gen_s = self.pregen.gen_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        s.generation_chunks_per_sec =
            if gen_s > 0.0 { s.chunks_generated as f64 / gen_s } else { 0.0 };
        s.tick_saves = save_nanos.len() as u64;
        let total: u64 = save_nanos.iter().sum();
        s.save_mean_ms = total as f64 / save_nanos.len().max(1) as f64 / 1e6;
        s.save_max_ms = save_nanos.iter().copied().max().unwrap_or(0) as f64 / 1e6;
        s.saves_per_sec =
            if total > 0 { save_nanos.len() as f64 / (total as f64 / 1e9) } else { 0.0 };
    }

    /// Everyone logs out: the last changes are saved, every chunk unloads, and a maintenance
    /// pass later in game time demotes what is idle or far.
    fn log_out(&mut self) -> Result<()> {
        let mut save = TickSave::new();
        let mut loaded = self.shared.loaded.write().expect("loaded");
        let mut cols: Vec<ColumnPos> = loaded.columns().collect();
        cols.sort();
        for col in cols {
            // Not logged: regions.log keeps the history up to the last tick, so a replay
            // shows the partition the players left.
            loaded.unload(self.world, col)?;
        }
        let changed = loaded.put_changes(&mut save, self.world.schema(), |_| true);
        self.tick += 1;
        self.world.save_tick(self.tick, save)?;
        loaded.saved(&changed);
        drop(loaded);
        let m = self.world.maintain(self.tick + 100)?;
        self.summary.maintenance_l0_to_l1 += m.l0_to_l1 as u64;
        self.summary.maintenance_l1_to_l2 += m.l1_to_l2 as u64;
        Ok(())
    }

    /// Flushes the region history; returns the summary, with the wall time so far.
    fn finish(mut self, started: Instant) -> Result<DemoSummary> {
        self.region_log.flush().map_err(|e| Error::io(self.location, e))?;
        if let Some(soak) = self.soak.take() {
            self.summary.soak_verdict = Some(verdict(&soak.rows));
            self.summary.soak = soak.rows;
        }
        self.summary.wall_seconds = started.elapsed().as_secs_f64();
        Ok(self.summary)
    }
}
