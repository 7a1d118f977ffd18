//! The harnesses' child processes, killed and reaped when their guard drops: a harness that
//! panics half-way (a failed check, a missing tool) never leaves a child writing after the
//! test run.

use std::process::Child;

/// A child process killed and reaped on drop. Derefs to the [`Child`].
#[derive(Debug)]
pub struct ChildGuard(pub(crate) Child);

impl std::ops::Deref for ChildGuard {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for ChildGuard {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        // Already reaped, or gone: both calls fail harmlessly.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
