//! `cargo xtask fuzz`: cargo-fuzz on the nightly toolchain (`fuzz/` holds the targets).

use std::process::Command;

use crate::{Result, cargo, flag_value, root, run};

/// Lists the targets in `fuzz/Cargo.toml` (`[[bin]] name = ...`).
pub fn targets() -> Vec<String> {
    let manifest = std::fs::read_to_string(root().join("fuzz/Cargo.toml")).unwrap_or_default();
    let mut out = Vec::new();
    let mut in_bin = false;
    for line in manifest.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            in_bin = l == "[[bin]]";
        } else if in_bin && let Some(v) = l.strip_prefix("name = \"") {
            out.push(v.trim_end_matches('"').to_string());
        }
    }
    out
}

/// Read-only seed folders of a target: `fuzz/seeds/<target>` (small inputs of our own, e.g.
/// the golden chunks) and, for decoders of other tools' files, the repository's fixture folder
/// itself (`testdata/`; read in place, never copied into the corpus).
fn seed_dirs(target: &str) -> Result<Vec<std::path::PathBuf>> {
    let mut dirs = vec![root().join("fuzz/seeds").join(target)];
    if target == "chunk_edit" {
        // The golden chunks of chunk_decode, each behind a zero edit count (the target's input
        // is `[n_ops] chunk [ops]`), written under fuzz/target (never committed).
        let dir = root().join("fuzz/target/seeds-chunk_edit");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let golden = root().join("fuzz/seeds/chunk_decode");
        for e in std::fs::read_dir(&golden).map_err(|e| format!("{}: {e}", golden.display()))? {
            let path = e.map_err(|e| e.to_string())?.path();
            let mut bytes = vec![0u8];
            bytes.extend(std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?);
            let out = dir.join(path.file_name().unwrap_or_default());
            std::fs::write(&out, bytes).map_err(|e| format!("{}: {e}", out.display()))?;
        }
        dirs.push(dir);
    }
    // The real files other tools wrote, from the repository's testdata/ (testdata/SOURCES.md).
    let fixtures = match target {
        "schem_read" => Some("schem"),
        "anvil_region" => Some("anvil"),
        "nbt_read" => Some("chunk-nbt"),
        _ => None,
    };
    if let Some(f) = fixtures {
        let dir = root().join("testdata").join(f);
        if !dir.is_dir() {
            return Err(format!(
                "{} is missing: it is part of the repository (`git checkout -- testdata`)",
                dir.display()
            ));
        }
        dirs.push(dir);
    }
    dirs.retain(|d| d.is_dir());
    Ok(dirs)
}

/// How a target is built: cargo-fuzz's defaults (AddressSanitizer and traced comparisons) suit
/// decoders that must guess magic numbers and lengths; targets whose executions walk long
/// loops (every cell of a chunk, every sector of a region, every neighbour of a section) spend
/// most of their time in the tracing instead, and run 2–8 times as many inputs a second
/// without it, at equal or higher coverage (figures: docs/RELIABILITY.md, Fuzzing). Each build
/// has its own target directory.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Build {
    /// AddressSanitizer and traced comparisons.
    Full,
    /// AddressSanitizer without traced comparisons: hostile bytes still reach the inflaters'
    /// unsafe code, which the sanitizer watches.
    Untraced,
    /// Neither: pure logic over terrane's own code, whose only unsafe code is one call into
    /// the chunk's AVX2 bulk read (which touches memory through safe slices only), so the
    /// sanitizer has nothing of ours to watch.
    Plain,
}

impl Build {
    fn of(target: &str) -> Self {
        match target {
            "anvil_region" | "schem_read" => Self::Untraced,
            "regionizer_ops" | "regionizer_replay" | "chunk_edit" | "window_clicks" => Self::Plain,
            _ => Self::Full,
        }
    }

    /// cargo-fuzz flags (`nightly`: whether sanitizers are available at all).
    fn flags(self, nightly: bool) -> Vec<String> {
        let mut out = Vec::new();
        if !nightly || self == Self::Plain {
            out.extend(["-s".into(), "none".into()]);
        }
        let dir = match self {
            Self::Full => return out,
            Self::Untraced => "untraced",
            Self::Plain => "plain",
        };
        out.push("--no-trace-compares".into());
        out.push("--target-dir".into());
        out.push(root().join("fuzz/target").join(dir).display().to_string());
        out
    }
}

