//! The I/O of the write path, counted against the fault budget of the crash and I/O-error
//! tests (a write, an erase, a truncation or a sync fails once it is spent: every operation
//! after it too for a simulated crash, only that one for a simulated I/O error), and
//! `fdatasync`, counted.

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
        self.transient_fault.store(false, std::sync::atomic::Ordering::SeqCst);
        let v = n.map_or(-1, |n| n.saturating_sub(1) as i64);
        self.crash_budget.store(v, std::sync::atomic::Ordering::SeqCst);
    }

    /// Testing only: the `n`th write, erase, truncation or sync from now fails once with
    /// `EIO`, as a failing disk reports it (a multi-block write first writes half of its
    /// blocks); the operations after it reach the file again. Counted as
    /// [`simulate_crash_at`](Self::simulate_crash_at) counts. `None` turns it off.
    #[doc(hidden)]
    pub fn simulate_io_error_at(&self, n: Option<u64>) {
        self.transient_fault.store(true, std::sync::atomic::Ordering::SeqCst);
        let v = n.map_or(-1, |n| n.saturating_sub(1) as i64);
        self.crash_budget.store(v, std::sync::atomic::Ordering::SeqCst);
    }

    /// The error of a simulated fault.
    fn fault(&self) -> Error {
        if self.transient_fault.load(std::sync::atomic::Ordering::SeqCst) {
            Error::Io(std::io::Error::from_raw_os_error(5)) // EIO
        } else {
            Error::Io(std::io::Error::other("simulated crash"))
        }
    }

    /// Counts an I/O operation against the simulated crash budget: `Err` once exhausted,
    /// `Ok(true)` for the operation that exhausts it.
    fn io_budget(&self) -> Result<bool> {
        use std::sync::atomic::Ordering;
        let left = self.crash_budget.load(Ordering::SeqCst);
        match left {
            -1 => Ok(false),
            0 => {
                // A crash stops all I/O; an I/O error fails this operation only.
                let after = if self.transient_fault.load(Ordering::SeqCst) { -1 } else { i64::MIN };
                self.crash_budget.store(after, Ordering::SeqCst);
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
            return Err(self.fault());
        }
        Ok(())
    }

    pub(crate) fn io_write_blocks(&self, blocks: &Blocks<'_>) -> Result<()> {
        if self.io_budget()? {
            blocks.write(&self.file, Some(blocks.len() / 2))?;
            return Err(self.fault());
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
