//! Cluster container v1 decoding: any bytes either fail with a typed error or give a view
//! whose every chunk reads back, whose blobs tile the body exactly, and which re-encodes to
//! the same bytes (every valid cluster is canonical).
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_cluster::{ClusterBuilder, ClusterView};

fuzz_target!(|data: &[u8]| {
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
});
