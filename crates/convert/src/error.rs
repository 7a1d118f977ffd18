//! The crate's error: what a conversion refuses before it writes anything, and what can fail
//! while it runs.

use std::path::PathBuf;

use crate::place::Found;

/// Everything a conversion can refuse or fail at. A refusal ([`Destination`](Self::Destination),
/// [`NoFolderName`](Self::NoFolderName), [`NoRegionFiles`](Self::NoRegionFiles),
/// [`NotABedrockWorld`](Self::NotABedrockWorld), [`DamagedLevelDat`](Self::DamagedLevelDat))
/// comes before anything is written; a failure while it runs leaves nothing at the
/// destination (a crash leaves the temporary folder the next run resumes from).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The destination holds something: a conversion writes a new world.
    #[error("{} {}", path.display(), destination_advice(*holds))]
    Destination {
        /// The destination.
        path: PathBuf,
        /// What it holds (never [`Found::Nothing`]).
        holds: Found,
    },
    /// The destination's path ends in no folder name (`/`, `..`).
    #[error("{} names no folder", .0.display())]
    NoFolderName(PathBuf),
    /// The Java world folder holds no region files of the Overworld, the Nether or the End.
    #[error(
        "{} holds no region files of the Overworld, the Nether or the End: {}",
        .0.display(),
        terrane_anvil::folder::REGION_FOLDERS
    )]
    NoRegionFiles(PathBuf),
    /// The folder is not a Bedrock world (no `db/CURRENT`).
    #[error("{} is not a Bedrock world folder (no db/CURRENT)", .0.display())]
    NotABedrockWorld(PathBuf),
    /// The source's `level.dat` does not read, and the options do not say to rebuild it:
    /// nothing was written.
    #[error(
        "{}: damaged (it does not read); nothing was written: convert with \
         `ConvertOptions::rebuild_level_dat` to write a new level.dat from defaults (name from \
         the folder, spawn at 0,0, no seed)",
        .0.display()
    )]
    DamagedLevelDat(PathBuf),
    /// The conversion found columns but every one it read was damaged: no world was written.
    #[error(
        "nothing was converted from {}: every column read was damaged ({} damaged records; \
         the first: {}); no world was written",
        src.display(),
        damaged.len(),
        damaged.first().map_or("", String::as_str)
    )]
    NothingConverted {
        /// The source world folder.
        src: PathBuf,
        /// The damaged records, one line each.
        damaged: Vec<String>,
    },
    /// A spilled column of a Bedrock → Java conversion is damaged or cut short
    /// (`docs/format/convert-spill.md`): running the conversion again writes it anew.
    #[error("{}: a spilled column {what}; run the conversion again", path.display())]
    DamagedSpill {
        /// The spill file.
        path: PathBuf,
        /// What is wrong with the column.
        what: &'static str,
    },
    /// Something the conversion wrote or read contradicts itself (a spilled column too large
    /// to frame, a file in the spill folder that is not a spill file, a Java column record
    /// that does not encode).
    #[error("inconsistent conversion: {0}")]
    Inconsistent(String),
    /// File system access failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The Java side failed (reading or writing region files, registering block states).
    #[error("anvil: {0}")]
    Anvil(#[from] terrane_anvil::Error),
    /// The Bedrock side failed (its database, records, the translation table).
    #[error(transparent)]
    Bedrock(#[from] terrane_bedrock::Error),
    /// A chunk or the schema did not decode.
    #[error("chunk: {0}")]
    Chunk(#[from] terrane_chunk::Error),
    /// An NBT value did not decode or encode.
    #[error("NBT: {0}")]
    Nbt(#[from] terrane_nbt::Error),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What to do about a destination that holds `holds`, after its path.
fn destination_advice(holds: Found) -> String {
    match holds {
        Found::File => "is a file, not a folder: a new world would be written there; give a \
                        folder's path (created when missing)"
            .into(),
        holds => format!(
            "already holds {holds}; nothing was written: a conversion writes a new world, so \
             give a folder that does not exist yet (or an empty one)"
        ),
    }
}

/// The [`Error::Io`] of `path`.
pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.into();
    move |source| Error::Io { path, source }
}

/// terrane-anvil's error as the crate's: a failure of the crate's own import sink comes back
/// as the error it was.
pub(crate) fn from_anvil(e: terrane_anvil::Error) -> Error {
    match e {
        terrane_anvil::Error::Sink(b) => match b.downcast::<Error>() {
            Ok(e) => *e,
            Err(b) => Error::Anvil(terrane_anvil::Error::Sink(b)),
        },
        e => Error::Anvil(e),
    }
}

/// terrane-bedrock's error as the crate's: a failure of the crate's own callback comes back
/// as the error it was.
pub(crate) fn from_bedrock(e: terrane_bedrock::Error) -> Error {
    match e {
        terrane_bedrock::Error::Callback(b) => match b.downcast::<Error>() {
            Ok(e) => *e,
            Err(b) => Error::Bedrock(terrane_bedrock::Error::Callback(b)),
        },
        e => Error::Bedrock(e),
    }
}

/// The crate's error as terrane-bedrock's, for a callback to return.
pub(crate) fn to_bedrock(e: Error) -> terrane_bedrock::Error {
    terrane_bedrock::Error::Callback(Box::new(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crates_error_comes_back_out_typed() {
        let refused = || Error::NotABedrockWorld("w".into());
        let anvil = terrane_anvil::Error::Sink(Box::new(refused()));
        assert!(matches!(from_anvil(anvil), Error::NotABedrockWorld(_)));
        assert!(matches!(from_bedrock(to_bedrock(refused())), Error::NotABedrockWorld(_)));
        let other = terrane_bedrock::Error::LevelDat("short".into());
        assert!(matches!(from_bedrock(other), Error::Bedrock(terrane_bedrock::Error::LevelDat(_))));
    }

    #[test]
    fn a_refused_destination_says_what_it_holds_and_what_to_do() {
        let e = Error::Destination { path: "out".into(), holds: Found::JavaWorld };
        assert_eq!(
            e.to_string(),
            "out already holds a Java world; nothing was written: a conversion writes a new \
             world, so give a folder that does not exist yet (or an empty one)"
        );
        let e = Error::Destination { path: "out".into(), holds: Found::File };
        assert!(e.to_string().starts_with("out is a file, not a folder"), "{e}");
    }
}
