//! Cluster container v1: golden layouts, validation of malformed input, round trips.

use proptest::prelude::*;
use terrane_cluster::{ClusterBuilder, ClusterView, Error, Scale};
use terrane_section::ChunkPos;

/// `hexdump -C`-style dump that collapses runs of identical 16-byte lines into `*`.
fn hexdump(bytes: &[u8]) -> String {
    let mut out = String::new();
    let mut previous: Option<&[u8]> = None;
    let mut starred = false;
    for (n, line) in bytes.chunks(16).enumerate() {
        if previous == Some(line) && line.len() == 16 {
            if !starred {
                out.push_str("*\n");
                starred = true;
            }
            continue;
        }
        starred = false;
        previous = Some(line);
        out.push_str(&format!("{:08x} ", n * 16));
        for (i, b) in line.iter().enumerate() {
            if i == 8 {
                out.push(' ');
            }
            out.push_str(&format!(" {b:02x}"));
        }
        for i in line.len()..16 {
            if i == 8 {
                out.push(' ');
            }
            out.push_str("   ");
        }
        out.push_str("  |");
        out.extend(
            line.iter().map(|&b| if b.is_ascii_graphic() || b == b' ' { b as char } else { '.' }),
        );
        out.push_str("|\n");
    }
    out.push_str(&format!("{:08x}\n", bytes.len()));
    out
}

#[test]
fn golden_scale1_three_chunks() {
    let b = ClusterBuilder::from_pairs(
        Scale::Cube4,
        [(63u16, b"LAST".as_slice()), (0, b"first".as_slice()), (21, b"mid (1,1,1)".as_slice())],
    )
    .unwrap();
    let bytes = b.build().unwrap();
    assert_eq!(bytes.len(), 521 + 5 + 11 + 4);
    insta::assert_snapshot!(hexdump(&bytes));
}

#[test]
fn golden_scale1_empty() {
    let bytes = ClusterBuilder::new(Scale::Cube4).build().unwrap();
    assert_eq!(bytes.len(), Scale::Cube4.header_len());
    let view = ClusterView::new(&bytes).unwrap();
    assert!(view.is_empty());
    insta::assert_snapshot!(hexdump(&bytes));
}

#[test]
fn golden_scale2_two_chunks() {
    // Chunk (-1, 0, 0) and (0, 0, 0) in L2 cluster (-1,0,0) and (0,0,0): local 15·256 and 0.
    let s = Scale::Cube16;
    let a = s.local_index(ChunkPos::new(-1, 0, 0));
    let z = s.local_index(ChunkPos::new(16, 17, 18));
    assert_eq!((a, z), (0xF00, 0x012));
    let bytes =
        ClusterBuilder::from_pairs(s, [(a, b"west".as_slice()), (z, b"origin+".as_slice())])
            .unwrap()
            .build()
            .unwrap();
    assert_eq!(bytes.len(), 32_777 + 4 + 7);
    insta::assert_snapshot!(hexdump(&bytes));
}

#[test]
fn header_lengths() {
    assert_eq!(Scale::Cube4.header_len(), 9 + 64 * 8);
    assert_eq!(Scale::Cube16.header_len(), 9 + 4096 * 8);
    assert_eq!(Scale::Cube4.chunk_count(), 64);
    assert_eq!(Scale::Cube16.chunk_count(), 4096);
}

#[test]
fn local_index_is_xyz_z_fastest() {
    let s = Scale::Cube4;
    assert_eq!(s.local_index(ChunkPos::new(0, 0, 1)), 1);
    assert_eq!(s.local_index(ChunkPos::new(0, 1, 0)), 4);
    assert_eq!(s.local_index(ChunkPos::new(1, 0, 0)), 16);
    assert_eq!(s.local_index(ChunkPos::new(-1, -1, -1)), 63);
    assert_eq!(s.cluster_of(ChunkPos::new(-1, 4, 3)), ChunkPos::new(-1, 1, 0));
    let s = Scale::Cube16;
    assert_eq!(s.local_index(ChunkPos::new(1, 2, 3)), (1 << 8) | (2 << 4) | 3);
    assert_eq!(s.local_coords(4096), None);
    assert_eq!(s.chunk_pos(ChunkPos::new(-1, 0, 2), 0xFFF), Some(ChunkPos::new(-1, 15, 47)));
    assert_eq!(s.chunk_pos(ChunkPos::new(i64::MAX, 0, 0), 0), None);
}

fn sample() -> Vec<u8> {
    ClusterBuilder::from_pairs(Scale::Cube4, [(1u16, b"ab".as_slice()), (2, b"cde".as_slice())])
        .unwrap()
        .build()
        .unwrap()
}

