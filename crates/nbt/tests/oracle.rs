//! terrane-nbt against fastnbt, an independent reader, on real files (chunks written by
//! Minecraft, schematics written by WorldEdit and others) and on generated trees.

use std::io::Read;

use proptest::prelude::*;
use terrane_nbt::{Compound, Reader, Tag, Writer, from_bytes, to_bytes};
use terrane_section::testdata;

/// Our tree in fastnbt's terms.
fn to_fastnbt(t: &Tag) -> fastnbt::Value {
    use fastnbt::Value as V;
    match t {
        Tag::Byte(x) => V::Byte(*x),
        Tag::Short(x) => V::Short(*x),
        Tag::Int(x) => V::Int(*x),
        Tag::Long(x) => V::Long(*x),
        Tag::Float(x) => V::Float(*x),
        Tag::Double(x) => V::Double(*x),
        Tag::ByteArray(a) => V::ByteArray(fastnbt::ByteArray::new(a.clone())),
        Tag::String(s) => V::String(s.clone()),
        Tag::List(_, l) => V::List(l.iter().map(to_fastnbt).collect()),
        Tag::Compound(c) => V::Compound(c.iter().map(|(k, v)| (k.into(), to_fastnbt(v))).collect()),
        Tag::IntArray(a) => V::IntArray(fastnbt::IntArray::new(a.clone())),
        Tag::LongArray(a) => V::LongArray(fastnbt::LongArray::new(a.clone())),
    }
}

/// Every real NBT file of the test data, uncompressed: loose chunks and schematics, and every
/// chunk of every region fixture (read by fastanvil; every layout since 1.12).
fn real_files() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut regions: Vec<_> = std::fs::read_dir(testdata::fixture("anvil"))
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "mca"))
        .collect();
    regions.sort();
    for p in regions {
        let mut r = fastanvil::Region::from_stream(std::fs::File::open(&p).unwrap()).unwrap();
        // The off-by-one fixtures hold chunks damaged on purpose: fastanvil refuses them.
        for c in r.iter().filter_map(Result::ok) {
            out.push((format!("{} chunk {},{}", p.display(), c.x, c.z), c.data));
        }
    }
    assert!(out.len() >= 600, "only {} region chunks", out.len());
    for dir in ["chunk-nbt", "schem"] {
        let mut paths: Vec<_> =
            std::fs::read_dir(testdata::fixture(dir)).unwrap().map(|e| e.unwrap().path()).collect();
        paths.sort();
        for p in paths {
            let raw = std::fs::read(&p).unwrap();
            let raw = if raw.starts_with(&[0x1F, 0x8B]) {
                let mut v = Vec::new();
                flate2::read::MultiGzDecoder::new(&raw[..]).read_to_end(&mut v).unwrap();
                v
            } else {
                raw
            };
            out.push((p.display().to_string(), raw));
        }
    }
    assert!(out.len() >= 615, "only {} NBT fixtures", out.len());
    out
}

#[test]
fn real_files_parse_as_fastnbt_parses_them_and_write_back_byte_for_byte() {
    for (name, raw) in real_files() {
        let (root, ours) = from_bytes(&raw).unwrap_or_else(|e| panic!("{name}: {e}"));
        let theirs: fastnbt::Value = fastnbt::from_bytes(&raw).unwrap();
        assert_eq!(to_fastnbt(&ours), theirs, "{name}");
        // File order and list element types are kept: the writer gives the file back.
        assert_eq!(to_bytes(&root, &ours).unwrap(), raw, "{name}");
        // Skipping passes over exactly the same bytes.
        let mut r = Reader::new(&raw);
        let ty = r.u8().unwrap();
        r.raw_string().unwrap();
        r.skip(ty, 0).unwrap();
        assert_eq!(r.position(), raw.len(), "{name}");
        // Copied without a tree, sorted or not: the bytes the tree writes.
        for mut w in [Writer::new(), Writer::sorted()] {
            let mut tree = w.clone();
            tree.payload(&ours, 0).unwrap();
            let mut r = Reader::new(&raw);
            r.u8().unwrap();
            r.raw_string().unwrap();
            w.copy_payload(&mut r, ty, 0).unwrap();
            assert_eq!(w.out, tree.out, "{name}");
        }
    }
}