/// libFuzzer bounds shared by runs and minimisation: 4 GiB of memory, and inputs up to 8 KiB
/// (12 KiB for region files: the 8 KiB header and a sector), so that the committed corpus
/// stays small (a compressed input of that size still declares gigabytes). Replay logs stop
/// at 2 KiB (about 200 operations): the replay prints the whole state after every operation,
/// so an execution costs the square of its length, and its runs slowed from 3 k to 0.7 k a
/// second as libFuzzer let the inputs grow towards 8 KiB.
fn libfuzzer_bounds(target: &str) -> [String; 2] {
    let max_len = match target {
        "anvil_region" => 12 << 10,
        "regionizer_replay" => 2 << 10,
        // A configuration byte and at most 256 operations of up to 4 bytes: the rest is never
        // read, and mutating it wastes executions.
        "regionizer_ops" => 1 + 4 * 256,
        // A header byte, 74 starting slots and at most 512 clicks of 3 bytes.
        "window_clicks" => 1 + 74 + 3 * 512,
        _ => 8 << 10,
    };
    [format!("-max_len={max_len}"), "-rss_limit_mb=4096".to_string()]
}

/// Runs `cmd` with its output in `fuzz/target/<name>.log` (libFuzzer prints a line per new
/// input); on failure, prints the log's end and fails.
fn logged(cmd: &mut Command, name: &str) -> Result<String> {
    let dir = root().join("fuzz/target");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(format!("{name}.log"));
    let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let err = file.try_clone().map_err(|e| e.to_string())?;
    let shown = format!("{cmd:?}").replace('"', "");
    eprintln!("\n$ {shown}  (log: {})", path.display());
    let status = cmd
        .current_dir(root())
        .stdout(file)
        .stderr(err)
        .status()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    let log = std::fs::read_to_string(&path).unwrap_or_default();
    if !status.success() {
        let lines: Vec<&str> = log.lines().collect();
        for l in &lines[lines.len().saturating_sub(40)..] {
            eprintln!("  {l}");
        }
        return Err(format!("`{shown}` failed ({status}); log: {}", path.display()));
    }
    Ok(log)
}

/// The runs of libFuzzer's parallel workers (`fuzz-<i>.log` in the directory they ran in),
/// added up, their logs appended to the target's log and removed.
fn worker_stats(target: &str, jobs: u32) -> Result<RunStats> {
    let mut total = RunStats { cov_start: u64::MAX, ..RunStats::default() };
    let main_log = root().join("fuzz/target").join(format!("{target}.log"));
    let mut all = std::fs::read_to_string(&main_log).unwrap_or_default();
    for i in 0..jobs {
        let path = root().join(format!("fuzz-{i}.log"));
        let log = std::fs::read_to_string(&path).map_err(|e| {
            format!("{}: {e} (libFuzzer's worker {i} wrote no log)", path.display())
        })?;
        let run = RunStats::parse(&log);
        total.execs += run.execs;
        total.cov_start = total.cov_start.min(run.cov_start);
        total.cov_end = total.cov_end.max(run.cov_end);
        all.push_str(&format!("\n==== worker {i} ====\n{log}"));
        std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    std::fs::write(&main_log, all).map_err(|e| format!("{}: {e}", main_log.display()))?;
    Ok(total)
}

/// Files and bytes in a corpus folder.
fn corpus_size(dir: &std::path::Path) -> (usize, u64) {
    let Ok(rd) = std::fs::read_dir(dir) else { return (0, 0) };
    rd.flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .fold((0, 0), |(n, b), m| (n + 1, b + m.len()))
}

/// One libFuzzer run, read from its log.
#[derive(Debug, Default, PartialEq)]
struct RunStats {
    execs: u64,
    cov_start: u64,
    cov_end: u64,
}

impl RunStats {
    /// Reads one libFuzzer process's log (with `--jobs`, each worker's).
    fn parse(log: &str) -> Self {
        let mut s = RunStats::default();
        for line in log.lines() {
            if let Some(v) = line.strip_prefix("stat::number_of_executed_units:") {
                s.execs = v.trim().parse().unwrap_or(0);
            }
            if let Some(i) = line.find(" cov: ") {
                let n = line[i + 6..].split_whitespace().next().and_then(|n| n.parse().ok());
                let n = n.unwrap_or(0);
                if line.contains("INITED") {
                    s.cov_start = n;
                }
                s.cov_end = s.cov_end.max(n);
            }
        }
        s
    }
}

/// Executions per target over every run, committed in `fuzz/stats.tsv` so that runs add up:
/// `target`, `execs`, `runs`, `cov` (the coverage in edges the last run reached) and `crashes`
/// (runs that stopped on a crash, a leak, an out-of-memory input or a timeout; libFuzzer kept
/// the input in `fuzz/artifacts/<target>`). A file of the first four columns reads with no
/// crashes: until the fifth was added, a run that stopped on one was not counted at all.
struct Stats(std::collections::BTreeMap<String, Totals>);

/// One target's line of `fuzz/stats.tsv`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Totals {
    execs: u64,
    runs: u64,
    cov: u64,
    crashes: u64,
}

