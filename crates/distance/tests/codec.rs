//! The canonical encoding: exact layout, rejection of everything non-canonical, atomic files.

use terrane_distance::{ColumnPos, DistanceGraph, Error, MAX_COORD};

fn seal(mut body: Vec<u8>) -> Vec<u8> {
    let crc = crc32c(&body);
    body.extend_from_slice(&crc.to_le_bytes());
    body
}

/// CRC-32C (Castagnoli), bit by bit: an independent check of the crate's checksum.
fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0x82F6_3B78 } else { crc >> 1 };
        }
    }
    !crc
}

fn header(len: u64, roots: u32) -> Vec<u8> {
    let mut v = b"TRDG".to_vec();
    v.extend_from_slice(&[1, 0, 0, 0]);
    v.extend_from_slice(&len.to_le_bytes());
    v.extend_from_slice(&roots.to_le_bytes());
    v
}

fn root(v: &mut Vec<u8>, rx: i32, rz: i32) {
    v.extend_from_slice(&rx.to_le_bytes());
    v.extend_from_slice(&rz.to_le_bytes());
}

fn node(v: &mut Vec<u8>, full: u64, partial: u64) {
    v.extend_from_slice(&full.to_le_bytes());
    v.extend_from_slice(&partial.to_le_bytes());
}

fn one_chunk_body() -> Vec<u8> {
    // Chunk (0, 0): root (0, 0), child 0 at every level, batch bit 0.
    let mut v = header(1, 1);
    root(&mut v, 0, 0);
    node(&mut v, 0, 1);
    node(&mut v, 0, 1);
    node(&mut v, 0, 1);
    v.extend_from_slice(&1u16.to_le_bytes());
    v
}

#[test]
fn exact_layout_of_one_chunk() {
    let mut g = DistanceGraph::new();
    g.insert(ColumnPos::new(0, 0)).unwrap();
    let bytes = g.to_bytes();
    assert_eq!(bytes, seal(one_chunk_body()));
    assert_eq!(bytes.len(), 20 + 8 + 3 * 16 + 2 + 4);
    // Chunk (-1, 5) lives in root (-1, 0), at the far x end of every level.
    let mut g = DistanceGraph::new();
    g.insert(ColumnPos::new(-1, 5)).unwrap();
    let mut v = header(1, 1);
    root(&mut v, -1, 0);
    node(&mut v, 0, 1 << 7); // L2 child x = 7, z = 0
    node(&mut v, 0, 1 << 7); // L1 child x = 7, z = 0
    node(&mut v, 0, 1 << (7 + 8)); // batch x = 7, z = 1
    v.extend_from_slice(&(1u16 << (3 + 4)).to_le_bytes()); // chunk x & 3 = 3, z & 3 = 1
    assert_eq!(g.to_bytes(), seal(v));
}

#[test]
fn empty_graph_round_trips() {
    let g = DistanceGraph::new();
    let bytes = g.to_bytes();
    assert_eq!(bytes, seal(header(0, 0)));
    assert_eq!(DistanceGraph::from_bytes(&bytes).unwrap(), g);
}

fn sample() -> DistanceGraph {
    let mut g = DistanceGraph::new();
    for z in -40..70 {
        for x in -70..40 {
            if (x * 3 + z * 5) % 7 != 0 || (0..32).contains(&x) {
                g.insert(ColumnPos::new(x, z)).unwrap();
            }
        }
    }
    g.insert(ColumnPos::new(MAX_COORD, -MAX_COORD)).unwrap();
    g
}

#[test]
fn every_truncation_and_extension_is_rejected() {
    let bytes = sample().to_bytes();
    for n in 0..bytes.len() {
        assert!(DistanceGraph::from_bytes(&bytes[..n]).is_err(), "prefix of {n} bytes accepted");
    }
    for extra in [&[0u8][..], &[0, 0, 0, 0], &bytes[..8]] {
        let mut v = bytes.clone();
        v.extend_from_slice(extra);
        assert!(DistanceGraph::from_bytes(&v).is_err());
    }
}

