//! Sponge schematic fixtures (testdata/schem, facts from testdata/SOURCES.md), round trips
//! and hostile inputs.

use terrane_section::testdata::dir as testdata;

use terrane_chunk::block_state::canonical;
use terrane_snapshot::nbt::{self, Compound, Tag};
use terrane_snapshot::{Error, Schematic};

fn read(name: &str) -> Schematic {
    let bytes = terrane_section::testdata::read(&format!("schem/{name}"));
    Schematic::read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"))
}

struct Facts {
    file: &'static str,
    version: i32,
    data_version: Option<i32>,
    dims: (u16, u16, u16),
    palette: usize,
    distinct: usize,
    non_air: usize,
    common: (&'static str, usize),
    block_entities: usize,
    entities: usize,
    offset: [i32; 3],
    samples: &'static [((u32, u32, u32), &'static str)],
}

const CRIMSON: &str =
    "minecraft:crimson_fence[east=false,north=false,south=false,waterlogged=false,west=false]";
const TRAPDOOR: &str =
    "minecraft:birch_trapdoor[facing=south,half=bottom,open=true,powered=false,waterlogged=false]";
const PURPUR: &str =
    "minecraft:purpur_stairs[facing=north,half=bottom,shape=straight,waterlogged=false]";

const COTTAGE_SAMPLES: &[((u32, u32, u32), &str)] = &[
    ((0, 0, 0), "minecraft:air"),
    ((16, 11, 11), "minecraft:air"),
    ((8, 6, 6), "minecraft:air"),
    ((5, 3, 8), "minecraft:air"),
    ((16, 0, 0), "minecraft:air"),
    ((10, 5, 4), "minecraft:green_concrete"),
    ((5, 11, 10), TRAPDOOR),
];

const COLUMN_SAMPLES: &[((u32, u32, u32), &str)] = &[
    ((0, 0, 0), "minecraft:stone"),
    ((0, 40, 8), "minecraft:cracked_polished_blackstone_bricks"),
    ((0, 20, 4), PURPUR),
    ((0, 10, 6), "minecraft:birch_log[axis=x]"),
];

const FACTS: &[Facts] = &[
    Facts {
        file: "1_20_1_read_fail.schem",
        version: 3,
        data_version: Some(3578),
        dims: (15, 16, 20),
        palette: 112,
        distinct: 112,
        non_air: 889,
        common: ("minecraft:air", 3911),
        block_entities: 6,
        entities: 0,
        offset: [-14, 0, -19],
        samples: &[
            ((0, 0, 0), CRIMSON),
            ((14, 15, 19), CRIMSON),
            ((7, 8, 10), "minecraft:air"),
            ((5, 4, 13), "minecraft:air"),
            ((14, 0, 0), "minecraft:air"),
            ((1, 10, 13), "minecraft:glass"),
        ],
    },
    Facts {
        file: "green-cottage.schem",
        version: 2,
        data_version: Some(3465),
        dims: (17, 12, 12),
        palette: 40,
        distinct: 40,
        non_air: 627,
        common: ("minecraft:air", 1821),
        block_entities: 1,
        entities: 0,
        offset: [111, -59, 123],
        samples: COTTAGE_SAMPLES,
    },
    Facts {
        file: "sponge-v3.schem",
        version: 3,
        data_version: Some(3465),
        dims: (17, 12, 12),
        palette: 40,
        distinct: 40,
        non_air: 627,
        common: ("minecraft:air", 1821),
        block_entities: 1,
        entities: 1,
        offset: [111, -59, 123],
        samples: COTTAGE_SAMPLES,
    },
    Facts {
        file: "issue-1.schem",
        version: 2,
        data_version: Some(2860),
        dims: (1, 41, 9),
        palette: 366,
        distinct: 360,
        non_air: 369,
        common: ("minecraft:dirt", 3),
        block_entities: 1,
        entities: 1,
        offset: [22, -60, 13],
        samples: COLUMN_SAMPLES,
    },
    Facts {
        file: "sponge-v1.schem",
        version: 1,
        data_version: None,
        dims: (1, 41, 9),
        palette: 366,
        distinct: 360,
        non_air: 369,
        common: ("minecraft:dirt", 3),
        block_entities: 1,
        entities: 0,
        offset: [22, -60, 13],
        samples: COLUMN_SAMPLES,
    },
    Facts {
        file: "smallhouse1.schem",
        version: 2,
        data_version: Some(2584),
        dims: (21, 28, 20),
        palette: 173,
        distinct: 173,
        non_air: 3201,
        common: ("minecraft:air", 8559),
        block_entities: 72,
        entities: 0,
        offset: [224, 4, -127],
        samples: &[
            ((0, 0, 0), "minecraft:air"),
            ((20, 27, 19), "minecraft:air"),
            ((10, 14, 10), "minecraft:air"),
            (
                (7, 7, 13),
                "minecraft:cobblestone_stairs[facing=south,half=top,shape=straight,waterlogged=false]",
            ),
            ((20, 0, 0), "minecraft:air"),
            ((13, 10, 4), "minecraft:stripped_oak_wood[axis=x]"),
            (
                (10, 26, 17),
                "minecraft:dark_oak_stairs[facing=north,half=top,shape=straight,waterlogged=false]",
            ),
        ],
    },
];

