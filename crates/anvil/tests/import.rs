//! Import behaviour: damaged chunks, resumption, every compression, `.mcc` side files,
//! one-byte-short lengths, block entities and entities carried.

mod common;

use terrane_anvil::linear::LinearLayout;
use terrane_anvil::nbt::{Compound, Tag};
use terrane_anvil::region::{Compression, RegionFile, RegionWriter, SECTOR, lz4_block_encode};
use terrane_anvil::{
    ChunkError, Column, ExportOptions, ExportSource, MemColumns, RegionFormat, mapping,
};

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

#[test]
fn damaged_chunks_are_reported_and_skipped() {
    let src = common::fixture("anvil/1.21.1/r.0.0.mca");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.0.0.mca");
    let mut b = std::fs::read(&src).unwrap();
    let present: Vec<usize> = (0..1024).filter(|&i| be32(&b, i * 4) != 0).collect();
    assert_eq!(present.len(), 225);
    let off = |b: &[u8], i: usize| (be32(b, i * 4) >> 8) as usize * SECTOR;
    // 1: garbage in the middle of the zlib stream.
    let s = off(&b, present[0]);
    for k in 40..80 {
        b[s + k] ^= 0x5A;
    }
    // 2: unknown compression type.
    let s = off(&b, present[1]);
    b[s + 4] = 42;
    // 3: location past the end of the file.
    b[present[2] * 4..present[2] * 4 + 4].copy_from_slice(&((0xFFFF << 8) | 1u32).to_be_bytes());
    // 4: location into the header.
    b[present[3] * 4..present[3] * 4 + 4].copy_from_slice(&((1 << 8) | 1u32).to_be_bytes());
    // 5: valid zlib, but not NBT.
    let s = off(&b, present[4]);
    let junk = {
        use std::io::Write;
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(b"definitely not NBT").unwrap();
        e.finish().unwrap()
    };
    b[s..s + 4].copy_from_slice(&(junk.len() as u32 + 1).to_be_bytes());
    b[s + 4] = 2;
    b[s + 5..s + 5 + junk.len()].copy_from_slice(&junk);
    std::fs::write(&path, &b).unwrap();
    // And a region file shorter than its header.
    std::fs::write(dir.path().join("r.5.5.mca"), [1u8; 100]).unwrap();

    let mut w = MemColumns::new();
    let s = terrane_anvil::import_region_dir(dir.path(), &mut w, &mut |_| {}).unwrap();
    assert_eq!(s.columns, 220);
    assert_eq!(w.columns.len(), 220);
    assert_eq!(s.damaged.len(), 6, "{:#?}", s.damaged);
    let whole_file = s.damaged.iter().find(|d| d.index.is_none()).unwrap();
    assert!(whole_file.file.ends_with("r.5.5.mca"));
    assert_eq!(whole_file.error, ChunkError::TruncatedRegion(100));
    let by_index = |i: usize| &s.damaged.iter().find(|d| d.index == Some(i)).unwrap().error;
    assert!(matches!(by_index(present[0]), ChunkError::Decompress { .. }));
    assert_eq!(by_index(present[1]), &ChunkError::UnknownCompression(42));
    assert!(matches!(by_index(present[2]), ChunkError::OutOfBounds { .. }));
    assert_eq!(by_index(present[3]), &ChunkError::SectorInHeader { sector: 1 });
    assert!(matches!(by_index(present[4]), ChunkError::Nbt(_)));
    // Messages name the file and the chunk.
    let msg = s.damaged.iter().find(|d| d.index.is_some()).unwrap().to_string();
    assert!(msg.contains(".mca") && msg.contains('#'), "{msg}");
}

#[test]
fn import_resumes_and_skips_present_columns() {
    let dir = common::fixture("anvil/1.18-21w44a/r.15.-9.mca").parent().unwrap().to_path_buf();
    let mut w = MemColumns::new();
    let first = terrane_anvil::import_region_dir(&dir, &mut w, &mut |_| {}).unwrap();
    assert_eq!((first.columns, first.columns_skipped), (2, 0));
    let full = w.clone();
    // Lose one column (an interrupted import), then run again.
    let lost = *w.columns.keys().next().unwrap();
    w.columns.remove(&lost);
    let mut calls = 0;
    let again = terrane_anvil::import_region_dir(&dir, &mut w, &mut |_| calls += 1).unwrap();
    assert_eq!((again.columns, again.columns_skipped), (1, 1));
    assert!(calls >= 2);
    assert_eq!(w.columns, full.columns);
    let third = terrane_anvil::import_region_dir(&dir, &mut w, &mut |_| {}).unwrap();
    assert_eq!((third.columns, third.columns_skipped, third.bytes_out), (0, 2, 0));
    assert_eq!(third.bytes_in, 0, "fully imported regions are not even read");
}

