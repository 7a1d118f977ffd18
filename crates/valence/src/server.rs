//! [`ServerBuilder`]: a whole Minecraft server on a terrane world, for the `terrane serve`
//! command and for tests.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use terrane::World;
use terrane::stats::percentile;
use valence::app::AppExit;
use valence::prelude::*;

use crate::plugin::{Saved, Settings, TerranePlugin, TerraneSet};
use crate::world::TerraneWorld;
use crate::{Error, Result};

/// What the server reports while it runs, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerEvent {
    /// The server accepts players at `address`.
    Listening {
        /// The address.
        address: SocketAddr,
    },
    /// A save was acknowledged: every change up to `tick` is durable.
    Saved {
        /// The terrane tick saved.
        tick: u64,
    },
    /// Once a second.
    Status(Status),
    /// An edit was applied (only with [`ServerBuilder::report_edits`]). It is reported
    /// before the save that holds it: it is durable once a [`Saved`](ServerEvent::Saved)
    /// with a tick at or after its own follows (with
    /// [`players_apart`](ServerBuilder::players_apart), a save of the chunks), and a server
    /// stopped in between reported every edit its last save holds.
    Applied(crate::Applied),
    /// The server stopped after a last save; `tick` is the last durable tick.
    Stopped {
        /// The last durable tick.
        tick: u64,
    },
}

/// The server's state, reported once a second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Status {
    /// Players connected.
    pub players: usize,
    /// Columns loaded.
    pub columns: usize,
    /// The last tick whose save was acknowledged.
    pub durable_tick: u64,
    /// Changed chunks waiting for the next save.
    pub unsaved_chunks: usize,
    /// Ticks in the last second: the time from the start of one to its end, median and
    /// 99th percentile (nearest rank).
    pub tick_p50: Duration,
    /// See [`tick_p50`](Status::tick_p50).
    pub tick_p99: Duration,
    /// Saves in the last second (the world's `save_tick`: with saves in flight, building the
    /// batch and handing it over, waits for room included; without, its fsync too): median and
    /// 99th percentile; zero when none ran.
    pub save_p50: Duration,
    /// See [`save_p50`](Status::save_p50).
    pub save_p99: Duration,
    /// Saves in the last second.
    pub saves: usize,
    /// Saves accepted and not yet durable (with saves in flight).
    pub saves_in_flight: u64,
    /// How long the last second's saves waited for room among the saves in flight: the
    /// store falling behind, slowing the ticks (backpressure).
    pub save_wait: Duration,
}

/// Builds and runs a Minecraft Java 1.20.1 server (Valence, offline mode) on a terrane
/// world.
#[derive(Clone, Debug)]
pub struct ServerBuilder {
    address: SocketAddr,
    max_players: usize,
    settings: Settings,
    control: Option<std::path::PathBuf>,
}

impl Default for ServerBuilder {
    fn default() -> Self {
        Self {
            address: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 25565),
            max_players: 20,
            settings: Settings::default(),
            control: None,
        }
    }
}

type Observer = Box<dyn FnMut(ServerEvent) + Send>;

#[derive(Resource)]
struct Runner {
    on_event: Mutex<Observer>,
    stop: Arc<AtomicBool>,
    stopping: bool,
    failure: Arc<Mutex<Option<Error>>>,
    last_status: i64,
    tick_started: Option<Instant>,
    tick_times: Vec<Duration>,
    save_times: Vec<Duration>,
}

impl ServerBuilder {
    /// The defaults: 127.0.0.1:25565, 20 players, the plugin's [`Settings::default`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The address to listen on (default 127.0.0.1:25565).
    pub fn address(mut self, address: SocketAddr) -> Self {
        self.address = address;
        self
    }

    /// Players admitted at once (default 20).
    pub fn max_players(mut self, n: usize) -> Self {
        self.max_players = n;
        self
    }

    /// Save every `n` ticks (default 1: each tick that changed something).
    pub fn save_every(mut self, n: u32) -> Self {
        self.settings.save_every = n;
        self
    }

