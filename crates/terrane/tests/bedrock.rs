//! Bedrock worlds in and out of a `World`: the test world written by amulet-core and Mojang's
//! LevelDB (`crates/bedrock/tests/data/SOURCES.md`) imported, exported, imported again, and
//! the export read by amulet-core, the reader users trust.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use terrane::bedrock::{self, format::BedrockRecord};
use terrane::export::Overwrite;
use terrane::{ChunkView, World, tables};

mod amulet;
use amulet::{amulet_python, assert_amulet_agrees, copy_tree};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bedrock/tests/data")
}

fn new_world(dir: &Path) -> World {
    World::builder().sync_saves(false).create(dir).unwrap()
}

/// Every chunk as names: (dimension, chunk) → per cell, its blocks at every layer.
type Named = BTreeMap<(u64, terrane::ChunkPos), Vec<Vec<String>>>;

fn named_chunks(w: &World) -> Named {
    let mut out = Named::new();
    let names: Vec<&str> = w.schema().blocks().names().collect();
    for ((dim, pos), (_, bytes)) in w.tiered().all_chunks().unwrap() {
        let v = ChunkView::parse(&bytes).unwrap();
        let cells = (0..4096u16)
            .map(|i| {
                let mut layers = vec![names[v.block(i).0 as usize].to_string()];
                layers.extend(v.layers(i).map(|b| names[b.0 as usize].to_string()));
                layers
            })
            .collect();
        out.insert((dim, pos), cells);
    }
    out
}

fn properties(w: &World, prefix: &[u8]) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in w.store().scan_prefix(tables::WORLD_PROPERTIES, prefix).unwrap() {
        let (k, o) = e.unwrap();
        out.insert(k, o.data);
    }
    out
}

fn entities(w: &World) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in w.store().scan(tables::ENTITY, terrane::store::KeyRange::all()).unwrap() {
        let (k, o) = e.unwrap();
        out.insert(k, o.data);
    }
    out
}

#[test]
fn a_bedrock_world_round_trips_block_for_block_with_its_layers() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = new_world(&dir.path().join("a"));
    let mut seen = 0;
    let s = bedrock::import_bedrock_world(&mut a, &data().join("world"), &mut |p| {
        seen = p.columns_done
    })
    .unwrap();
    assert_eq!(seen, 27);
    assert_eq!(s.columns, 27);
    assert_eq!(s.per_dimension, BTreeMap::from([(0, 9), (1, 9), (2, 9)]));
    // Six of digp lists (two per dimension) and the sheep of the pre-1.18.30 entity list.
    assert_eq!((s.entities, s.block_entities, s.world_records), (7, 3, 3));
    assert!(s.damaged.is_empty(), "{:?}", s.damaged);
    let named = named_chunks(&a);
    let layered: usize = named.values().flatten().filter(|c| c.len() > 1).count();
    assert_eq!(layered, 18, "six waterlogged fences per dimension");
    // Blocks are non-air cells, as a Java import counts them: not every cell, not the water
    // of the waterlogged fences (an extra layer).
    let non_air = named.values().flatten().filter(|c| c[0] != "minecraft:air").count() as u64;
    assert!(non_air > 0 && non_air < s.chunks * 4096, "{non_air}");
    assert_eq!(s.blocks, non_air);

    // Resumed: every column is there already.
    let again = bedrock::import_bedrock_world(&mut a, &data().join("world"), &mut |_| {}).unwrap();
    assert_eq!((again.columns, again.skipped), (0, 27));

    let out = dir.path().join("exported");
    let e = bedrock::export_bedrock_world(&a, &out, Overwrite::Refuse, &mut |_| {}).unwrap();
    assert_eq!((e.columns, e.entities, e.world_records), (27, 7, 3));
    assert!(out.join("db/CURRENT").is_file() && out.join("level.dat").is_file());
    // No temporary folder left beside it, and a second export refuses to overwrite.
    let beside: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(beside.len(), 2, "{beside:?}");
    assert!(bedrock::export_bedrock_world(&a, &out, Overwrite::Refuse, &mut |_| {}).is_err());

    let mut b = new_world(&dir.path().join("b"));
    bedrock::import_bedrock_world(&mut b, &out, &mut |_| {}).unwrap();
    assert_eq!(named_chunks(&b), named_chunks(&a));
    assert_eq!(entities(&b), entities(&a));
    let (ra, rb) = (properties(&a, b"bedrock:"), properties(&b, b"bedrock:"));
    assert_eq!(ra.keys().collect::<Vec<_>>(), rb.keys().collect::<Vec<_>>());
    for (k, v) in &ra {
        if bedrock::parse_record_key(k).is_some() {
            assert_eq!(BedrockRecord::decode(v).unwrap(), BedrockRecord::decode(&rb[k]).unwrap());
        } else {
            assert_eq!(v, &rb[k], "{}", String::from_utf8_lossy(k));
        }
    }
}

