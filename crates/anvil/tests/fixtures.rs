//! Every fixture region folder: import → export → import block for block, block counts
//! against an independent oracle, legacy refusal, fastanvil reading our output.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use terrane_anvil::mapping::terrane_to_column;
use terrane_anvil::{Column, Error, ImportSummary, Layout, MemColumns, Progress};

type Counts = HashMap<String, u64>;
type Imported = (MemColumns, ImportSummary, Vec<Column>);

/// The oracle's counts per region folder.
static ORACLE: LazyLock<BTreeMap<PathBuf, (usize, Counts)>> = LazyLock::new(|| {
    let mut m = BTreeMap::new();
    for dir in common::region_dirs() {
        let mut counts = HashMap::new();
        let mut n = 0;
        for f in common::region_files().into_iter().filter(|f| f.parent() == Some(dir.as_path())) {
            for (_, nbt) in common::oracle_chunks(&f) {
                common::add_counts(&mut counts, &common::oracle_counts(&nbt));
                n += 1;
            }
        }
        m.insert(dir, (n, counts));
    }
    m
});

/// Every folder imported once.
static IMPORTED: LazyLock<BTreeMap<PathBuf, Imported>> = LazyLock::new(|| {
    common::region_dirs()
        .into_iter()
        .map(|d| {
            let mut w = MemColumns::new();
            let mut last = Progress::default();
            let s = terrane_anvil::import_region_dir(&d, &mut w, &mut |p| {
                assert!(p.columns_done >= last.columns_done && p.columns_done <= p.columns_total);
                last = p.clone();
            })
            .unwrap();
            assert_eq!(last.columns_done, last.columns_total);
            assert_eq!(last.regions_done, last.regions_total);
            let cols = columns(&w);
            (d, (w, s, cols))
        })
        .collect()
});

/// Every non-legacy folder's import exported once into a temporary folder.
static EXPORTED: LazyLock<BTreeMap<PathBuf, (tempfile::TempDir, terrane_anvil::ExportSummary)>> =
    LazyLock::new(|| {
        IMPORTED
            .iter()
            .filter(|(d, _)| !is_legacy(d))
            .map(|(d, (w, _, _))| {
                let out = tempfile::tempdir().unwrap();
                let es = terrane_anvil::export_region_dir(w, out.path(), &mut |_| {}).unwrap();
                (d.clone(), (out, es))
            })
            .collect()
    });

fn columns(w: &MemColumns) -> Vec<Column> {
    w.columns
        .keys()
        .map(|&p| {
            let imp = terrane_anvil::ExportSource::column(w, p).unwrap().unwrap();
            terrane_to_column(&imp, &w.schema).unwrap().0
        })
        .collect()
}

fn name_cells(c: &Column) -> Vec<(i32, Vec<&str>)> {
    c.sections
        .iter()
        .map(|s| (s.y, s.blocks.iter().map(|&i| s.palette[i as usize].as_str()).collect()))
        .collect()
}

fn is_legacy(dir: &Path) -> bool {
    dir.file_name().unwrap().to_str().unwrap().starts_with("1.12")
}

#[test]
fn every_folder_imports_without_damage_and_counts_match_the_oracle() {
    let mut total = 0;
    for (dir, (w, s, cols)) in IMPORTED.iter() {
        let (n, want) = &ORACLE[dir];
        assert!(s.damaged.is_empty(), "{}: {:?}", dir.display(), s.damaged);
        assert_eq!(s.columns as usize, *n, "{}", dir.display());
        assert_eq!(w.columns.len(), *n);
        let mut got = HashMap::new();
        let mut chunks = 0;
        for c in cols {
            common::add_counts(&mut got, &c.block_counts());
            chunks += c.sections.len() as u64;
        }
        assert_eq!(&got, want, "{}: counts per block state", dir.display());
        assert_eq!(chunks, s.chunks);
        let non_air: u64 = want.iter().filter(|(k, _)| !k.ends_with("air")).map(|(_, v)| v).sum();
        assert_eq!(s.blocks, non_air);
        assert!(s.bytes_in > 0 && s.bytes_out > 0);
        total += n;
    }
    assert_eq!(total, 620);
}

