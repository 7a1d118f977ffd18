//! What a simulation tells its caller while it runs (progress, status lines, trouble it
//! recovers from), for the caller to draw or print.

use terrane::lease::AreaId;

use crate::Error;

/// One thing that happened during a run. The simulation never prints; a caller that wants
/// nothing passes `|_| {}`.
#[derive(Debug)]
#[non_exhaustive]
pub enum Event<'a> {
    /// The demo's pre-generator progress, after each tick: `completed` of the `disc`'s
    /// columns are generated.
    Pregenerated {
        /// Columns of the disc generated so far.
        completed: u64,
        /// Columns in the disc.
        disc: u64,
    },
    /// The demo ran `ran` of its `ticks` (sent while `ran <= ticks`; the run goes on until
    /// the pre-generator and the arena restore are done).
    Ticked {
        /// Ticks run.
        ran: u64,
        /// Ticks asked for.
        ticks: u64,
    },
    /// A shared-world server's status, once a second.
    Status(&'a ServerStatus),
    /// A shared-world server's save was refused: `areas` were taken over by another server
    /// and are no longer ticked here.
    AreasLost {
        /// The server's id.
        server: &'a str,
        /// The areas lost.
        areas: &'a [AreaId],
    },
    /// A shared-world server's tick failed (the database restarting, say); the server reads
    /// its areas back once the database answers, and gives up after a minute.
    TickFailed {
        /// The server's id.
        server: &'a str,
        /// The tick.
        tick: u64,
        /// What failed.
        error: &'a Error,
    },
}

/// A shared-world server's state, sent once a second as [`Event::Status`].
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ServerStatus {
    /// The server's id (`server-N`).
    pub server: String,
    /// Seconds since the server started.
    pub seconds: f64,
    /// The current tick.
    pub tick: u64,
    /// The areas held, with their lease epochs.
    pub areas: Vec<(AreaId, i64)>,
    /// Walkers held.
    pub walkers: usize,
    /// Regions of the regionizer.
    pub regions: usize,
    /// Chunks loaded.
    pub chunks: usize,
    /// Saves acknowledged in the last second.
    pub saves_last_second: u64,
    /// Walkers handed off to other servers, in all.
    pub hand_offs_out: u64,
    /// Walkers arrived from other servers, in all.
    pub arrivals: u64,
    /// Saves refused, in all.
    pub saves_refused: u64,
}