fn histogram(s: &Schematic) -> Vec<usize> {
    let mut h = vec![0usize; s.palette().len()];
    for id in s.ids().iter() {
        h[id as usize] += 1;
    }
    h
}

#[test]
fn every_fixture_matches_sources_md() {
    let dir = testdata().join("schem");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("missing fixture dir {}: {e}", dir.display()))
    {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(FACTS.iter().any(|f| f.file == name), "{name} has no facts in this test");
        seen += 1;
    }
    assert_eq!(seen, FACTS.len());
    for f in FACTS {
        let s = read(f.file);
        assert_eq!(s.version, f.version, "{}", f.file);
        assert_eq!(s.data_version, f.data_version, "{}", f.file);
        assert_eq!((s.width(), s.height(), s.length()), f.dims, "{}", f.file);
        assert_eq!(s.volume(), f.dims.0 as usize * f.dims.1 as usize * f.dims.2 as usize);
        assert_eq!(s.palette().len(), f.palette, "{}", f.file);
        // Small palettes are read in place, one byte per block (the fast path is taken).
        let narrow = matches!(s.ids(), terrane_snapshot::BlockIds::Narrow(_));
        assert_eq!(narrow, f.palette <= 128, "{}", f.file);
        let h = histogram(&s);
        assert_eq!(h.iter().filter(|&&n| n > 0).count(), f.distinct, "{}", f.file);
        let air = s.palette().iter().position(|p| p == "minecraft:air");
        let non_air = s.ids().iter().filter(|&id| Some(id as usize) != air).count();
        assert_eq!(non_air, f.non_air, "{}", f.file);
        let (max_i, &max_n) =
            h.iter().enumerate().max_by_key(|&(i, n)| (n, std::cmp::Reverse(i))).unwrap();
        assert_eq!((s.palette()[max_i].as_str(), max_n), f.common, "{}", f.file);
        assert_eq!(s.block_entities.len(), f.block_entities, "{}", f.file);
        assert_eq!(s.entities.len(), f.entities, "{}", f.file);
        assert_eq!(s.offset, f.offset, "{}", f.file);
        for &((x, y, z), want) in f.samples {
            assert_eq!(s.block(x, y, z), Some(want), "{} at ({x}, {y}, {z})", f.file);
        }
        assert_eq!(s.block(f.dims.0 as u32, 0, 0), None);
    }
}

