//! A LevelDB log's integrity checked before rusty-leveldb replays it
//! (`docs/format/bedrock.md`, "The database").
//!
//! A log holds the writes a database has not yet compacted into tables: a world whose game
//! stopped before a compaction keeps its newest chunks there. rusty-leveldb skips a record
//! that fails its checksum without an error, so a damaged log would read as a world with
//! fewer records. The log is therefore checked first:
//!
//! ```text
//! 32 KiB blocks; a block's last 1-6 bytes, too short for a header, are zero padding
//! record: masked CRC-32C of type ‖ data (u32 LE), length (u16 LE), type (u8), data
//!   type 1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST (one write split over blocks), 0 zero fill
//! ```
//!
//! Every record must pass its checksum and lie inside its block, and fragments must come in
//! order. The one tolerated defect is a **torn tail**: the file ends inside the last record,
//! as when the game was killed while writing it; that write was never complete, and the
//! reader reports it.

const BLOCK: usize = 32 * 1024;
const HEADER: usize = 7;

/// How a log that passed the check ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogEnd {
    /// At a record boundary (or in zero fill).
    Clean,
    /// Inside a record that was being written: its bytes from this offset on are dropped.
    Torn {
        /// Offset of the incomplete record (or of the first fragment of an incomplete write).
        at: usize,
    },
}

/// Checks one log file's bytes; `Err` says where and what is damaged.
pub fn check_log(b: &[u8]) -> Result<LogEnd, String> {
    let mut pos = 0;
    // Start of a write split over fragments, while one is open.
    let mut open: Option<usize> = None;
    while pos < b.len() {
        let block_end = (pos / BLOCK + 1) * BLOCK;
        if block_end - pos < HEADER {
            pos = block_end;
            continue;
        }
        if pos + HEADER > b.len() {
            return Ok(LogEnd::Torn { at: open.unwrap_or(pos) });
        }
        let stored = u32::from_le_bytes(b[pos..pos + 4].try_into().expect("4 bytes"));
        let len = u16::from_le_bytes([b[pos + 4], b[pos + 5]]) as usize;
        let ty = b[pos + 6];
        if ty == 0 && len == 0 && stored == 0 {
            // Zero fill: the rest of the block is unused.
            pos = block_end;
            continue;
        }
        let end = pos + HEADER + len;
        if end > block_end {
            return Err(format!("the record at byte {pos} runs past its 32 KiB block"));
        }
        if end > b.len() {
            return Ok(LogEnd::Torn { at: open.unwrap_or(pos) });
        }
        let crc = crc32c::crc32c_append(crc32c::crc32c(&[ty]), &b[pos + HEADER..end]);
        if crc != crate::table_check::unmask_crc(stored) {
            return Err(format!("the record at byte {pos} fails its checksum"));
        }
        match (ty, open) {
            (1, None) => {}
            (2, None) => open = Some(pos),
            (3, Some(_)) => {}
            (4, Some(_)) => open = None,
            (1..=4, _) => return Err(format!("the record at byte {pos} is out of order")),
            _ => return Err(format!("the record at byte {pos} has unknown type {ty}")),
        }
        pos = end;
    }
    Ok(match open {
        Some(at) => LogEnd::Torn { at },
        None => LogEnd::Clean,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(ty: u8, data: &[u8]) -> Vec<u8> {
        let crc = crc32c::crc32c_append(crc32c::crc32c(&[ty]), data);
        let masked = crc.rotate_right(15).wrapping_add(0xa282_ead8);
        let mut r = masked.to_le_bytes().to_vec();
        r.extend_from_slice(&(data.len() as u16).to_le_bytes());
        r.push(ty);
        r.extend_from_slice(data);
        r
    }

    #[test]
    fn records_fragments_and_tails() {
        let log = [record(1, b"one"), record(2, b"fi"), record(3, b"rs"), record(4, b"t")].concat();
        assert_eq!(check_log(&log), Ok(LogEnd::Clean));
        assert_eq!(check_log(&[]), Ok(LogEnd::Clean));
        // Cut inside the split write: torn at its first fragment.
        let first = record(1, b"one").len();
        assert_eq!(check_log(&log[..log.len() - 1]), Ok(LogEnd::Torn { at: first }));
        assert_eq!(check_log(&log[..first + 3]), Ok(LogEnd::Torn { at: first }));
        // A flipped data byte, a fragment out of order, an unknown type.
        let mut bad = log.clone();
        bad[8] ^= 1;
        assert!(check_log(&bad).unwrap_err().contains("checksum"));
        assert!(check_log(&record(4, b"x")).unwrap_err().contains("out of order"));
        assert!(check_log(&record(9, b"x")).unwrap_err().contains("unknown type"));
        // Zero fill ends the block.
        let mut filled = record(1, b"a");
        filled.resize(BLOCK, 0);
        filled.extend(record(1, b"b"));
        assert_eq!(check_log(&filled), Ok(LogEnd::Clean));
    }
}
