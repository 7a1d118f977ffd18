//! Test support shared by the workspace (feature `testdata`, for dev-dependencies only):
//!
//! - where tests, benches and fuzz seeds find the real files other tools wrote (Anvil regions,
//!   chunk NBT, Sponge schematics): the repository's `testdata/` folder, each file listed in
//!   its `SOURCES.md` with origin, licence and sha256. The folder is part of the repository,
//!   so a clone tests on its own. A missing folder or file fails the test with the path it
//!   looked for, never a skip.
//! - [`ChildGuard`]: a spawned process killed and reaped on every exit path of a test.

use std::path::{Path, PathBuf};

/// The test-data folder: `<workspace>/testdata`, found from the running test's package
/// directory (`CARGO_MANIFEST_DIR`, which cargo sets for tests and benches) up, else from this
/// crate's directory at build time. Read at run time first: clones that share one target
/// directory may run a test binary another clone built.
///
/// # Panics
/// When the folder does not exist (a test's set-up failing, with the fix in the message).
pub fn dir() -> PathBuf {
    let at_run_time = std::env::var_os("CARGO_MANIFEST_DIR").and_then(|d| {
        Path::new(&d)
            .ancestors()
            .map(|a| a.join("testdata"))
            .find(|t| t.join("SOURCES.md").is_file())
    });
    let p =
        at_run_time.unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata"));
    assert!(
        p.is_dir(),
        "test data folder {} is missing: it is part of the repository (`git checkout -- testdata`)",
        p.display()
    );
    p
}

/// The fixture at `rel` inside [`dir`].
///
/// # Panics
/// When the file does not exist.
pub fn fixture(rel: &str) -> PathBuf {
    let p = dir().join(rel);
    assert!(
        p.exists(),
        "fixture {} is missing: it is part of the repository (`git checkout -- testdata`)",
        p.display()
    );
    p
}

/// A Java world folder `dir/java` whose Overworld is the region fixture at `rel`
/// (`anvil/1.21.1/r.0.0.mca`), copied to `region/` under its own name; no `level.dat`.
///
/// # Panics
/// When the fixture is missing or the copy fails.
pub fn java_world(dir: &Path, rel: &str) -> PathBuf {
    let from = fixture(rel);
    let java = dir.join("java");
    std::fs::create_dir_all(java.join("region")).expect("create the region folder");
    let name = from.file_name().expect("a region file's name");
    std::fs::copy(&from, java.join("region").join(name)).expect("copy the region fixture");
    java
}

/// The bytes of the fixture at `rel`.
///
/// # Panics
/// When it cannot be read.
pub fn read(rel: &str) -> Vec<u8> {
    let p = fixture(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("fixture {}: {e}", p.display()))
}

/// A child process that is killed and reaped when the guard drops, on every exit path of a
/// test, a panic included: a failing test never leaves a server or a demo running after the
/// test run. Derefs to the [`Child`](std::process::Child).
///
/// ```
/// use std::process::Command;
/// use terrane_section::testdata::ChildGuard;
/// let mut sleeper = ChildGuard::spawn(Command::new("sleep").arg("60")).unwrap();
/// let pid = sleeper.id();
/// assert!(sleeper.try_wait().unwrap().is_none());
/// drop(sleeper); // killed and reaped here
/// assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
/// ```
#[derive(Debug)]
pub struct ChildGuard(std::process::Child);

impl ChildGuard {
    /// Spawns `cmd` under the guard.
    ///
    /// # Errors
    /// As [`Command::spawn`](std::process::Command::spawn).
    pub fn spawn(cmd: &mut std::process::Command) -> std::io::Result<Self> {
        cmd.spawn().map(ChildGuard)
    }
}

impl From<std::process::Child> for ChildGuard {
    fn from(child: std::process::Child) -> Self {
        ChildGuard(child)
    }
}

impl std::ops::Deref for ChildGuard {
    type Target = std::process::Child;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for ChildGuard {
    fn deref_mut(&mut self) -> &mut Self::Target {
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
