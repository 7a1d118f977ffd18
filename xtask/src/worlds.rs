//! `cargo xtask worlds`: every whole-world command of `terrane` on real-shaped worlds of the
//! given sizes, as whole processes: wall time, columns a second and peak memory (GNU time's
//! maximum resident set), one table row each, the figures of docs/BENCHMARKS.md ("Whole
//! worlds").
//!
//! `terrane trim` is not among them: it compares a world with the generator that made it, and
//! refuses at once a world no terrane generator made.
//!
//! The worlds come from `cargo xtask bigworld` (the finished chunks of testdata's real
//! regions, tiled). Worlds are RocksDB worlds (the default backend, the one for worlds of
//! millions of objects); the block file rewrites its whole index with every batch and is
//! for stores of up to some hundred thousand objects, so it is measured as a copy's
//! destination at up to 4,096 columns only; PostgreSQL is one, on a throwaway server of its
//! own (`pgserver`, Unix socket) at every size. After the first backups, 1 % of the columns
//! change (a layer of the world's own blocks pasted one block higher with `terrane schem`)
//! and the world is backed up again. A row that fails stops the run with its command.
//!
//! With `--amulet`, amulet-core converts the same worlds both ways after terrane, each a row
//! of its own (benches/bedrock/amulet_convert.py, from `cargo xtask test`'s virtual
//! environment).
//!
//! `--only GROUP[,GROUP...]` measures some of the rows, so that the rows of a world too big
//! for one sitting can be measured in several ([`GROUPS`]); the rows a group needs the output
//! of run (and are measured) too. Each row's output is removed once no later row reads it,
//! so a run needs about three times the Java world's size of disk.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Result, cargo, flag_value, known_flags, root, run, usage};

/// One measured command: its label, wall seconds and peak resident memory in KiB.
struct Row {
    label: String,
    columns: u64,
    wall: f64,
    peak_kib: u64,
}

/// Runs `program args` under `/usr/bin/time`, its output to `log`, and reads the figures.
fn timed(label: &str, columns: u64, program: &Path, args: &[&str], log: &Path) -> Result<Row> {
    let figures = log.with_extension("time");
    let shown = format!("{} {}", program.display(), args.join(" "));
    eprintln!("$ {shown}");
    let out = fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let status = Command::new("/usr/bin/time")
        .args(["-f", "%e %M", "-o"])
        .arg(&figures)
        .arg(program)
        .args(args)
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|e| {
            format!("cannot start /usr/bin/time ({e}): install GNU time (`apt-get install time`)")
        })?;
    if !status.success() {
        let text = fs::read_to_string(log).unwrap_or_default();
        return Err(format!("`{shown}` failed ({status}):\n{text}"));
    }
    let text = fs::read_to_string(&figures).map_err(|e| format!("{}: {e}", figures.display()))?;
    let mut it = text.split_whitespace();
    let wall = it.next().and_then(|w| w.parse().ok()).ok_or("no wall time from /usr/bin/time")?;
    let peak_kib = it.next().and_then(|w| w.parse().ok()).ok_or("no peak from /usr/bin/time")?;
    eprintln!("  {wall:.2} s, {:.1} MiB", peak_kib as f64 / 1024.0);
    Ok(Row { label: label.into(), columns, wall, peak_kib })
}

/// The groups of rows `--only` takes: both conversions; both imports (the Bedrock world from
/// `convert --to bedrock`); both exports (of the world `import anvil` makes); and the
/// commands on that world (verify, copies, backups, schematics, restore, render).
pub const GROUPS: [&str; 4] = ["convert", "import", "export", "world"];