#[test]
fn off_by_one_fixtures_import() {
    for rel in ["anvil/1.12-mixed-offbyone/r.2.2.mca", "anvil/1.13.1-offbyone/r.2.2.mca"] {
        let p = common::fixture(rel);
        let b = std::fs::read(&p).unwrap();
        let r = RegionFile::new(b.clone()).unwrap();
        let entries: Vec<_> = r.entries().collect();
        assert_eq!(entries.len(), 3);
        for e in &entries {
            // The length field really is one short: the stream needs one more byte.
            let s = e.sector as usize * SECTOR;
            let len = be32(&b, s) as usize;
            let strict = flate2::Decompress::new(true).decompress(
                &b[s + 5..s + 4 + len],
                &mut vec![0; 1 << 20],
                flate2::FlushDecompress::Finish,
            );
            assert!(!matches!(strict, Ok(flate2::Status::StreamEnd)), "{rel}: not off by one?");
            let raw = r.read(e).unwrap();
            Column::from_nbt(&raw.nbt, (64, 64)).unwrap();
        }
        let mut w = MemColumns::new();
        let s = terrane_anvil::import_region_dir(p.parent().unwrap(), &mut w, &mut |_| {}).unwrap();
        assert_eq!((s.columns, s.damaged.len()), (3, 0), "{rel}");
    }
    // DataVersion 1628 is palette-based; the mixed file is all numeric.
    let mut w = MemColumns::new();
    let p = common::fixture("anvil/1.13.1-offbyone/r.2.2.mca");
    terrane_anvil::import_region_dir(p.parent().unwrap(), &mut w, &mut |_| {}).unwrap();
    assert!(w.schema.blocks().names().all(|n| n.starts_with("minecraft:")));
}

/// Rewrites a fixture region with every compression, plus one oversize chunk.
#[test]
fn every_compression_and_oversize_side_files_roundtrip() {
    let src = common::fixture("anvil/1.18.2/r.0.0.mca");
    let r = RegionFile::new(std::fs::read(&src).unwrap()).unwrap();
    let raws: Vec<_> = r.entries().take(8).map(|e| r.read(&e).unwrap()).collect();
    let dir = tempfile::tempdir().unwrap();
    let mut w = RegionWriter::new(0, 0);
    for (k, raw) in raws.iter().enumerate() {
        let idx = raw.index;
        match k % 4 {
            0 => w.insert(idx, raw.nbt.clone(), raw.timestamp),
            1 => {
                use std::io::Write;
                let mut g = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                g.write_all(&raw.nbt).unwrap();
                w.insert_compressed(idx, g.finish().unwrap(), Compression::Gzip, raw.timestamp);
            }
            2 => w.insert_compressed(idx, raw.nbt.clone(), Compression::None, raw.timestamp),
            _ => w.insert_compressed(
                idx,
                lz4_block_encode(&raw.nbt),
                Compression::Lz4,
                raw.timestamp,
            ),
        }
    }
    // An oversize chunk: a real column plus 1.5 MiB of incompressible bytes in its NBT.
    let big_idx = 1000;
    let mut col = Column::from_nbt(&raws[0].nbt, (8, 31)).unwrap();
    let mut s = 7u64;
    let noise: Vec<i8> = (0..(1536 << 10))
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s as i8
        })
        .collect();
    col.rest.insert("terrane:noise", Tag::ByteArray(noise));
    w.insert(big_idx, col.to_nbt().unwrap(), 123);
    let (bytes, side) = w.finish().unwrap();
    assert_eq!(side.len(), 1);
    assert_eq!(side[0].name, "c.8.31.mcc");
    std::fs::write(dir.path().join("r.0.0.mca"), bytes).unwrap();
    std::fs::write(dir.path().join(&side[0].name), &side[0].bytes).unwrap();

    let mut world = MemColumns::new();
    let s = terrane_anvil::import_region_dir(dir.path(), &mut world, &mut |_| {}).unwrap();
    assert!(s.damaged.is_empty(), "{:?}", s.damaged);
    assert_eq!(s.columns, 9);
    assert!(s.bytes_in > 1_500_000, "the side file counts as input");
    for raw in &raws {
        let want = Column::from_nbt(&raw.nbt, (0, 0)).unwrap().block_counts();
        let p = terrane_section::ColumnPos::new((raw.index % 32) as i32, (raw.index / 32) as i32);
        let imp = world.column(p).unwrap().unwrap();
        let (got, ts) = mapping::terrane_to_column(&imp, &world.schema).unwrap();
        assert_eq!(got.block_counts(), want);
        assert_eq!(ts, raw.timestamp);
    }
    // Export writes the oversize column to a side file again, and reads back equal.
    let out = tempfile::tempdir().unwrap();
    let es = terrane_anvil::export_region_dir(&world, out.path(), &mut |_| {}).unwrap();
    assert_eq!((es.columns, es.side_files), (9, 1));
    assert!(out.path().join("c.8.31.mcc").is_file());
    let mut again = MemColumns::new();
    let s2 = terrane_anvil::import_region_dir(out.path(), &mut again, &mut |_| {}).unwrap();
    assert_eq!((s2.columns, s2.blocks), (s.columns, s.blocks));
    let big = terrane_section::ColumnPos::new(8, 31);
    let a =
        mapping::terrane_to_column(&world.column(big).unwrap().unwrap(), &world.schema).unwrap();
    let b =
        mapping::terrane_to_column(&again.column(big).unwrap().unwrap(), &again.schema).unwrap();
    assert_eq!(a.0.rest, b.0.rest);
    assert_eq!(a.1, 123);
}

