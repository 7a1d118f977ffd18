//! `cargo xtask`: the workspace's task runner (std only).
//!
//! Run `cargo xtask help` for the list of tasks.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

mod bench;
mod fuzz;
mod rocksdb;
mod tidy;
mod worlds;

const HELP: &str = "\
cargo xtask <TASK>

Tasks:
  test                    check prerequisites, then fmt --check, clippy -D warnings (all targets),
                          every test of the workspace (nextest), the doctests, packaging of
                          every crate and docs with warnings denied. What CI runs.
  ci                      test, then the rust-version check and a fuzz smoke run of every
                          target.
  bench [PACKAGE] [-- ARGS]
                          run the criterion benches (of one package, or all) and print the
                          headline figures read back from criterion's output.
  fuzz <TARGET> [--seconds N] [--jobs N]
                          fuzz one target (cargo-fuzz on nightly; installed when missing);
                          --jobs N: N processes sharing the corpus, one per core
  fuzz --all [--seconds N]
                          fuzz every target N seconds each (default 30)
  fuzz --list             list the fuzz targets
  fuzz --table            print the fuzzing table of docs/RELIABILITY.md, rendered from
                          fuzz/stats.tsv and the corpora in fuzz/corpus/
  crash [--kills N] [--game-kills M] [-- FILTER]
                          the SIGKILL crash harnesses: N kills per backend, N/5 rounds of
                          three game servers on one PostgreSQL world; the injected
                          system-call faults at every N; M kills (default 300) of
                          `terrane serve` under four mineflayer players (FILTER: test names)
  demo [DIR]              check prerequisites, then run the main job (`terrane demo`)
  soak --minutes N [DIR] [--backend B]
                          the demo's world under continuous play for N minutes: tick-save
                          p50/p99/max and resident memory per minute; fails when memory grows
                          or the p99 does (docs/RELIABILITY.md, Soak)
  bigworld OUT --columns N [--edition java|bedrock] [--seed S]
                          write a real-shaped world of N Overworld columns: the finished chunks
                          of testdata's real regions tiled over a square, level.dat, players
                          (Java); Bedrock through `terrane convert` of that Java world. About
                          8.6 KiB of Anvil per column: 1 GB is about 120,000 columns.
  worlds [--columns N[,N...]] [--amulet] [--only GROUPS] [--dir DIR]
                          every whole-world command of `terrane` (convert both ways, import,
                          export, verify, copy, backup, restore, render) on
                          real-shaped worlds of N columns (default 1024): wall time, columns/s
                          and peak memory, as the table of docs/BENCHMARKS.md; --amulet adds
                          amulet-core converting the same worlds both ways; --only measures
                          some groups of rows (convert, import, export, world), with the rows
                          they need
  prereqs                 only check (and install, when possible) the system prerequisites
  tables                  regenerate terrane-bedrock's Java <-> Bedrock block-state table
                          (crates/bedrock/data) and terrane-valence's table of later blocks
                          (crates/valence/data) from the pinned minecraft-data package
