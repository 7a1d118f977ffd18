//! `cargo xtask bench`: run criterion and print the headline figures it wrote.

use std::fs;
use std::path::Path;

use crate::{Result, cargo, root, run};

/// Runs the benches of one package (or all) and prints a table read back from
/// `target/criterion/**/new/{estimates,benchmark}.json`.
pub fn task(rest: &[String]) -> Result {
    let (ours, passthrough) = match rest.iter().position(|a| a == "--") {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let mut cmd = cargo();
    cmd.arg("bench");
    match ours.first() {
        Some(pkg) => cmd.args(["-p", pkg]),
        None => cmd.arg("--workspace"),
    };
    cmd.arg("--").args(passthrough);
    let started = std::time::SystemTime::now();
    run(&mut cmd)?;
    let dir = target_dir().join("criterion");
    let mut rows = Vec::new();
    collect(&dir, &mut rows, started);
    rows.sort();
    print_table(&rows);
    Ok(())
}

/// The cargo target directory (honours `CARGO_TARGET_DIR`).
pub fn target_dir() -> std::path::PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(p) => p.into(),
        None => root().join("target"),
    }
}

struct Row {
    id: String,
    mean_ns: f64,
    throughput: Option<(String, f64)>,
}

impl PartialEq for Row {
    fn eq(&self, o: &Self) -> bool {
        self.id == o.id
    }
}
impl Eq for Row {}
impl PartialOrd for Row {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Row {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.id.cmp(&o.id)
    }
}

fn collect(dir: &Path, rows: &mut Vec<Row>, since: std::time::SystemTime) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if !p.is_dir() {
            continue;
        }
        if p.file_name().is_some_and(|n| n == "new") {
            let est = p.join("estimates.json");
            let fresh = fs::metadata(&est).and_then(|m| m.modified()).is_ok_and(|t| t >= since);
            if fresh && let Some(row) = read_row(&p) {
                rows.push(row);
            }
        } else {
            collect(&p, rows, since);
        }
    }
}

fn number_after(text: &str, key: &str) -> Option<f64> {
    let at = text.find(key)? + key.len();
    let tail = text[at..].trim_start_matches([':', ' ', '"']);
    let end =
        tail.find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | 'e' | 'E' | '+')))?;
    tail[..end].parse().ok()
}

fn read_row(new_dir: &Path) -> Option<Row> {
    let est = fs::read_to_string(new_dir.join("estimates.json")).ok()?;
    let mean = est.find("\"mean\"").map(|i| &est[i..])?;
    let mean_ns = number_after(mean, "\"point_estimate\"")?;
    let bench = fs::read_to_string(new_dir.join("benchmark.json")).unwrap_or_default();
    let id = bench
        .split("\"full_id\":\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .map(str::to_string)
        .unwrap_or_else(|| new_dir.parent().unwrap().display().to_string());
    let throughput = ["Bytes", "BytesDecimal", "Elements"].iter().find_map(|k| {
        let key = format!("\"{k}\"");
        let tp = bench.find("\"throughput\"").map(|i| &bench[i..])?;
        number_after(tp, &key).map(|n| (k.to_string(), n))
    });
    Some(Row { id, mean_ns, throughput })
}

fn human_time(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.1} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn human_rate(kind: &str, per_iter: f64, ns: f64) -> String {
    let per_s = per_iter / (ns / 1e9);
    if kind == "Elements" {
        if per_s >= 1e6 {
            format!("{:.2} M elem/s", per_s / 1e6)
        } else {
            format!("{:.1} K elem/s", per_s / 1e3)
        }
    } else {
        format!("{:.1} MiB/s", per_s / (1024.0 * 1024.0))
    }
}

fn print_table(rows: &[Row]) {
    if rows.is_empty() {
        println!("no criterion results were written by this run");
        return;
    }
    let w = rows.iter().map(|r| r.id.len()).max().unwrap_or(10).max(9);
    println!("\n| {:w$} | {:>12} | {:>18} |", "benchmark", "mean", "throughput");
    println!("|{}|{}|{}|", "-".repeat(w + 2), "-".repeat(14), "-".repeat(20));
    for r in rows {
        let tp =
            r.throughput.as_ref().map(|(k, n)| human_rate(k, *n, r.mean_ns)).unwrap_or_default();
        println!("| {:w$} | {:>12} | {:>18} |", r.id, human_time(r.mean_ns), tp);
    }
}
