//! `terrane serve` with a real Minecraft client: mineflayer 4.39.0 (Node, offline mode,
//! `crates/valence/tests/bots/`) joins, checks a block the test put into the world through
//! terrane, digs one and places one; the test SIGKILLs the server after its `saved N` and
//! finds both edits in the reopened world. Also: Ctrl-C saves and exits cleanly.
//!
//! The Node modules live in `~/.cache/terrane/node/` (or `TERRANE_NODE_MODULES`);
//! `cargo xtask test` installs them. Without them the test fails with the command to run.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::minecraft::{block_name, bots, free_port, last_saved, node_modules, serve};
use terrane::{Backend, Chunk, ChunkPos, ColumnPos, Schema, TickSave, World};

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

#[test]
fn a_real_client_digs_and_places_and_both_edits_survive_sigkill() {
    let modules = node_modules();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    make_world(&dir);
    let port = free_port();
    let log = tmp.path().join("serve.log");
    let (mut server, lines) = serve(&dir, port, &log, &["--terrain", "flat"]);

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
        "\"text\":\"saved ",
    ] {
        assert!(said.contains(step), "the bot did not report {step}:\n{said}");
    }

    // The server saves a tick before it tells the client about it: the bot has seen both
    // edits, so their saves are acknowledged and printed.
    let saved = last_saved(&lines, Duration::from_secs(3)).expect("the server printed `saved N`");
    // The footer the client saw names a tick the server had acknowledged.
    let footer: u64 = said
        .lines()
        .find_map(|l| l.split("\"text\":\"saved ").nth(1))
        .and_then(|t| t.trim_end_matches(['"', '}']).parse().ok())
        .expect("a `saved N` footer");
    assert!(
        footer >= 1 && footer <= saved,
        "footer `saved {footer}`, last printed `saved {saved}`"
    );
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

/// Ctrl-C saves and stops; meanwhile the running server backed its world up on schedule
/// (`--backup-repo`, every 0.3 s here) into a repository that verifies.
#[test]
fn ctrl_c_saves_and_exits_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    make_world(&dir);
    let port = free_port();
    let log = tmp.path().join("serve.log");
    let repo = tmp.path().join("backups");
    let every = ["--backup-repo", repo.to_str().unwrap(), "--backup-every", "0.005"];
    let (mut server, _lines) =
        serve(&dir, port, &log, &[&["--terrain", "flat"][..], &every[..]].concat());
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&log).unwrap().contains("backup 2:") {
        assert!(Instant::now() < deadline, "{}", std::fs::read_to_string(&log).unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
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
    let repo = terrane::backup::Repo::open(&repo).unwrap();
    assert!(repo.list().unwrap().len() >= 2);
    assert!(repo.verify().unwrap().is_clean());
}
