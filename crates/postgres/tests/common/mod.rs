//! Shared by the PostgreSQL tests: a throwaway server per test (or, in a child process of a
//! crash test, the parent's), and one schema per directory the conformance suite hands out.

#![allow(dead_code)]

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use terrane_postgres::testing::{CONNINFO_ENV, PgServer};
use terrane_postgres::{PgOptions, PgStore};
use terrane_store::StoreConfig;

/// The test's own server (`None` in a child, which uses the parent's) and its connection
/// string.
pub fn server() -> (Option<PgServer>, String) {
    terrane_postgres::testing::server_or_parents()
}

/// The environment a child process needs to reach the server.
pub fn child_env(conninfo: &str) -> Vec<(String, String)> {
    vec![(CONNINFO_ENV.to_string(), conninfo.to_string())]
}

/// A schema name of its own for every directory.
pub fn schema_for(dir: &Path) -> String {
    let h = dir
        .as_os_str()
        .as_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ *b as u64).wrapping_mul(0x100_0000_01b3));
    format!("t{h:016x}")
}

/// Small options for tests.
pub fn options(dir: &Path) -> PgOptions {
    PgOptions::new().schema(schema_for(dir)).pool_size(4)
}

/// Opens the store of `dir` on the server.
pub fn open(conninfo: &str, dir: &Path, config: &StoreConfig) -> terrane_store::Result<PgStore> {
    PgStore::open_with(conninfo, config, &options(dir))
}
