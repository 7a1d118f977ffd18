//! Cluster container v1 decoding, and the opacity map's tiles: any bytes either fail with a
//! typed error or give a tile that re-encodes to them, and for clusters a view
//! whose every chunk reads back, whose blobs tile the body exactly, and which re-encodes to
//! the same bytes (every valid cluster is canonical). The input is tried as is, and behind a
//! valid 9-byte prefix (version 1, scale from the first byte) so that the fuzzer spends its
//! time in the offset table.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_cluster::{ClusterBuilder, ClusterView, OpacityTile};

fn check(data: &[u8]) {
    let Ok(view) = ClusterView::new(data) else { return };
    let mut total = view.scale().header_len();
    let mut count = 0;
    for (i, blob) in view.iter() {
        assert!(!blob.is_empty());
        assert_eq!(view.get(i), Some(blob));
        total += blob.len();
        count += 1;
    }
    assert_eq!(count, view.len());
    assert_eq!(total, data.len());
    assert_eq!(ClusterBuilder::from_view(&view).build().unwrap(), data);
}

fuzz_target!(|data: &[u8]| {
    if let Ok(tile) = OpacityTile::from_bytes(data) {
        assert_eq!(tile.to_bytes(), data);
    }
    check(data);
    if let Some((&first, rest)) = data.split_first() {
        let mut prefixed = Vec::with_capacity(9 + rest.len());
        prefixed.extend_from_slice(&1u64.to_le_bytes());
        prefixed.push(1 + (first & 1));
        prefixed.extend_from_slice(rest);
        check(&prefixed);
    }
});
