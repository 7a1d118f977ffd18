//! What opening found: [`Recovery`], and the account of what is missing that
//! [`Error::Damaged`](crate::Error::Damaged) and [`BlockFile::verify`](crate::BlockFile::verify)
//! give.

use std::fmt::Write as _;

/// The most lost objects named in one message (the rest are counted).
const NAMED: usize = 10;

/// What [`BlockFile::open`](crate::BlockFile::open) found and did.
///
/// A default open only succeeds when this [`is_clean`](Self::is_clean): the file accounts for
/// everything its own records (the index, the last commit record) say it holds. Otherwise it
/// fails with [`Error::Damaged`](crate::Error::Damaged), whose detail is
/// [`describe`](Self::describe), and changes nothing; an open in repair mode
/// ([`BlockFileOptions::repair`](crate::BlockFileOptions::repair)) goes on and this lists what
/// was lost.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Recovery {
    /// Whether the index had to be rebuilt by scanning every block (after a crash during an
    /// index write, or damage).
    pub scanned: bool,
    /// Why the index was not used, when `scanned`.
    pub reason: Option<String>,
    /// The transaction the store was recovered to.
    pub txn: u64,
    /// Whether that transaction was proven complete by its commit record (or by a valid
    /// index). `false` after a scan only when no intact commit record was left (damage, or a
    /// power loss after unsynced batches): every complete object was kept, and batch
    /// atomicity could not be checked.
    pub commit_verified: bool,
    /// Objects lost, named: their newest committed version was damaged (checksum or chain),
    /// or an index that could not be used lists them and the scan could not find them (at
    /// the listed transaction). Dropped rather than served at an older version.
    pub damaged: Vec<(String, Vec<u8>)>,
    /// After a scan: how many objects the store's records say it holds (a whole index of a
    /// truncated file, else the last commit record), and how many the scan kept. Fewer kept
    /// than expected means objects were lost; those not in [`damaged`](Self::damaged) left no
    /// trace to name them by ([`unnamed_losses`](Self::unnamed_losses)).
    pub objects_expected: Option<u64>,
    /// After a scan: the objects kept.
    pub objects_found: u64,
    /// After a scan: the last committed transaction that the first block of the index (torn
    /// or damaged) names, when the scan could only recover an older one: the batches in
    /// between were lost.
    pub txn_expected: Option<u64>,
    /// After a scan: the transaction the index names, when the scan recovered an older one
    /// that the index says was durable, so that only batches never acknowledged as durable
    /// were missing (a crash during the flush that carried them; a synced batch is
    /// acknowledged only after that flush). They are dropped whole and the open is clean, as
    /// a database drops the torn tail of its log. `None` when nothing was rolled back.
    pub rolled_back: Option<u64>,
    /// When an intact index references blocks past the end of the file (the file was
    /// truncated): the length in blocks it needs (its highest block + 1).
    pub blocks_expected: Option<u32>,
    /// The whole blocks in the file at open.
    pub file_blocks: u32,
    /// Blocks erased at open because nothing referenced them (an interrupted batch, stale
    /// versions). Always 0 for a read-only open.
    pub erased: usize,
    /// Whether the file ended with a partial block (an interrupted extension). It is cut off,
    /// except by a read-only open, which ignores it.
    pub truncated_tail: bool,
}

impl Recovery {
    /// Whether opening lost nothing: the index was used, or a scan verified the last batch,
    /// found every object expected, dropped nothing, reached the transaction the index names,
    /// and the file holds every block an intact index references.
    pub fn is_clean(&self) -> bool {
        self.blocks_expected.is_none()
            && (!self.scanned
                || (self.commit_verified
                    && self.damaged.is_empty()
                    && self.txn_expected.is_none()
                    && self.objects_expected.is_some_and(|e| e == self.objects_found)))
    }

    /// Objects the records count but that were neither found nor named in
    /// [`damaged`](Self::damaged) (e.g. a chain whose first block was overwritten).
    pub fn unnamed_losses(&self) -> u64 {
        let expected = self.objects_expected.unwrap_or(0);
        expected.saturating_sub(self.objects_found).saturating_sub(self.damaged.len() as u64)
    }

    /// A sentence a user can act on: what the file's records say, what is missing, the first
    /// lost objects by table and key (hex). Empty when [`is_clean`](Self::is_clean).
    pub fn describe(&self) -> String {
        if self.is_clean() {
            return String::new();
        }
        let mut parts: Vec<String> = Vec::new();
        if let Some(needed) = self.blocks_expected {
            parts.push(format!(
                "the file was truncated: its index lists {} objects in blocks up to {} but the \
                 file ends at block {}",
                self.objects_expected.map_or("its".into(), |n| n.to_string()),
                needed - 1,
                self.file_blocks
            ));
        } else if let Some(reason) = &self.reason {
            parts.push(match self.objects_expected {
                Some(e) => format!(
                    "the index cannot be used ({reason}); a scan of every block found {} of the \
                     {e} objects the last commit record (transaction {}) counts",
                    self.objects_found, self.txn
                ),
                None => format!(
                    "the index cannot be used ({reason}); a scan of every block found {} objects \
                     and no intact commit record to check them against",
                    self.objects_found
                ),
            });
        }
        if !self.commit_verified {
            parts.push("no intact commit record proves the last batch complete".into());
        }
        if let Some(t) = self.txn_expected {
            parts.push(format!(
                "the index says transaction {t} was committed, the newest complete one found is {}",
                self.txn
            ));
        }
        let lost = self.damaged.len() as u64 + self.unnamed_losses();
        let mut tail = match lost {
            0 => "no object is known to be lost".to_string(),
            1 => "1 object lost".to_string(),
            n => format!("{n} objects lost"),
        };
        if lost > 0 && self.objects_expected.is_none() {
            tail.insert_str(0, "at least ");
        }
        if !self.damaged.is_empty() {
            tail.push_str(" (");
            for (i, (t, k)) in self.damaged.iter().take(NAMED).enumerate() {
                if i > 0 {
                    tail.push_str(", ");
                }
                let _ = write!(tail, "{t}/{}", hex(k));
            }
            if self.damaged.len() > NAMED {
                let _ = write!(tail, ", and {} more named", self.damaged.len() - NAMED);
            }
            tail.push(')');
        }
        if self.unnamed_losses() > 0 {
            let _ = write!(tail, ", of which {} cannot be named", self.unnamed_losses());
        }
        parts.push(tail);
        parts.join("; ")
    }
}

/// Lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_name_and_count_what_is_lost() {
        let clean = Recovery { commit_verified: true, ..Recovery::default() };
        assert!(clean.is_clean() && clean.describe().is_empty());
        let r = Recovery {
            scanned: true,
            reason: Some("index chain points to block 9, past the end of the file".into()),
            commit_verified: true,
            damaged: (0..12u8).map(|i| ("chunkl0".to_string(), vec![i, 0xab])).collect(),
            objects_expected: Some(416),
            objects_found: 380,
            blocks_expected: Some(1235),
            file_blocks: 600,
            ..Recovery::default()
        };
        assert!(!r.is_clean());
        assert_eq!(r.unnamed_losses(), 24);
        let d = r.describe();
        assert!(
            d.contains("lists 416 objects in blocks up to 1234 but the file ends at block 600")
        );
        assert!(d.contains("36 objects lost (chunkl0/00ab, chunkl0/01ab,"), "{d}");
        assert!(d.contains("and 2 more named), of which 24 cannot be named"), "{d}");
    }
}
