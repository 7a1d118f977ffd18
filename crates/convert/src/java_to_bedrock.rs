//! Java → Bedrock: terrane-anvil's importer reads each dimension's regions, one column at a
//! time; each column's chunks are translated and written as Bedrock records into the new
//! database. Nothing else of the world is held. A run after a crash reopens the database and
//! skips the columns it holds.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::Path;

use terrane_anvil::folder::{Dimension, find_dimensions, has_region_files, layout_of, uuid_text};
use terrane_anvil::mapping::ColumnRecord;
use terrane_anvil::{ColumnChunks, ImportOptions, ImportSink, ImportedColumn};
use terrane_bedrock::db::WriteDb;
use terrane_bedrock::key::BedrockColumnPos;
use terrane_bedrock::mapping::chunks_to_column;
use terrane_bedrock::player::LOCAL_PLAYER_KEY;
use terrane_bedrock::translate::{ChunkTranslator, Direction, table};
use terrane_chunk::{BlockId, Chunk, Schema};
use terrane_nbt::{Tag, Writer};
use terrane_section::ColumnPos;

use crate::error::{Error, Result, from_anvil};
use crate::options::{ConvertOptions, check_level_dat};
use crate::place::{into_place, level_name, write_whole};
use crate::summary::{ConvertProgress, ConvertSummary, LEVEL_DAT_DAMAGED, nothing_converted};

/// Converts the Java world folder `src` into a new Bedrock world folder `dst` (see the
/// crate docs).
pub fn java_to_bedrock(
    src: &Path,
    dst: &Path,
    progress: &mut dyn FnMut(&ConvertProgress),
) -> Result<ConvertSummary> {
    java_to_bedrock_with(src, dst, &ConvertOptions::new(), progress)
}

/// [`java_to_bedrock`] with [`ConvertOptions`].
pub fn java_to_bedrock_with(
    src: &Path,
    dst: &Path,
    options: &ConvertOptions,
    progress: &mut dyn FnMut(&ConvertProgress),
) -> Result<ConvertSummary> {
    check_level_dat(src, options, |b| terrane_anvil::level_dat::read(b).is_some())?;
    let all = find_dimensions(src, layout_of(src))?;
    let (found, others): (Vec<Dimension>, Vec<Dimension>) =
        all.into_iter().partition(|d| !d.name.contains(':'));
    if found.is_empty() {
        return Err(Error::NoRegionFiles(src.into()));
    }
    into_place(src, dst, "java-to-bedrock", |tmp, resumed| {
        let db_path = tmp.join("db");
        let reopened = if resumed { WriteDb::resume(&db_path).ok() } else { None };
        let resuming = reopened.is_some();
        let mut db = match reopened {
            Some(db) => db,
            None => {
                // A database the crash left unreadable is started over.
                let _ = fs::remove_dir_all(&db_path);
                WriteDb::create(&db_path)?
            }
        };
        let mut sink = BedrockSink {
            db: &mut db,
            resuming,
            dim: 0,
            from: Schema::air_only(),
            translator: ChunkTranslator::new(Direction::JavaToBedrock, Schema::new()),
            summary: ConvertSummary { table: table().source().to_string(), ..Default::default() },
        };
        let mut p = ConvertProgress::default();
        let mut done_before = 0;
        for d in &found {
            sink.dim = d.id;
            let mut options = ImportOptions::new();
            let entities = src.join(&d.entities);
            if entities.is_dir() {
                options = options.entities_dir(entities);
            }
            let r = terrane_anvil::import_region_dir_with(
                &src.join(&d.region),
                &mut sink,
                &options,
                &mut |ap| {
                    p.columns_done = done_before + ap.columns_done;
                    p.columns_total = Some(done_before + ap.columns_total);
                    progress(&p);
                },
            );
            let s = r.map_err(from_anvil)?;
            done_before = p.columns_done;
            sink.summary.damaged.extend(s.damaged.iter().map(|d| d.to_string()));
            sink.summary.columns_resumed += s.columns_skipped;
        }
        let mut summary = sink.summary;
        nothing_converted(src, &summary)?;
        summary.blocks = sink.translator.report().clone();
        summary.skipped_dimensions = others.iter().map(|d| d.name.clone()).collect();
        summary.skipped_dimensions.extend(other_java_dimensions(src));
        let level_dat = fs::read(src.join("level.dat")).ok();
        let player = level_dat.as_deref().and_then(terrane_anvil::level_dat::read_player);
        let mut player_uuid = None;
        if let Some(java) = player {
            player_uuid = match java.get("UUID") {
                Some(Tag::IntArray(v)) => Some(uuid_string(v)),
                _ => None,
            };
            if let Some(b) = terrane_bedrock::player::java_to_bedrock(&java, &mut summary.entities)
            {
                let mut w = Writer::new().little_endian();
                w.named("", &Tag::Compound(b))?;
                db.put(LOCAL_PLAYER_KEY, &w.out)?;
            }
        }
        summary.players += crate::players::java_to_bedrock(
            src,
            player_uuid.as_deref(),
            &mut db,
            &mut summary.entities,
        )?;
        db.finish()?;
        let shared = level_dat.as_deref().and_then(terrane_anvil::level_dat::read);
        if level_dat.is_some() && shared.is_none() {
            summary.damaged.insert(0, LEVEL_DAT_DAMAGED.to_string());
        }
        let shared = shared.unwrap_or_default();
        let name = shared.name.clone().unwrap_or_else(|| level_name(src));
        let release = bedrock_release();
        let level = terrane_bedrock::level_dat::write(&shared, &name, release);
        write_whole(&tmp.join("level.dat"), &level)?;
        write_whole(&tmp.join("levelname.txt"), name.as_bytes())?;
        summary.bytes_out = terrane_store::file::dir_bytes(tmp);
        Ok(summary)
    })
}