#[test]
fn air_is_not_assumed_to_be_id_zero() {
    let s = read("1_20_1_read_fail.schem");
    assert_eq!(s.palette()[0], CRIMSON);
    assert_eq!(s.palette()[1], "minecraft:air");
    // Spec-conformant v3: nested Data in block entities, Cyrillic sign text kept.
    let be = &s.block_entities[0];
    assert!(!be.data.is_empty());
    let text = format!("{:?}", s.block_entities);
    assert!(text.chars().any(|c| ('\u{400}'..='\u{4FF}').contains(&c)), "Cyrillic text lost");
    assert!(s.origin().is_some(), "Metadata.WorldEdit.Origin is read");
}

#[test]
fn cross_version_pairs_decode_to_the_same_grid() {
    for (a, b) in [("sponge-v1.schem", "issue-1.schem"), ("green-cottage.schem", "sponge-v3.schem")]
    {
        let (a, b) = (read(a), read(b));
        assert_eq!((a.width(), a.height(), a.length()), (b.width(), b.height(), b.length()));
        assert_eq!(a.palette(), b.palette());
        assert_eq!(a.ids(), b.ids());
        assert_eq!(a.block_entities.len(), b.block_entities.len());
        assert_eq!(a.block_entities[0].pos, b.block_entities[0].pos);
        assert_eq!(a.block_entities[0].id, b.block_entities[0].id);
    }
}

#[test]
fn carried_data_is_normalised() {
    // v1: TileEntities inline, with ContentVersion kept in the data.
    let v1 = read("sponge-v1.schem");
    assert!(v1.block_entities[0].data.get("ContentVersion").is_some());
    assert!(v1.block_entities[0].data.get("Items").is_some());
    // v2 entity with a non-spec Extra compound, outside the region: kept as is.
    let i1 = read("issue-1.schem");
    let pos = i1.entities[0].pos;
    for (got, want) in pos.iter().zip([15.0, 68.0, 40.45]) {
        assert!((got - want).abs() < 0.01, "{pos:?}");
    }
    assert!(i1.entities[0].data.get("Extra").is_some());
    // Flat v3 with v2-style block entities reads the same data as v2.
    let v2 = read("green-cottage.schem");
    let v3 = read("sponge-v3.schem");
    assert_eq!(v2.block_entities, v3.block_entities);
}

fn blocks_equal(a: &Schematic, b: &Schematic) {
    assert_eq!((a.width(), a.height(), a.length()), (b.width(), b.height(), b.length()));
    for (i, (x, y)) in a.ids().iter().zip(b.ids().iter()).enumerate() {
        assert_eq!(canonical(&a.palette()[x as usize]), b.palette()[y as usize], "block {i}");
    }
}

#[test]
fn read_write_read_keeps_everything() {
    for f in FACTS {
        let a = read(f.file);
        let b = Schematic::read(&a.write().unwrap()).unwrap();
        assert_eq!(b.version, 3);
        blocks_equal(&a, &b);
        assert_eq!(a.block_entities, b.block_entities, "{}", f.file);
        assert_eq!(a.entities, b.entities, "{}", f.file);
        assert_eq!(a.offset, b.offset);
        assert_eq!(a.metadata, b.metadata);
        assert_eq!(
            b.data_version,
            Some(a.data_version.unwrap_or(terrane_snapshot::FALLBACK_DATA_VERSION))
        );
        // Ids from 0 in order of first use, unused entries dropped.
        assert_eq!(b.ids().get(0), Some(0));
        assert_eq!(b.palette().len(), f.distinct);
        // A second trip is the identity.
        let c = Schematic::read(&b.write().unwrap()).unwrap();
        assert_eq!(b, c, "{}", f.file);
    }
}