#[test]
fn legacy_chunks_use_legacy_names_and_refuse_export() {
    for (dir, (w, _, _)) in IMPORTED.iter().filter(|(d, _)| is_legacy(d)) {
        let names: Vec<&str> = w.schema.blocks().names().collect();
        assert!(names.iter().any(|n| n.starts_with("legacy:")), "{}", dir.display());
        // Stone (1:0) and grass (2:0) in every pre-1.13 overworld fixture.
        assert!(names.contains(&"legacy:1:0") && names.contains(&"legacy:2:0"));
        let out = tempfile::tempdir().unwrap();
        let err = terrane_anvil::export_region_dir(w, out.path(), &mut |_| {}).unwrap_err();
        assert!(matches!(err, Error::LegacyExport { .. }), "{err}");
        let msg = err.to_string();
        assert!(msg.contains("legacy") && msg.contains("1.13"), "{msg}");
        assert!(
            std::fs::read_dir(out.path()).unwrap().next().is_none(),
            "nothing written for a refused region"
        );
    }
}

#[test]
fn import_export_import_is_block_for_block_equal() {
    for (dir, (w, s, a)) in IMPORTED.iter().filter(|(d, _)| !is_legacy(d)) {
        let (out, es) = &EXPORTED[dir];
        assert_eq!(es.columns, s.columns);
        assert_eq!(es.chunks, s.chunks);
        let mut w2 = MemColumns::new();
        let s2 = terrane_anvil::import_region_dir(out.path(), &mut w2, &mut |_| {}).unwrap();
        assert!(s2.damaged.is_empty());
        assert_eq!((s2.columns, s2.chunks, s2.blocks), (s.columns, s.chunks, s.blocks));
        assert_eq!((s2.block_entities, s2.entities), (s.block_entities, s.entities));
        let b = columns(&w2);
        assert_eq!(a.len(), b.len());
        for (ca, cb) in a.iter().zip(&b) {
            assert_eq!((ca.x, ca.z), (cb.x, cb.z));
            assert_eq!(name_cells(ca), name_cells(cb), "{} ({}, {})", dir.display(), ca.x, ca.z);
            assert_eq!(ca.block_entities.len(), cb.block_entities.len());
            let key = |m: &terrane_anvil::nbt::Compound| {
                format!("{:?}", m.get("x")) + &format!("{:?}{:?}", m.get("y"), m.get("z"))
            };
            let mut bea = ca.block_entities.clone();
            let mut beb = cb.block_entities.clone();
            bea.sort_by_key(key);
            beb.sort_by_key(key);
            assert_eq!(bea, beb);
            assert_eq!(ca.entities.len(), cb.entities.len());
            assert_eq!(ca.rest, cb.rest);
            assert_eq!(ca.data_version, cb.data_version);
        }
        // Same timestamps and the same set of chunk positions in the written files.
        let w_ts: Vec<u32> = w
            .columns
            .values()
            .map(|c| terrane_anvil::ColumnRecord::decode(&c.record).unwrap().timestamp)
            .collect();
        let w2_ts: Vec<u32> = w2
            .columns
            .values()
            .map(|c| terrane_anvil::ColumnRecord::decode(&c.record).unwrap().timestamp)
            .collect();
        assert_eq!(w_ts, w2_ts);
        // Export is deterministic: exporting the re-import gives identical files (checked on
        // the small folders, to keep the debug suite short).
        if s.columns > 100 {
            continue;
        }
        let out2 = tempfile::tempdir().unwrap();
        terrane_anvil::export_region_dir(&w2, out2.path(), &mut |_| {}).unwrap();
        for e in std::fs::read_dir(out.path()).unwrap() {
            let e = e.unwrap();
            let other = std::fs::read(out2.path().join(e.file_name())).unwrap();
            assert!(std::fs::read(e.path()).unwrap() == other, "{:?} differs", e.file_name());
        }
    }
}