/// `cargo xtask worlds --columns N[,N...] [--amulet] [--only GROUPS] [--dir DIR]`.
pub fn task(rest: &[String]) -> Result {
    known_flags(rest, &["--columns", "--dir", "--only"], &["--amulet"])?;
    let only = flag_value(rest, "--only").unwrap_or_else(|| GROUPS.join(","));
    let groups: Vec<&str> = only.split(',').map(str::trim).collect();
    if let Some(g) = groups.iter().find(|g| !GROUPS.contains(g)) {
        return Err(usage(format!("--only {g}: one of {} (comma-separated)", GROUPS.join(", "))));
    }
    let want = |g: &str| groups.contains(&g);
    let sizes = flag_value(rest, "--columns").unwrap_or_else(|| "1024".into());
    let sizes: Vec<u64> = sizes
        .split(',')
        .map(|s| s.trim().parse().ok().filter(|&n| n > 0))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            usage(format!("--columns {sizes}: positive whole numbers, comma-separated"))
        })?;
    let amulet = rest.iter().any(|a| a == "--amulet");
    let target = crate::rocksdb::target_dir()?;
    let dir = flag_value(rest, "--dir")
        .map(PathBuf::from)
        .unwrap_or_else(|| target.join("terrane-worlds-bench"));
    let mut build = cargo();
    crate::rocksdb::link_dev_archive(&mut build)?;
    run(build.args(["build", "--release", "-p", "terrane-cli"]))?;
    run(cargo().args(["build", "--release", "-p", "terrane-benches", "--bin", "bigworld"]))?;
    run(cargo().args([
        "build",
        "--release",
        "-p",
        "terrane-benches",
        "--features",
        "postgres",
        "--bin",
        "pgserver",
    ]))?;
    let bin = target.join("release");
    let (terrane, bigworld) = (bin.join("terrane"), bin.join("bigworld"));
    if amulet {
        crate::amulet()?;
    }
    let python = crate::amulet_venv().join("bin/python");
    let script = root().join("benches/bedrock/amulet_convert.py");
    let mut rows = Vec::new();
    for n in sizes {
        let d = dir.join(n.to_string());
        if d.exists() {
            fs::remove_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        let p = |name: &str| d.join(name).display().to_string();
        let log = d.join("log");
        let n_s = n.to_string();
        let mut row = |label: &str, program: &Path, args: &[&str]| -> Result {
            rows.push(timed(label, n, program, args, &log)?);
            Ok(())
        };
        // Removes a row's output once no later row reads it (a 10 GB world's copies and
        // exports would need six times its size of disk).
        let drop = |name: &str| {
            let path = d.join(name);
            let gone =
                if path.is_dir() { fs::remove_dir_all(&path) } else { fs::remove_file(&path) };
            gone.map_err(|e| format!("{}: {e}", path.display()))
        };
        row("bigworld (write the Java world)", &bigworld, &[&p("java"), "--columns", &n_s])?;
        if want("convert") || want("import") || amulet {
            row(
                "convert --to bedrock",
                &terrane,
                &["convert", &p("java"), &p("bedrock"), "--to", "bedrock"],
            )?;
        }
        if want("convert") {
            row(
                "convert --to java",
                &terrane,
                &["convert", &p("bedrock"), &p("java-back"), "--to", "java"],
            )?;
            drop("java-back")?;
        }
        let w = p("world");
        if want("import") || want("export") || want("world") {
            row("import anvil", &terrane, &["import", "anvil", &p("java"), &w])?;
        }
        if want("import") {
            row("import bedrock", &terrane, &["import", "bedrock", &p("bedrock"), &p("world-b")])?;
            drop("world-b")?;
        }
        if want("export") {
            row(
                "export anvil --world-folder",
                &terrane,
                &["export", "anvil", &w, &p("out-java"), "--world-folder"],
            )?;
            drop("out-java")?;
            row("export bedrock", &terrane, &["export", "bedrock", &w, &p("out-bedrock")])?;
            drop("out-bedrock")?;
        }
        if want("world") {
            row("verify", &terrane, &["verify", &w])?;
            row("copy (RocksDB to RocksDB)", &terrane, &["copy", &w, &p("world-copy")])?;
            drop("world-copy")?;
            if n <= 4096 {
                let bf = ["copy", &w, &p("world-copy-bf"), "--backend", "blockfile"];
                row("copy (RocksDB to block file)", &terrane, &bf)?;
                drop("world-copy-bf")?;
            }
            {
                // A server of its own on a Unix socket, stopped when its standard input closes.
                let pg = PgServer::start(&bin.join("pgserver"))?;
                row("copy (RocksDB to PostgreSQL)", &terrane, &["copy", &w, &pg.conninfo])?;
            }
            row("backup (first)", &terrane, &["backup", &w, &p("repo")])?;
            row("backup (again, nothing changed)", &terrane, &["backup", &w, &p("repo")])?;
            // 1 % of the columns changed: a layer of the world's own blocks (a square of 1 % of
            // its columns from the origin, y = 64) pasted one block higher.
            let side = (((n as f64) * 0.01).sqrt().ceil() as i64).max(1) * 16 - 1;
            let (from, to) = ("0,64,0".to_string(), format!("{side},64,{side}"));
            let schem = p("layer.schem");
            let export = ["schem", "export", &w, "--from", &from, "--to", &to, &schem];
            row("schem export (1 % of columns, one layer)", &terrane, &export)?;
            let paste = ["schem", "import", &w, &schem, "--at", "0,65,0"];
            row("schem import (1 % of columns changed)", &terrane, &paste)?;
            row("backup (again, 1 % of columns changed)", &terrane, &["backup", &w, &p("repo")])?;
            row("restore", &terrane, &["restore", &p("repo"), &p("world-restored")])?;
            drop("world-restored")?;
            row("render", &terrane, &["render", "--world", &w, &p("map.png")])?;
        }
        if amulet {
            let py = python.clone();
            for (label, src, edition) in [
                ("amulet-core: convert to bedrock", "java", "bedrock"),
                ("amulet-core: convert to java", "bedrock", "java"),
            ] {
                // amulet-core rewrites what it opens: it converts a copy.
                let copy = d.join(format!("amulet-{src}"));
                copy_tree(&d.join(src), &copy)?;
                let out = p(&format!("amulet-out-{edition}"));
                let copy = copy.display().to_string();
                let script = script.display().to_string();
                row(label, &py, &[&script, &copy, &out, edition])?;
            }
        }
        fs::remove_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    println!("| command | columns | wall | columns/s | peak RSS |");
    println!("|---|---:|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {} | {:.2} s | {:.0} | {:.1} MiB |",
            r.label,
            r.columns,
            r.wall,
            r.columns as f64 / r.wall.max(0.001),
            r.peak_kib as f64 / 1024.0
        );
    }
    Ok(())
}