/// Every column of a region folder, as block counts by column (for comparing imports).
fn counts(world: &MemColumns) -> Vec<(terrane_section::ColumnPos, Vec<(String, u64)>)> {
    let mut out: Vec<_> = ExportSource::columns(world)
        .unwrap()
        .into_iter()
        .map(|p| {
            let imp = world.column(p).unwrap().unwrap();
            let (col, _) = mapping::terrane_to_column(&imp, &world.schema).unwrap();
            let mut c: Vec<(String, u64)> = col.block_counts().into_iter().collect();
            c.sort();
            (p, c)
        })
        .collect();
    out.sort_by_key(|(p, _)| (p.x, p.z));
    out
}

/// Linear folders (the format's own tool's files) import as the Anvil region they were
/// written from, and an export to Linear, both layouts, imports as the same world; a damaged
/// Linear file is reported and skipped.
#[test]
fn linear_folders_import_and_export_as_their_anvil_region() {
    let anvil_dir = common::fixture("anvil/1.21.1/r.0.0.mca");
    let mut want = MemColumns::new();
    let s = terrane_anvil::import_region_dir(anvil_dir.parent().unwrap(), &mut want, &mut |_| {})
        .unwrap();
    assert_eq!(s.columns, 225);
    for v in ["1.21.1-v1", "1.21.1-v2"] {
        let dir = common::fixture(&format!("linear/{v}/r.0.0.linear"));
        let mut got = MemColumns::new();
        let s =
            terrane_anvil::import_region_dir(dir.parent().unwrap(), &mut got, &mut |_| {}).unwrap();
        assert!(s.damaged.is_empty(), "{v}: {:?}", s.damaged);
        assert_eq!(s.columns, 225, "{v}");
        assert_eq!(counts(&got), counts(&want), "{v}");
    }
    for layout in [LinearLayout::V1, LinearLayout::V2 { grid: 8 }] {
        let out = tempfile::tempdir().unwrap();
        let options = ExportOptions::new().format(RegionFormat::Linear(layout));
        let es = terrane_anvil::export_region_dir_with(&want, out.path(), &options, &mut |_| {})
            .unwrap();
        assert_eq!(es.columns, 225);
        assert!(out.path().join("r.0.0.linear").is_file());
        assert!(!out.path().join("r.0.0.mca").exists());
        let mut again = MemColumns::new();
        let s = terrane_anvil::import_region_dir(out.path(), &mut again, &mut |_| {}).unwrap();
        assert_eq!(s.columns, 225, "{layout:?}");
        assert_eq!(counts(&again), counts(&want), "{layout:?}");
        // Damage in the middle of the file: the region is reported, nothing imported from it.
        let path = out.path().join("r.0.0.linear");
        let mut b = std::fs::read(&path).unwrap();
        let mid = b.len() / 2;
        b[mid] ^= 0xff;
        std::fs::write(&path, b).unwrap();
        let mut damaged = MemColumns::new();
        let s = terrane_anvil::import_region_dir(out.path(), &mut damaged, &mut |_| {}).unwrap();
        assert_eq!((s.columns, s.damaged.len()), (0, 1), "{layout:?}");
        assert!(matches!(s.damaged[0].error, ChunkError::Linear(_)), "{:?}", s.damaged[0]);
    }
}

