//! `cargo xtask bench`: run criterion and print the headline figures it wrote.

use std::fs;
use std::path::Path;

use crate::{Result, cargo, run};

/// Runs the benches of one package (or all) and prints a table read back from
/// `target/criterion/**/new/{estimates,benchmark}.json`.
pub fn task(rest: &[String]) -> Result {
    let (ours, passthrough) = match rest.iter().position(|a| a == "--") {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let mut cmd = cargo();
    crate::rocksdb::link_dev_archive(&mut cmd)?;
    // Every peer row (RocksDB, PostgreSQL) is behind a feature of the benches package.
    cmd.args(["bench", "--all-features"]);
    match ours.first() {
        Some(pkg) => cmd.args(["-p", pkg]),
        None => cmd.arg("--workspace"),
    };
    cmd.arg("--").args(passthrough);
    let started = std::time::SystemTime::now();
    run(&mut cmd)?;
    let dir = crate::rocksdb::target_dir()?.join("criterion");
    let mut rows = Vec::new();
    collect(&dir, &mut rows, started);
    rows.sort();
    print_table(&rows);
    Ok(())
}

struct Row {
    id: String,
    mean_ns: f64,
    throughput: Option<(String, f64)>,
    /// The row's place among its peers: (group and parameter, operation, implementation).
    slot: (String, String, String),
}

/// Splits a bench id into (group + parameter + operation, variant, implementation): the
/// implementation is the function id's last segment up to its first `_` (`terrane`,
/// `naive`, `mc`, `fastanvil`, `worldedit`...), the variant the rest of that segment, the
/// operation the function id's segments before it.
fn slot(group: &str, function: &str, value: &str) -> (String, String, String) {
    let (prefix, last) = function.rsplit_once('/').unwrap_or(("", function));
    let (imp, rest) = last.split_once('_').unwrap_or((last, ""));
    (format!("{group}|{value}|{prefix}"), rest.to_string(), imp.to_string())
}

/// For each peer row, the terrane row it is measured against: the same group, parameter and
/// operation, the same variant when there is one (`naive_first64` ↔ `terrane_first64`), else
/// the first such terrane row; in groups without terrane rows, a variant (`encode3_naive`)
/// against its plain row (`encode3`). `peer / base` is how many times faster the base is.
fn ratios(rows: &[Row]) -> Vec<Option<f64>> {
    rows.iter()
        .map(|r| {
            if r.slot.2 == "terrane" {
                return None;
            }
            let same_group = |o: &&Row| o.slot.0 == r.slot.0 && o.slot.2 == "terrane";
            let base = rows
                .iter()
                .filter(same_group)
                .find(|o| o.slot.1 == r.slot.1)
                .or_else(|| rows.iter().find(same_group))
                // A variant of a plain row: `encode3_naive_bitwise` against `encode3`.
                .or_else(|| {
                    rows.iter().find(|o| {
                        o.slot.0 == r.slot.0
                            && o.slot.2 == r.slot.2
                            && o.slot.1.is_empty()
                            && !r.slot.1.is_empty()
                    })
                })?;
            Some(r.mean_ns / base.mean_ns)
        })
        .collect()
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
    let field = |key: &str| {
        bench
            .split(&format!("\"{key}\":\""))
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap_or_default()
            .to_string()
    };
    let slot = slot(&field("group_id"), &field("function_id"), &field("value_str"));
    Some(Row { id, mean_ns, throughput, slot })
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
    println!(
        "\n| {:w$} | {:>12} | {:>18} | {:>16} |",
        "benchmark", "mean", "throughput", "terrane is"
    );
    println!("|{}|{}|{}|{}:|", "-".repeat(w + 2), "-".repeat(14), "-".repeat(20), "-".repeat(17));
    for (r, ratio) in rows.iter().zip(ratios(rows)) {
        let tp =
            r.throughput.as_ref().map(|(k, n)| human_rate(k, *n, r.mean_ns)).unwrap_or_default();
        let ratio = match ratio {
            Some(x) if x >= 1.0 => format!("{x:.2}× faster"),
            Some(x) => format!("{:.2}× slower", 1.0 / x),
            None => String::new(),
        };
        println!("| {:w$} | {:>12} | {:>18} | {:>16} |", r.id, human_time(r.mean_ns), tp, ratio);
    }
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load.split_whitespace().next().unwrap_or("?");
    println!(
        "\n\"terrane is\": the peer's mean over the terrane row of the same group and parameter.\n\
         machine: {} {}, {cores} cores, load average {load} (only ratios within one run compare)",
        std::env::consts::OS,
        std::env::consts::ARCH
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(group: &str, function: &str, value: &str, mean_ns: f64) -> Row {
        Row {
            id: format!("{group}/{function}/{value}"),
            mean_ns,
            throughput: None,
            slot: slot(group, function, value),
        }
    }

    #[test]
    fn peers_are_measured_against_the_matching_terrane_row() {
        let rows = [
            row("distance/near_to_far", "terrane_first64", "", 10.0),
            row("distance/near_to_far", "terrane_drain", "", 1000.0),
            row("distance/near_to_far", "naive_first64", "", 500.0),
            row("distance/near_to_far", "naive_drain", "", 1000.0),
            row("distance/nearest", "terrane", "r128", 2.0),
            row("distance/nearest", "naive_hashset", "r128", 6.0),
            row("distance/nearest", "naive_hashset", "r2048", 6.0),
            row("chunk/p1", "decode_read_all/terrane_view", "", 4.0),
            row("chunk/p1", "decode_read_all/mc_nbt", "", 40.0),
            row("chunk/p1", "encode/terrane", "", 1.0),
            row("chunk/p1", "encode/mc_nbt", "", 16.0),
            row("morton", "encode3", "", 2.0),
            row("morton", "encode3_naive_bitwise", "", 30.0),
        ];
        let r = ratios(&rows);
        assert_eq!(r[0], None);
        assert_eq!(r[2], Some(50.0), "first64 against first64, not the drain");
        assert_eq!(r[3], Some(1.0));
        assert_eq!(r[5], Some(3.0));
        assert_eq!(r[6], None, "no terrane row with that parameter");
        assert_eq!(r[8], Some(10.0));
        assert_eq!(r[10], Some(16.0), "encode against encode");
        assert_eq!((r[11], r[12]), (None, Some(15.0)), "a variant against its plain row");
    }
}