#[test]
fn fastanvil_reads_exported_regions() {
    use fastanvil::{Chunk as _, JavaChunk, Region};
    for (dir, (w, _, ours)) in IMPORTED.iter().filter(|(d, _)| !is_legacy(d)) {
        let out = &EXPORTED[dir].0;
        let mut checked = 0;
        for e in std::fs::read_dir(out.path()).unwrap() {
            let path = e.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(bytes.len() % 4096, 0, "whole sectors");
            let mut region = Region::from_stream(std::io::Cursor::new(bytes)).unwrap();
            let chunks: Vec<_> = region.iter().map(|c| c.unwrap()).collect();
            for c in &chunks {
                let parsed = JavaChunk::from_bytes(&c.data)
                    .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
                // Compare one whole column per file, by block name (fastanvil drops some
                // properties from its descriptions).
                if checked == 0 {
                    let (rx, rz) = terrane_anvil::region::parse_region_name(
                        path.file_name().unwrap().to_str().unwrap(),
                    )
                    .unwrap();
                    let col = ours
                        .iter()
                        .find(|o| (o.x, o.z) == (rx * 32 + c.x as i32, rz * 32 + c.z as i32))
                        .unwrap();
                    for s in &col.sections {
                        for y in 0..16 {
                            for z in 0..16 {
                                for x in 0..16 {
                                    let b = parsed
                                        .block(x, s.y as isize * 16 + y as isize, z)
                                        .map(|b| b.name().to_string());
                                    let mine = s.get(x, y, z);
                                    let mine = mine.split('[').next().unwrap();
                                    assert_eq!(
                                        b.as_deref(),
                                        Some(mine),
                                        "{} ({x},{y},{z}) section {}",
                                        dir.display(),
                                        s.y
                                    );
                                }
                            }
                        }
                    }
                    checked += 1;
                }
            }
            assert_eq!(
                chunks.len(),
                w.columns
                    .keys()
                    .filter(|p| terrane_anvil::region::parse_region_name(
                        path.file_name().unwrap().to_str().unwrap()
                    ) == Some((p.x >> 5, p.z >> 5)))
                    .count()
            );
        }
        assert_eq!(checked, 1, "{}", dir.display());
        let layouts: Vec<Layout> = ours.iter().map(|c| c.layout).collect();
        assert!(!layouts.contains(&Layout::Legacy));
    }
}

#[test]
fn chunk_nbt_fixtures_decode_count_and_roundtrip() {
    let dir = common::testdata().join("chunk-nbt");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let bytes = std::fs::read(&p).unwrap();
        let col =
            Column::from_nbt(&bytes, (0, 0)).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert_eq!(col.block_counts(), common::oracle_counts(&bytes), "{}", p.display());
        let mut schema = terrane_chunk::Schema::new();
        let (imp, _) = terrane_anvil::mapping::column_to_terrane(&col, 0, &mut schema).unwrap();
        let (back, _) = terrane_to_column(&imp, &schema).unwrap();
        assert_eq!(name_cells(&back), name_cells(&col), "{}", p.display());
        if col.layout == Layout::Legacy {
            assert!(col.to_nbt().is_err());
        } else {
            let again = Column::from_nbt(&back.to_nbt().unwrap(), (0, 0)).unwrap();
            assert_eq!(name_cells(&again), name_cells(&col), "{}", p.display());
            // Equal apart from xPos/zPos, set from the position given (0, 0 here).
            let strip = |c: &Column| {
                let mut r = c.rest.clone();
                if let Some(terrane_anvil::nbt::Tag::Compound(l)) = r.get_mut("Level") {
                    l.remove("xPos");
                    l.remove("zPos");
                }
                r.remove("xPos");
                r.remove("zPos");
                r
            };
            assert!(strip(&again) == strip(&col), "{}: rest differs", p.display());
        }
        n += 1;
    }
    assert_eq!(n, 11, "chunk-nbt fixtures in {}", dir.display());
    // The emoji in unicode.chunk is a CESU-8 surrogate pair: decoded, and written back so.
    let bytes = std::fs::read(common::fixture("chunk-nbt/unicode.chunk")).unwrap();
    let col = Column::from_nbt(&bytes, (0, 0)).unwrap();
    assert!(format!("{:?}", col.block_entities).contains('😈'));
    let out = col.to_nbt().unwrap();
    assert!(out.windows(6).any(|w| w == [0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x88]));
    // Sections without block states (light only) produce no chunk but survive in the record.
    let etho = std::fs::read(common::fixture("chunk-nbt/etho.chunk")).unwrap();
    let col = Column::from_nbt(&etho, (0, 0)).unwrap();
    let Some(terrane_anvil::nbt::Tag::Compound(level)) = col.rest.get("Level") else { panic!() };
    let Some(terrane_anvil::nbt::Tag::List(_, secs)) = level.get("Sections") else { panic!() };
    assert!(secs.len() > col.sections.len(), "light-only sections kept in the record");
}

