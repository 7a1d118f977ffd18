//! The lease object: its key and its bytes (`docs/format/lease-v1.md`).

use terrane_section::AreaId;

use crate::LeaseError;

/// The prefix of every lease key in the `worldMeta` table.
pub const KEY_PREFIX: &[u8] = b"lease:";

/// The format byte of a lease record.
const FORMAT: u8 = 1;

/// The longest server id.
pub const MAX_SERVER_ID: usize = 64;

/// The lease key of `area` in `worldMeta`: [`KEY_PREFIX`], then [`AreaId::to_bytes`].
pub fn lease_key(area: AreaId) -> Vec<u8> {
    [KEY_PREFIX, &area.to_bytes()].concat()
}

/// The area of a [`lease_key`]; `None` for any other key.
pub fn area_of_lease_key(key: &[u8]) -> Option<AreaId> {
    AreaId::from_bytes(key.strip_prefix(KEY_PREFIX)?)
}

/// Who holds an area, until when. The epoch is the lease object's store version: it grows by
/// one at every change of owner and never goes back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The area.
    pub area: AreaId,
    /// The owning server's id.
    pub owner: String,
    /// The epoch (the lease object's version).
    pub epoch: i64,
    /// Until when the lease holds, in milliseconds since the Unix epoch (0: released).
    pub expires_ms: u64,
}

impl Lease {
    /// Whether the lease still holds at `now_ms`.
    pub fn is_live(&self, now_ms: u64) -> bool {
        self.expires_ms > now_ms
    }
}

/// The record's bytes: `u8 format (1)`, `u8 owner length`, the owner (UTF-8), `u64 expiry`
/// (little-endian).
pub(crate) fn encode(owner: &str, expires_ms: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(10 + owner.len());
    v.push(FORMAT);
    v.push(owner.len() as u8);
    v.extend(owner.as_bytes());
    v.extend(expires_ms.to_le_bytes());
    v
}

/// Decodes a lease record (untrusted bytes: a typed error, never a panic).
pub fn decode(area: AreaId, epoch: i64, bytes: &[u8]) -> Result<Lease, LeaseError> {
    let bad = |why: &str| LeaseError::Corrupt { area, detail: why.to_string() };
    let (&format, rest) = bytes.split_first().ok_or_else(|| bad("empty record"))?;
    if format != FORMAT {
        return Err(bad(&format!("unknown record format {format}")));
    }
    let (&len, rest) = rest.split_first().ok_or_else(|| bad("no owner length"))?;
    let len = len as usize;
    if len == 0 || len > MAX_SERVER_ID || rest.len() != len + 8 {
        return Err(bad("owner length does not match the record"));
    }
    let owner = std::str::from_utf8(&rest[..len]).map_err(|_| bad("owner is not UTF-8"))?;
    let expires_ms = u64::from_le_bytes(rest[len..].try_into().expect("8 bytes"));
    Ok(Lease { area, owner: owner.to_string(), epoch, expires_ms })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn keys_round_trip_and_sort_by_x_then_z(a in any::<(i32, i32)>(), b in any::<(i32, i32)>()) {
            let (ka, kb) = (lease_key(AreaId::new(a.0, a.1)), lease_key(AreaId::new(b.0, b.1)));
            prop_assert_eq!(area_of_lease_key(&ka), Some(AreaId::new(a.0, a.1)));
            prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
        }

        #[test]
        fn records_round_trip_and_junk_is_an_error(owner in "[a-z0-9-]{1,64}", exp in any::<u64>(), junk in prop::collection::vec(any::<u8>(), 0..80)) {
            let area = AreaId::new(1, -2);
            let l = decode(area, 7, &encode(&owner, exp)).unwrap();
            prop_assert_eq!(l, Lease { area, owner, epoch: 7, expires_ms: exp });
            let _ = decode(area, 1, &junk);
        }
    }

    #[test]
    fn other_keys_are_not_lease_keys() {
        assert_eq!(area_of_lease_key(b"lease:short"), None);
        assert_eq!(area_of_lease_key(b"gameTick"), None);
    }
}
