//! Lease keys and records (`docs/format/lease-v1.md`): any bytes either fail with a typed
//! error or decode to a lease whose record re-encodes to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_lease::{AreaId, decode};

fuzz_target!(|data: &[u8]| {
    if let Some(area) = AreaId::from_key(data) {
        assert_eq!(area.key(), data);
    }
    let area = AreaId::new(0, 0);
    if let Ok(lease) = decode(area, 1, data) {
        let mut again = vec![1u8, lease.owner.len() as u8];
        again.extend(lease.owner.as_bytes());
        again.extend(lease.expires_ms.to_le_bytes());
        assert_eq!(again, data);
    }
});
