//! What the tests with real Minecraft clients share: the bots' folder and Node modules, a
//! free port, `terrane serve` as a child whose stdout lines arrive on a channel, and block
//! names read back through terrane.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use terrane::{BlockId, ChunkPos, World};
use terrane_section::testdata::ChildGuard;

/// The bot's folder in the repository.
pub fn bots() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../valence/tests/bots")
}

/// The installed Node modules, or a failure naming the command that installs them.
pub fn node_modules() -> PathBuf {
    let dir = match std::env::var_os("TERRANE_NODE_MODULES") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/terrane/node/node_modules"),
    };
    let bots = bots();
    let fix = format!(
        "`cargo xtask test` installs them; by hand: mkdir -p ~/.cache/terrane/node && cp {b}/package.json \
         {b}/package-lock.json ~/.cache/terrane/node/ && npm ci --prefix ~/.cache/terrane/node \
         --ignore-scripts  (needs Node 20 or later and npm)",
        b = bots.display()
    );
    let version = std::fs::read_to_string(dir.join("mineflayer/package.json")).unwrap_or_default();
    assert!(
        version.contains("\"version\": \"4.39.0\""),
        "mineflayer 4.39.0 is not installed in {}: {fix}",
        dir.display()
    );
    let node = Command::new("node").arg("--version").output();
    assert!(node.is_ok_and(|o| o.status.success()), "`node` is not on the PATH: install Node 20+");
    dir
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
}

/// `terrane serve DIR --port PORT`, its stdout lines on a channel, stderr to a file.
pub fn serve(
    dir: &Path,
    port: u16,
    log: &Path,
    extra: &[&str],
) -> (ChildGuard, mpsc::Receiver<String>) {
    let mut child = ChildGuard::spawn(
        Command::new(env!("CARGO_BIN_EXE_terrane"))
            .arg("serve")
            .arg(dir)
            .args(["--port", &port.to_string()])
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap()),
    )
    .expect("start terrane serve");
    let out = child_stdout(&mut child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "terrane serve never listened: {}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (child, rx)
}

pub fn child_stdout(child: &mut ChildGuard) -> std::process::ChildStdout {
    // The guard derefs to the child; its stdout is taken once, here.
    let child: &mut std::process::Child = child;
    child.stdout.take().expect("piped stdout")
}

/// The highest `saved N` among the lines received within `wait`.
pub fn last_saved(rx: &mpsc::Receiver<String>, wait: Duration) -> Option<u64> {
    let deadline = Instant::now() + wait;
    let mut last = None;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) => {
                if let Some(n) = line.strip_prefix("saved ").and_then(|n| n.parse::<u64>().ok()) {
                    last = last.max(Some(n));
                }
            }
            Err(_) => break,
        }
    }
    last
}

pub fn block_name(world: &World, pos: [i64; 3]) -> String {
    block_name_in(world, 0, pos)
}

/// The block at `pos` of dimension `dim` (0 the Overworld, 1 the Nether, 2 the End).
pub fn block_name_in(world: &World, dim: u64, pos: [i64; 3]) -> String {
    let c = world
        .get_chunk_in(
            dim,
            ChunkPos::new(pos[0].div_euclid(16), pos[1].div_euclid(16), pos[2].div_euclid(16)),
        )
        .unwrap()
        .expect("the chunk is stored");
    let [x, y, z] = pos.map(|v| v.rem_euclid(16) as u32);
    let BlockId(id) = c.get(x, y, z);
    world.schema().blocks().get(id).unwrap().to_string()
}
