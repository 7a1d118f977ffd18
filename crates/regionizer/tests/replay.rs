//! The replay tool against hand-checked expected outputs (tests/replay/*.expected.jsonl: each
//! state was verified by hand against the spec before being frozen), its flags, errors and
//! `--final-only`.

use std::io::Cursor;
use std::process::{Command, Stdio};

use terrane_regionizer::Error;
use terrane_regionizer::replay::{ReplayOptions, final_regions, replay};
use terrane_section::testdata::ChildGuard;

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/replay")
}

fn read(name: &str) -> String {
    let p = dir().join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("missing test log {}: {e}", p.display()))
}

fn opts(args: &str) -> ReplayOptions {
    ReplayOptions::from_args(args.split_whitespace().map(String::from)).unwrap()
}

fn run(log: &str, o: &ReplayOptions) -> String {
    let mut out = Vec::new();
    replay(Cursor::new(log.as_bytes()), &mut out, o).unwrap();
    String::from_utf8(out).unwrap()
}

/// A 2D log of `n` random operations (adds, removes, ticks and releases of sections at shift
/// 2) within 20 chunks of the origin, from `seed`.
fn random_walk(seed: u64, n: usize) -> String {
    let mut log = String::new();
    let mut s = seed;
    for _ in 0..n {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let (x, z) = ((s % 40) as i64 - 20, ((s >> 20) % 40) as i64 - 20);
        let op = ["add", "add", "add", "remove", "tick", "release"][(s >> 40) as usize % 6];
        let (x, z) = if op == "tick" || op == "release" { (x >> 2, z >> 2) } else { (x, z) };
        log.push_str(&format!("{op} {x} {z}\n"));
    }
    log
}

const SMALL: &str = "--shift 0 --create-radius 1 --merge-radius 1 --recalc-count 4 --max-dead 1/6";