#[test]
fn block_entities_become_components() {
    // unicode.chunk: a 1.17.1 chunk whose block entities carry non-ASCII names.
    let bytes = std::fs::read(common::fixture("chunk-nbt/unicode.chunk")).unwrap();
    let col = Column::from_nbt(&bytes, (0, 0)).unwrap();
    assert_eq!(col.block_entities.len(), 4);
    let mut schema = terrane_chunk::Schema::new();
    let (imp, stats) = mapping::column_to_terrane(&col, 5, &mut schema).unwrap();
    assert_eq!(stats.block_entities, 4);
    let be = schema.components().find(mapping::BLOCK_ENTITY_COMPONENT).unwrap();
    let be = terrane_chunk::ComponentId::variable(be);
    let mut as_components = 0;
    for (_, c) in &imp.chunks {
        let v = terrane_chunk::ChunkView::parse(c).unwrap();
        let comps = v.components(&schema).unwrap();
        as_components += comps.values(be).filter(|(_, _, v)| !v.is_empty()).count();
    }
    let record = terrane_anvil::ColumnRecord::decode(&imp.record).unwrap();
    assert_eq!(as_components, 4, "shulker boxes carry the component");
    assert!(record.extra_block_entities.is_empty());
    assert!(as_components > 0, "vanilla block entities are stored as components");
    // Back: the same block entities (as a set), the emoji name intact.
    let (back, ts) = mapping::terrane_to_column(&imp, &schema).unwrap();
    assert_eq!(ts, 5);
    assert_eq!(back.block_entities.len(), 4);
    for m in &col.block_entities {
        assert!(back.block_entities.contains(m), "{m:?}");
    }
    assert!(format!("{:?}", back.block_entities).contains('😈'));
}

#[test]
fn entities_become_entity_records() {
    // The 1.12.2 region holds 60 entities (before 1.17 they live in the chunk).
    let p = common::fixture("anvil/1.12.2/r.0.-1.mca");
    let mut w = MemColumns::new();
    let s = terrane_anvil::import_region_dir(p.parent().unwrap(), &mut w, &mut |_| {}).unwrap();
    assert_eq!(s.entities, 60);
    assert_eq!(w.entities.len(), 60, "one record per UUID");
    let r = RegionFile::new(std::fs::read(&p).unwrap()).unwrap();
    let mut seen = 0;
    for e in r.entries() {
        let col = Column::from_nbt(&r.read(&e).unwrap().nbt, (0, 0)).unwrap();
        let pos = terrane_section::ColumnPos::new(e.local_x() as i32, -32 + e.local_z() as i32);
        let imp = w.column(pos).unwrap().unwrap();
        let (back, _) = mapping::terrane_to_column(&imp, &w.schema).unwrap();
        assert_eq!(back.entities.len(), col.entities.len());
        for ent in &col.entities {
            assert!(back.entities.contains(ent));
            // Referenced by the chunk its Pos falls in (or the nearest one).
            seen += 1;
        }
    }
    assert_eq!(seen, 60);
}

fn entity(id: &str, uuid: Option<[i32; 4]>, pos: [f64; 3], name: Option<&str>) -> Tag {
    let mut m = Compound::new();
    m.insert("id".to_string(), Tag::String(id.into()));
    if let Some(u) = uuid {
        m.insert("UUID".to_string(), Tag::IntArray(u.to_vec()));
    }
    m.insert("Pos".to_string(), Tag::list(pos.iter().map(|&v| Tag::Double(v)).collect()));
    if let Some(n) = name {
        m.insert("CustomName".to_string(), Tag::String(n.into()));
    }
    Tag::Compound(m)
}

