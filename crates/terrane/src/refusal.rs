//! What an import, export or world operation refuses before it writes anything:
//! [`Refusal`], carried by [`Error::Refused`](crate::Error::Refused). Each says what was
//! found and what to do, in the library's terms; a command adds its own flags
//! (`terrane`'s CLI does, through [`Refusal`]'s variants).

use std::fmt;
use std::path::PathBuf;

use terrane_section::ChunkPos;

/// What a path in an operation's way holds, as the operation found it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Holds {
    /// A file (where a folder goes).
    File,
    /// A folder (where a file goes).
    Folder,
    /// A terrane world (a `terrane-world` marker).
    TerraneWorld,
    /// A Java world folder (`level.dat` beside `region/`).
    JavaWorld,
    /// A Bedrock world folder (`db/CURRENT`).
    BedrockWorld,
    /// Region files of its own (a region folder).
    RegionFiles,
    /// Other files.
    OtherFiles,
}

impl fmt::Display for Holds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Holds::File => "a file",
            Holds::Folder => "a folder",
            Holds::TerraneWorld => "a terrane world",
            Holds::JavaWorld => "a Java world",
            Holds::BedrockWorld => "a Bedrock world",
            Holds::RegionFiles => "region files",
            Holds::OtherFiles => "files",
        })
    }
}

/// What an operation writes at its destination.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Writes {
    /// Region files into a region folder ([`export::java`](crate::export)).
    RegionFiles,
    /// A whole Java world folder.
    JavaWorld,
    /// A Bedrock world folder.
    BedrockWorld,
    /// One schematic file.
    Schematic,
}

impl fmt::Display for Writes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Writes::RegionFiles => "region files",
            Writes::JavaWorld => "a Java world",
            Writes::BedrockWorld => "a Bedrock world",
            Writes::Schematic => "a schematic",
        })
    }
}

/// The kind of world an import reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ImportedFrom {
    /// A Java world (`import::java`).
    Java,
    /// A Bedrock world.
    Bedrock,
}

/// Where a world's chunks came from, as its records tell.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChunksFrom {
    /// An import of this kind of world.
    Import(ImportedFrom),
    /// Not from an import: saved by a game or the demo, or pasted from schematics.
    Saves,
}

