//! `bigworld OUT --columns N [--seed S] [--threads T]`: writes a real-shaped Java world
//! (`terrane_benches::bigworld`). Run through `cargo xtask bigworld`, which also makes Bedrock
//! worlds from it.

use std::process::ExitCode;
use std::time::Instant;

use terrane_benches::bigworld::{testdata_dir, write_java_world};

const USAGE: &str = "usage: bigworld OUT --columns N [--seed S] [--threads T]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut out, mut columns, mut seed, mut threads) = (None, None, 1u64, 2usize);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| -> Result<u64, String> {
            it.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{name} needs a number\n{USAGE}"))
        };
        let parsed = match a.as_str() {
            "--columns" => value("--columns").map(|v| columns = Some(v)),
            "--seed" => value("--seed").map(|v| seed = v),
            "--threads" => value("--threads").map(|v| threads = v as usize),
            flag if flag.starts_with('-') => Err(format!("unknown flag `{flag}`\n{USAGE}")),
            path => {
                out = Some(std::path::PathBuf::from(path));
                Ok(())
            }
        };
        if let Err(e) = parsed {
            eprintln!("bigworld: error: {e}");
            return ExitCode::from(2);
        }
    }
    let (Some(out), Some(columns)) = (out, columns) else {
        eprintln!("bigworld: error: OUT and --columns are required\n{USAGE}");
        return ExitCode::from(2);
    };
    let start = Instant::now();
    match write_java_world(&out, &testdata_dir(), columns, seed, threads) {
        Ok(s) => {
            println!(
                "wrote {}: {} columns in {} region files, {:.1} MiB, from {} real finished chunks, in {:.1} s",
                out.display(),
                s.columns,
                s.regions,
                s.region_bytes as f64 / (1 << 20) as f64,
                s.templates,
                start.elapsed().as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bigworld: error: {e}");
            ExitCode::FAILURE
        }
    }
}