#[test]
fn every_bit_flip_is_rejected() {
    let bytes = sample().to_bytes();
    for i in 0..bytes.len() {
        for bit in [0, 3, 7] {
            let mut v = bytes.clone();
            v[i] ^= 1 << bit;
            assert!(DistanceGraph::from_bytes(&v).is_err(), "flip of byte {i} bit {bit} accepted");
        }
    }
}

#[test]
fn typed_errors() {
    assert!(matches!(DistanceGraph::from_bytes(b"NOPE and more bytes here"), Err(Error::BadMagic)));
    assert!(matches!(DistanceGraph::from_bytes(b"TR"), Err(Error::Truncated)));
    let mut v = one_chunk_body();
    v[4] = 2;
    assert!(matches!(DistanceGraph::from_bytes(&seal(v)), Err(Error::UnsupportedVersion(2))));
    let mut v = seal(one_chunk_body());
    let n = v.len();
    v[n - 1] ^= 0x55;
    assert!(matches!(DistanceGraph::from_bytes(&v), Err(Error::Checksum { .. })));
    let mut v = one_chunk_body();
    v.push(0);
    assert!(matches!(DistanceGraph::from_bytes(&seal(v)), Err(Error::TrailingBytes(1))));
    let mut v = one_chunk_body();
    v.pop();
    assert!(matches!(DistanceGraph::from_bytes(&seal(v)), Err(Error::Truncated)));
}

fn non_canonical(v: Vec<u8>, why: &str) {
    match DistanceGraph::from_bytes(&seal(v)) {
        Err(Error::NonCanonical(_)) => {}
        other => panic!("{why}: expected NonCanonical, got {other:?}"),
    }
}

#[test]
fn non_canonical_encodings_with_valid_checksums_are_rejected() {
    // Reserved bytes.
    let mut v = one_chunk_body();
    v[6] = 1;
    non_canonical(v, "reserved byte");
    // Length field.
    let mut v = one_chunk_body();
    v[8] = 2;
    non_canonical(v, "length");
    // Empty root.
    let mut v = header(0, 1);
    root(&mut v, 0, 0);
    node(&mut v, 0, 0);
    non_canonical(v, "empty root");
    // Full and partial at once.
    let mut v = header(1 + (1 << 16), 1);
    root(&mut v, 0, 0);
    node(&mut v, 1, 1);
    node(&mut v, 0, 1);
    node(&mut v, 0, 1);
    v.extend_from_slice(&1u16.to_le_bytes());
    non_canonical(v, "full & partial");
    // A full node below a root.
    let mut v = header(1 << 16, 1);
    root(&mut v, 0, 0);
    node(&mut v, 0, 1);
    node(&mut v, u64::MAX, 0);
    non_canonical(v, "full L2 stored");
    // An empty node below a root.
    let mut v = header(0, 1);
    root(&mut v, 0, 0);
    node(&mut v, 0, 1);
    node(&mut v, 0, 0);
    non_canonical(v, "empty L2 stored");
    // Batch masks 0 and 0xFFFF.
    for m in [0u16, 0xFFFF] {
        let mut v = header(m.count_ones() as u64, 1);
        root(&mut v, 0, 0);
        node(&mut v, 0, 1);
        node(&mut v, 0, 1);
        node(&mut v, 0, 1);
        v.extend_from_slice(&m.to_le_bytes());
        non_canonical(v, "batch mask");
    }
    // Roots out of order (z first, then x) and duplicated.
    for (a, b) in [((1, 0), (0, 0)), ((0, 1), (5, 0)), ((3, 3), (3, 3))] {
        let mut v = header(2, 2);
        for (rx, rz) in [a, b] {
            root(&mut v, rx, rz);
            node(&mut v, 0, 1);
            node(&mut v, 0, 1);
            node(&mut v, 0, 1);
            v.extend_from_slice(&1u16.to_le_bytes());
        }
        non_canonical(v, "root order");
    }
    // Roots outside the valid range, and chunks with x or z = -2^30 (in root -2^19).
    for (rx, rz) in [(1 << 19, 0), (0, -(1 << 19) - 1), (i32::MIN, 0)] {
        let mut v = header(1, 1);
        root(&mut v, rx, rz);
        node(&mut v, 0, 1);
        node(&mut v, 0, 1);
        node(&mut v, 0, 1);
        v.extend_from_slice(&1u16.to_le_bytes());
        non_canonical(v, "root range");
    }
    let mut v = header(1, 1);
    root(&mut v, -(1 << 19), 0);
    node(&mut v, 0, 1);
    node(&mut v, 0, 1);
    node(&mut v, 0, 1);
    v.extend_from_slice(&1u16.to_le_bytes()); // chunk (-2^30, 0)
    non_canonical(v, "chunk x = -2^30");
    let mut v = header(1 << 22, 1);
    root(&mut v, 0, -(1 << 19));
    node(&mut v, u64::MAX, 0);
    non_canonical(v, "full root holding z = -2^30");
    // The same positions one chunk inside the range are fine.
    let mut v = header(1, 1);
    root(&mut v, -(1 << 19), 0);
    node(&mut v, 0, 1);
    node(&mut v, 0, 1);
    node(&mut v, 0, 1);
    v.extend_from_slice(&2u16.to_le_bytes()); // chunk (-2^30 + 1, 0)
    let g = DistanceGraph::from_bytes(&seal(v)).unwrap();
    assert!(g.contains(ColumnPos::new(-MAX_COORD, 0)));
}