#[test]
fn merge_later_then_absorb_then_purge() {
    let out = run(&read("merge_later.txt"), &opts(SMALL));
    assert_eq!(out, read("merge_later.expected.jsonl"));
    // Spot checks of the hand-verified states: op 4 links the transient region to the
    // ticking one, op 5 absorbs it.
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[3].contains(r#""state":"ticking""#)
            && lines[3].contains(r#""expecting_merge_from":[1]"#)
    );
    assert!(
        lines[3].contains(r#""state":"transient""#)
            && lines[3].contains(r#""merge_into_later":[0]"#)
    );
    assert!(lines[4].starts_with(r#"{"op":5,"ret":true,"regions":[{"state":"ready""#));
}

#[test]
fn purge_and_split_and_misuse() {
    let out = run(&read("split.txt"), &opts(SMALL));
    assert_eq!(out, read("split.expected.jsonl"));
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[5].starts_with(r#"{"op":6,"ret":false,"#), "split returns false");
    assert_eq!(lines[5].matches(r#""state":"ready""#).count(), 2, "two regions after the split");
    for l in &lines[6..9] {
        assert!(l.contains(r#""ret":"error""#), "{l}");
    }
}

#[test]
fn cubic_positions() {
    let o = opts(
        "--dim 3 --shift 1 --create-radius 1 --merge-radius 1 --recalc-count 2 --max-dead 0.1",
    );
    assert_eq!(run(&read("cubic.txt"), &o), read("cubic.expected.jsonl"));
}

#[test]
fn final_only_is_the_last_line() {
    // A longer random walk: final-only prints exactly the last full line.
    let log = random_walk(7, 3000);
    let full = run(&log, &opts("--shift 2"));
    let last = run(&log, &opts("--shift 2 --final-only"));
    assert_eq!(full.lines().count(), 3000);
    assert_eq!(last, format!("{}\n", full.lines().last().unwrap()));
    assert!(last.starts_with(r#"{"op":3000,"#));
}

#[test]
fn comments_blank_lines_and_parse_errors() {
    let out = run("# header\n\nadd 1 2 # trailing\n", &opts(""));
    assert!(out.starts_with(r#"{"op":1,"ret":null,"#), "{out}");
    let bad =
        |log: &str| replay(Cursor::new(log.as_bytes()), Vec::new(), &ReplayOptions::default());
    assert!(matches!(bad("add 1\n"), Err(Error::ReplayParse { line: 1, .. })));
    assert!(matches!(bad("add 1 1\njump 1 1\n"), Err(Error::ReplayParse { line: 2, .. })));
    assert!(matches!(bad("add 1 x\n"), Err(Error::ReplayParse { .. })));
    assert!(matches!(bad("add 1 99999999999\n"), Err(Error::ReplayParse { .. })));
}

#[test]
fn flags() {
    let d = ReplayOptions::default();
    assert_eq!(opts(""), d);
    let o = opts("--shift=2 --final-only");
    assert_eq!((o.config.shift(), o.config.create_radius(), o.config.recalc_count()), (2, 2, 128));
    assert!(o.final_only);
    let o = opts("--max-dead 0.25 --dim 3 --merge-radius 2");
    assert_eq!((o.config.max_dead_fraction(), o.dims, o.config.merge_radius()), (0.25, 3, 2));
    let err =
        |a: &str| ReplayOptions::from_args(a.split_whitespace().map(String::from)).unwrap_err();
    assert!(matches!(err("--dim 4"), Error::ReplayArgs(_)));
    assert!(matches!(err("--bogus"), Error::ReplayArgs(_)));
    assert!(matches!(err("--shift"), Error::ReplayArgs(_)));
    assert!(matches!(err("--max-dead 1/0"), Error::ReplayArgs(_)));
    assert!(matches!(err("--create-radius 0"), Error::InvalidConfig { .. }));
}

#[test]
fn binary_runs() {
    let mut child = ChildGuard::spawn(
        Command::new(env!("CARGO_BIN_EXE_terrane-regionizer-replay"))
            .args(SMALL.split_whitespace())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped()),
    )
    .unwrap();
    use std::io::{Read, Write};
    child.stdin.take().unwrap().write_all(read("split.txt").as_bytes()).unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(out, read("split.expected.jsonl"));
    let bad = Command::new(env!("CARGO_BIN_EXE_terrane-regionizer-replay"))
        .arg("--nope")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// The spec's correction of Folia's add_chunk step 3 (the centre section's own region is
/// collected): hand-checked states, and the invariants hold after every operation.
#[test]
fn centre_section_region_is_collected() {
    let out = run(&read("centre_included.txt"), &opts(SMALL));
    assert_eq!(out, read("centre_included.expected.jsonl"));
    let line6 = out.lines().nth(5).unwrap();
    assert!(
        line6.contains(r#"{"state":"transient","sections":[[2,2],[2,3],[3,2],[3,3]],"dead":[],"merge_into_later":[0],"expecting_merge_from":[]}"#),
        "the singleton's region takes the new sections: {line6}"
    );
    assert_eq!(line6.matches(r#""state":"#).count(), 2, "no third region");

    use terrane_regionizer::{NoCallbacks, Regionizer};
    use terrane_section::ColumnPos;
    let rz: Regionizer<ColumnPos, ()> = Regionizer::new(opts(SMALL).config, NoCallbacks);
    for (x, z) in [(0, 0), (0, 2), (2, 0)] {
        rz.add_chunk(ColumnPos::new(x, z)).unwrap();
    }
    let a = rz.owner_of_chunk(ColumnPos::new(0, 0)).unwrap();
    assert!(rz.try_mark_ticking(a).unwrap());
    for (x, z) in [(1, 1), (2, 2)] {
        rz.add_chunk(ColumnPos::new(x, z)).unwrap();
        rz.check_invariants().unwrap();
    }
    assert!(rz.mark_not_ticking(a).unwrap());
    rz.check_invariants().unwrap();
    assert_eq!(rz.region_count(), 1);
}

/// `--time` runs the same operations (the final state is `--final-only`'s) and reports the
/// time spent inside the calls; parse errors still name their line.
#[test]
fn time_mode_ends_in_the_final_state_and_reports_the_call_time() {
    for name in ["merge_later.txt", "split.txt"] {
        let log = read(name);
        let mut out = Vec::new();
        let stats =
            replay(Cursor::new(log.as_bytes()), &mut out, &opts(&format!("{SMALL} --time")))
                .unwrap();
        let final_only = run(&log, &opts(&format!("{SMALL} --final-only")));
        assert_eq!(String::from_utf8(out).unwrap(), final_only, "{name}");
        assert!(stats.call_time.is_some() && stats.ops > 0);
        let line = terrane_regionizer::replay::time_line(&stats).unwrap();
        assert!(line.contains(&format!("{} operations", stats.ops)), "{line}");
    }
    let bad = replay(Cursor::new(&b"add 1 1\nadd x 1\n"[..]), Vec::new(), &opts("--time"));
    assert!(matches!(bad, Err(Error::ReplayParse { line: 2, .. })), "{bad:?}");
}

/// `final_regions` is the `--final-only` state, typed: the same regions in the same order,
/// each with the same sections.
#[test]
fn final_regions_is_the_final_state_typed() {
    let cubic =
        "--dim 3 --shift 1 --create-radius 1 --merge-radius 1 --recalc-count 2 --max-dead 0.1";
    let walk = random_walk(11, 2000);
    for (log, args) in [(read("cubic.txt"), cubic), (read("split.txt"), SMALL), (walk, "--shift 2")]
    {
        let json = run(&log, &opts(&format!("{args} --final-only")));
        let typed = final_regions(Cursor::new(log.as_bytes()), &opts(args)).unwrap();
        assert!(!typed.is_empty(), "{args}");
        let mut at = 0;
        for r in &typed {
            let coords = |c: &Vec<i64>| {
                format!("[{}]", c.iter().map(i64::to_string).collect::<Vec<_>>().join(","))
            };
            let needle =
                format!("\"sections\":[{}]", r.iter().map(coords).collect::<Vec<_>>().join(","));
            let i =
                json[at..].find(&needle).unwrap_or_else(|| panic!("{args}: {needle} not in order"));
            at += i + needle.len();
        }
        assert_eq!(json.matches("\"state\":").count(), typed.len(), "{args}");
    }
}

/// A seeded mixed log (what the replay benchmark runs, `terrane regionizer generate`) replays
/// with its misuse answered as errors, and leaves the same final state on every run.
#[test]
fn a_generated_log_replays_with_its_misuse_as_errors() {
    use terrane_regionizer::oplog::{LogMix, mixed_log};
    let log = mixed_log(200, 20_000, 200, 4, LogMix::default());
    let o = opts("--shift 4 --final-only");
    let mut out = Vec::new();
    let stats = replay(Cursor::new(log.as_bytes()), &mut out, &o).unwrap();
    assert_eq!(stats.ops, 20_000);
    assert!(stats.errors > 100 && stats.errors < 10_000, "errors {}", stats.errors);
    let regions = final_regions(Cursor::new(log.as_bytes()), &o).unwrap();
    assert!(!regions.is_empty() && regions.iter().all(|r| !r.is_empty()), "{regions:?}");
    assert_eq!(regions, final_regions(Cursor::new(log.as_bytes()), &o).unwrap());
}
