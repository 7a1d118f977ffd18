//! Folia's regionizer for 2D column and 3D cubic voxel worlds, with a parallel tick scheduler.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod config;
mod error;
mod invariants;
mod region;
mod regionizer;
pub mod replay;
mod scheduler;

pub use config::{MAX_RADIUS_SUM, MAX_SHIFT, RegionizerConfig, RegionizerConfigBuilder};
pub use error::{Error, Result};
pub use region::{
    Callbacks, NoCallbacks, Region, RegionData, RegionId, RegionState, SplitRoute, TickStats,
};
pub use regionizer::{RegionSnapshot, Regionizer, SectionSnapshot, Snapshot};
pub use scheduler::{Scheduler, SchedulerConfig, TickContext};