#[test]
fn written_layout_is_v3_as_worldedit_expects() {
    let s = read("green-cottage.schem");
    let mut s2 = s.clone();
    s2.block_entities.clear();
    s2.set_placement([100, 64, -20], [90, 60, -30]);
    let (root, tag) = nbt::from_bytes(&s2.to_nbt().unwrap()).unwrap();
    assert_eq!(root, "");
    let Tag::Compound(root) = tag else { panic!("root compound") };
    assert_eq!(root.len(), 1);
    let sch = root.get("Schematic").and_then(Tag::as_compound).expect("nested Schematic");
    assert_eq!(sch.get("Version"), Some(&Tag::Int(3)));
    assert_eq!(sch.get("Offset"), Some(&Tag::IntArray(vec![10, 4, 10])));
    let origin = sch
        .get("Metadata")
        .and_then(Tag::as_compound)
        .and_then(|m| m.get("WorldEdit"))
        .and_then(Tag::as_compound)
        .and_then(|w| w.get("Origin"));
    assert_eq!(origin, Some(&Tag::IntArray(vec![90, 60, -30])));
    let blocks = sch.get("Blocks").and_then(Tag::as_compound).unwrap();
    assert_eq!(blocks.get("BlockEntities"), Some(&Tag::List(10, vec![])), "always present");
    let pal = blocks.get("Palette").and_then(Tag::as_compound).unwrap();
    let ids: Vec<i32> = pal.iter().map(|(_, v)| v.as_int().unwrap()).collect();
    assert_eq!(ids, (0..pal.len() as i32).collect::<Vec<_>>(), "written in id order from 0");
    for (k, _) in pal.iter() {
        assert_eq!(canonical(k), k);
    }
    let back = Schematic::read(&s2.write().unwrap()).unwrap();
    assert_eq!(back.world_min(), [100, 64, -20]);
    assert_eq!(back.origin(), Some([90, 60, -30]));
}

fn gz(nbt: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(nbt).unwrap();
    e.finish().unwrap()
}

/// A v2 body with the given palette entries and data bytes, fields in the given order.
fn v2(palette: &[(&str, i32)], data: &[u8], dims: (i16, i16, i16), palette_last: bool) -> Vec<u8> {
    let mut c = Compound::new();
    c.insert("Version", Tag::Int(2));
    c.insert("Width", Tag::Short(dims.0));
    c.insert("Height", Tag::Short(dims.1));
    c.insert("Length", Tag::Short(dims.2));
    let mut p = Compound::new();
    for &(k, v) in palette {
        p.insert(k, Tag::Int(v));
    }
    let d = Tag::ByteArray(data.iter().map(|&b| b as i8).collect());
    if palette_last {
        c.insert("BlockData", d);
        c.insert("Palette", Tag::Compound(p));
    } else {
        c.insert("Palette", Tag::Compound(p));
        c.insert("BlockData", d);
    }
    nbt::to_bytes("Schematic", &Tag::Compound(c)).unwrap()
}

#[test]
fn leniencies() {
    // Palette after Data, keys out of id order, uncompressed and gzip.
    let b = v2(&[("minecraft:stone", 1), ("minecraft:air", 0)], &[0, 1, 1, 0], (2, 1, 2), true);
    for bytes in [b.clone(), gz(&b)] {
        let s = Schematic::read(&bytes).unwrap();
        assert_eq!(s.block(1, 0, 0), Some("minecraft:stone"));
        assert_eq!(s.block(0, 0, 1), Some("minecraft:stone"));
        assert_eq!(s.block(1, 0, 1), Some("minecraft:air"));
    }
    // Dimensions as unsigned shorts: 40000 wide.
    let data = vec![0u8; 40000];
    let s = Schematic::read(&v2(&[("minecraft:air", 0)], &data, (40000u16 as i16, 1, 1), false))
        .unwrap();
    assert_eq!(s.width(), 40000);
    // Modified UTF-8 palette key (supplementary char as surrogate pair).
    let b = v2(&[("mod:😈", 0)], &[0], (1, 1, 1), false);
    assert!(std::str::from_utf8(&b).is_err());
    assert_eq!(Schematic::read(&b).unwrap().block(0, 0, 0), Some("mod:😈"));
}