#[test]
fn an_import_into_a_world_with_its_own_chunks_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = new_world(&dir.path().join("w"));
    let mut save = terrane::TickSave::new();
    save.put_chunk(
        0,
        terrane::ChunkPos::new(0, 0, 0),
        terrane::Chunk::new(w.air()).encode(w.schema()),
    );
    w.save_tick(1, save).unwrap();
    let e = bedrock::refuse_overwrite(&w).unwrap_err();
    assert!(
        matches!(
            e,
            terrane::Error::Refused(terrane::Refusal::ImportOverChunks {
                chunks: terrane::refusal::ChunksFrom::Saves,
                import: terrane::refusal::ImportedFrom::Bedrock,
            })
        ),
        "{e}"
    );
    assert!(e.to_string().contains("merge explicitly"), "{e}");
    // A folder that is not a Bedrock world is refused before anything is written.
    let e = bedrock::import_bedrock_world(&mut w, dir.path(), &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("not a Bedrock world folder"), "{e}");
}

fn amulet_compare(expected: &Path, actual: &Path) {
    let tmp = tempfile::tempdir().unwrap();
    let expected_copy = tmp.path().join("expected");
    copy_tree(expected, &expected_copy);
    let expected = expected_copy.as_path();
    let out = Command::new(amulet_python())
        .arg(data().join("check_world.py"))
        .args([expected, actual])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "amulet-core found differences:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(" 0 differences"), "{stdout}");
}

#[test]
fn amulet_core_reads_the_exported_bedrock_world_as_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = new_world(&dir.path().join("w"));
    bedrock::import_bedrock_world(&mut w, &data().join("world"), &mut |_| {}).unwrap();
    let out = dir.path().join("exported");
    bedrock::export_bedrock_world(&w, &out, Overwrite::Refuse, &mut |_| {}).unwrap();
    amulet_compare(&data().join("world"), &out);
}

/// The 1.21.1 region of the test data as a Java world folder, with a `level.dat` naming its
/// version (amulet-core reads no Java world without one).
fn java_world_1_21_1(dir: &Path) -> PathBuf {
    use std::io::Write as _;
    use terrane::nbt::{Compound, Tag, Writer};
    // Every chunk finished, so that every real block is converted and compared.
    let java = terrane_anvil::testdata::java_world_finished(dir, "anvil/1.21.1/r.0.0.mca");
    let mut version = Compound::new();
    version.insert("Id", Tag::Int(3955));
    version.insert("Name", Tag::String("1.21.1".into()));
    let mut data = Compound::new();
    data.insert("DataVersion", Tag::Int(3955));
    data.insert("Version", Tag::Compound(version));
    data.insert("LevelName", Tag::String("terrane java check".into()));
    let mut root = Compound::new();
    root.insert("Data", Tag::Compound(data));
    let mut w = Writer::new();
    w.named("", &Tag::Compound(root)).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&w.out).unwrap();
    std::fs::write(java.join("level.dat"), gz.finish().unwrap()).unwrap();
    java
}

