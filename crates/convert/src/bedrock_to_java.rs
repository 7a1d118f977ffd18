//! Bedrock → Java: the Bedrock database is read column by column; each translated column is
//! appended to a spill file of its region beside the destination (`spill.rs`); then each
//! region's spill is written as a region file by terrane-anvil's exporter, which reads the
//! spill back one column at a time and writes the region file as it goes.

use std::fs;
use std::io::Write;
use std::path::Path;

use terrane_anvil::ExportOptions;
use terrane_anvil::folder::{JavaLayout, vanilla_dimensions};
use terrane_anvil::mapping::ColumnRecord;
use terrane_bedrock::data3d::Data3D;
use terrane_bedrock::db::ReadDb;
use terrane_bedrock::mapping::{column_to_chunks, first_block_version};
use terrane_bedrock::player::LOCAL_PLAYER_KEY;
use terrane_bedrock::read::{db_dir, read_db};
use terrane_bedrock::translate::{ChunkTranslator, Direction, table};
use terrane_chunk::Schema;
use terrane_nbt::Reader;

use crate::JAVA_DATA_VERSION;
use crate::error::{Error, Result, from_bedrock, io, to_bedrock};
use crate::options::{ConvertOptions, check_level_dat};
use crate::place::{into_place, level_name, write_whole};
use crate::players::PLAYER_SERVER_PREFIX;
use crate::spill::{
    Resumed, SPILL_SCHEMA, SpillSource, spill_files, spill_frame_end, spill_frame_start, spill_key,
};
use crate::summary::{ConvertProgress, ConvertSummary, LEVEL_DAT_DAMAGED, nothing_converted};

/// Converts the Bedrock world folder `src` into a new Java world folder `dst` (see the
/// crate docs).
pub fn bedrock_to_java(
    src: &Path,
    dst: &Path,
    progress: &mut dyn FnMut(&ConvertProgress),
) -> Result<ConvertSummary> {
    bedrock_to_java_with(src, dst, &ConvertOptions::new(), progress)
}

