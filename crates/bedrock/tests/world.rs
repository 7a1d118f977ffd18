//! The Bedrock test world written by independent tools (`tests/data/SOURCES.md`): read,
//! converted to terrane chunks and back, written as a new database and read again.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use terrane_bedrock::checksums::{self, Checksums, xxhash64};
use terrane_bedrock::db::{ReadDb, WriteDb};
use terrane_bedrock::key::{BedrockColumnPos, DbKey, tag};
use terrane_bedrock::mapping::{
    chunks_to_column, column_to_terrane, first_block_version, terrane_to_column,
};
use terrane_bedrock::read::{RawColumn, db_dir, read_db};
use terrane_bedrock::subchunk::{SubChunk, bedrock_index};
use terrane_bedrock::{BedrockRecord, LevelDat};
use terrane_chunk::{Chunk, Schema};

fn world() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/world")
}

type Others = Vec<(Vec<u8>, Vec<u8>)>;

fn read_all(dir: &std::path::Path) -> (Vec<RawColumn>, Others) {
    let mut db = ReadDb::open(&db_dir(dir).unwrap()).unwrap();
    let (mut cols, mut others) = (Vec::new(), Vec::new());
    read_db(
        &mut db,
        |c| {
            cols.push(c);
            Ok(())
        },
        |k, v| {
            others.push((k.to_vec(), v.to_vec()));
            Ok(())
        },
    )
    .unwrap();
    (cols, others)
}

#[test]
fn the_test_world_reads_as_its_writers_wrote_it() {
    let before: Vec<_> = walk(&world());
    let (cols, others) = read_all(&world());
    // Reading worked on a copy: the world's files are as they were.
    assert_eq!(walk(&world()), before);

    let level = LevelDat::parse(&std::fs::read(world().join("level.dat")).unwrap()).unwrap();
    assert_eq!(level.level_name(), Some("World Created By Amulet"));

    // Columns -1..=1 in x and z, in each of the three dimensions.
    let mut per_dim: BTreeMap<i32, usize> = BTreeMap::new();
    for c in &cols {
        *per_dim.entry(c.pos.dim).or_default() += 1;
    }
    assert_eq!(per_dim, BTreeMap::from([(0, 9), (1, 9), (2, 9)]));

    // Every sub-chunk decodes; the waterlogged fences' water is in storage 1.
    let mut two_layer = 0;
    let mut versions = BTreeMap::new();
    for c in &cols {
        for (y, b) in &c.sub_chunks {
            let sc = SubChunk::decode(b).unwrap_or_else(|e| panic!("{:?} y {y}: {e}", c.pos));
            *versions.entry(sc.version).or_insert(0) += 1;
            if sc.version == 9 {
                assert_eq!(sc.y, Some(*y));
            }
            if sc.storages.len() == 2 {
                two_layer += 1;
                let s1 = &sc.storages[1];
                let water = s1.palette.iter().position(|p| {
                    matches!(p.get("name"), Some(terrane_nbt::Tag::String(n)) if n == "minecraft:water")
                });
                assert!(water.is_some(), "{:?}", s1.palette);
            }
        }
    }
    assert_eq!(versions.get(&8), Some(&1), "{versions:?}");
    assert!(two_layer >= 3, "{two_layer} sub-chunks with two storages");

    // The fence at (0, 81, 5) in the overworld: fence in storage 0, water in storage 1.
    let c = cols.iter().find(|c| c.pos == BedrockColumnPos { dim: 0, x: 0, z: 0 }).unwrap();
    let sc = SubChunk::decode(&c.sub_chunks.iter().find(|s| s.0 == 5).unwrap().1).unwrap();
    let i = bedrock_index(0, 81 - 80, 5);
    let name =
        |s: usize| sc.storages[s].palette[sc.storages[s].indices[i] as usize].get("name").cloned();
    assert_eq!(name(0), Some(terrane_nbt::Tag::String("minecraft:oak_fence".into())));
    assert_eq!(name(1), Some(terrane_nbt::Tag::String("minecraft:water".into())));

    // Entities: two per dimension, through digp; the old list of column 0,1 is a record.
    let actors: usize = cols.iter().map(|c| c.actors.len()).sum();
    assert_eq!(actors, 6);
    assert!(cols.iter().all(|c| c.missing_actors.is_empty()));
    let old = cols.iter().find(|c| c.pos == BedrockColumnPos { dim: 0, x: 0, z: 1 }).unwrap();
    assert!(old.records.iter().any(|r| r.0 == tag::ENTITY));
    // A block entity (the chest) per dimension.
    let bes = cols.iter().filter(|c| c.records.iter().any(|r| r.0 == tag::BLOCK_ENTITY)).count();
    assert_eq!(bes, 3);

    // World records kept; the deleted key is gone.
    let keys: Vec<String> =
        others.iter().map(|o| String::from_utf8_lossy(&o.0).into_owned()).collect();
    for k in
        ["~local_player", "map_-4294967295", "VILLAGE_0f1e2d3c-0000-4000-8000-000000000001_INFO"]
    {
        assert!(keys.iter().any(|x| x == k), "{k} in {keys:?}");
    }
    assert!(!keys.iter().any(|k| k == "deleted_record"), "{keys:?}");
}

