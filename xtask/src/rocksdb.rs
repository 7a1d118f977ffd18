//! One RocksDB build per target directory.
//!
//! librocksdb-sys compiles RocksDB's C++ in its build script (15–20 minutes on 2 cores). Cargo
//! runs that build script again for every profile directory (`target/debug`, `target/release`)
//! and for every change of its inputs, so the workspace keeps exactly one:
//!
//! - the dev profile builds it, optimised and without debug info (`.cargo/config.toml`), and
//!   every dev command (tests, clippy, `cargo test -p <any>`) shares that build, because the
//!   build script's inputs no longer shift with the selected packages (same file);
//! - release-profile jobs (demo, bench, crash) link the archive of that build: they run cargo
//!   with librocksdb-sys's documented `ROCKSDB_LIB_DIR` / `ROCKSDB_STATIC`, so their build
//!   script only generates bindings and links;
//! - [`check_one_build`] fails a task that made a second archive.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use crate::{Result, cargo, root, run};

/// The target directory cargo uses for this workspace.
pub fn target_dir() -> Result<PathBuf> {
    let out = cargo()
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root())
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let key = "\"target_directory\":\"";
    let start = text.find(key).ok_or("cargo metadata printed no target_directory")? + key.len();
    let end = start + text[start..].find('"').ok_or("malformed cargo metadata")?;
    Ok(PathBuf::from(text[start..end].replace("\\\\", "\\")))
}

/// Every RocksDB archive (`librocksdb.a`) that librocksdb-sys's build scripts made under
/// `target`, with its modification time.
pub fn archives(target: &Path) -> Vec<(PathBuf, SystemTime)> {
    let mut found = Vec::new();
    let Ok(profiles) = fs::read_dir(target) else { return found };
    for profile in profiles.flatten() {
        let Ok(builds) = fs::read_dir(profile.path().join("build")) else { continue };
        for b in builds.flatten() {
            if !b.file_name().to_string_lossy().starts_with("librocksdb-sys-") {
                continue;
            }
            let a = b.path().join("out").join("librocksdb.a");
            if let Ok(m) = fs::metadata(&a) {
                found.push((a, m.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
            }
        }
    }
    found.sort();
    found
}

/// Fails when more than one RocksDB archive was written since `since` (a task compiled
/// RocksDB's C++ twice).
pub fn check_one_build(target: &Path, since: SystemTime) -> Result {
    let all = archives(target);
    let fresh: Vec<&PathBuf> = all.iter().filter(|(_, t)| *t >= since).map(|(p, _)| p).collect();
    if fresh.len() > 1 {
        return Err(format!(
            "RocksDB's C++ was compiled {} times by one task (one archive per build):\n  {}\n\
             A selection or mode changed librocksdb-sys's build-script inputs; see \
             xtask/src/rocksdb.rs and docs/CONTRIBUTING.md (\"One RocksDB build\").",
            fresh.len(),
            fresh.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join("\n  ")
        ));
    }
    eprintln!(
        "one RocksDB build: {} archive(s) under {} ({} written by this task)",
        all.len(),
        target.display(),
        fresh.len()
    );
    Ok(())
}

/// The dev profile's RocksDB archive, building it first when needed (a no-op when built).
pub fn dev_archive() -> Result<PathBuf> {
    run(cargo().args(["build", "-p", "terrane-rocksdb"]))?;
    let target = target_dir()?;
    let debug = target.join("debug");
    archives(&target)
        .into_iter()
        .filter(|(p, _)| p.starts_with(&debug))
        .max_by_key(|(_, t)| *t)
        .map(|(p, _)| p)
        .ok_or_else(|| format!("no librocksdb.a under {} after building it", debug.display()))
}

/// Makes a release-profile cargo command link the dev profile's RocksDB archive instead of
/// compiling RocksDB's C++ again.
///
/// The archive is bundled into the release librocksdb-sys rlib when that is built, and its
/// build script reruns only when `ROCKSDB_LIB_DIR` changes, not when the archive does. So the
/// directory passed is named after the archive's size and modification time
/// (`target/rocksdb-link/<size>-<mtime>/librocksdb.a`, a hard link): a rebuilt archive (new
/// C++ flags, a new RocksDB) is a new directory, and the release rlib is rebuilt with it.
pub fn link_dev_archive(cmd: &mut Command) -> Result<&mut Command> {
    let archive = dev_archive()?;
    let dir = versioned_link(&archive, &target_dir()?.join("rocksdb-link"))?;
    Ok(cmd.env("ROCKSDB_LIB_DIR", dir).env("ROCKSDB_STATIC", "1"))
}

/// A directory under `root` named after `archive`'s size and modification time, holding a
/// hard link to it (a copy where links fail).
fn versioned_link(archive: &Path, root: &Path) -> Result<PathBuf> {
    let meta = fs::metadata(archive).map_err(|e| format!("{}: {e}", archive.display()))?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let dir = root.join(format!("{}-{mtime}", meta.len()));
    let linked = dir.join("librocksdb.a");
    if !linked.exists() {
        fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if fs::hard_link(archive, &linked).is_err() {
            fs::copy(archive, &linked).map_err(|e| format!("{}: {e}", linked.display()))?;
        }
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rebuilt archive gets a new link directory (so the release rlib that bundles it is
    /// rebuilt); the same archive keeps its directory.
    #[test]
    fn a_rebuilt_archive_is_linked_from_a_new_directory() {
        let root = std::env::temp_dir().join(format!("xtask-link-{}", std::process::id()));
        fs::create_dir_all(&root).unwrap();
        let archive = root.join("librocksdb.a");
        fs::write(&archive, b"!<arch>\none").unwrap();
        let a = versioned_link(&archive, &root.join("links")).unwrap();
        assert_eq!(versioned_link(&archive, &root.join("links")).unwrap(), a);
        assert_eq!(fs::read(a.join("librocksdb.a")).unwrap(), b"!<arch>\none");
        fs::write(&archive, b"!<arch>\nthe second").unwrap();
        let b = versioned_link(&archive, &root.join("links")).unwrap();
        assert_ne!(a, b);
        assert_eq!(fs::read(b.join("librocksdb.a")).unwrap(), b"!<arch>\nthe second");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_second_archive_written_by_one_task_fails_the_check() {
        let target = std::env::temp_dir().join(format!("xtask-archives-{}", std::process::id()));
        let archive = |profile: &str, hash: &str| {
            let out = target.join(profile).join("build").join(format!("librocksdb-sys-{hash}/out"));
            fs::create_dir_all(&out).unwrap();
            fs::write(out.join("librocksdb.a"), b"!<arch>\n").unwrap();
        };
        archive("debug", "old");
        let since = SystemTime::now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        archive("debug", "aaa");
        assert_eq!(archives(&target).len(), 2);
        check_one_build(&target, since).expect("one archive written since: fine");
        archive("release", "bbb");
        let err = check_one_build(&target, since).unwrap_err();
        assert!(err.contains("compiled 2 times"), "{err}");
        fs::remove_dir_all(&target).unwrap();
    }
}