impl Stats {
    fn path() -> std::path::PathBuf {
        root().join("fuzz/stats.tsv")
    }

    fn load() -> Self {
        Self::parse(&std::fs::read_to_string(Self::path()).unwrap_or_default())
    }

    fn parse(text: &str) -> Self {
        let mut m = std::collections::BTreeMap::new();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split('\t').collect();
            let n = |s: &str| s.parse().unwrap_or(0);
            let (t, execs, runs, cov, crashes) = match f[..] {
                [t, e, r, c] => (t, n(e), n(r), n(c), 0),
                [t, e, r, c, x] => (t, n(e), n(r), n(c), n(x)),
                _ => continue,
            };
            m.insert(t.to_string(), Totals { execs, runs, cov, crashes });
        }
        Stats(m)
    }

    /// Adds a run (`crashes`: how many it stopped on, 0 or 1); returns the target's total
    /// executions.
    fn add(&mut self, target: &str, execs: u64, cov: u64, crashes: u64) -> u64 {
        let e = self.0.entry(target.to_string()).or_default();
        *e = Totals { execs: e.execs + execs, runs: e.runs + 1, cov, crashes: e.crashes + crashes };
        e.execs
    }

    fn to_text(&self) -> String {
        let mut out = String::from("target\texecs\truns\tcov\tcrashes\n");
        for (t, s) in &self.0 {
            out.push_str(&format!("{t}\t{}\t{}\t{}\t{}\n", s.execs, s.runs, s.cov, s.crashes));
        }
        out
    }

    fn save(&self) -> Result {
        std::fs::write(Self::path(), self.to_text()).map_err(|e| format!("fuzz/stats.tsv: {e}"))
    }
}

/// The inputs a libFuzzer log says it kept because the run stopped on them (`crash-`, `leak-`,
/// `oom-`, `timeout-`; not `slow-unit-`, which a run writes and goes on).
fn stopping_artifacts(log: &str) -> usize {
    log.lines()
        .filter_map(|l| l.split("Test unit written to ").nth(1))
        .filter(|path| {
            let name = path.trim().rsplit('/').next().unwrap_or("");
            ["crash-", "leak-", "oom-", "timeout-"].iter().any(|p| name.starts_with(p))
        })
        .count()
}