";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("help");
    let rest = if args.is_empty() { &[][..] } else { &args[1..] };
    // `cargo xtask TASK --help` prints the help, whatever the task (never starts it).
    if rest.iter().take_while(|a| *a != "--").any(|a| a == "--help" || a == "-h") {
        print!("{HELP}");
        return ExitCode::SUCCESS;
    }
    let result = match task {
        "test" => test(),
        "ci" => ci(),
        "bench" => bench::task(rest),
        "fuzz" => fuzz::task(rest),
        "crash" => crash(rest),
        "demo" => demo(rest),
        "soak" => soak(rest),
        "bigworld" => bigworld(rest),
        "worlds" => worlds::task(rest),
        "prereqs" => prereqs(),
        "tables" => tables(),
        "help" | "--help" | "-h" => {
            print!("{HELP}");
            Ok(())
        }
        other => Err(usage(format!("unknown task `{other}`\n\n{HELP}"))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The `terrane` command's convention: 2 for a misused command line, 1 otherwise.
        Err(e) => match e.strip_prefix(USAGE) {
            Some(e) => {
                eprintln!("xtask: error: {e}");
                ExitCode::from(2)
            }
            None => {
                eprintln!("xtask: error: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

/// The result of a task: `Err` carries the message printed before exiting non-zero.
pub type Result<T = ()> = std::result::Result<T, String>;

/// Marks an error message as a misused command line (exit status 2).
const USAGE: &str = "\u{1}usage\u{1}";

/// A misused command line's error (exit status 2).
pub fn usage(message: impl Into<String>) -> String {
    format!("{USAGE}{}", message.into())
}

/// Refuses flags (before any `--`) that a task does not know: a typo must not start a long run
/// with the defaults.
pub fn known_flags(rest: &[String], with_value: &[&str], plain: &[&str]) -> Result {
    let mut it = rest.iter().take_while(|a| *a != "--");
    while let Some(a) = it.next() {
        if with_value.contains(&a.as_str()) {
            if it.next().is_none() {
                return Err(usage(format!("{a} needs a value")));
            }
        } else if a.starts_with('-') && !plain.contains(&a.as_str()) {
            return Err(usage(format!("unknown flag `{a}` (see `cargo xtask --help`)")));
        }
    }
    Ok(())
}

/// The workspace root (the parent of this crate's manifest directory). `cargo run` sets
/// `CARGO_MANIFEST_DIR` for the running process too, and that one wins: clones that share a
/// target directory (CI's does) share one uplifted `xtask` binary, whose compile-time path
/// may be another clone's.
pub fn root() -> PathBuf {
    let dir = env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    dir.parent().expect("xtask lives in the workspace").into()
}

/// Runs a command in the workspace root, echoing it, and fails when it fails.
pub fn run(cmd: &mut Command) -> Result {
    let shown = format!("{cmd:?}").replace('"', "");
    eprintln!("\n$ {shown}");
    let start = Instant::now();
    let status =
        cmd.current_dir(root()).status().map_err(|e| format!("cannot start {shown}: {e}"))?;
    eprintln!("  ({shown}: {:.1} s)", start.elapsed().as_secs_f64());
    if status.success() { Ok(()) } else { Err(format!("`{shown}` failed ({status})")) }
}

/// `cargo` as invoked by this xtask (respects `$CARGO`).
pub fn cargo() -> Command {
    Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn test() -> Result {
    let started = std::time::SystemTime::now();
    prereqs()?;
    run(cargo().args(["fmt", "--all", "--check"]))?;
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--all-features",
        "--",
        "-D",
        "warnings",
    ]))?;
    // The facade without its backends (memory worlds only), as the fuzz crate builds it.
    run(cargo().args([
        "clippy",
        "-p",
        "terrane",
        "--no-default-features",
        "--",
        "-D",
        "warnings",
    ]))?;
    let nextest = cargo()
        .args(["nextest", "--version"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if nextest {
        run(cargo().args(["nextest", "run", "--workspace", "--all-features", "--no-fail-fast"]))?;
    } else {
        eprintln!("cargo-nextest not found: running `cargo test` instead");
        run(cargo().args([
            "test",
            "--workspace",
            "--all-features",
            "--lib",
            "--bins",
            "--tests",
            "--examples",
        ]))?;
    }
    run(cargo().args(["test", "--workspace", "--all-features", "--doc"]))?;
    each_crate_builds_its_own_tests()?;
    // The crates are published to be depended on piecemeal: each packs, and its API
    // documentation builds without a warning (broken links, missing docs).
    package_check()?;
    run(cargo()
        .args(["doc", "--workspace", "--all-features", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings"))?;
    rocksdb::check_one_build(&rocksdb::target_dir()?, started)
}

/// `cargo test -p <crate>` with the crate's own default features builds, for every package:
/// what CONTRIBUTING promises a contributor working on one crate. The workspace run above
/// turns every feature on, which hides a test that needs a feature its crate does not enable.
fn each_crate_builds_its_own_tests() -> Result {
    for package in workspace_packages()? {
        run(cargo().args(["test", "-p", &package, "--no-run", "--quiet"]))?;
    }
    Ok(())
}

/// The package names of `crates/*`, `benches` and `xtask`, from their manifests.
fn workspace_packages() -> Result<Vec<String>> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(root().join("crates"))
        .map_err(|e| format!("crates/: {e}"))?
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs.extend([root().join("benches"), root().join("xtask")]);
    dirs.iter().map(|d| package_name(d)).collect()
}

/// The package name in the manifest of the package at `dir` (its first `name = "..."` line).
pub fn package_name(dir: &Path) -> Result<String> {
    let manifest = dir.join("Cargo.toml");
    let toml = fs::read_to_string(&manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
    toml.lines()
        .find_map(|l| l.strip_prefix("name = \""))
        .and_then(|l| l.strip_suffix('"'))
        .map(String::from)
        .ok_or_else(|| format!("{}: no package name", manifest.display()))
}

fn ci() -> Result {
    let started = std::time::SystemTime::now();
    test()?;
    // Differently selected commands than the test run's: they must reuse its RocksDB build.
    run(cargo().args(["check", "-p", "terrane-rocksdb"]))?;
    run(cargo().args(["test", "-p", "terrane-benches", "--features", "rocksdb", "--no-run"]))?;
    run(rocksdb::link_dev_archive(&mut cargo())?.args([
        "build",
        "--release",
        "-p",
        "terrane-cli",
    ]))?;
    rust_version_check()?;
    fuzz::task(&["--all".into(), "--seconds".into(), "10".into()])?;
    rocksdb::check_one_build(&rocksdb::target_dir()?, started)
}

/// Checks that the workspace `rust-version` is at least every dependency's.
fn rust_version_check() -> Result {
    let out = cargo()
        .args(["metadata", "--format-version", "1"])
        .current_dir(root())
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let ours = fs::read_to_string(root().join("Cargo.toml")).map_err(|e| e.to_string())?;
    let ours = ours
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .and_then(|l| l.strip_suffix('"'))
        .ok_or("workspace Cargo.toml has no rust-version")?
        .to_string();
    let parse = |v: &str| -> Vec<u32> { v.split('.').map(|p| p.parse().unwrap_or(0)).collect() };
    let mut highest = (parse("0"), String::new());
    for part in text.split("\"rust_version\":\"").skip(1) {
        let v = part.split('"').next().unwrap_or("");
        if parse(v) > highest.0 {
            highest = (parse(v), v.to_string());
        }
    }
    let mut ours_v = parse(&ours);
    ours_v.resize(3, 0);
    let mut hi = highest.0.clone();
    hi.resize(3, 0);
    eprintln!("rust-version: workspace {ours}, highest dependency {}", highest.1);
    if ours_v < hi {
        return Err(format!("workspace rust-version {ours} is below a dependency's {}", highest.1));
    }
    Ok(())
}

/// Packages every publishable crate. `cargo package --workspace` (cargo >= 1.90) resolves
/// unpublished siblings through a local overlay registry, so crates that depend on each other
/// are checked in dependency order exactly as crates.io will see them.
fn package_check() -> Result {
    run(cargo().args([
        "package",
        "--workspace",
        "--no-verify",
        "--allow-dirty",
        "--exclude",
        "xtask",
    ]))
}

fn crash(rest: &[String]) -> Result {
    known_flags(rest, &["--kills", "--game-kills"], &[])?;
    for flag in ["--kills", "--game-kills"] {
        if let Some(k) = flag_value(rest, flag)
            && k.parse::<u64>().is_err()
        {
            return Err(usage(format!("{flag} {k}: not a number")));
        }
    }
    let kills = flag_value(rest, "--kills").unwrap_or_else(|| "1000".into());
    // Kills of the game server with real clients: each costs seconds, not milliseconds.
    let game_kills = flag_value(rest, "--game-kills").unwrap_or_else(|| "300".into());
    prereqs()?;
    run(rocksdb::link_dev_archive(&mut cargo())?
        .args([
            "test",
            "--release",
            "--workspace",
            "--all-features",
            "--test",
            "crash",
            "--test",
            "syscall_faults",
            "--test",
            "serve_kills",
            "--",
            "--nocapture",
        ])
        .args(rest.iter().skip_while(|a| *a != "--").skip(1))
        .env("TERRANE_GAME_KILLS", game_kills)
        .env("TERRANE_CRASH_KILLS", kills)
        .env("TERRANE_SYSCALL_FAULT_EVERY_N", "1"))
}

fn demo(rest: &[String]) -> Result {
    system_packages(DEMO_NEEDS)?;
    let mut cmd = cargo();
    rocksdb::link_dev_archive(&mut cmd)?;
    cmd.args(["run", "--release", "-p", "terrane-cli", "--", "demo"]).args(rest);
    // Re-running replaces the previous demo world (`--force` only ever replaces a terrane
    // world, never other files).
    if !rest.iter().any(|a| a == "--force") {
        cmd.arg("--force");
    }
    run(&mut cmd)
}

/// `cargo xtask bigworld`: terrane-benches' `bigworld` (the Java world), then for Bedrock
/// `terrane convert` of it into OUT, the Java source removed after.
fn bigworld(rest: &[String]) -> Result {
    known_flags(rest, &["--columns", "--edition", "--seed"], &[])?;
    let columns =
        flag_value(rest, "--columns").ok_or_else(|| usage("bigworld needs --columns N"))?;
    if columns.parse::<u64>().map_or(true, |c| c == 0) {
        return Err(usage(format!("--columns {columns}: give a positive whole number")));
    }
    let seed = flag_value(rest, "--seed").unwrap_or_else(|| "1".into());
    if seed.parse::<u64>().is_err() {
        return Err(usage(format!("--seed {seed}: give a whole number")));
    }
    let edition = flag_value(rest, "--edition").unwrap_or_else(|| "java".into());
    let out = rest
        .iter()
        .enumerate()
        .find(|(i, a)| {
            !a.starts_with("--")
                && (*i == 0
                    || !matches!(rest[i - 1].as_str(), "--columns" | "--edition" | "--seed"))
        })
        .map(|(_, a)| PathBuf::from(a))
        .ok_or_else(|| usage("bigworld needs OUT, the folder to write"))?;
    let out = env::current_dir().map_err(|e| e.to_string())?.join(out);
    let java = match edition.as_str() {
        "java" => out.clone(),
        "bedrock" => {
            let mut name = out.file_name().unwrap_or_default().to_os_string();
            name.push(".java-source");
            out.with_file_name(name)
        }
        other => return Err(usage(format!("--edition {other}: java or bedrock"))),
    };
    run(cargo()
        .args(["run", "--release", "-q", "-p", "terrane-benches", "--bin", "bigworld", "--"])
        .arg(&java)
        .args(["--columns", &columns, "--seed", &seed]))?;
    if edition == "bedrock" {
        let converted = run(cargo()
            .args(["run", "--release", "-q", "-p", "terrane-cli", "--no-default-features"])
            .args(["--features", "postgres,blockfile", "--", "convert"])
            .arg(&java)
            .arg(&out)
            .args(["--to", "bedrock"]));
        fs::remove_dir_all(&java).map_err(|e| format!("removing {}: {e}", java.display()))?;
        converted?;
    }
    Ok(())
}

/// `cargo xtask soak`: `terrane demo --minutes N` in release, on DIR or on a world under the
/// target directory; fails when the soak goal is not met (the command's exit status).
fn soak(rest: &[String]) -> Result {
    known_flags(rest, &["--minutes", "--backend"], &[])?;
    let minutes = flag_value(rest, "--minutes").ok_or_else(|| usage("soak needs --minutes N"))?;
    if minutes.parse::<f64>().map_or(true, |m| m.is_nan() || m <= 0.0) {
        return Err(usage(format!("--minutes {minutes}: give a positive number")));
    }
    // Every argument goes to `terrane demo`; a directory only when none was given.
    let mut args = rest.to_vec();
    let has_dir = rest.iter().enumerate().any(|(i, a)| {
        !a.starts_with("--")
            && (i == 0 || !matches!(rest[i - 1].as_str(), "--minutes" | "--backend"))
    });
    if !has_dir {
        args.push(rocksdb::target_dir()?.join("terrane-soak-world").display().to_string());
    }
    demo(&args)
}

/// The value after `name` in `args`, if any.
pub fn flag_value(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

/// Everything the tests need: the system packages, amulet-core, then the Node modules of
/// the real-client test.
fn prereqs() -> Result {
    system_packages(TEST_NEEDS)?;
    amulet()?;
    node_modules()
}

/// What the tests need (and amulet-core, a Python package, besides).
const TEST_NEEDS: &[Need] = &[Need::Libclang, Need::Postgres, Need::Strace, Need::Faketime];

/// What the main job needs: only what builds the command. Not PostgreSQL, strace or
/// amulet-core (minutes of pip on a fresh machine), which only the tests use.
const DEMO_NEEDS: &[Need] = &[Need::Libclang];

/// A system package a task needs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Need {
    /// librocksdb-sys runs bindgen, which needs libclang at build time.
    Libclang,
    /// The PostgreSQL tests start throwaway servers from Debian's `postgresql` package.
    Postgres,
    /// The injected system-call faults come from `strace`.
    Strace,
    /// The clock-skew runs start a server under Debian's `faketime`.
    Faketime,
}

/// Checks the system packages of `needs` and installs the missing ones (as root, with
/// apt-get), or fails with the command that installs them.
fn system_packages(needs: &[Need]) -> Result {
    let mut missing: Vec<&str> = Vec::new();
    if cfg!(target_os = "linux") && needs.contains(&Need::Libclang) && find_libclang().is_none() {
        missing.push("libclang-dev");
    }
    if cfg!(target_os = "linux") && needs.contains(&Need::Postgres) && find_postgres().is_none() {
        missing.push("postgresql");
    }
    if cfg!(target_os = "linux") && needs.contains(&Need::Strace) && !have("strace") {
        missing.push("strace");
    }
    if cfg!(target_os = "linux") && needs.contains(&Need::Faketime) && !have("faketime") {
        missing.push("faketime");
    }
    if !missing.is_empty() {
        let cmd = format!("apt-get update && apt-get install -y {}", missing.join(" "));
        let is_root = Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
        if is_root && have("apt-get") {
            eprintln!(
                "missing system packages ({}: libclang builds RocksDB's bindings, PostgreSQL runs \
                 the terrane-postgres tests, strace injects the system-call faults, faketime \
                 skews a server's clock): installing them with apt-get",
                missing.join(", ")
            );
            run(Command::new("apt-get").args(["update", "-q"]))?;
            run(Command::new("apt-get")
                .args(["install", "-y", "-q", "--no-install-recommends"])
                .args(&missing)
                .env("DEBIAN_FRONTEND", "noninteractive"))?;
            if needs.contains(&Need::Libclang) && find_libclang().is_none() {
                return Err("libclang-dev installed but libclang.so still not found".into());
            }
            if needs.contains(&Need::Postgres) && find_postgres().is_none() {
                return Err("postgresql installed but no /usr/lib/postgresql/*/bin/initdb".into());
            }
            if needs.contains(&Need::Strace) && !have("strace") {
                return Err("strace installed but not on the PATH".into());
            }
            if needs.contains(&Need::Faketime) && !have("faketime") {
                return Err("faketime installed but not on the PATH".into());
            }
        } else {
            return Err(format!(
                "missing system packages: {}.\n\
                 libclang builds RocksDB's bindings; PostgreSQL's server runs the terrane-postgres \
                 tests; strace injects the system-call faults; faketime skews a server's clock. \
                 Install them with:\n    sudo sh -c '{cmd}'\n\
                 (or set LIBCLANG_PATH to the folder holding libclang.so)",
                missing.join(", ")
            ));
        }
    }
    if let Some(p) = find_libclang() {
        eprintln!("prerequisites: libclang at {}", p.display());
    }
    if let Some(p) = find_postgres().filter(|_| needs.contains(&Need::Postgres)) {
        eprintln!("prerequisites: PostgreSQL server at {}", p.display());
    }
    Ok(())
}

/// amulet-core, the reader users trust for Bedrock and Java worlds, pinned, in a virtual
/// environment the Bedrock and Java export tests run (`crates/terrane/tests/bedrock.rs`).
const AMULET: &[&str] = &[
    "amulet-core==1.9.50",
    "amulet-nbt==2.1.8",
    "amulet-leveldb==1.0.7",
    "pymctranslate==1.2.52",
    "numpy==1.26.4",
];

/// The virtual environment's folder: `~/.cache/terrane/amulet-venv` (where the tests look
/// unless `TERRANE_AMULET_PYTHON` names another Python).
pub fn amulet_venv() -> PathBuf {
    PathBuf::from(env::var_os("HOME").unwrap_or_default()).join(".cache/terrane/amulet-venv")
}

/// Installs amulet-core into [`amulet_venv`] when it is not there yet.
pub fn amulet() -> Result {
    let python = match env::var_os("TERRANE_AMULET_PYTHON") {
        Some(p) => PathBuf::from(p),
        None => amulet_venv().join("bin/python"),
    };
    let works = |p: &Path| {
        Command::new(p)
            .args(["-c", "import amulet, leveldb"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if works(&python) {
        eprintln!("prerequisites: amulet-core at {}", python.display());
        return Ok(());
    }
    if env::var_os("TERRANE_AMULET_PYTHON").is_some() {
        return Err(format!("TERRANE_AMULET_PYTHON={} cannot import amulet", python.display()));
    }
    let venv = amulet_venv();
    eprintln!(
        "missing amulet-core (the Bedrock and Java export tests read exports with it): installing it into {}",
        venv.display()
    );
    let _ = fs::remove_dir_all(&venv);
    let hint = format!(
        "python3 -m venv {v} && {v}/bin/pip install {}  (needs python3 with venv and headers, and g++)",
        AMULET.join(" "),
        v = venv.display()
    );
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv))
        .map_err(|e| format!("{e}\ncould not create the virtual environment; by hand: {hint}"))?;
    run(Command::new(venv.join("bin/pip")).args(["install", "-q"]).args(AMULET))
        .map_err(|e| format!("{e}\ncould not install amulet-core; by hand: {hint}"))?;
    if !works(&python) {
        return Err(format!("amulet-core installed but `import amulet` fails; by hand: {hint}"));
    }
    Ok(())
}

/// The newest `/usr/lib/postgresql/<version>/bin` holding `initdb` (Debian's layout).
fn find_postgres() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").exists())
        .collect();
    found.sort();
    found.pop()
}

fn find_libclang() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Ok(p) = env::var("LIBCLANG_PATH") {
        dirs.push(p.into());
    }
    if let Ok(entries) = fs::read_dir("/usr/lib") {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with("llvm") {
                dirs.push(e.path().join("lib"));
            }
        }
    }
    for d in [
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
        "/usr/local/lib",
    ] {
        dirs.push(d.into());
    }
    dirs.into_iter().find_map(|d| {
        fs::read_dir(&d).ok()?.flatten().map(|e| e.path()).find(|p| {
            let n = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            n.starts_with("libclang") && !n.starts_with("libclang-cpp") && n.contains(".so")
        })
    })
}

/// The folder of the real-client test's Node modules: `~/.cache/terrane/node` (where
/// `crates/cli/tests/serve.rs` looks unless `TERRANE_NODE_MODULES` names other modules).
fn node_dir() -> PathBuf {
    PathBuf::from(env::var_os("HOME").unwrap_or_default()).join(".cache/terrane/node")
}

/// Installs mineflayer and minecraft-protocol, pinned by
/// `crates/valence/tests/bots/package-lock.json`, into [`node_dir`] with `npm ci` when they
/// are missing or the lock file changed: the client of `crates/cli/tests/serve.rs`.
fn node_modules() -> Result {
    if env::var_os("TERRANE_NODE_MODULES").is_some() {
        return Ok(());
    }
    let bots = root().join("crates/valence/tests/bots");
    let dir = node_dir();
    let lock = fs::read(bots.join("package-lock.json"))
        .map_err(|e| format!("{}: {e}", bots.join("package-lock.json").display()))?;
    let installed = fs::read(dir.join("package-lock.json")).ok();
    if installed.as_ref() == Some(&lock)
        && dir.join("node_modules/mineflayer/package.json").exists()
    {
        eprintln!("prerequisites: mineflayer at {}", dir.join("node_modules").display());
        return Ok(());
    }
    let hint = format!(
        "mkdir -p {d} && cp {b}/package.json {b}/package-lock.json {d}/ && npm ci --prefix {d} \
         --ignore-scripts",
        d = dir.display(),
        b = bots.display()
    );
    if !have("node") || !have("npm") {
        return Err(format!(
            "missing Node.js (20 or later) and npm: the real-client test of `terrane serve` \
             runs mineflayer on it. Install them (`apt-get install nodejs npm`), then: {hint}"
        ));
    }
    eprintln!(
        "missing mineflayer (the real-client test of `terrane serve` plays with it): installing \
         it into {}",
        dir.display()
    );
    let _ = fs::remove_dir_all(dir.join("node_modules"));
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for f in ["package.json", "package-lock.json"] {
        fs::copy(bots.join(f), dir.join(f))
            .map_err(|e| format!("{}: {e}", bots.join(f).display()))?;
    }
    run(Command::new("npm")
        .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix"])
        .arg(&dir))
    .map_err(|e| format!("{e}\ncould not install mineflayer; by hand: {hint}"))
}

/// The minecraft-data release the block-state table is generated from: the one
/// `crates/valence/tests/bots/package-lock.json` pins (`crates/bedrock/data/SOURCES.md`).
const MINECRAFT_DATA: &str = "3.119.0";

/// Regenerates `crates/bedrock/data/java-bedrock.tsv.gz` with
/// `crates/bedrock/tables/generate.js` and `crates/valence/data/older-states.tsv` with
/// `crates/valence/tables/generate.js` from the pinned minecraft-data package (installed with
/// the real-client test's Node modules).
fn tables() -> Result {
    node_modules()?;
    let modules = match env::var_os("TERRANE_NODE_MODULES") {
        Some(m) => PathBuf::from(m),
        None => node_dir().join("node_modules"),
    };
    let pkg = modules.join("minecraft-data");
    let manifest = fs::read_to_string(pkg.join("package.json"))
        .map_err(|e| format!("{}: {e}", pkg.join("package.json").display()))?;
    if !manifest.contains(&format!("\"version\": \"{MINECRAFT_DATA}\"")) {
        return Err(format!(
            "{} is not minecraft-data {MINECRAFT_DATA}, the release the table is pinned to",
            pkg.display()
        ));
    }
    let bedrock = root().join("crates/bedrock");
    run(Command::new("node")
        .arg(bedrock.join("tables/generate.js"))
        .arg(&pkg)
        .arg(bedrock.join("data/java-bedrock.tsv.gz")))?;
    let valence = root().join("crates/valence");
    run(Command::new("node")
        .arg(valence.join("tables/generate.js"))
        .arg(&pkg)
        .arg(valence.join("data/older-states.tsv")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// A typo must not start a long run with the defaults: unknown flags and flags missing
    /// their value are command-line errors (exit status 2); whatever follows `--` is passed on.
    #[test]
    fn unknown_flags_are_usage_errors() {
        let check = |s: &str| known_flags(&args(s), &["--kills"], &["--all"]);
        assert_eq!(check("--kills 5 --all -- --anything"), Ok(()));
        for bad in ["--kill 5", "--kills", "-x"] {
            let e = check(bad).unwrap_err();
            assert!(e.starts_with(USAGE), "{bad}: {e}");
        }
        assert!(!"plain failure".starts_with(USAGE));
    }

    /// `cargo xtask demo` installs only what builds the command; the tests' tools (PostgreSQL,
    /// strace, faketime, and amulet-core, which only `prereqs` installs) are not the main
    /// job's.
    #[test]
    fn the_demo_needs_only_what_builds_the_command() {
        assert!(DEMO_NEEDS == [Need::Libclang]);
        assert!(
            TEST_NEEDS.iter().all(|n| [
                Need::Libclang,
                Need::Postgres,
                Need::Strace,
                Need::Faketime
            ]
            .contains(n))
        );
        let source = fs::read_to_string(root().join("xtask/src/main.rs")).expect("main.rs");
        let demo = source.split("fn demo(").nth(1).expect("fn demo").split("\n}\n").next();
        let demo = demo.expect("its body");
        assert!(demo.contains("system_packages(DEMO_NEEDS)"), "{demo}");
        assert!(!demo.contains("prereqs()") && !demo.contains("amulet()"), "{demo}");
    }
}
