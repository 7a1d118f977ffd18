//! A small file system to fill: a tmpfs of a few MiB mounted on a fresh temporary directory,
//! for the full-disk tests of the backends, the world and the command.
//!
//! Mounting needs root (`CAP_SYS_ADMIN`), which the test suite has where CI runs it; when the
//! mount is refused, [`Tmpfs::mount`] panics with the reason instead of skipping.

use std::path::Path;
use std::process::Command;

/// A mounted tmpfs, unmounted (lazily) on drop, also when the test fails.
#[derive(Debug)]
pub struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts a tmpfs of `kib` KiB.
    ///
    /// # Panics
    /// When `mount` fails (not root, no `mount` binary), with its message.
    pub fn mount(kib: u64) -> Tmpfs {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "terrane-full-disk"])
            .arg(dir.path())
            .output()
            .expect("running mount");
        assert!(
            out.status.success(),
            "mounting a {kib} KiB tmpfs on {} failed (the full-disk tests need root, as CI \
             runs them): {}",
            dir.path().display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
        Tmpfs { dir }
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.dir.path()).status();
    }
}