fn set_offset(bytes: &mut [u8], index: usize, v: u64) {
    bytes[9 + 8 * index..17 + 8 * index].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn rejects_malformed() {
    let good = sample();
    assert!(ClusterView::new(&good).is_ok());

    assert!(matches!(ClusterView::new(&good[..5]), Err(Error::Truncated { needed: 9, len: 5 })));
    assert!(matches!(ClusterView::new(&good[..100]), Err(Error::Truncated { needed: 521, .. })));

    let mut b = good.clone();
    b[0] = 2;
    assert!(matches!(ClusterView::new(&b), Err(Error::UnsupportedVersion(2))));

    for s in [0u8, 3, 255] {
        let mut b = good.clone();
        b[8] = s;
        assert!(matches!(ClusterView::new(&b), Err(Error::InvalidScale(x)) if x == s));
    }
    assert!(matches!(
        ClusterView::with_scale(&good, Scale::Cube16),
        Err(Error::ScaleMismatch { expected: 2, found: 1 })
    ));

    let mut b = good.clone();
    set_offset(&mut b, 0, 8);
    assert!(matches!(ClusterView::new(&b), Err(Error::OffsetInHeader { index: 0, offset: 8, .. })));

    let mut b = good.clone();
    set_offset(&mut b, 1, 522);
    assert!(matches!(ClusterView::new(&b), Err(Error::GapAfterHeader { index: 1, .. })));

    let mut b = good.clone();
    set_offset(&mut b, 2, 521);
    assert!(matches!(
        ClusterView::new(&b),
        Err(Error::OffsetNotIncreasing { index: 2, offset: 521, previous: 521 })
    ));

    let mut b = good.clone();
    set_offset(&mut b, 2, good.len() as u64);
    assert!(matches!(ClusterView::new(&b), Err(Error::OffsetOutOfBounds { index: 2, .. })));
    let mut b = good.clone();
    set_offset(&mut b, 2, u64::MAX);
    assert!(matches!(ClusterView::new(&b), Err(Error::OffsetOutOfBounds { index: 2, .. })));

    let mut b = ClusterBuilder::new(Scale::Cube4).build().unwrap();
    b.push(0);
    assert!(matches!(
        ClusterView::new(&b),
        Err(Error::TrailingBytes { len: 522, header_len: 521 })
    ));
}

#[test]
fn builder_rejects() {
    let mut b = ClusterBuilder::new(Scale::Cube4);
    assert!(matches!(
        b.insert(64, b"x".as_slice()),
        Err(Error::IndexOutOfRange { index: 64, count: 64 })
    ));
    assert!(matches!(b.insert(3, Vec::new()), Err(Error::EmptyChunk { index: 3 })));
    b.insert(3, b"x".as_slice()).unwrap();
    assert!(matches!(b.insert(3, b"y".as_slice()), Err(Error::DuplicateChunk { index: 3 })));
    assert_eq!(b.set(3, b"yz".as_slice()).unwrap().as_deref(), Some(b"x".as_slice()));
    assert!(matches!(b.set(3, Vec::new()), Err(Error::EmptyChunk { index: 3 })));
    assert_eq!(b.len(), 1);
    assert_eq!(b.encoded_len().unwrap(), 523);
    assert_eq!(b.remove(3).as_deref(), Some(b"yz".as_slice()));
    assert!(b.remove(3).is_none());
    assert!(b.remove(9999).is_none());
    assert!(b.is_empty());
    assert_eq!(b.encoded_len().unwrap(), 521);
}

#[test]
fn edit_existing_cluster() {
    let bytes = sample();
    let view = ClusterView::new(&bytes).unwrap();
    let mut b = ClusterBuilder::from_view(&view);
    assert_eq!(b.len(), 2);
    b.remove(1);
    b.set(63, b"new".as_slice()).unwrap();
    let out = b.build().unwrap();
    let v = ClusterView::new(&out).unwrap();
    assert_eq!(v.iter().collect::<Vec<_>>(), [(2, b"cde".as_slice()), (63, b"new".as_slice())]);
    assert!(!v.contains(1));
    assert!(!v.contains(64));
    assert_eq!(v.get(64), None);
}

fn pairs(scale: Scale) -> impl Strategy<Value = std::collections::BTreeMap<u16, Vec<u8>>> {
    prop::collection::btree_map(
        0..scale.chunk_count() as u16,
        prop::collection::vec(any::<u8>(), 1..40),
        0..24,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn round_trip_and_canonical(
        (scale, map) in prop_oneof![Just(Scale::Cube4), Just(Scale::Cube16)].prop_flat_map(|s| (Just(s), pairs(s)))
    ) {
        // Insert in reverse order: the output does not depend on insertion order.
        let b = ClusterBuilder::from_pairs(scale, map.iter().rev().map(|(&i, v)| (i, v.as_slice()))).unwrap();
        let bytes = b.build().unwrap();
        prop_assert_eq!(bytes.len(), b.encoded_len().unwrap());
        let view = ClusterView::with_scale(&bytes, scale).unwrap();
        prop_assert_eq!(view.len(), map.len());
        for i in 0..scale.chunk_count() as u16 {
            prop_assert_eq!(view.get(i), map.get(&i).map(Vec::as_slice));
        }
        let listed: Vec<(u16, Vec<u8>)> = view.iter().map(|(i, b)| (i, b.to_vec())).collect();
        let expected: Vec<(u16, Vec<u8>)> = map.clone().into_iter().collect();
        prop_assert_eq!(listed, expected);
        // Canonical: rebuilding from the view gives the same bytes.
        prop_assert_eq!(ClusterBuilder::from_view(&view).build().unwrap(), bytes);
    }

    /// Any bytes: never panics; whatever validates is canonical and readable.
    #[test]
    fn arbitrary_bytes_never_panic(
        scale in prop_oneof![Just(1u8), Just(2u8), any::<u8>()],
        offsets in prop::collection::vec((0usize..64, any::<u64>()), 0..6),
        tail in prop::collection::vec(any::<u8>(), 0..64),
        small in any::<bool>(),
    ) {
        let mut bytes = ClusterBuilder::new(Scale::Cube4).build().unwrap();
        bytes[8] = scale;
        for (i, o) in offsets {
            let o = if small { o % 600 } else { o };
            set_offset(&mut bytes, i, o);
        }
        bytes.extend_from_slice(&tail);
        if let Ok(view) = ClusterView::new(&bytes) {
            let total: usize = view.iter().map(|(i, b)| {
                assert_eq!(view.get(i), Some(b));
                b.len()
            }).sum();
            prop_assert_eq!(total + view.scale().header_len(), bytes.len());
            prop_assert_eq!(ClusterBuilder::from_view(&view).build().unwrap(), bytes);
        }
    }
}