/// `1234567` as `1 234 567`, the way the docs write large counts.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// Bytes as `N B`, `N KiB` (rounded) or `N.N MiB`.
fn size(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1 << 20 {
        format!("{} KiB", (bytes + 512) / 1024)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

/// The fuzzing table of `docs/RELIABILITY.md`, rendered from what the repository holds:
/// `fuzz/stats.tsv` (executions, runs, coverage, crashes) and the committed corpora
/// (`fuzz/corpus/<target>`: files and bytes), one row per target of `fuzz/Cargo.toml`, then
/// the totals. `cargo xtask fuzz --table` prints it; a tidy test keeps the document equal to it.
pub fn table() -> String {
    table_from(&Stats::load(), &targets(), &|t| corpus_size(&root().join("fuzz/corpus").join(t)))
}

fn table_from(stats: &Stats, targets: &[String], corpus: &dyn Fn(&str) -> (usize, u64)) -> String {
    let mut names: Vec<String> = targets.to_vec();
    for t in stats.0.keys() {
        if !names.contains(t) {
            names.push(t.clone());
        }
    }
    names.sort();
    let mut out = String::from(
        "| target | executions | runs | coverage (edges, last run) | corpus files | corpus size | crashes |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut sum = Totals::default();
    let (mut files, mut bytes) = (0, 0);
    for t in &names {
        let s = stats.0.get(t).copied().unwrap_or_default();
        let (f, b) = corpus(t);
        out.push_str(&format!(
            "| {t} | {} | {} | {} | {} | {} | {} |\n",
            grouped(s.execs),
            s.runs,
            s.cov,
            grouped(f as u64),
            size(b),
            s.crashes
        ));
        sum.execs += s.execs;
        sum.runs += s.runs;
        sum.crashes += s.crashes;
        files += f as u64;
        bytes += b;
    }
    out.push_str(&format!(
        "| all {} targets | {} | {} | | {} | {} | {} |\n",
        names.len(),
        grouped(sum.execs),
        sum.runs,
        grouped(files),
        size(bytes),
        sum.crashes
    ));
    out
}

fn nightly_available() -> bool {
    Command::new("rustup")
        .args(["run", "nightly", "rustc", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn ensure_cargo_fuzz() -> Result {
    let ok = cargo().args(["fuzz", "--version"]).output().is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("cargo-fuzz is missing: installing it with `cargo install cargo-fuzz --locked`");
        run(cargo().args(["install", "cargo-fuzz", "--locked"]))?;
    }
    Ok(())
}

/// `fuzz <target> [--seconds N] [--jobs N]`, `fuzz --all [--seconds N]`, `fuzz --list`,
/// `fuzz --table`.
pub fn task(rest: &[String]) -> Result {
    crate::known_flags(rest, &["--seconds", "--jobs"], &["--all", "--list", "--table"])?;
    let all = targets();
    if rest.iter().any(|a| a == "--list") {
        for t in &all {
            println!("{t}");
        }
        return Ok(());
    }
    if rest.iter().any(|a| a == "--table") {
        print!("{}", table());
        return Ok(());
    }
    let seconds = flag_value(rest, "--seconds").unwrap_or_else(|| "30".into());
    // More than one job: libFuzzer's parallel mode, one whole fuzzing process per job (one
    // per core), each adding what it finds to the one corpus and reloading what the others
    // add, so a slow target's executions add up faster. (Its fork mode restarts a process per
    // short job over a part of the corpus: on `regionizer_ops`, two jobs ran 1.15x one
    // process.)
    let jobs = match flag_value(rest, "--jobs") {
        None => 1,
        Some(j) => match j.parse::<u32>() {
            Ok(n) if n >= 1 => n,
            _ => {
                return Err(crate::usage(format!(
                    "--jobs takes a number of at least 1, not `{j}`"
                )));
            }
        },
    };
    let chosen: Vec<String> = if rest.iter().any(|a| a == "--all") {
        all.clone()
    } else {
        let Some(t) = rest.first().filter(|a| !a.starts_with("--")) else {
            return Err(crate::usage(format!(
                "name a fuzz target or --all; targets: {}",
                all.join(", ")
            )));
        };
        if !all.contains(t) {
            return Err(crate::usage(format!("no fuzz target `{t}`; targets: {}", all.join(", "))));
        }
        vec![t.clone()]
    };
    if chosen.is_empty() {
        eprintln!("no fuzz targets yet");
        return Ok(());
    }
    ensure_cargo_fuzz()?;
    let nightly = nightly_available();
    if !nightly {
        eprintln!("nightly toolchain not found: fuzzing on stable without sanitizers (-s none)");
    }
    let mut report = Vec::new();
    for t in &chosen {
        let fuzz = |sub: &str| {
            let mut cmd = Command::new("cargo");
            if nightly {
                cmd.arg("+nightly");
            }
            cmd.args(["fuzz", sub]).args(Build::of(t).flags(nightly));
            cmd.env_remove("CARGO_TARGET_DIR");
            cmd
        };
        // The committed corpus collects the new inputs; the seed folders are read only.
        let corpus = root().join("fuzz/corpus").join(t);
        std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
        let before = corpus_size(&corpus);
        let mut cmd = fuzz("run");
        cmd.arg(t.as_str()).arg(&corpus).args(seed_dirs(t)?);
        cmd.args(["--", &format!("-max_total_time={seconds}"), "-print_final_stats=1"]);
        if jobs > 1 {
            cmd.args([format!("-jobs={jobs}"), format!("-workers={jobs}")]);
        }
        cmd.args(libfuzzer_bounds(t));
        let log = match logged(&mut cmd, t) {
            Ok(log) => log,
            Err(e) => {
                // A run that stopped on a crash counts too: its executions and the crash.
                let run = if jobs > 1 {
                    worker_stats(t, jobs).unwrap_or_default()
                } else {
                    RunStats::default()
                };
                let path = root().join("fuzz/target").join(format!("{t}.log"));
                let log = std::fs::read_to_string(&path).unwrap_or_default();
                let crashes = stopping_artifacts(&log) as u64;
                if crashes > 0 {
                    let run = if jobs > 1 { run } else { RunStats::parse(&log) };
                    let mut stats = Stats::load();
                    stats.add(t, run.execs, run.cov_end, crashes);
                    stats.save()?;
                }
                return Err(e);
            }
        };
        let run = if jobs > 1 { worker_stats(t, jobs)? } else { RunStats::parse(&log) };
        // Keep the committed corpus minimal: only inputs that add coverage stay.
        let mut cmin = fuzz("cmin");
        cmin.arg(t.as_str()).arg(&corpus).arg("--").args(libfuzzer_bounds(t));
        logged(&mut cmin, &format!("{t}-cmin"))?;
        let after = corpus_size(&corpus);
        // Read, add and write back at once: two `cargo xtask fuzz` may run side by side (one
        // per core), and neither may write over the other's totals.
        let mut stats = Stats::load();
        let total = stats.add(t, run.execs, run.cov_end, 0);
        stats.save()?;
        report.push(format!(
            "{t:<20} {:>12} execs ({:>8.0}/s)  cov {:>6} -> {:<6}  corpus {} -> {} files ({} KiB)  total {} execs",
            run.execs,
            run.execs as f64 / seconds.parse::<f64>().unwrap_or(1.0).max(1.0),
            run.cov_start,
            run.cov_end,
            before.0,
            after.0,
            after.1 / 1024,
            total
        ));
    }
    eprintln!("\nfuzz report (totals accumulate in fuzz/stats.tsv):");
    for line in &report {
        eprintln!("  {line}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Build, RunStats, Stats};

    #[test]
    fn loop_bound_targets_build_apart_without_traced_comparisons() {
        assert!(Build::of("chunk_decode").flags(true).is_empty());
        assert_eq!(Build::of("chunk_decode").flags(false), ["-s", "none"]);
        let untraced = Build::of("anvil_region").flags(true);
        assert_eq!(untraced[..2], ["--no-trace-compares", "--target-dir"]);
        assert!(untraced[2].ends_with("fuzz/target/untraced"));
        let plain = Build::of("regionizer_ops").flags(false);
        assert_eq!(plain[..3], ["-s", "none", "--no-trace-compares"]);
        assert!(plain[4].ends_with("fuzz/target/plain"));
        // Inputs stop where the quadratic targets become slow or stop reading.
        let max_len = |t: &str| super::libfuzzer_bounds(t)[0].clone();
        assert_eq!(max_len("regionizer_replay"), "-max_len=2048");
        assert_eq!(max_len("regionizer_ops"), "-max_len=1025");
        assert_eq!(max_len("anvil_region"), "-max_len=12288");
        assert_eq!(max_len("chunk_decode"), "-max_len=8192");
        // Every target named in the tables exists.
        let named = ["anvil_region", "schem_read", "regionizer_ops", "regionizer_replay"];
        for t in named.into_iter().chain(["chunk_edit", "window_clicks"]) {
            assert!(super::targets().contains(&t.to_string()), "{t} is not a fuzz target");
        }
    }

    /// `--jobs` takes a number of at least 1, refused as a usage error before anything runs.
    #[test]
    fn jobs_must_be_a_positive_number() {
        for bad in ["0", "x", "-1"] {
            let args: Vec<String> =
                ["regionizer_ops", "--jobs", bad].iter().map(|s| s.to_string()).collect();
            let e = super::task(&args).unwrap_err();
            assert!(e.starts_with(crate::USAGE) && e.contains("--jobs"), "{bad}: {e}");
        }
    }

    #[test]
    fn executions_add_up_across_runs() {
        // The file of four columns (before `crashes`) reads with no crashes.
        let mut s = Stats::parse("target\texecs\truns\tcov\nnbt_read\t100\t1\t50\n");
        assert_eq!(s.add("nbt_read", 40, 60, 0), 140);
        assert_eq!(s.add("chunk_decode", 7, 9, 1), 7);
        let text = s.to_text();
        assert_eq!(
            text,
            "target\texecs\truns\tcov\tcrashes\n\
             chunk_decode\t7\t1\t9\t1\nnbt_read\t140\t2\t60\t0\n"
        );
        assert_eq!(Stats::parse(&text).0, s.0);
    }

    #[test]
    fn the_table_is_rendered_from_the_stats_and_the_corpora() {
        let s = Stats::parse(
            "target\texecs\truns\tcov\tcrashes\na\t12730161\t10\t6016\t0\nb\t96\t1\t83\t1\n",
        );
        let targets = ["a".to_string(), "b".to_string(), "c".to_string()];
        let corpus = |t: &str| match t {
            "a" => (1944, 8_661_956),
            "b" => (12, 96),
            _ => (0, 0),
        };
        assert_eq!(
            super::table_from(&s, &targets, &corpus),
            "| target | executions | runs | coverage (edges, last run) | corpus files | corpus size | crashes |\n\
             |---|---:|---:|---:|---:|---:|---:|\n\
             | a | 12 730 161 | 10 | 6016 | 1 944 | 8.3 MiB | 0 |\n\
             | b | 96 | 1 | 83 | 12 | 96 B | 1 |\n\
             | c | 0 | 0 | 0 | 0 | 0 B | 0 |\n\
             | all 3 targets | 12 730 257 | 11 | | 1 956 | 8.3 MiB | 1 |\n"
        );
        assert_eq!(super::size(16_552), "16 KiB");
    }

    #[test]
    fn runs_that_stop_on_a_crash_are_told_from_slow_inputs() {
        let log = "Test unit written to ./slow-unit-ab\n\
                   ==1== ERROR: libFuzzer: deadly signal\n\
                   artifact_prefix='fuzz/artifacts/t/'; Test unit written to fuzz/artifacts/t/crash-4846ab\n";
        assert_eq!(super::stopping_artifacts(log), 1);
        assert_eq!(super::stopping_artifacts("Test unit written to x/slow-unit-1\n"), 0);
    }

    #[test]
    fn run_stats_read_libfuzzer_logs() {
        let log = "INFO: Seed: 1\n#2\tINITED cov: 120 ft: 130 corp: 3/40b exec/s: 0 rss: 30Mb\n\
                   #64\tNEW    cov: 131 ft: 150 corp: 4/50b lim: 4 exec/s: 0 rss: 30Mb\n\
                   #9000\tDONE   cov: 140 ft: 170 corp: 6/80b lim: 4 exec/s: 3000 rss: 31Mb\n\
                   Done 9000 runs in 3 second(s)\nstat::number_of_executed_units: 9000\n";
        assert_eq!(RunStats::parse(log), RunStats { execs: 9000, cov_start: 120, cov_end: 140 });
    }
}
