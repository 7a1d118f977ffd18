//! `terrane serve` with a real Minecraft client: mineflayer 4.39.0 (Node, offline mode,
//! `crates/valence/tests/bots/`) joins, checks a block the test put into the world through
//! terrane, digs one and places one; the test SIGKILLs the server after its `saved N` and
//! finds both edits in the reopened world. Also: Ctrl-C saves and exits cleanly.
//!
//! The Node modules live in `~/.cache/terrane/node/` (or `TERRANE_NODE_MODULES`);
//! `cargo xtask test` installs them. Without them the test fails with the command to run.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use terrane::{Backend, BlockId, Chunk, ChunkPos, ColumnPos, Schema, TickSave, World};
use terrane_section::testdata::ChildGuard;

/// The bot's folder in the repository.
fn bots() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../valence/tests/bots")
}

/// The installed Node modules, or a failure naming the command that installs them.
fn node_modules() -> PathBuf {
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

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
}

/// A world holding a stone floor at y 64 over chunk column (0, 0) and a gold block on it
/// at (3, 65, 3).
fn make_world(dir: &Path) {
    let mut schema = Schema::new();
    let air = schema.add_block("minecraft:air", &[]).unwrap();
    let stone = schema.add_block("minecraft:stone", &[]).unwrap();
    let gold = schema.add_block("minecraft:gold_block", &[]).unwrap();
    let mut world =
        World::builder().backend(Backend::BlockFile).schema(schema).create(dir).unwrap();
    let mut chunk = Chunk::new(air);
    for x in 0..16 {
        for z in 0..16 {
            chunk.set(x, 0, z, stone);
        }
    }
    chunk.set(3, 1, 3, gold);
    world.mark_generated(ColumnPos::new(0, 0)).unwrap();
    let mut save = TickSave::new();
    save.put_chunk(0, ChunkPos::new(0, 4, 0), chunk.encode(world.schema()));
    world.save_tick(1, save).unwrap();
    world.close().unwrap();
}

/// `terrane serve DIR --port PORT`, its stdout lines on a channel, stderr to a file.
fn serve(dir: &Path, port: u16, log: &Path) -> (ChildGuard, mpsc::Receiver<String>) {
    let mut child = ChildGuard::spawn(
        Command::new(env!("CARGO_BIN_EXE_terrane"))
            .arg("serve")
            .arg(dir)
            .args(["--port", &port.to_string()])
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

fn child_stdout(child: &mut ChildGuard) -> std::process::ChildStdout {
    // The guard derefs to the child; its stdout is taken once, here.
    let child: &mut std::process::Child = child;
    child.stdout.take().expect("piped stdout")
}

/// The highest `saved N` among the lines received within `wait`.
fn last_saved(rx: &mpsc::Receiver<String>, wait: Duration) -> Option<u64> {
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

fn block_name(world: &World, pos: [i64; 3]) -> String {
    let c = world
        .get_chunk(ChunkPos::new(
            pos[0].div_euclid(16),
            pos[1].div_euclid(16),
            pos[2].div_euclid(16),
        ))
        .unwrap()
        .expect("the chunk is stored");
    let [x, y, z] = pos.map(|v| v.rem_euclid(16) as u32);
    let BlockId(id) = c.get(x, y, z);
    world.schema().blocks().get(id).unwrap().to_string()
}

#[test]
fn a_real_client_digs_and_places_and_both_edits_survive_sigkill() {
    let modules = node_modules();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    make_world(&dir);
    let port = free_port();
    let log = tmp.path().join("serve.log");
    let (mut server, lines) = serve(&dir, port, &log);

    let spec = serde_json::json!({
        "host": "127.0.0.1",
        "port": port,
        "username": "terrane_bot",
        "expect": { "pos": [3, 65, 3], "name": "gold_block" },
        "dig": [5, 64, 5],
        "place": { "against": [7, 64, 7], "item": "diamond_block" },
        "timeoutMs": 90000,
    });
    let bot = Command::new("node")
        .arg(bots().join("edit.js"))
        .arg(spec.to_string())
        .env("NODE_PATH", &modules)
        .output()
        .expect("run node");
    let said = String::from_utf8_lossy(&bot.stdout).to_string();
    assert!(
        bot.status.success(),
        "the bot failed ({}):\n{said}\n{}\nserver log:\n{}",
        bot.status,
        String::from_utf8_lossy(&bot.stderr),
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    for step in [
        "\"event\":\"spawn\"",
        "\"name\":\"gold_block\"",
        "\"event\":\"dug\"",
        "\"event\":\"placed\"",
    ] {
        assert!(said.contains(step), "the bot did not report {step}:\n{said}");
    }

    // The server saves a tick before it tells the client about it: the bot has seen both
    // edits, so their saves are acknowledged and printed.
    let saved = last_saved(&lines, Duration::from_secs(3)).expect("the server printed `saved N`");
    server.kill().expect("SIGKILL the server");
    server.wait().unwrap();

    let world = World::open(&dir).unwrap();
    assert!(world.tick() >= saved, "world tick {} < last `saved {saved}`", world.tick());
    assert_eq!(block_name(&world, [3, 65, 3]), "minecraft:gold_block");
    assert_eq!(block_name(&world, [5, 64, 5]), "minecraft:air", "the dug block");
    assert_eq!(block_name(&world, [7, 65, 7]), "minecraft:diamond_block", "the placed block");
    assert_eq!(block_name(&world, [6, 64, 6]), "minecraft:stone");
    // A neighbouring column the world did not hold was generated flat and saved.
    assert_eq!(block_name(&world, [20, 64, 4]), "minecraft:grass_block[snowy=false]");
}

#[test]
fn ctrl_c_saves_and_exits_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    make_world(&dir);
    let port = free_port();
    let log = tmp.path().join("serve.log");
    let (mut server, _lines) = serve(&dir, port, &log);
    std::thread::sleep(Duration::from_millis(500));
    let sent = Command::new("kill").args(["-INT", &server.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = server.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "terrane serve did not stop on SIGINT");
        std::thread::sleep(Duration::from_millis(50));
    };
    let err = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "status {status}: {err}");
    assert!(err.contains("stopped: every change up to tick"), "{err}");
    World::open(&dir).unwrap().verify().unwrap();
}