/// [`bedrock_to_java`] with [`ConvertOptions`].
pub fn bedrock_to_java_with(
    src: &Path,
    dst: &Path,
    options: &ConvertOptions,
    progress: &mut dyn FnMut(&ConvertProgress),
) -> Result<ConvertSummary> {
    check_level_dat(src, options, |b| terrane_bedrock::level_dat::read_settings(b).is_some())?;
    if !terrane_bedrock::is_bedrock_world(src) {
        return Err(Error::NotABedrockWorld(src.into()));
    }
    into_place(src, dst, "bedrock-to-java", |tmp, resumed| {
        let spill_dir = tmp.join(".spill");
        fs::create_dir_all(&spill_dir).map_err(io(&spill_dir))?;
        let mut summary =
            ConvertSummary { table: table().source().to_string(), ..Default::default() };
        let mut from = Schema::new();
        // The spilled chunks' block ids are the target schema's: its names are kept beside
        // them (`SPILL_SCHEMA`, written before the first chunk using a new name), so a resumed
        // run numbers them alike.
        let schema_file = spill_dir.join(SPILL_SCHEMA);
        let mut target = Schema::air_only();
        let mut done = Resumed::default();
        if resumed {
            if let Ok(names) = fs::read_to_string(&schema_file) {
                target = Schema::new();
                for n in names.lines() {
                    target.add_block(n, &[])?;
                }
            }
            done = Resumed::scan(tmp, &spill_dir)?;
        }
        let mut names_written = target.blocks().len();
        let mut translator = ChunkTranslator::new(Direction::BedrockToJava, target);
        let mut world_version = None;
        let mut p = ConvertProgress::default();
        let mut db = ReadDb::open(&db_dir(src)?)?;
        summary.damaged.extend(db.notes().iter().cloned());
        let (mut local_player, mut other_players) = (None, Vec::new());
        let r = read_db(
            &mut db,
            |raw| {
                let mut step = || -> Result<()> {
                    if !(0..=2).contains(&raw.pos.dim) {
                        return Ok(());
                    }
                    let dim = raw.pos.dim as u64;
                    let key = (dim, raw.pos.x >> 5, raw.pos.z >> 5);
                    if done.columns.contains(&(dim, raw.pos.x, raw.pos.z))
                        || done.regions.contains(&key)
                    {
                        summary.columns_resumed += 1;
                        return Ok(());
                    }
                    if let Some(stage) = raw.unfinished_stage() {
                        *summary.unfinished.entry(stage.to_string()).or_default() += 1;
                        return Ok(());
                    }
                    let v = *world_version.get_or_insert_with(|| {
                        first_block_version(&raw).unwrap_or(terrane_bedrock::NATIVE_BLOCK_VERSION)
                    });
                    translator.set_bedrock_version(v);
                    let c = column_to_chunks(&raw, &mut from, v)?;
                    summary.damaged.extend(
                        c.damaged
                            .iter()
                            .map(|d| format!("column {},{}: {d}", raw.pos.x, raw.pos.z)),
                    );
                    let legacy = raw
                        .records
                        .iter()
                        .find(|(t, _)| *t == terrane_bedrock::key::tag::ENTITY)
                        .map(|(_, v)| v.as_slice());
                    let entities = crate::entities::bedrock_to_java_entities(
                        c.entities.iter().map(|(_, b)| b.as_slice()),
                        legacy,
                        &mut summary.entities,
                    )?;
                    let block_entities = raw
                        .records
                        .iter()
                        .find(|(t, _)| *t == terrane_bedrock::key::tag::BLOCK_ENTITY)
                        .map(|(_, v)| {
                            crate::block_entities::bedrock_record_to_java(
                                v,
                                &c.chunks,
                                &from,
                                &mut summary.block_entities,
                            )
                        })
                        .unwrap_or_default();
                    let path = spill_dir.join(format!("{}.{}.{}", key.0, key.1, key.2));
                    let mut buf = spill_frame_start(raw.pos.x, raw.pos.z);
                    buf.extend_from_slice(&(c.chunks.len() as u32).to_le_bytes());
                    for (y, chunk) in &c.chunks {
                        // Translated, then encoded once: as the spill keeps it.
                        let mut t = translator.translate(chunk, &from)?;
                        let states = block_entities.states_in(*y);
                        if !states.is_empty() {
                            translator.restate_chunk(&mut t, &states)?;
                        }
                        let t = t.encode(translator.schema());
                        buf.extend_from_slice(&y.to_le_bytes());
                        buf.extend_from_slice(&(t.len() as u32).to_le_bytes());
                        buf.extend_from_slice(&t);
                    }
                    // The column's record: a fresh one holding the biomes of its Data3D.
                    let biomes = raw
                        .records
                        .iter()
                        .find(|(t, _)| *t == terrane_bedrock::key::tag::DATA_3D)
                        .and_then(|(_, v)| match Data3D::decode(v) {
                            Ok(d) => Some(d),
                            Err(e) => {
                                summary.damaged.push(format!(
                                    "column {},{}: {e} (plains written)",
                                    raw.pos.x, raw.pos.z
                                ));
                                None
                            }
                        });
                    let mut record = ColumnRecord::fresh(JAVA_DATA_VERSION);
                    record.extra_block_entities = block_entities.compounds;
                    record.orphan_entities = entities.iter().map(|(u, _)| *u).collect();
                    if let Some(d) = biomes {
                        // Every section Data3D covers keeps its biomes, the all-air ones too
                        // (a conversion writes no all-air sub-chunk; the sky above a biome is
                        // still that biome in Java).
                        let mut ys: Vec<i64> = c.chunks.iter().map(|(y, _)| *y).collect();
                        ys.extend(crate::biomes::java_section_range(dim));
                        ys.sort_unstable();
                        ys.dedup();
                        let secs = crate::biomes::data3d_to_java(
                            dim,
                            &d,
                            ys,
                            &mut summary.biomes_approximated,
                        );
                        record.rest.insert("sections", crate::biomes::java_section_list(&secs));
                    } else {
                        summary.columns_without_biomes += 1;
                    }
                    let record = record
                        .encode_with((!entities.is_empty()).then_some(JAVA_DATA_VERSION))
                        .map_err(|e| Error::Inconsistent(format!("a Java column record: {e}")))?;
                    buf.extend_from_slice(&(record.len() as u32).to_le_bytes());
                    buf.extend_from_slice(&record);
                    buf.extend_from_slice(&(entities.len() as u32).to_le_bytes());
                    for (uuid, nbt) in &entities {
                        buf.extend_from_slice(uuid);
                        buf.extend_from_slice(&(nbt.len() as u32).to_le_bytes());
                        buf.extend_from_slice(nbt);
                    }
                    spill_frame_end(&mut buf)?;
                    if translator.schema().blocks().len() != names_written {
                        let names: Vec<&str> = translator.schema().blocks().names().collect();
                        write_whole(&schema_file, (names.join("\n") + "\n").as_bytes())?;
                        names_written = names.len();
                    }
                    // Appended whole, by a file opened for it: no open files pile up, whatever
                    // the number of regions.
                    fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&path)
                        .and_then(|mut f| f.write_all(&buf))
                        .map_err(io(&path))?;
                    summary.columns += 1;
                    *summary.per_dimension.entry(dim).or_default() += 1;
                    p.columns_done += 1;
                    progress(&p);
                    Ok(())
                };
                step().map_err(to_bedrock)
            },
            |key, value| {
                if key == LOCAL_PLAYER_KEY {
                    local_player = Some(value.to_vec());
                } else if let Some(id) = key.strip_prefix(PLAYER_SERVER_PREFIX) {
                    other_players.push((String::from_utf8_lossy(id).into_owned(), value.to_vec()));
                }
                Ok(())
            },
        );
        r.map_err(from_bedrock)?;
        nothing_converted(src, &summary)?;
        summary.blocks = translator.report().clone();
        let schema = translator.schema().clone();
        let mut names = spill_files(&spill_dir)?;
        names.sort();
        for path in names {
            let dims = vanilla_dimensions(JavaLayout::Classic);
            let d = spill_key(&path).and_then(|(dim, _, _)| dims.get(dim as usize)).ok_or_else(
                || Error::Inconsistent(format!("{}: not a spill file", path.display())),
            )?;
            let columns = SpillSource::open(&path, schema.clone())?;
            let options = ExportOptions::new().entities_dir(tmp.join(&d.entities));
            terrane_anvil::export_region_dir_with(
                &columns,
                &tmp.join(&d.region),
                &options,
                &mut |_| {},
            )?;
            fs::remove_file(&path).map_err(io(&path))?;
        }
        fs::remove_dir_all(&spill_dir).map_err(io(&spill_dir))?;
        let level_dat = fs::read(src.join("level.dat")).ok();
        let shared = level_dat.as_deref().and_then(terrane_bedrock::level_dat::read_settings);
        if level_dat.is_some() && shared.is_none() {
            summary.damaged.insert(0, LEVEL_DAT_DAMAGED.to_string());
        }
        let shared = shared.unwrap_or_default();
        let player = local_player.and_then(|v| match Reader::little_endian(&v).root_compound() {
            Ok(c) => terrane_bedrock::player::bedrock_to_java(&c, &mut summary.entities),
            Err(_) => {
                *summary.entities.left.entry("(damaged ~local_player)".into()).or_default() += 1;
                None
            }
        });
        summary.players +=
            crate::players::bedrock_to_java(&other_players, tmp, &mut summary.entities)?;
        let level = terrane_anvil::level_dat::write(
            &shared,
            &level_name(src),
            JAVA_DATA_VERSION,
            "1.21.11",
            player,
        );
        write_whole(&tmp.join("level.dat"), &level)?;
        summary.bytes_out = terrane_store::file::dir_bytes(tmp);
        Ok(summary)
    })
}