/// An export that fails part way (here: the source fails on the last column of the last of
/// three regions) leaves no new file behind: every region is staged under a temporary name
/// and renamed into place only once all of them are written.
#[test]
fn a_failed_export_leaves_nothing_behind() {
    use terrane_anvil::ExportSource;
    use terrane_anvil::mapping::ImportedColumn;
    use terrane_section::ColumnPos;
    /// A fixture's first region repeated three times along x, failing at `fail_at`.
    struct Repeated<'a> {
        world: &'a MemColumns,
        rx0: i32,
        cols: Vec<ColumnPos>,
        fail_at: Option<ColumnPos>,
    }
    impl ExportSource for Repeated<'_> {
        type Error = std::io::Error;
        fn schema(&self) -> &terrane_chunk::Schema {
            &self.world.schema
        }
        fn columns(&self) -> Result<Vec<ColumnPos>, Self::Error> {
            Ok(self.cols.clone())
        }
        fn column(&self, pos: ColumnPos) -> Result<Option<ImportedColumn>, Self::Error> {
            if Some(pos) == self.fail_at {
                return Err(std::io::Error::other("the disk is full"));
            }
            let k = (pos.x >> 5) - self.rx0;
            let original = ColumnPos::new(pos.x - 32 * k, pos.z);
            let mut c = self.world.column(original).map_err(std::io::Error::other)?;
            if let Some(c) = &mut c {
                c.pos = pos;
            }
            Ok(c)
        }
    }
    let (_, (w, _, _)) = IMPORTED.iter().find(|(d, _)| !is_legacy(d)).expect("a modern fixture");
    let first = w.columns().unwrap();
    let rx0 = first[0].x >> 5;
    let mut cols = Vec::new();
    for k in 0..3 {
        for c in first.iter().filter(|c| c.x >> 5 == rx0 && c.z >> 5 == first[0].z >> 5) {
            cols.push(ColumnPos::new(c.x + 32 * k, c.z));
        }
    }
    let files = |dir: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let out = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join("keep.txt"), b"the folder's old contents").unwrap();
    let failing = Repeated { world: w, rx0, cols: cols.clone(), fail_at: cols.last().copied() };
    let err = terrane_anvil::export_region_dir(&failing, out.path(), &mut |_| {}).unwrap_err();
    assert!(err.to_string().contains("disk is full"), "{err}");
    assert_eq!(files(out.path()), vec!["keep.txt"], "files left behind by a failed export");
    // Without the failure, the three regions are written, and no temporary file stays.
    let ok = Repeated { world: w, rx0, cols, fail_at: None };
    let s = terrane_anvil::export_region_dir(&ok, out.path(), &mut |_| {}).unwrap();
    assert_eq!(s.regions, 3);
    let written = files(out.path());
    assert_eq!(written.iter().filter(|f| f.ends_with(".mca")).count(), 3, "{written:?}");
    assert!(!written.iter().any(|f| f.contains("tmp")), "{written:?}");
}