#[test]
fn palette_over_128_counts_blocks_not_bytes() {
    // 300 states; every block a different two-byte varint: a byte-offset reader misplaces them.
    let names: Vec<String> = (0..300).map(|i| format!("test:b{i}")).collect();
    let pal: Vec<(&str, i32)> =
        names.iter().enumerate().map(|(i, n)| (n.as_str(), i as i32)).collect();
    let mut data = Vec::new();
    for i in 0..300u32 {
        let v = 299 - i;
        if v < 128 {
            data.push(v as u8);
        } else {
            data.extend_from_slice(&[(v as u8) | 0x80, (v >> 7) as u8]);
        }
    }
    let s = Schematic::read(&v2(&pal, &data, (10, 3, 10), false)).unwrap();
    assert_eq!(s.block(0, 0, 0), Some("test:b299"));
    assert_eq!(s.block(9, 2, 9), Some("test:b0"));
    assert_eq!(s.block(5, 1, 3), Some(&*format!("test:b{}", 299 - (5 + 30 + 100))));
}

#[test]
fn validation_errors_are_typed() {
    let ok_pal = [("minecraft:air", 0), ("minecraft:stone", 1)];
    type Check = fn(&Error) -> bool;
    let cases: Vec<(Vec<u8>, Check)> = vec![
        (v2(&ok_pal, &[0, 1, 0], (2, 1, 2), false), |e| {
            matches!(e, Error::VarintCount { expected: 4, found: 3, .. })
        }),
        (v2(&ok_pal, &[0, 1, 0, 1, 1], (2, 1, 2), false), |e| {
            matches!(e, Error::VarintCount { expected: 4, found: 5, .. })
        }),
        (v2(&ok_pal, &[0, 1, 0, 0x81], (2, 1, 2), false), |e| {
            matches!(e, Error::VarintCount { .. })
        }),
        (v2(&ok_pal, &[0, 1, 0, 2], (2, 1, 2), false), |e| {
            matches!(e, Error::IdOutOfPalette { index: 3, id: 2, .. })
        }),
        (v2(&ok_pal, &[0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0, 0, 0], (2, 1, 2), false), |e| {
            matches!(e, Error::VarintTooLong { index: 0, .. })
        }),
        (v2(&[("a", 0), ("b", 0)], &[0], (1, 1, 1), false), |e| {
            matches!(e, Error::PaletteId { id: 0, .. })
        }),
        (v2(&[("a", 0), ("b", 2)], &[0], (1, 1, 1), false), |e| {
            matches!(e, Error::PaletteId { id: 2, .. })
        }),
        (v2(&[("a", -1)], &[0], (1, 1, 1), false), |e| {
            matches!(e, Error::PaletteId { id: -1, .. })
        }),
        (v2(&ok_pal, &[], (0, 1, 1), false), |e| matches!(e, Error::Dimensions { .. })),
    ];
    for (i, (bytes, ok)) in cases.into_iter().enumerate() {
        let e = Schematic::read(&bytes).expect_err(&format!("case {i} must fail"));
        assert!(ok(&e), "case {i}: {e}");
        let e2 = Schematic::read(&gz(&bytes)).unwrap_err();
        assert_eq!(e.to_string(), e2.to_string());
    }
    // Missing pieces and unknown versions.
    let mut c = Compound::new();
    c.insert("Version", Tag::Int(4));
    assert!(matches!(
        Schematic::read(&nbt::to_bytes("", &Tag::Compound(c)).unwrap()),
        Err(Error::UnsupportedVersion(4))
    ));
    let mut c = Compound::new();
    c.insert("Version", Tag::Int(2));
    c.insert("Width", Tag::Short(1));
    assert!(matches!(
        Schematic::read(&nbt::to_bytes("", &Tag::Compound(c)).unwrap()),
        Err(Error::MissingField("Height"))
    ));
    // Bytes that are no schematic at all say so, and why: not NBT (plain or inside gzip),
    // or NBT of another kind (a level.dat, a structure file).
    for (bytes, why) in [
        (b"definitely not gzip nbt".to_vec(), "neither gzip-compressed nor NBT"),
        (gz(b"plain text"), "its gzip stream holds no NBT"),
        (Vec::new(), "the file is empty"),
    ] {
        let e = Schematic::read(&bytes).unwrap_err();
        assert!(matches!(e, Error::NotASchematic(_)), "{e}");
        assert!(
            e.to_string().starts_with("not a Sponge schematic: ") && e.to_string().contains(why),
            "{e}"
        );
    }
    let mut level = Compound::new();
    level.insert("Data", Tag::Compound(Compound::new()));
    let e = Schematic::read(&gz(&nbt::to_bytes("", &Tag::Compound(level)).unwrap())).unwrap_err();
    assert!(matches!(e, Error::NotASchematic(_)) && e.to_string().contains("Width"), "{e}");
    // Every truncation of a real file fails cleanly.
    let good = read("green-cottage.schem").to_nbt().unwrap();
    for cut in (0..good.len()).step_by(97) {
        assert!(Schematic::read(&good[..cut]).is_err(), "cut at {cut}");
    }
    // Gzip bombs are capped.
    let big = gz(&vec![0u8; 1 << 20]);
    let e = Schematic::read_with(&big, &terrane_snapshot::ReadOptions::new().max_inflated(1000))
        .unwrap_err();
    assert!(matches!(e, Error::TooLarge { limit: 1000 }));
}