/// What was refused, before anything was written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The destination holds something the operation must not write into (whatever the
    /// [`Overwrite`](crate::export::Overwrite)).
    #[error("{} {}", path.display(), destination_advice(*holds, *writes, path))]
    Destination {
        /// The destination.
        path: PathBuf,
        /// What it holds.
        holds: Holds,
        /// What the operation writes there.
        writes: Writes,
    },
    /// The destination's path ends in no folder name (`/`, `..`).
    #[error("{} names no folder", .0.display())]
    NoFolderName(PathBuf),
    /// An import into a world holding chunks of another origin: it would write its columns
    /// over them without a word (`merge` in the import's options writes anyway).
    #[error(
        "the world already holds chunks {}: importing would write the {} world's columns \
         over them where they meet; import into a new world, or merge explicitly",
        chunks_from(*.chunks),
        edition(*.import)
    )]
    ImportOverChunks {
        /// Where the world's chunks came from.
        chunks: ChunksFrom,
        /// The import refused.
        import: ImportedFrom,
    },
    /// A Java world folder holds no region files.
    #[error(
        "{} holds no region files: {}",
        folder.display(),
        terrane_anvil::folder::REGION_FOLDERS
    )]
    NoRegionFiles {
        /// The folder.
        folder: PathBuf,
    },
    /// The folder is not a Bedrock world (no `db/CURRENT`).
    #[error("{} is not a Bedrock world folder (no db/CURRENT)", .0.display())]
    NotABedrockWorld(PathBuf),
    /// A Java export of a world whose blocks are Bedrock's (it was imported from a Bedrock
    /// world): Java cannot read them; a conversion of the Bedrock world translates them.
    #[error(
        "this world's blocks are Bedrock block states (it was imported from a Bedrock world): \
         Java cannot read them; convert the Bedrock world folder to Java instead, which \
         translates its blocks and reports what it approximated"
    )]
    BedrockBlocks,
    /// A change to a world opened read-only.
    #[error("the world is open read-only: open it for writing to {0}")]
    ReadOnly(&'static str),
    /// A box too big for a Sponge schematic (65,535 blocks per axis, 2³¹ in all).
    #[error(
        "a box of {} x {} x {} blocks is too big for a schematic (65535 per axis, 2^31 blocks \
         in all)",
        .0[0], .0[1], .0[2]
    )]
    SchematicTooBig([u64; 3]),
    /// A schematic merged into an existing file: a schematic is one file, replaced whole.
    #[error("{}: a schematic is one file: it can be replaced, not merged into", .0.display())]
    SchematicMerge(PathBuf),
    /// A chunk beyond the coordinates Minecraft's formats can hold.
    #[error("chunk {chunk} of dimension {dimension} is beyond Minecraft's coordinates")]
    BeyondMinecraft {
        /// The chunk.
        chunk: ChunkPos,
        /// Its dimension's id in the world.
        dimension: u64,
    },
    /// A box that reaches beyond the heights a server keeps (`lo..=hi`).
    #[error("the box reaches beyond the served height ({lo}..{hi})")]
    BeyondHeight {
        /// The lowest height kept.
        lo: i64,
        /// The highest height kept.
        hi: i64,
    },
    /// A box over more chunks than a server restores at once.
    #[error(
        "the box touches {chunks} chunks; a served world restores at most {max} at a time: \
         split it, or restore whole areas"
    )]
    BoxTooBig {
        /// The chunks the box touches.
        chunks: u64,
        /// The most restored at once.
        max: u64,
    },
    /// A restore from a backup repository that holds no backup yet.
    #[error("{}: the repository holds no backup yet", .0.display())]
    NoBackupYet(PathBuf),
}

fn edition(import: ImportedFrom) -> &'static str {
    match import {
        ImportedFrom::Java => "Java",
        ImportedFrom::Bedrock => "Bedrock",
    }
}

fn chunks_from(chunks: ChunksFrom) -> String {
    match chunks {
        ChunksFrom::Import(i) => format!("imported from a {} world", edition(i)),
        ChunksFrom::Saves => "that did not come from a Java or Bedrock world import (saved by \
                              a game or the demo, or pasted from schematics)"
            .into(),
    }
}

/// What a refused destination holds and what to do, after its path.
fn destination_advice(holds: Holds, writes: Writes, path: &std::path::Path) -> String {
    match (holds, writes) {
        (Holds::File, _) => format!(
            "is a file, not a folder: {writes} would be written there; give a folder's path \
             (created when missing)"
        ),
        (Holds::Folder, _) => format!(
            "is a folder: give the schematic's file name (e.g. {}/box.schem)",
            path.display()
        ),
        (Holds::JavaWorld, Writes::RegionFiles) => "is a Java world folder, not a region \
             folder: export the whole world as a world folder, or give its region folder"
            .into(),
        (Holds::RegionFiles, Writes::JavaWorld) => "holds region files itself: it is a region \
             folder, not a Java world folder; export region files into it, or give another \
             folder"
            .into(),
        (_, Writes::BedrockWorld) => "is not empty and holds no Bedrock world (no db/CURRENT): \
             export into a new folder"
            .into(),
        (holds, _) => format!("is {holds}: give another folder"),
    }
}

/// The choices [`Error::WouldOverwrite`](crate::Error::WouldOverwrite) names: `merge` when merging applies.
pub(crate) fn choices(merge: &bool) -> &'static str {
    if *merge {
        "replace it (`Overwrite::Replace`: the result is exactly this world) or merge into it \
         (`Overwrite::Merge`: this world's regions over the same ones, the others kept)"
    } else {
        "replace it (`Overwrite::Replace`)"
    }
}