/// The same independent check for the Java export: a 1.21.1 region of the test data, as a Java
/// world folder, imported and exported by terrane, reads in amulet-core block for block as the
/// original.
#[test]
fn amulet_core_reads_the_exported_java_world_as_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let java = java_world_1_21_1(dir.path());
    let mut world = new_world(&dir.path().join("w"));
    let s = terrane::java::import_java_world(&mut world, &java, &mut |_, _| {}).unwrap();
    assert!(s.total().columns > 200);
    let out = dir.path().join("exported");
    terrane::java::export_java_world(&world, &out, Overwrite::Refuse, &mut |_, _| {}).unwrap();
    amulet_compare(&java, &out);
}

/// The independent check of `terrane convert`: amulet-core reads the Java source and the
/// converted Bedrock world, each through its own translator, and agrees on every cell but
/// those the conversion report lists as approximated (and the bound above).
#[test]
fn amulet_core_agrees_with_the_java_to_bedrock_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let java = java_world_1_21_1(dir.path());
    let out = dir.path().join("bedrock");
    let s = terrane::convert::java_to_bedrock(&java, &out, &mut |_| {}).unwrap();
    assert_amulet_agrees(&java, &out, s.blocks.approximated_cells(), 20_000_000);
}

/// The same check the other way: the Bedrock test world converted to Java.
#[test]
fn amulet_core_agrees_with_the_bedrock_to_java_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("java");
    let s = terrane::convert::bedrock_to_java(&data().join("world"), &out, &mut |_| {}).unwrap();
    assert_amulet_agrees(&data().join("world"), &out, s.blocks.approximated_cells(), 100_000);
}

/// What an import keeps although it is damaged is reported in the summary: a `level.dat`
/// whose header lies, a log that ends inside its last write (the game killed while writing).
#[test]
fn tolerated_damage_is_reported_in_the_import_summary() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("bedrock");
    std::fs::create_dir(&src).unwrap();
    let level = std::fs::read(data().join("world/level.dat")).unwrap();
    std::fs::write(src.join("level.dat"), &level[..level.len() - 1]).unwrap();
    // The test world's records, all in a log, the log cut inside its write.
    let mut records = Vec::new();
    let mut db = bedrock::format::db::ReadDb::open(&data().join("world/db")).unwrap();
    db.for_each(|k, v| {
        records.push((k.to_vec(), v.to_vec()));
        Ok(())
    })
    .unwrap();
    bedrock::format::db::write_log_only(&src.join("db"), &records).unwrap();
    let log = std::fs::read_dir(src.join("db"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "log"))
        .unwrap();
    let bytes = std::fs::read(&log).unwrap();
    std::fs::write(&log, &bytes[..bytes.len() - 10]).unwrap();

    let mut w = new_world(&dir.path().join("w"));
    let s = bedrock::import_bedrock_world(&mut w, &src, &mut |_| {}).unwrap();
    assert!(s.damaged.iter().any(|d| d.contains("level.dat")), "{:?}", s.damaged);
    assert!(s.damaged.iter().any(|d| d.contains("ends inside a write")), "{:?}", s.damaged);
    // level.dat is kept as it was.
    let kept = w.store().get(tables::WORLD_PROPERTIES, bedrock::LEVEL_DAT_KEY).unwrap().unwrap();
    assert_eq!(kept.data, level[..level.len() - 1]);
}

/// An export that fails part-way leaves nothing behind: neither the destination nor its
/// temporary folder.
#[test]
fn a_failed_export_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = new_world(&dir.path().join("w"));
    bedrock::import_bedrock_world(&mut w, &data().join("world"), &mut |_| {}).unwrap();
    // A chunk Bedrock cannot hold (sub-chunk y is an i8), in the last column exported.
    let mut save = terrane::TickSave::new();
    let c = terrane::Chunk::new(w.air()).encode(w.schema());
    save.put_chunk(0, terrane::ChunkPos::new(1000, 200, 1000), c);
    w.save_tick(w.tick() + 1, save).unwrap();
    let out = dir.path().join("exported");
    let e = bedrock::export_bedrock_world(&w, &out, Overwrite::Refuse, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("beyond Bedrock"), "{e}");
    let beside: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(beside, ["w"], "left behind: {beside:?}");
}