#[test]
fn converted_and_written_back_the_world_reads_the_same() {
    let (cols, others) = read_all(&world());
    let version = cols.iter().find_map(first_block_version).unwrap();
    let mut schema = Schema::new();
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = others.clone();
    let (mut blocks, mut cells) = (0, 0);
    for c in &cols {
        let conv = column_to_terrane(c, &mut schema, version).unwrap();
        assert!(conv.damaged.is_empty(), "{:?}", conv.damaged);
        blocks += conv.blocks;
        cells += conv.chunks.len() as u64 * 4096;
        let ents: HashMap<_, _> = conv.entities.iter().cloned().collect();
        let record = BedrockRecord::decode(&conv.record).unwrap();
        let records =
            terrane_to_column(c.pos, &conv.chunks, Some(&record), &ents, &schema, version).unwrap();
        // The same chunks decoded (as a conversion hands them over) write the same records.
        let decoded: Vec<(i64, Chunk)> =
            conv.chunks.iter().map(|(y, b)| (*y, Chunk::decode(b, &schema).unwrap())).collect();
        let again =
            chunks_to_column(c.pos, &decoded, Some(&record), &ents, &schema, version).unwrap();
        assert!(records == again, "column {:?}: decoded chunks write other records", c.pos);
        out.extend(records);
    }
    // Non-air blocks (the ground, glass, fences, chests), not every cell of the sub-chunks
    // (crates/terrane/tests/bedrock.rs checks the count cell by cell).
    assert!(blocks > 3 * 1024 && blocks < cells, "{blocks} non-air blocks of {cells} cells");
    // Registry names keep Bedrock's typed states; the world's block version is left out.
    let names: Vec<&str> = schema.blocks().names().collect();
    assert!(names.contains(&"minecraft:water[liquid_depth=0]"), "{names:?}");
    assert!(names.contains(&"minecraft:bedrock[infiniburn_bit=0b]"), "{names:?}");
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("minecraft:chest[minecraft:cardinal_direction=\"north\"")),
        "{names:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let mut w = WriteDb::create(&dir.path().join("db")).unwrap();
    for (k, v) in &out {
        w.put(k, v).unwrap();
    }
    w.finish().unwrap();

    // Read again: the same columns, block for block and layer for layer.
    let (cols2, others2) = read_all(dir.path());
    assert_eq!(others2, others);
    assert_eq!(cols2.len(), cols.len());
    for (a, b) in cols.iter().zip(&cols2) {
        assert_eq!(a.pos, b.pos);
        assert_eq!(a.records, b.records);
        assert_eq!(a.actors, b.actors);
        assert_eq!(a.sub_chunks.len(), b.sub_chunks.len());
        for ((ya, va), (yb, vb)) in a.sub_chunks.iter().zip(&b.sub_chunks) {
            assert_eq!(ya, yb);
            let (sa, sb) = (SubChunk::decode(va).unwrap(), SubChunk::decode(vb).unwrap());
            assert_eq!(sb.version, 9);
            assert_eq!(sa.storages.len(), sb.storages.len(), "{:?} y {ya}", a.pos);
            for (la, lb) in sa.storages.iter().zip(&sb.storages) {
                for i in 0..4096 {
                    assert_eq!(
                        la.palette[la.indices[i] as usize],
                        lb.palette[lb.indices[i] as usize]
                    );
                }
            }
        }
    }
}

