//! `terrane convert` SIGKILLed at random moments and run again, both ways: each run goes on
//! where the last one stopped (`columns_resumed`), and the finished world holds exactly the
//! blocks of a conversion never interrupted. Kills per direction: `TERRANE_CONVERT_KILLS`
//! (default 6).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use terrane::{Backend, ChunkView, World};
use terrane_store::conformance::Rng;

fn kills() -> usize {
    std::env::var("TERRANE_CONVERT_KILLS").ok().and_then(|v| v.parse().ok()).unwrap_or(6)
}

/// Every chunk of a world folder (Java or Bedrock) as its blocks' names, layers included.
fn blocks(dir: &Path, folder: &Path) -> BTreeMap<(u64, terrane::ChunkPos), Vec<String>> {
    let mut w = World::builder().backend(Backend::Memory).create(dir).unwrap();
    if terrane::bedrock::is_bedrock_world(folder) {
        terrane::bedrock::import_bedrock_world(&mut w, folder, &mut |_| {}).unwrap();
    } else {
        terrane::java::import_java_world(&mut w, folder, &mut |_, _| {}).unwrap();
    }
    let names: Vec<&str> = w.schema().blocks().names().collect();
    let mut out = BTreeMap::new();
    for ((dim, pos), (_, bytes)) in w.tiered().all_chunks().unwrap() {
        let v = ChunkView::parse(&bytes).unwrap();
        let mut cells = Vec::with_capacity(4096);
        for i in 0..4096u16 {
            let mut s = names[v.block(i).0 as usize].to_string();
            for l in v.layers(i) {
                s.push('+');
                s.push_str(names[l.0 as usize]);
            }
            cells.push(s);
        }
        out.insert((dim, pos), cells);
    }
    out
}

/// Fails naming the first difference between two worlds' blocks (whole maps are too long to
/// print).
fn assert_same(
    a: &BTreeMap<(u64, terrane::ChunkPos), Vec<String>>,
    b: &BTreeMap<(u64, terrane::ChunkPos), Vec<String>>,
    what: &str,
) {
    let only_a: Vec<_> = a.keys().filter(|k| !b.contains_key(k)).take(5).collect();
    let only_b: Vec<_> = b.keys().filter(|k| !a.contains_key(k)).take(5).collect();
    assert!(
        only_a.is_empty() && only_b.is_empty(),
        "{what}: chunks only in the killed run's world {only_a:?}, only in the other {only_b:?}"
    );
    for (k, cells) in a {
        if let Some(i) = (0..cells.len()).find(|&i| cells[i] != b[k][i]) {
            panic!("{what}: chunk {k:?} cell {i}: {} != {}", cells[i], b[k][i]);
        }
    }
}

/// Runs `terrane convert SRC DST --to TO`, killed after random delays up to `kills` times,
/// then to the end; returns the columns the last run said it resumed (none when a kill came
/// after its last rename, before it could say), and the kills.
fn convert_with_kills(src: &Path, dst: &Path, to: &str, rng: &mut Rng) -> (Option<u64>, usize) {
    let mut killed = 0;
    loop {
        let mut child = Command::new(env!("CARGO_BIN_EXE_terrane"))
            .args(["convert", "--json", "--to", to])
            .args([src, dst])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Each kill comes later than the one before could (a quarter second more), so that on
        // a loaded machine the later runs, too, get past the conversion's first checkpoint.
        let later = 250 * killed as u64;
        let kill_at =
            (killed < kills()).then(|| Duration::from_millis(100 + later + rng.below(1_500)));
        let start = Instant::now();
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if kill_at.is_some_and(|k| start.elapsed() >= k) {
                child.kill().unwrap(); // SIGKILL
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        if out.status.success() {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            return (Some(v["columns_resumed"].as_u64().unwrap()), killed);
        }
        assert!(
            out.status.code().is_none(),
            "terrane convert failed instead of being killed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        killed += 1;
        if dst.exists() {
            // Killed between its last rename and its exit: finished, and compared as such.
            let tmp = dst.with_file_name(format!(
                ".{}.terrane-convert",
                dst.file_name().unwrap().to_string_lossy()
            ));
            assert!(!tmp.exists(), "a killed conversion left {} half-written", dst.display());
            return (None, killed);
        }
    }
}

/// The 1.21.1 region with every chunk finished: a conversion long enough to be killed.
fn java_fixture(dir: &Path) -> PathBuf {
    terrane_anvil::testdata::java_world_finished(dir, "anvil/1.21.1/r.0.0.mca")
}

#[test]
fn a_killed_conversion_resumes_and_ends_as_one_never_killed() {
    let dir = tempfile::tempdir().unwrap();
    let java = java_fixture(dir.path());
    let seed = std::env::var("TERRANE_CONVERT_SEED").ok().and_then(|v| v.parse().ok());
    let mut rng = Rng::new(seed.unwrap_or(0x9e37_79b9_7f4a_7c15));

    // Java → Bedrock, killed and resumed, beside the same conversion never killed.
    let reference = dir.path().join("reference-bedrock");
    terrane::convert::java_to_bedrock(&java, &reference, &mut |_| {}).unwrap();
    let bedrock = dir.path().join("bedrock");
    let (resumed_b, killed_b) = convert_with_kills(&java, &bedrock, "bedrock", &mut rng);
    assert_same(
        &blocks(&dir.path().join("a"), &bedrock),
        &blocks(&dir.path().join("b"), &reference),
        "Java to Bedrock",
    );

    // Bedrock → Java from that world, the same way.
    let reference = dir.path().join("reference-java");
    terrane::convert::bedrock_to_java(&bedrock, &reference, &mut |_| {}).unwrap();
    let back = dir.path().join("java-back");
    let (resumed_j, killed_j) = convert_with_kills(&bedrock, &back, "java", &mut rng);
    assert_same(
        &blocks(&dir.path().join("c"), &back),
        &blocks(&dir.path().join("d"), &reference),
        "Bedrock to Java",
    );
    println!(
        "to Bedrock: {killed_b} kills, the last run resumed {resumed_b:?} columns; to Java: \
         {killed_j} kills, {resumed_j:?} resumed"
    );
    let said: Vec<u64> = [resumed_b, resumed_j].into_iter().flatten().collect();
    assert!(said.iter().all(|&n| n <= 225), "more columns resumed than there are");
    if killed_b + killed_j >= 3 && !said.is_empty() {
        assert!(said.iter().sum::<u64>() > 0, "no run went on from where a killed one stopped");
    }
}