#[test]
fn entities_folder_of_modern_worlds_roundtrips() {
    let world = tempfile::tempdir().unwrap();
    let (region, entities) = (world.path().join("region"), world.path().join("entities"));
    std::fs::create_dir_all(&region).unwrap();
    std::fs::create_dir_all(&entities).unwrap();
    std::fs::copy(common::fixture("anvil/1.21.1/r.0.0.mca"), region.join("r.0.0.mca")).unwrap();
    // Entity chunks for columns (0, 0) and (1, 0), as Minecraft 1.21 writes them.
    let mut ew = RegionWriter::new(0, 0);
    let chunk = |x: i32, list: Vec<Tag>| {
        let mut m = Compound::new();
        m.insert("DataVersion".to_string(), Tag::Int(3955));
        m.insert("Position".to_string(), Tag::IntArray(vec![x, 0]));
        m.insert("Entities".to_string(), Tag::list(list));
        terrane_anvil::nbt::write_root(&m).unwrap()
    };
    ew.insert(
        0,
        chunk(
            0,
            vec![
                entity("minecraft:pig", Some([1, 2, 3, 4]), [8.5, 70.0, 8.5], None),
                entity("minecraft:armor_stand", Some([5, 6, 7, 8]), [3.0, -20.0, 9.0], Some("😈")),
            ],
        ),
        10,
    );
    ew.insert(1, chunk(1, vec![entity("minecraft:cow", None, [20.0, 64.0, 3.0], None)]), 11);
    let (bytes, _) = ew.finish().unwrap();
    std::fs::write(entities.join("r.0.0.mca"), bytes).unwrap();

    let opts = terrane_anvil::ImportOptions::new().entities_dir(&entities);
    let mut w = MemColumns::new();
    let s = terrane_anvil::import_region_dir_with(&region, &mut w, &opts, &mut |_| {}).unwrap();
    assert!(s.damaged.is_empty(), "{:?}", s.damaged);
    assert_eq!((s.columns, s.entities), (225, 3));
    assert_eq!(w.entities.len(), 3);
    let c0 = mapping::terrane_to_column(
        &w.column(terrane_section::ColumnPos::new(0, 0)).unwrap().unwrap(),
        &w.schema,
    )
    .unwrap()
    .0;
    assert_eq!(c0.entities.len(), 2);
    assert_eq!(c0.external_entities, Some(3955));
    assert!(c0.to_nbt().unwrap().windows(8).all(|w| w != b"Entities"), "not in the chunk");

    // Without an entities folder, export refuses rather than dropping them.
    let out = tempfile::tempdir().unwrap();
    let err = terrane_anvil::export_region_dir(&w, &out.path().join("region"), &mut |_| {});
    assert!(err.unwrap_err().to_string().contains("entities_dir"));
    let eopts = terrane_anvil::ExportOptions::new().entities_dir(out.path().join("entities"));
    terrane_anvil::export_region_dir_with(&w, &out.path().join("region"), &eopts, &mut |_| {})
        .unwrap();
    // fastanvil reads the entity region written for the two columns that had entities.
    let eb = std::fs::read(out.path().join("entities/r.0.0.mca")).unwrap();
    let mut er = fastanvil::Region::from_stream(std::io::Cursor::new(eb)).unwrap();
    let data = er.read_chunk(0, 0).unwrap().unwrap();
    let v: fastnbt::Value = fastnbt::from_bytes(&data).unwrap();
    let fastnbt::Value::Compound(m) = v else { panic!() };
    assert!(matches!(m.get("Entities"), Some(fastnbt::Value::List(l)) if l.len() == 2));

    let opts2 = terrane_anvil::ImportOptions::new().entities_dir(out.path().join("entities"));
    let mut w2 = MemColumns::new();
    let s2 = terrane_anvil::import_region_dir_with(
        &out.path().join("region"),
        &mut w2,
        &opts2,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!((s2.columns, s2.entities, s2.blocks), (225, 3, s.blocks));
    assert_eq!(w2.entities, w.entities);
}

#[test]
fn columns_built_in_terrane_export_with_a_fresh_record() {
    use terrane_anvil::{ColumnRecord, ImportedColumn, mapping::DATA_VERSION_1_21_1};
    let mut w = MemColumns::new();
    let be = mapping::block_entity_component(&mut w.schema).unwrap();
    let air = mapping::block_id(&mut w.schema, be, "minecraft:air").unwrap();
    let stone = mapping::block_id(&mut w.schema, be, "minecraft:stone").unwrap();
    let chest = mapping::block_id(
        &mut w.schema,
        be,
        "minecraft:chest[facing=west,type=single,waterlogged=false]",
    )
    .unwrap();
    let mut c = terrane_chunk::Chunk::new(air);
    for x in 0..16 {
        for z in 0..16 {
            c.set(x, 0, z, stone);
        }
    }
    c.set(4, 1, 4, chest);
    let items = terrane_anvil::nbt::write_root(
        &[("id".to_string(), Tag::String("minecraft:chest".into()))].into_iter().collect(),
    )
    .unwrap();
    c.set_component(&w.schema, terrane_section::cell_index(4, 1, 4), 0, be, &items).unwrap();
    let pos = terrane_section::ColumnPos::new(-33, 70);
    let imp = ImportedColumn {
        pos,
        chunks: vec![(-1, c.encode(&w.schema))],
        entities: Vec::new(),
        record: ColumnRecord::fresh(DATA_VERSION_1_21_1).encode().unwrap(),
    };
    assert_eq!(
        imp.chunk_positions().next().unwrap().0,
        terrane_section::ChunkPos::new(-33, -1, 70)
    );
    terrane_anvil::ImportSink::put_column(&mut w, imp).unwrap();
    let out = tempfile::tempdir().unwrap();
    terrane_anvil::export_region_dir(&w, out.path(), &mut |_| {}).unwrap();
    // Minecraft's rules: region (-2, 2), local (31, 6); fastanvil reads the blocks.
    let bytes = std::fs::read(out.path().join("r.-2.2.mca")).unwrap();
    let mut r = fastanvil::Region::from_stream(std::io::Cursor::new(bytes)).unwrap();
    let data = r.read_chunk(31, 6).unwrap().unwrap();
    let jc = fastanvil::JavaChunk::from_bytes(&data).unwrap();
    use fastanvil::Chunk as _;
    assert_eq!(jc.block(0, -16, 0).unwrap().name(), "minecraft:stone");
    assert_eq!(jc.block(4, -15, 4).unwrap().name(), "minecraft:chest");
    assert_eq!(jc.block(5, -15, 4).unwrap().name(), "minecraft:air");
    let col = Column::from_nbt(&data, (-33, 70)).unwrap();
    assert_eq!(col.block_entities.len(), 1);
    assert_eq!(col.block_entities[0].get("x"), Some(&Tag::Int(-33 * 16 + 4)));
    assert_eq!(col.block_entities[0].get("y"), Some(&Tag::Int(-15)));
}

/// Columns are decoded on other threads and converted in the region's order, so the import is
/// the same, damaged reports included, whatever the number of threads.
#[test]
fn the_import_is_the_same_on_any_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = std::fs::read(common::fixture("anvil/1.21.1/r.0.0.mca")).unwrap();
    let present: Vec<usize> = (0..1024).filter(|&i| be32(&b, i * 4) != 0).collect();
    for &i in &present[10..13] {
        let s = (be32(&b, i * 4) >> 8) as usize * SECTOR;
        b[s + 4] = 42; // unknown compression
    }
    std::fs::write(dir.path().join("r.0.0.mca"), &b).unwrap();
    std::fs::copy(common::fixture("anvil/1.18.2/r.0.0.mca"), dir.path().join("r.1.0.mca")).unwrap();
    let import = |threads: usize| {
        let mut w = MemColumns::new();
        let options = terrane_anvil::ImportOptions::new().threads(threads);
        let s = terrane_anvil::import_region_dir_with(dir.path(), &mut w, &options, &mut |_| {})
            .unwrap();
        let names: Vec<String> = w.schema.blocks().names().map(str::to_string).collect();
        (s, names, w.columns)
    };
    let one = import(1);
    assert_eq!(one.0.columns, 222 + 280, "{:?}", one.0);
    assert_eq!(one.0.damaged.len(), 3);
    for threads in [2, 3, 8] {
        let many = import(threads);
        assert!(many == one, "{threads} threads imported something else than one");
    }
}

/// A column whose section does not hold 4096 cells (a `Column` built by hand: its fields are
/// public) is refused with an error naming the section, not a panic.
#[test]
fn a_section_without_4096_cells_is_an_error() {
    let mut w = MemColumns::new();
    let region =
        RegionFile::new(std::fs::read(common::fixture("anvil/1.18.2/r.0.0.mca")).unwrap()).unwrap();
    let e = region.entries().next().unwrap();
    let mut col = Column::from_nbt(&region.read(&e).unwrap().nbt, (0, 0)).unwrap();
    let s = col.sections.iter_mut().find(|s| s.palette.len() > 1).unwrap();
    s.blocks.truncate(10);
    let y = s.y;
    let err = mapping::column_to_terrane(&col, 0, &mut w.schema).unwrap_err().to_string();
    assert!(err.contains(&format!("section y {y} has 10 cells")), "{err}");
}
