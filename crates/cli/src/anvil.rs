//! `terrane import anvil` / `terrane export anvil`.

use std::path::PathBuf;

use crate::Fail;

/// `terrane import ...`
#[derive(clap::Subcommand, Debug)]
pub enum ImportCmd {
    /// Import a Minecraft Java region folder (`.mca`) into a world (created when missing).
    Anvil {
        /// The region folder.
        region_dir: PathBuf,
        /// The world directory.
        world: PathBuf,
    },
}

/// `terrane export ...`
#[derive(clap::Subcommand, Debug)]
pub enum ExportCmd {
    /// Export a world to a Minecraft Java region folder.
    Anvil {
        /// The world directory.
        world: PathBuf,
        /// The region folder to write.
        region_dir: PathBuf,
    },
}

pub fn import(_c: ImportCmd) -> Result<(), Fail> {
    Err(Fail::other("import anvil: not available in this build yet (terrane-anvil has not landed)"))
}

pub fn export(_c: ExportCmd) -> Result<(), Fail> {
    Err(Fail::other("export anvil: not available in this build yet (terrane-anvil has not landed)"))
}