#[test]
fn deep_nesting_is_rejected() {
    let mut inner = Tag::Compound(Compound::new());
    for _ in 0..600 {
        let mut c = Compound::new();
        c.insert("x", inner);
        inner = Tag::Compound(c);
    }
    let mut meta = Compound::new();
    meta.insert("deep", inner);
    let mut c = Compound::new();
    c.insert("Metadata", Tag::Compound(meta));
    // The writer refuses too.
    assert!(matches!(nbt::to_bytes("", &Tag::Compound(c.clone())), Err(nbt::Error::TooDeep)));
    // Hand-built bytes.
    let mut b = vec![10u8, 0, 0, 10, 0, 8, b'M', b'e', b't', b'a', b'd', b'a', b't', b'a'];
    for _ in 0..600 {
        b.extend_from_slice(&[10, 0, 1, b'x']);
    }
    assert!(matches!(Schematic::read(&b), Err(Error::Nbt(nbt::Error::TooDeep))));
}

#[test]
fn v2_flat_biomes_become_v3_volume_biomes() {
    let mut c = Compound::new();
    c.insert("Version", Tag::Int(2));
    c.insert("DataVersion", Tag::Int(2860));
    c.insert("Width", Tag::Short(2));
    c.insert("Height", Tag::Short(3));
    c.insert("Length", Tag::Short(2));
    let mut p = Compound::new();
    p.insert("minecraft:air", Tag::Int(0));
    c.insert("Palette", Tag::Compound(p));
    c.insert("BlockData", Tag::ByteArray(vec![0; 12]));
    let mut bp = Compound::new();
    bp.insert("minecraft:plains", Tag::Int(1));
    bp.insert("minecraft:desert", Tag::Int(0));
    c.insert("BiomePalette", Tag::Compound(bp));
    c.insert("BiomePaletteMax", Tag::Int(2));
    c.insert("BiomeData", Tag::ByteArray(vec![0, 1, 1, 0]));
    let s = Schematic::read(&nbt::to_bytes("Schematic", &Tag::Compound(c)).unwrap()).unwrap();
    let b = s.biomes.as_ref().expect("biomes kept");
    assert!(b.flat);
    assert_eq!(b.ids.len(), 4);
    let back = Schematic::read(&s.write().unwrap()).unwrap();
    let bb = back.biomes.as_ref().expect("biomes written");
    assert!(!bb.flat);
    assert_eq!(bb.ids.len(), 12);
    // Every layer repeats the columns: (x, z) = (1, 0) is plains at every y.
    for y in 0..3 {
        let i = 1 + y * 4;
        assert_eq!(bb.palette[bb.ids[i] as usize], "minecraft:plains");
        assert_eq!(bb.palette[bb.ids[i - 1] as usize], "minecraft:desert");
    }
    // And v3 biomes survive another trip unchanged.
    assert_eq!(Schematic::read(&back.write().unwrap()).unwrap().biomes, back.biomes);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn fixture_nbt() -> Vec<u8> {
        // Uncompressed NBT of a real v3 file, so mutations hit the walker, not gzip's CRC.
        read("1_20_1_read_fail.schem").to_nbt().unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Corrupted bytes never panic: a read either fails with a typed error or returns a
        /// schematic whose invariants hold.
        #[test]
        fn mutated_files_never_panic(
            flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut b = fixture_nbt();
            for (i, v) in flips {
                let i = i.index(b.len());
                b[i] = v;
            }
            let keep = b.len() - cut.index(b.len() / 8 + 1);
            b.truncate(keep);
            if let Ok(s) = Schematic::read(&b) {
                prop_assert_eq!(s.ids().len(), s.volume());
                prop_assert!(s.ids().iter().all(|id| (id as usize) < s.palette().len()));
            }
        }

        /// Random grids of random states survive write → read (positions, states up to
        /// canonical property order).
        #[test]
        fn random_grids_round_trip(
            w in 1u16..12, h in 1u16..12, l in 1u16..12,
            states in 1usize..400,
            seed in any::<u64>(),
        ) {
            let names: Vec<String> = (0..states)
                .map(|i| format!("mod:b{i}[z={},a={}]", i % 3, i % 5))
                .collect();
            let n = w as usize * h as usize * l as usize;
            let mut x = seed | 1;
            let ids: Vec<u32> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % states as u64) as u32
                })
                .collect();
            let s = Schematic::from_parts(w, h, l, names, ids).unwrap();
            let back = Schematic::read(&s.write().unwrap()).unwrap();
            for (i, (a, b)) in s.ids().iter().zip(back.ids().iter()).enumerate() {
                prop_assert_eq!(canonical(&s.palette()[a as usize]), back.palette()[b as usize].clone(), "block {}", i);
            }
        }
    }
}