/// Every record of a Bedrock database folder.
fn db_records(db: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut db = bedrock::format::db::ReadDb::open(db).unwrap();
    db.for_each(|k, v| {
        out.insert(k.to_vec(), v.to_vec());
        Ok(())
    })
    .unwrap();
    out
}

/// Checks every entry of every `Checksums` record of a database against the record it
/// names: (`Checksums` records, entries, the wrong entries one line each).
fn check_checksums(records: &BTreeMap<Vec<u8>, Vec<u8>>) -> (usize, usize, Vec<String>) {
    use bedrock::format::checksums::{Checksums, xxhash64};
    use bedrock::format::key::{DbKey, tag};
    let (mut sums, mut entries, mut wrong) = (0, 0, Vec::new());
    for (k, v) in records {
        let DbKey::Chunk { pos, tag: tag::CHECKSUMS, .. } = DbKey::parse(k) else { continue };
        sums += 1;
        for e in Checksums::decode(v).unwrap().entries {
            entries += 1;
            let what = format!("{pos:?} tag {:#x} sub {}", e.tag, e.sub as i8);
            match e.record_key(pos).and_then(|k| records.get(&k)) {
                Some(r) if xxhash64(r) == e.hash => {}
                Some(_) => wrong.push(format!("{what}: hash differs")),
                None => wrong.push(format!("{what}: names no record")),
            }
        }
    }
    (sums, entries, wrong)
}

/// A world whose columns carry good `Checksums` records (as worlds written before 1.18 do),
/// imported and exported: every hash of every `Checksums` record of the export matches the
/// record it names, and every sub-chunk exported has one.
#[test]
fn an_exported_world_has_checksums_of_what_it_wrote() {
    use bedrock::format::checksums;
    use bedrock::format::key::{DbKey, tag};
    let dir = tempfile::tempdir().unwrap();
    // The test world with a Checksums record per column, each hash good.
    let src = dir.path().join("with-checksums");
    std::fs::create_dir(&src).unwrap();
    for f in ["level.dat", "levelname.txt"] {
        std::fs::copy(data().join("world").join(f), src.join(f)).unwrap();
    }
    let mut records = db_records(&data().join("world/db"));
    let mut columns = BTreeMap::new();
    for k in records.keys() {
        if let DbKey::Chunk { pos, .. } = DbKey::parse(k) {
            columns.insert(pos.key(tag::CHECKSUMS), pos);
        }
    }
    let all: Vec<(Vec<u8>, Vec<u8>)> = records.clone().into_iter().collect();
    for (key, pos) in &columns {
        records.insert(key.clone(), checksums::rebuild(*pos, &all, &[]).encode());
    }
    let (sums, entries, wrong) = check_checksums(&records);
    assert_eq!(sums, 27);
    assert!(entries > 27 && wrong.is_empty(), "{entries} entries before: {wrong:?}");
    let mut db = bedrock::format::db::WriteDb::create(&src.join("db")).unwrap();
    for (k, v) in &records {
        db.put(k, v).unwrap();
    }
    db.finish().unwrap();

    let mut w = new_world(&dir.path().join("w"));
    bedrock::import_bedrock_world(&mut w, &src, &mut |_| {}).unwrap();
    let out = dir.path().join("exported");
    bedrock::export_bedrock_world(&w, &out, Overwrite::Refuse, &mut |_| {}).unwrap();
    let exported = db_records(&out.join("db"));
    let (sums, entries, wrong) = check_checksums(&exported);
    assert_eq!(sums, 27, "one Checksums record per column, as the source had");
    assert!(wrong.is_empty(), "{} of {entries} entries wrong: {wrong:#?}", wrong.len());
    let covered = exported
        .keys()
        .filter(|k| {
            matches!(DbKey::parse(k), DbKey::Chunk { tag, .. } if checksums::COVERED.contains(&tag))
        })
        .count();
    assert_eq!(entries, covered, "an entry for every sub-chunk, block entity and entity list");
}