fn walk(dir: &std::path::Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    out.sort();
    out
}

/// Every `Checksums` record of `records` (a whole database) checked against the records it
/// names: (entries checked, entries whose hash or record is wrong, one line each).
fn check_checksums(records: &BTreeMap<Vec<u8>, Vec<u8>>) -> (usize, Vec<String>) {
    let (mut checked, mut wrong) = (0, Vec::new());
    for (k, v) in records {
        let DbKey::Chunk { pos, tag: tag::CHECKSUMS, .. } = DbKey::parse(k) else { continue };
        for e in Checksums::decode(v).unwrap().entries {
            checked += 1;
            match e.record_key(pos).and_then(|k| records.get(&k)) {
                Some(r) if xxhash64(r) == e.hash => {}
                Some(_) => wrong.push(format!("{pos:?} tag {} sub {}: hash differs", e.tag, e.sub)),
                None => wrong.push(format!("{pos:?} tag {} sub {}: no record", e.tag, e.sub)),
            }
        }
    }
    (checked, wrong)
}

/// A world whose columns carry `Checksums` records (as worlds written before 1.18 do), each
/// hash good: converted and written back, every entry of every `Checksums` record hashes the
/// record written, and every sub-chunk written has one.
#[test]
fn checksums_written_back_hash_the_records_written() {
    let (cols, _) = read_all(&world());
    let version = cols.iter().find_map(first_block_version).unwrap();
    let mut schema = Schema::new();
    let mut before = BTreeMap::new();
    let mut after = BTreeMap::new();
    for c in &cols {
        // The column's stored records, and a Checksums record of them.
        let mut stored: Vec<(Vec<u8>, Vec<u8>)> =
            c.sub_chunks.iter().map(|(y, v)| (c.pos.sub_chunk_key(*y), v.clone())).collect();
        stored.extend(c.records.iter().map(|(t, v)| (c.pos.key(*t), v.clone())));
        stored.sort();
        let sums = checksums::rebuild(c.pos, &stored, &[]).encode();
        stored.push((c.pos.key(tag::CHECKSUMS), sums.clone()));
        before.extend(stored);
        let mut raw = c.clone();
        raw.records.push((tag::CHECKSUMS, sums));
        raw.records.sort();

        let conv = column_to_terrane(&raw, &mut schema, version).unwrap();
        let ents: HashMap<_, _> = conv.entities.iter().cloned().collect();
        let record = BedrockRecord::decode(&conv.record).unwrap();
        let written =
            terrane_to_column(c.pos, &conv.chunks, Some(&record), &ents, &schema, version).unwrap();
        after.extend(written);
    }
    let (n, wrong) = check_checksums(&before);
    assert!(n > cols.len() && wrong.is_empty(), "{n} entries, {wrong:?}");
    // The stored hashes do not fit the written sub-chunks: what the export must not keep.
    let stale: BTreeMap<_, _> = after
        .iter()
        .map(|(k, v)| match DbKey::parse(k) {
            DbKey::Chunk { tag: tag::CHECKSUMS, .. } => (k.clone(), before[k].clone()),
            _ => (k.clone(), v.clone()),
        })
        .collect();
    assert!(!check_checksums(&stale).1.is_empty(), "the test world's sub-chunks re-encode");

    let (n, wrong) = check_checksums(&after);
    assert!(wrong.is_empty(), "{} of {n} entries wrong: {wrong:?}", wrong.len());
    let sub_chunks =
        after.keys().filter(|k| matches!(DbKey::parse(k), DbKey::Chunk { y: Some(_), .. })).count();
    let block_entities = after
        .keys()
        .filter(|k| matches!(DbKey::parse(k), DbKey::Chunk { tag: tag::BLOCK_ENTITY, .. }))
        .count();
    assert_eq!(n, sub_chunks + block_entities + 1, "every covered record (one Entity list)");
}