/// A valid schematic that declares a huge box, or a huge palette, is refused by the resource
/// bounds before anything of that size is allocated; raising the bound lets the next check
/// speak (here: the data is missing), so the limit really is what refused it.
#[test]
fn declared_sizes_over_the_bounds_are_refused_before_allocating() {
    let sponge = |w: i16, palette: usize, data: Vec<u8>| {
        let mut c = Compound::new();
        c.insert("Version", Tag::Int(2));
        c.insert("DataVersion", Tag::Int(3955));
        for (k, v) in [("Width", w), ("Height", w), ("Length", w)] {
            c.insert(k, Tag::Short(v));
        }
        // Collected, not inserted: `insert` looks for the key first (quadratic for 70 000).
        let p: Compound =
            (0..palette).map(|i| (format!("minecraft:b{i}"), Tag::Int(i as i32))).collect();
        c.insert("Palette", Tag::Compound(p));
        c.insert("BlockData", Tag::ByteArray(data.into_iter().map(|b| b as i8).collect()));
        nbt::to_bytes("Schematic", &Tag::Compound(c)).unwrap()
    };
    // 1000 x 1000 x 1000 = 10^9 blocks, 10 bytes of data: 4 GB of ids if it were believed.
    let huge = sponge(1000, 1, vec![0; 10]);
    let e = Schematic::read(&huge).unwrap_err();
    assert!(
        matches!(e, Error::OverLimit { option: "max_blocks", found: 1_000_000_000, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("--max-blocks"), "{e}");
    let raised = terrane_snapshot::ReadOptions::new().max_blocks(1 << 31);
    assert!(matches!(Schematic::read_with(&huge, &raised), Err(Error::VarintCount { .. })));
    // A palette of 70 000 entries.
    let wide = sponge(2, 70_000, vec![0; 8]);
    let e = Schematic::read(&wide).unwrap_err();
    assert!(matches!(e, Error::OverLimit { option: "max_palette", found: 70_000, .. }), "{e}");
    let raised = terrane_snapshot::ReadOptions::new().max_palette(100_000);
    assert!(Schematic::read_with(&wide, &raised).is_ok(), "70 000 entries under a raised bound");
}