/// A Java UUID (four ints, most significant first) in its text form, as player files are
/// named.
fn uuid_string(ints: &[i32]) -> String {
    let id = ints.iter().fold(0u128, |id, i| (id << 32) | u128::from(*i as u32));
    uuid_text(id)
}

/// The Bedrock release of the table's states, as `level.dat`'s `lastOpenedWithVersion`.
fn bedrock_release() -> [i32; 5] {
    let mut v = [0i32; 5];
    for (i, p) in table().bedrock_release().split('.').take(4).enumerate() {
        v[i] = p.parse().unwrap_or(0);
    }
    v
}

/// Folders of a Java world that hold region files but are none of the three dimensions
/// (`DIM7/region`: dimensions of mods and old datapacks).
fn other_java_dimensions(src: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(src) else { return Vec::new() };
    let mut out: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name.starts_with("DIM")
                && name != "DIM-1"
                && name != "DIM1"
                && has_region_files(&e.path().join("region")))
            .then(|| format!("{name}/region"))
        })
        .collect();
    out.sort();
    out
}

/// terrane-anvil's importer into a Bedrock database: each column translated and written.
struct BedrockSink<'a> {
    db: &'a mut WriteDb,
    /// Whether `db` holds an interrupted run's columns (a fresh one has none to look up).
    resuming: bool,
    dim: u64,
    /// The Java states the importer registers.
    from: Schema,
    translator: ChunkTranslator,
    summary: ConvertSummary,
}

impl BedrockSink<'_> {
    /// Writes one column's records, each chunk translated and encoded once, as a sub-chunk;
    /// returns the bytes of the values written.
    fn put(&mut self, c: ColumnChunks) -> Result<u64> {
        let record = ColumnRecord::decode(&c.record).ok();
        if let Some(r) = record.as_ref().filter(|r| !r.is_finished()) {
            let stage = r.status().unwrap_or("unpopulated").to_string();
            *self.summary.unfinished.entry(stage).or_default() += 1;
            return Ok(0);
        }
        let mut chunks = Vec::with_capacity(c.chunks.len());
        for (y, chunk) in &c.chunks {
            chunks.push((*y, self.translator.translate(chunk, &self.from)?));
        }
        let mut written = 0;
        let pos = BedrockColumnPos { dim: self.dim as i32, x: c.pos.x, z: c.pos.z };
        let entities = crate::entities::java_to_bedrock_records(
            pos,
            c.entities.iter().map(|(u, b)| (u, b.as_slice())),
            record.as_ref().and_then(|r| r.data_version),
            &mut self.summary.entities,
        )?;
        for (k, v) in entities {
            written += v.len() as u64;
            self.db.put(&k, &v)?;
        }
        let block_entities = crate::block_entities::java_to_bedrock_record(
            c.pos,
            &c.chunks,
            &self.from,
            record.as_ref().map_or(&[], |r| &r.extra_block_entities),
            record.as_ref().and_then(|r| r.data_version),
            &mut self.summary.block_entities,
        )?;
        if let Some(v) = block_entities {
            written += v.len() as u64;
            self.db.put(&pos.key(terrane_bedrock::key::tag::BLOCK_ENTITY), &v)?;
        }
        let sections = match &record {
            Some(r) => crate::biomes::java_sections(
                &r.rest,
                &mut self.summary.damaged,
                &mut self.summary.biomes_approximated,
            ),
            None => BTreeMap::new(),
        };
        if sections.is_empty() {
            self.summary.columns_without_biomes += 1;
        }
        let air = self.translator.schema().blocks().find("minecraft:air").map(BlockId);
        let data3d = crate::biomes::java_to_data3d(
            self.dim,
            &sections,
            &chunks,
            air,
            &mut self.summary.biomes_approximated,
        );
        let data3d = data3d.encode();
        written += data3d.len() as u64;
        self.db.put(&pos.key(terrane_bedrock::key::tag::DATA_3D), &data3d)?;
        let records = chunks_to_column(
            pos,
            &chunks,
            None,
            &HashMap::new(),
            self.translator.schema(),
            table().block_version(),
        )?;
        for (k, v) in records {
            written += v.len() as u64;
            self.db.put(&k, &v)?;
        }
        self.db.end_group()?;
        self.summary.columns += 1;
        *self.summary.per_dimension.entry(self.dim).or_default() += 1;
        Ok(written)
    }
}

impl ImportSink for BedrockSink<'_> {
    type Error = Error;
    fn schema(&mut self) -> &mut Schema {
        &mut self.from
    }
    fn has_column(&mut self, pos: ColumnPos) -> Result<bool> {
        // Converted by an interrupted run: a column's records are one batch, and its
        // `Version` record is among them.
        let pos = BedrockColumnPos { dim: self.dim as i32, x: pos.x, z: pos.z };
        Ok(self.resuming && self.db.contains(&pos.key(terrane_bedrock::key::tag::VERSION)))
    }
    fn put_column(&mut self, c: ImportedColumn) -> Result<()> {
        // The importer hands columns over unencoded (below); one given encoded is decoded.
        let mut chunks = Vec::with_capacity(c.chunks.len());
        for (y, bytes) in &c.chunks {
            chunks.push((*y, Chunk::decode(bytes, &self.from)?));
        }
        let c = ColumnChunks { pos: c.pos, chunks, entities: c.entities, record: c.record };
        self.put(c).map(drop)
    }
    fn put_column_chunks(&mut self, c: ColumnChunks) -> Result<u64> {
        self.put(c)
    }
}
