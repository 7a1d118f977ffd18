//! Where the workspace's tests, benches and fuzz seeds find the real files other tools wrote
//! (Anvil regions, Sponge schematics, regionizer logs: `shared/testdata`, listed in its
//! `SOURCES.md`). Feature `testdata`: for dev-dependencies only.
//!
//! A missing folder or file fails the test with the path and the variable to set, never a
//! skip.

use std::path::{Path, PathBuf};

/// The test-data folder: `$TERRANE_TESTDATA`, else `shared/testdata` beside the workspace
/// (`<workspace>/../shared/testdata`).
///
/// # Panics
/// When the folder does not exist (a test's set-up failing, with the fix in the message).
pub fn dir() -> PathBuf {
    let p = match std::env::var_os("TERRANE_TESTDATA") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata"),
    };
    assert!(p.is_dir(), "test data folder {} is missing (set TERRANE_TESTDATA)", p.display());
    p
}

/// The fixture at `rel` inside [`dir`].
///
/// # Panics
/// When the file does not exist.
pub fn fixture(rel: &str) -> PathBuf {
    let p = dir().join(rel);
    assert!(p.exists(), "fixture {} is missing (set TERRANE_TESTDATA)", p.display());
    p
}

/// The bytes of the fixture at `rel`.
///
/// # Panics
/// When it cannot be read.
pub fn read(rel: &str) -> Vec<u8> {
    let p = fixture(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("fixture {}: {e}", p.display()))
}