#[test]
fn damaged_real_files_are_errors_or_trees_never_panics() {
    for (name, raw) in real_files().into_iter().filter(|(n, _)| !n.contains(" chunk ")) {
        for cut in (0..raw.len()).step_by(211) {
            assert!(from_bytes(&raw[..cut]).is_err(), "{name} cut at {cut}");
        }
        let mut b = raw.clone();
        for i in (0..raw.len()).step_by(59) {
            b[i] ^= 0x5A;
            let _ = from_bytes(&b);
            let _ = Reader::new(&b).skip(10, 0);
            b[i] = raw[i];
        }
    }
}

fn arb_tag() -> impl Strategy<Value = Tag> {
    let leaf = prop_oneof![
        any::<i8>().prop_map(Tag::Byte),
        any::<i16>().prop_map(Tag::Short),
        any::<i32>().prop_map(Tag::Int),
        any::<i64>().prop_map(Tag::Long),
        any::<f32>().prop_filter("NaN", |x| !x.is_nan()).prop_map(Tag::Float),
        any::<f64>().prop_filter("NaN", |x| !x.is_nan()).prop_map(Tag::Double),
        prop::collection::vec(any::<i8>(), 0..8).prop_map(Tag::ByteArray),
        ".{0,8}".prop_map(Tag::String),
        prop::collection::vec(any::<i32>(), 0..8).prop_map(Tag::IntArray),
        prop::collection::vec(any::<i64>(), 0..8).prop_map(Tag::LongArray),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(("\\PC{0,6}", inner.clone()), 0..6)
                .prop_map(|kv| Tag::Compound(kv.into_iter().collect())),
            // Lists of one type: repeat one generated item's type by cloning it.
            (inner, 0usize..4).prop_map(|(t, n)| Tag::list(vec![t; n])),
        ]
    })
}

proptest! {
    #[test]
    fn generated_trees_round_trip_and_fastnbt_agrees(t in arb_tag(), name in ".{0,4}") {
        let bytes = to_bytes(&name, &t).unwrap();
        let (n2, back) = from_bytes(&bytes).unwrap();
        prop_assert_eq!(&n2, &name);
        prop_assert_eq!(&back, &t);
        // fastnbt reads compound roots only: compare under one.
        let root = Tag::Compound([("v".to_string(), t.clone())].into_iter().collect());
        let theirs: fastnbt::Value = fastnbt::from_bytes(&to_bytes("", &root).unwrap()).unwrap();
        prop_assert_eq!(to_fastnbt(&root), theirs);
        // Sorted output: the same value, and bytes that do not depend on insertion order.
        if let Tag::Compound(c) = &t {
            let mut w = Writer::sorted();
            w.named(&name, &t).unwrap();
            prop_assert_eq!(&Compound::from_bytes(&w.out).unwrap(), c);
            let reversed: Compound = c.clone().into_iter().rev().collect();
            let mut w2 = Writer::sorted();
            w2.named(&name, &Tag::Compound(reversed)).unwrap();
            prop_assert_eq!(&w.out, &w2.out);
            // Copied from the unsorted bytes without a tree: the same sorted bytes.
            let mut copy = Writer::sorted();
            copy.head(t.type_id(), &name).unwrap();
            let mut r = Reader::new(&bytes);
            r.u8().unwrap();
            r.raw_string().unwrap();
            copy.copy_payload(&mut r, t.type_id(), 0).unwrap();
            prop_assert_eq!(copy.out, w.out);
        }
    }
}
