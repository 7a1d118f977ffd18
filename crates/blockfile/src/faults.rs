//! The I/O of the write path, counted against the simulated crash budget of the crash tests
//! (a write, an erase, a truncation or a sync fails once it is spent), and `fdatasync`, counted.

use std::fs::File;
use std::os::unix::fs::FileExt;

use crate::format::{BLOCK, FIXED, FIXED_AT};
use crate::{BlockFile, Blocks, Error, Result};

/// Erases a block's trailer (48 zero bytes): the block no longer parses, so a recovery scan
/// ignores it and its chain.
pub(crate) fn erase_trailer(file: &File, block: u32) -> std::io::Result<()> {
    file.write_all_at(&[0u8; FIXED], block as u64 * BLOCK as u64 + FIXED_AT as u64)
}

impl BlockFile {
    /// Testing only: simulates a crash at the `n`th write, erase, truncation or sync from
    /// now, counted from 1 as `terrane_store::FaultPlan` counts calls (`Some(0)` is taken as
    /// 1): that operation fails (a multi-block write first writes half of its blocks, a torn
    /// write) and so does everything after it. `None` turns it off.
    #[doc(hidden)]
    pub fn simulate_crash_at(&self, n: Option<u64>) {
        let v = n.map_or(-1, |n| n.saturating_sub(1) as i64);
        self.crash_budget.store(v, std::sync::atomic::Ordering::SeqCst);
    }

    /// Counts an I/O operation against the simulated crash budget: `Err` once exhausted,
    /// `Ok(true)` for the operation that exhausts it.
    fn io_budget(&self) -> Result<bool> {
        use std::sync::atomic::Ordering;
        let left = self.crash_budget.load(Ordering::SeqCst);
        match left {
            -1 => Ok(false),
            0 => {
                self.crash_budget.store(i64::MIN, Ordering::SeqCst);
                Ok(true)
            }
            i64::MIN => Err(Error::Io(std::io::Error::other("simulated crash"))),
            _ => {
                self.crash_budget.store(left - 1, Ordering::SeqCst);
                Ok(false)
            }
        }
    }

    pub(crate) fn io_tick(&self) -> Result<()> {
        if self.io_budget()? {
            return Err(Error::Io(std::io::Error::other("simulated crash")));
        }
        Ok(())
    }

    pub(crate) fn io_write_blocks(&self, blocks: &Blocks<'_>) -> Result<()> {
        if self.io_budget()? {
            blocks.write(&self.file, Some(blocks.len() / 2))?;
            return Err(Error::Io(std::io::Error::other("simulated crash")));
        }
        Ok(blocks.write(&self.file, None)?)
    }

    pub(crate) fn io_erase(&self, block: u32) -> Result<()> {
        self.io_tick()?;
        Ok(erase_trailer(&self.file, block)?)
    }

    pub(crate) fn io_sync(&self) -> Result<()> {
        self.io_tick()?;
        Ok(self.fdatasync()?)
    }

    /// `fdatasync`, counted.
    pub(crate) fn fdatasync(&self) -> std::io::Result<()> {
        self.syncs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.file.sync_data()
    }
}