    /// Saves players apart from the chunks and containers, every `n` ticks, as vanilla
    /// Minecraft and most servers do (default: together, in one save). For comparison only:
    /// see [`Settings::players_apart`].
    pub fn players_apart(mut self, n: Option<u32>) -> Self {
        self.settings.players_apart = n;
        self
    }

    /// Whether every applied edit is reported as [`ServerEvent::Applied`] (default `false`).
    pub fn report_edits(mut self, on: bool) -> Self {
        self.settings.record_edits = on;
        self
    }

    /// The largest view distance granted, in chunks (default 10).
    pub fn view_distance(mut self, chunks: u8) -> Self {
        self.settings.max_view_distance = chunks;
        self
    }

    /// The terrain of columns the world does not hold yet (default hills of seed 0).
    pub fn terrain(mut self, terrain: terrane::worldgen::Terrain) -> Self {
        self.settings.terrain = terrain;
        self
    }

    /// Players' game mode when they first join (default creative).
    pub fn game_mode(mut self, mode: GameMode) -> Self {
        self.settings.game_mode = mode;
        self
    }

    /// Listens on a control socket at `path` (Unix only; default none): other processes
    /// ask the server to restore areas or boxes from a backup there
    /// ([`control::request_restore`](crate::control::request_restore)). A socket file left
    /// by a killed server is replaced; the file is removed when the server stops.
    pub fn control_socket(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.control = Some(path.into());
        self
    }

    /// The plugin's settings (default [`Settings::default`]).
    pub fn settings(mut self, settings: Settings) -> Self {
        self.settings = settings;
        self
    }

    /// Serves `world` until `stop` turns true (a signal handler sets it) or a save fails:
    /// then saves what changed and returns the last durable tick. `on_event` hears every
    /// [`ServerEvent`], on the server's thread.
    pub fn run(
        self,
        world: World,
        stop: Arc<AtomicBool>,
        on_event: impl FnMut(ServerEvent) + Send + 'static,
    ) -> Result<u64> {
        if self.settings.save_every == 0 || self.settings.players_apart == Some(0) {
            return Err(Error::Setting("save every 0 ticks: give 1 or more".into()));
        }
        if self.max_players == 0 {
            return Err(Error::Setting("max players 0: give 1 or more".into()));
        }
        // Valence reports a taken port only in its log: find out first.
        let listener = TcpListener::bind(self.address)
            .map_err(|source| Error::Bind { address: self.address, source })?;
        let address = listener.local_addr().unwrap_or(self.address);
        drop(listener);
        // A joining player's record is read at login, into the cache of the saves in flight.
        let callbacks = match world.reads_ahead() {
            true => {
                let store = Arc::clone(world.tiered().store());
                valence::network::ErasedNetworkCallbacks::new(crate::login::ReadPlayerAhead {
                    store,
                })
            }
            false => valence::network::ErasedNetworkCallbacks::default(),
        };
        let terrane = TerraneWorld::new(world, self.settings.stand_in, self.settings.terrain)?;
        let durable = Arc::new(Mutex::new(terrane.durable_tick()));
        let plugin = TerranePlugin::new(terrane, self.settings);
        let control = match &self.control {
            #[cfg(unix)]
            Some(path) => Some(crate::control::Listener::bind(path, plugin.restore_handle())?),
            #[cfg(not(unix))]
            Some(_) => return Err(Error::Setting("a control socket needs Unix".into())),
            None => None,
        };
        let failure = Arc::new(Mutex::new(None));
        let mut on_event: Observer = Box::new(on_event);
        on_event(ServerEvent::Listening { address });
        let runner = Runner {
            on_event: Mutex::new(on_event),
            stop,
            stopping: false,
            failure: Arc::clone(&failure),
            last_status: 0,
            tick_started: None,
            tick_times: Vec::new(),
            save_times: Vec::new(),
        };
        let last = Arc::clone(&durable);
        App::new()
            .insert_resource(NetworkSettings {
                connection_mode: ConnectionMode::Offline,
                address,
                max_players: self.max_players,
                callbacks,
                ..Default::default()
            })
            .add_plugins(DefaultPlugins)
            .add_plugins(plugin)
            .insert_resource(runner)
            .add_systems(First, |mut r: ResMut<Runner>| r.tick_started = Some(Instant::now()))
            .add_systems(Last, |mut r: ResMut<Runner>| {
                if let Some(t) = r.tick_started.take() {
                    r.tick_times.push(t.elapsed());
                }
            })
            .add_systems(Update, check_stop.before(TerraneSet))
            // Edits are reported before the save that makes them durable: a server killed
            // right after a save has printed every edit that save holds.
            .add_systems(
                Update,
                report_applied.after(crate::plugin::apply_edits).before(crate::plugin::save),
            )
            .add_systems(
                Update,
                (move |r: ResMut<Runner>,
                       tw: ResMut<TerraneWorld>,
                       s: EventReader<Saved>,
                       c: Query<(), With<Client>>,
                       server: Res<Server>,
                       exit: EventWriter<AppExit>| {
                    report(r, tw, s, c, server, exit, &last)
                })
                .after(TerraneSet),
            )
            .run();
        if let Some(c) = control {
            c.stop();
        }
        if let Some(e) = failure.lock().ok().and_then(|mut f| f.take()) {
            return Err(e);
        }
        let tick = durable.lock().map(|t| *t).unwrap_or(0);
        Ok(tick)
    }
}