#[test]
fn full_root_rematerialises_and_collapses_back() {
    let mut v = header(1 << 22, 1);
    root(&mut v, 1, -1);
    node(&mut v, u64::MAX, 0);
    let bytes = seal(v);
    let mut g = DistanceGraph::from_bytes(&bytes).unwrap();
    g.check_invariants().unwrap();
    assert_eq!(g.len(), 1 << 22);
    let p = ColumnPos::new(2048 + 1000, -2048 + 77);
    assert!(g.contains(p) && !g.contains(ColumnPos::new(2047, -2048)));
    assert_eq!(g.count_completed(p, 10_000).unwrap(), 1 << 22);
    assert_eq!(g.nearest_incomplete(p, 70, |_| false).unwrap(), None);
    assert!(g.remove(p).unwrap());
    g.check_invariants().unwrap();
    assert_eq!(g.node_count(), (3, 1));
    assert_eq!(g.len(), (1 << 22) - 1);
    let hit = g.nearest_incomplete(ColumnPos::new(0, 0), 5000, |_| false).unwrap().unwrap();
    // Nearest missing chunk to (0, 0) is outside the full root: (0, 0) itself.
    assert_eq!(hit.d2, 0);
    let hit = g.nearest_incomplete(p, 100, |_| false).unwrap().unwrap();
    assert_eq!((hit.d2, hit.chunks().collect::<Vec<_>>()), (0, vec![p]));
    assert_eq!(
        g.count_missing(p, 3000).unwrap(),
        DistanceGraph::disc_size(p, 3000).unwrap() - g.count_completed(p, 3000).unwrap()
    );
    let near: Vec<_> = g.completed_near_to_far(p, 1, None).unwrap().collect();
    assert_eq!(near.len(), 4);
    assert!(g.insert(p).unwrap());
    assert_eq!(g.to_bytes(), bytes);
}

#[test]
fn save_and_load_are_atomic_replacements() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("graph.bin");
    let g = sample();
    g.save(&path).unwrap();
    assert_eq!(DistanceGraph::load(&path).unwrap(), g);
    let mut h = g.clone();
    h.insert(ColumnPos::new(500, 500)).unwrap();
    h.save(&path).unwrap();
    assert_eq!(DistanceGraph::load(&path).unwrap(), h);
    let names: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["graph.bin"], "temporary files left behind");
    assert!(matches!(DistanceGraph::load(dir.path().join("missing.bin")), Err(Error::Io { .. })));
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[30] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    assert!(matches!(DistanceGraph::load(&path), Err(Error::Checksum { .. })));
    // Saving into a folder that does not exist fails with the path named.
    let bad = dir.path().join("no/such/dir/graph.bin");
    let err = g.save(&bad).unwrap_err();
    assert!(matches!(err, Error::Io { .. }) && err.to_string().contains("no/such/dir"));
}
