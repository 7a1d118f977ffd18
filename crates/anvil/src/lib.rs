//! Minecraft Java Edition worlds in and out of terrane.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod column;
pub mod convert;
mod error;
pub mod nbt;
pub mod region;
mod world;

pub use column::{Column, Layout, Section};
pub use convert::{ColumnRecord, ImportedColumn};
pub use error::{AnvilError, ChunkError, Result};
pub use world::{
    DamagedChunk, ExportSource, ExportSummary, ImportOptions, ImportSink, ImportSummary, MemWorld,
    MissingEntity, Progress, StoredColumn, export_region_dir, import_region_dir,
    import_region_dir_with,
};
