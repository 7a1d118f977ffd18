//! amulet-core, the independent reader of both editions users trust, run from the tests: its
//! Python (which `cargo xtask test` installs), and its agreement with a conversion cell for
//! cell.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Python of a virtual environment with amulet-core, which `cargo xtask test` installs.
pub fn amulet_python() -> PathBuf {
    let p = std::env::var_os("TERRANE_AMULET_PYTHON").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var("HOME").unwrap_or_default())
            .join(".cache/terrane/amulet-venv/bin/python")
    });
    let ok = Command::new(&p)
        .args(["-c", "import amulet, leveldb"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "amulet-core is not installed at {}: run `cargo xtask test` (it installs it), or \
         `python3 -m venv ~/.cache/terrane/amulet-venv && ~/.cache/terrane/amulet-venv/bin/pip \
         install amulet-core==1.9.50`, or set TERRANE_AMULET_PYTHON",
        p.display()
    );
    p
}

/// Copies a folder tree (amulet rewrites `level.dat` and the database of every world it
/// opens: the test data is only ever read through a copy).
pub fn copy_tree(from: &Path, to: &Path) {
    terrane_store::conformance::copy_dir(from, to).unwrap();
}

/// amulet-core's agreement with a conversion, from `agree_editions.py` on copies of both
/// worlds (amulet rewrites what it opens).
pub struct Agreement {
    /// Cells compared.
    pub total: u64,
    /// Cells that agree.
    pub agree: u64,
    /// The most common disagreements: (cells, source's universal block, converted's).
    pub differ: Vec<(u64, String, String)>,
}

pub fn amulet_agreement(source: &Path, converted: &Path) -> Agreement {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("source"), tmp.path().join("converted"));
    copy_tree(source, &a);
    copy_tree(converted, &b);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agree_editions.py");
    let out = Command::new(amulet_python()).arg(script).args([&a, &b]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    println!("{stdout}");
    let line = stdout.lines().find(|l| l.starts_with("agreement: ")).expect("an agreement line");
    let n: Vec<u64> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    let differ = stdout
        .lines()
        .filter_map(|l| {
            let (n, rest) = l.trim_start().split_once("  ")?;
            let (u, v) = rest.split_once("  ->  ")?;
            Some((n.parse().ok()?, u.to_string(), v.to_string()))
        })
        .collect();
    Agreement { total: n[1], agree: n[0], differ }
}

/// Runs amulet-core's comparison of a conversion and fails past the bound: at most one cell in
/// 100,000 may disagree beyond the `approximated` cells the conversion report lists. Those
/// others are liquids amulet's two tables spell differently: Java's `water[level=3]` is not
/// flowing in amulet's universal format while Bedrock's `flowing_water` (the same block, as the
/// table and both games have it) is; 61 of the fixture's 22,118,400 cells.
pub fn assert_amulet_agrees(source: &Path, converted: &Path, approximated: u64, at_least: u64) {
    assert_amulet_agrees_excusing(source, converted, approximated, at_least, &|_, _| false);
}

/// [`assert_amulet_agrees`], not counting the disagreements `excused` names (by the universal
/// blocks amulet-core read from the source and from the conversion): where amulet-core itself
/// reads one block two ways, each caller says which and why.
pub fn assert_amulet_agrees_excusing(
    source: &Path,
    converted: &Path,
    approximated: u64,
    at_least: u64,
    excused: &dyn Fn(&str, &str) -> bool,
) {
    let Agreement { total, agree, differ } = amulet_agreement(source, converted);
    assert!(total > at_least, "{total} cells compared");
    let excused: u64 = differ.iter().filter(|(_, u, v)| excused(u, v)).map(|d| d.0).sum();
    let unexplained = (total - agree).saturating_sub(approximated + excused);
    println!(
        "amulet-core agrees on {:.4} % of {total} cells; {unexplained} disagreements beyond the \
         {approximated} cells reported approximated and {excused} excused",
        100.0 * agree as f64 / total as f64
    );
    assert!(unexplained <= total / 100_000, "{unexplained} unexplained disagreements");
}
