//! Lease keys and records (`docs/format/lease-v1.md`): any bytes either fail with a typed
//! error or decode to a lease whose record re-encodes to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_lease::{AreaId, area_of_lease_key, decode, lease_key};

fuzz_target!(|data: &[u8]| {
    if let Some(area) = area_of_lease_key(data) {
        assert_eq!(lease_key(area), data);
    }
    if let Some(area) = AreaId::from_bytes(data) {
        assert_eq!(area.to_bytes(), data);
    }
    let area = AreaId::new(0, 0);
    if let Ok(lease) = decode(area, 1, data) {
        let mut again = vec![1u8, lease.owner.len() as u8];
        again.extend(lease.owner.as_bytes());
        again.extend(lease.expires_ms.to_le_bytes());
        assert_eq!(again, data);
    }
});