/// A throwaway PostgreSQL server (`pgserver`), stopped when dropped.
struct PgServer {
    child: std::process::Child,
    conninfo: String,
}

impl PgServer {
    fn start(program: &Path) -> Result<PgServer> {
        use std::io::BufRead as _;
        let mut child = Command::new(program)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        let mut line = String::new();
        let out = child.stdout.take().expect("piped");
        std::io::BufReader::new(out).read_line(&mut line).map_err(|e| e.to_string())?;
        if line.trim().is_empty() {
            let _ = child.wait();
            return Err(format!("{} did not start a server (see above)", program.display()));
        }
        Ok(PgServer { child, conninfo: line.trim().to_string() })
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Copies a folder tree.
fn copy_tree(from: &Path, to: &Path) -> Result {
    fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for e in fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let e = e.map_err(|e| e.to_string())?;
        let dst = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &dst)?;
        } else {
            fs::copy(e.path(), &dst).map_err(|err| format!("{}: {err}", e.path().display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// A group `--only` does not know is refused before anything is built, naming the groups.
    #[test]
    fn an_unknown_group_is_refused_with_the_list() {
        let args = ["--only".to_string(), "convert,nope".to_string()];
        let err = super::task(&args).unwrap_err().to_string();
        assert!(err.contains("--only nope") && err.contains(&super::GROUPS.join(", ")), "{err}");
    }
}