/// `chunk_to_terrane`, the import's path (what the column record keeps is copied from the
/// chunk's bytes, never a tree), gives exactly what `Column::from_nbt` + `column_to_terrane`
/// give: on every chunk of every fixture, the same chunks, entities and record bytes; on
/// damaged copies of them, the same result or an error from both.
#[test]
fn the_import_without_a_tree_is_the_tree_path_byte_for_byte() {
    use terrane_anvil::mapping::{chunk_to_terrane, column_to_terrane};
    let run = |nbt: &[u8], what: &str| -> bool {
        let mut schema = terrane_chunk::Schema::new();
        let tree = Column::from_nbt(nbt, (1, -2))
            .map_err(Error::from)
            .and_then(|c| column_to_terrane(&c, 7, &mut schema));
        let mut schema = terrane_chunk::Schema::new();
        let copied = chunk_to_terrane(nbt, (1, -2), 7, &mut schema);
        match (tree, copied) {
            (Ok(a), Ok(b)) => {
                assert!(a.0 == b.0, "{what}: the import differs from the tree path");
                true
            }
            (Err(_), Err(_)) => false,
            (a, b) => panic!("{what}: tree path {:?}, import {:?}", a.err(), b.err()),
        }
    };
    let mut chunks: Vec<(String, Vec<u8>)> = Vec::new();
    for f in common::region_files() {
        for (i, nbt) in common::oracle_chunks(&f) {
            chunks.push((format!("{} chunk {i}", f.display()), nbt));
        }
    }
    let dir = common::testdata().join("chunk-nbt");
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        chunks.push((p.display().to_string(), std::fs::read(&p).unwrap()));
    }
    let mut ok = 0;
    for (what, nbt) in &chunks {
        assert!(run(nbt, what), "{what}: a fixture chunk that does not import");
        ok += 1;
    }
    assert!(ok >= 600, "only {ok} fixture chunks");
    // Damage: every 25th chunk, a byte flipped at 60 offsets and cut at 10.
    let (mut same, mut refused) = (0, 0);
    for (what, nbt) in chunks.iter().step_by(25) {
        let mut b = nbt.clone();
        for i in (3..b.len()).step_by(b.len() / 60 + 1) {
            b[i] ^= 0x5A;
            if run(&b, &format!("{what}, byte {i} flipped")) {
                same += 1
            } else {
                refused += 1
            }
            b[i] = nbt[i];
        }
        for cut in (0..nbt.len()).step_by(nbt.len() / 10 + 1) {
            assert!(!run(&nbt[..cut], &format!("{what} cut at {cut}")));
        }
    }
    assert!(same > 0 && refused > 0, "{same} damaged chunks agreed, {refused} refused by both");
    // A key repeated: the last value counts, and a damaged value it replaces (a string that is
    // not modified UTF-8) fails both paths, at the root, in a section, and as block entities.
    let head = |t: u8, k: &str| [&[t, 0, k.len() as u8][..], k.as_bytes()].concat();
    let bad_string = [&head(8, "Status")[..], &[0, 1, 0xFF]].concat();
    let good_string = [&head(8, "Status")[..], &[0, 1, b'x']].concat();
    let bad_list = [&head(9, "block_entities")[..], &[8, 0, 0, 0, 1, 0, 1, 0xFF]].concat();
    let empty_list = [&head(9, "block_entities")[..], &[10, 0, 0, 0, 0]].concat();
    let section = |inner: &[u8]| {
        [&head(9, "sections")[..], &[10, 0, 0, 0, 1], &head(1, "Y"), &[0], inner, &[0]].concat()
    };
    let chunk = |parts: &[&[u8]]| [&[10u8, 0, 0][..], &parts.concat(), &[0]].concat();
    let dv = [&head(3, "DataVersion")[..], &3955i32.to_be_bytes()].concat();
    for (what, bytes, imports) in [
        ("root", chunk(&[&dv, &good_string, &good_string]), true),
        ("root, damaged value replaced", chunk(&[&dv, &bad_string, &good_string]), false),
        ("section", chunk(&[&dv, &section(&[&bad_string[..], &good_string].concat())]), false),
        ("block entities", chunk(&[&dv, &bad_list, &empty_list]), false),
    ] {
        assert_eq!(run(&bytes, what), imports, "{what}");
    }
}
