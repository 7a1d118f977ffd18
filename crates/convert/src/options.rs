//! What a conversion may do beyond its defaults.

use std::fs;
use std::path::Path;

use crate::error::{Error, Result};

/// What a conversion may do beyond its defaults.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ConvertOptions {
    /// Write a new `level.dat` from defaults (the name from the source folder, spawn at 0,0,
    /// no seed) when the source's does not read, saying so in the report. Default false: such
    /// a conversion is refused ([`Error::DamagedLevelDat`]) before anything is written.
    pub rebuild_level_dat: bool,
}

impl ConvertOptions {
    /// The defaults (see each field).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`rebuild_level_dat`](Self::rebuild_level_dat).
    pub fn rebuild_level_dat(mut self, rebuild: bool) -> Self {
        self.rebuild_level_dat = rebuild;
        self
    }
}

/// Refuses a source whose `level.dat` exists and does not read (by `reads`), unless the
/// options say to rebuild it.
pub(crate) fn check_level_dat(
    src: &Path,
    options: &ConvertOptions,
    reads: fn(&[u8]) -> bool,
) -> Result<()> {
    let path = src.join("level.dat");
    match fs::read(&path) {
        Ok(b) if !reads(&b) && !options.rebuild_level_dat => Err(Error::DamagedLevelDat(path)),
        _ => Ok(()),
    }
}
