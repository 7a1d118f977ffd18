//! What a conversion reports: where it is while it runs ([`ConvertProgress`]) and what it
//! did, approximated or left behind ([`ConvertSummary`]).

use std::collections::BTreeMap;
use std::path::Path;

use terrane_bedrock::block_entity::BlockEntityReport;
use terrane_bedrock::entity::EntityReport;
use terrane_bedrock::translate::TranslationReport;

use crate::error::{Error, Result};

/// Where a conversion is.
#[derive(Clone, Debug, Default)]
pub struct ConvertProgress {
    /// Columns converted so far.
    pub columns_done: u64,
    /// Columns in all, when known (Java sources: from the regions' location tables).
    pub columns_total: Option<u64>,
}

/// What a conversion did, and what it approximated or left behind.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ConvertSummary {
    /// Columns written.
    pub columns: u64,
    /// Columns an interrupted run of the same conversion had written already (counted in
    /// neither `columns` nor the report).
    pub columns_resumed: u64,
    /// Columns per dimension (0 Overworld, 1 Nether, 2 End).
    pub per_dimension: BTreeMap<u64, u64>,
    /// Block states approximated or dropped, by source state (cells).
    pub blocks: TranslationReport,
    /// Source biome → biome cells (Java's 4 × 4 × 4) given the nearest biome of the other
    /// edition (a legacy Bedrock variant, an End biome Bedrock has one of, a datapack's, a
    /// biome Java 1.18 merged into a neighbour).
    pub biomes_approximated: BTreeMap<String, u64>,
    /// Columns whose source held no biomes (a Java column saved without them, a Bedrock
    /// column without `Data3D`): the dimension's default biome was written.
    pub columns_without_biomes: u64,
    /// Block entities: those translated (containers with their items, signs), those left
    /// out, and what was approximated, by source id ([`BlockEntityReport`]).
    pub block_entities: BlockEntityReport,
    /// Entities: those translated (mobs and dropped items), those left out (kinds with no
    /// rule, or damaged), and what was approximated, by source id ([`EntityReport`]).
    pub entities: EntityReport,
    /// Players besides the single-player world's own (counted in `entities` as
    /// `minecraft:player` with it): Java's player files ⇄ Bedrock's `player_server_` records
    /// (`docs/format/java-bedrock-table.md`, "Players").
    pub players: u64,
    /// Columns Minecraft had not finished generating, by the stage they were saved at (Java's
    /// `Status`, `unpopulated` for a chunk from before 1.13; Bedrock's `FinalizedState`):
    /// left out, so that the game of the other edition generates them instead of showing
    /// them unfinished.
    pub unfinished: BTreeMap<String, u64>,
    /// Java dimensions other than the three, not converted (their region folders).
    pub skipped_dimensions: Vec<String>,
    /// Damaged source records, skipped or kept out, one line each.
    pub damaged: Vec<String>,
    /// Bytes of the written world.
    pub bytes_out: u64,
    /// The translation table's source (package and Bedrock release).
    pub table: String,
}

/// The report's line for a source `level.dat` that does not read (a conversion told to
/// rebuild it).
pub(crate) const LEVEL_DAT_DAMAGED: &str = "level.dat: damaged (it does not read); the new world's was \
    written from defaults (name from the folder, spawn at 0,0, no seed)";

/// Refuses to place a world of nothing converted out of damaged columns only
/// ([`Error::NothingConverted`]): the conversion's temporary folder is removed.
pub(crate) fn nothing_converted(src: &Path, s: &ConvertSummary) -> Result<()> {
    if s.columns + s.columns_resumed == 0 && !s.damaged.is_empty() {
        return Err(Error::NothingConverted { src: src.to_path_buf(), damaged: s.damaged.clone() });
    }
    Ok(())
}