fn check_stop(mut runner: ResMut<Runner>, mut tw: ResMut<TerraneWorld>) {
    if !runner.stopping && runner.stop.load(Ordering::Relaxed) {
        runner.stopping = true;
        tw.request_flush();
    }
}

fn report_applied(runner: ResMut<Runner>, mut tw: ResMut<TerraneWorld>) {
    let applied = tw.take_applied();
    if applied.is_empty() {
        return;
    }
    if let Ok(mut f) = runner.on_event.lock() {
        for a in applied {
            f(ServerEvent::Applied(a));
        }
    }
}

fn report(
    mut runner: ResMut<Runner>,
    mut tw: ResMut<TerraneWorld>,
    mut saved: EventReader<Saved>,
    clients: Query<(), With<Client>>,
    server: Res<Server>,
    mut exit: EventWriter<AppExit>,
    durable: &Mutex<u64>,
) {
    let runner = &mut *runner;
    let emit = |e: ServerEvent| {
        if let Ok(mut f) = runner.on_event.lock() {
            f(e);
        }
    };
    for s in saved.iter() {
        emit(ServerEvent::Saved { tick: s.tick });
    }
    runner.save_times.extend(tw.take_save_times());
    if let Ok(mut d) = durable.lock() {
        *d = tw.durable_tick();
    }
    let now = server.current_tick();
    let rate = i64::from(server.tick_rate().get());
    if now - runner.last_status >= rate {
        runner.last_status = now;
        let mut ticks = std::mem::take(&mut runner.tick_times);
        let mut saves = std::mem::take(&mut runner.save_times);
        let p = |v: &mut Vec<Duration>, q| percentile(v, q).unwrap_or_default();
        emit(ServerEvent::Status(Status {
            players: clients.iter().count(),
            columns: tw.loaded_columns(),
            durable_tick: tw.durable_tick(),
            unsaved_chunks: tw.unsaved_chunks() + tw.unsaved_records(),
            tick_p50: p(&mut ticks, 0.5),
            tick_p99: p(&mut ticks, 0.99),
            save_p50: p(&mut saves, 0.5),
            save_p99: p(&mut saves, 0.99),
            saves: saves.len(),
            saves_in_flight: tw.saves_in_flight(),
            save_wait: tw.take_save_wait(),
        }));
    }
    if let Some(e) = tw.take_error() {
        if let Ok(mut f) = runner.failure.lock() {
            *f = Some(e);
        }
        exit.send(AppExit);
    } else if runner.stopping {
        // The last saves land before the server says it stopped.
        match tw.settle() {
            Ok(ticks) => {
                for tick in ticks {
                    emit(ServerEvent::Saved { tick });
                }
                if let Ok(mut d) = durable.lock() {
                    *d = tw.durable_tick();
                }
                emit(ServerEvent::Stopped { tick: tw.durable_tick() });
            }
            Err(e) => {
                if let Ok(mut f) = runner.failure.lock() {
                    *f = Some(e);
                }
            }
        }
        exit.send(AppExit);
    }
}
