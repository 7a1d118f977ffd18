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
/// the golden chunks) and, for decoders of other tools' files, the fixture folder itself (the
/// fixtures are never copied into the repository).
fn seed_dirs(target: &str) -> Result<Vec<std::path::PathBuf>> {
    let mut dirs = vec![root().join("fuzz/seeds").join(target)];
    if target == "chunk_edit" {
        // The golden chunks of chunk_decode, each behind a zero edit count (the target's input
        // is `[n_ops] chunk [ops]`), written beside the corpus (never committed).
        let dir = root().join("fuzz/corpus/seeds-chunk_edit");
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
    let testdata = std::env::var_os("TERRANE_TESTDATA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/testdata"));
    let fixtures = match target {
        "schem_read" => Some("schem"),
        "anvil_region" => Some("anvil"),
        "nbt_read" => Some("chunk-nbt"),
        _ => None,
    };
    dirs.extend(fixtures.map(|f| testdata.join(f)));
    dirs.retain(|d| d.is_dir());
    Ok(dirs)
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

/// `fuzz <target> [--seconds N]`, `fuzz --all [--seconds N]`, `fuzz --list`.
pub fn task(rest: &[String]) -> Result {
    crate::known_flags(rest, &["--seconds"], &["--all", "--list"])?;
    let all = targets();
    if rest.iter().any(|a| a == "--list") {
        for t in &all {
            println!("{t}");
        }
        return Ok(());
    }
    let seconds = flag_value(rest, "--seconds").unwrap_or_else(|| "30".into());
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
    for t in &chosen {
        let mut cmd = Command::new("cargo");
        if nightly {
            cmd.arg("+nightly");
        }
        cmd.args(["fuzz", "run"]);
        if !nightly {
            cmd.args(["-s", "none"]);
        }
        // The first corpus folder collects new inputs; the others are read-only seeds.
        let corpus = root().join("fuzz/corpus").join(t);
        std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
        cmd.arg(t.as_str()).arg(&corpus).args(seed_dirs(t)?);
        cmd.args(["--", &format!("-max_total_time={seconds}"), "-rss_limit_mb=4096"]);
        cmd.env_remove("CARGO_TARGET_DIR");
        run(&mut cmd)?;
    }
    Ok(())
}
