//! `terrane serve` with a real Minecraft client: mineflayer 4.39.0 (Node, offline mode,
//! `crates/valence/tests/bots/`) joins, checks a block the test put into the world through
//! terrane, digs one and places one; the test SIGKILLs the server after its `saved N` and
//! finds both edits in the reopened world. Also: Ctrl-C saves and exits cleanly, a
//! griefed box and area go back to a backup while the server runs and the client watches,
//! a player kept under Valence's old id finds their record, and imported chests and signs
//! show the client their items and text.
//!
//! The Node modules live in `~/.cache/terrane/node/` (or `TERRANE_NODE_MODULES`);
//! `cargo xtask test` installs them. Without them the test fails with the command to run.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::minecraft::{
    block_name, block_name_in, bots, child_stdout, free_port, last_saved, node_modules, serve,
};
use common::players::CHEST;
use terrane::game::{self, ContainerRecord, ItemSlot};
use terrane::{Backend, Chunk, ChunkPos, ColumnPos, Schema, TickSave, World};
use terrane_section::testdata::ChildGuard;

/// A world holding a stone floor at y 64 over chunk column (0, 0), a gold block on it at
/// (3, 65, 3) and a chest of 5 diamonds at (9, 65, 9).
fn make_world(dir: &Path) {
    let mut schema = Schema::new();
    let air = schema.add_block("minecraft:air", &[]).unwrap();
    let stone = schema.add_block("minecraft:stone", &[]).unwrap();
    let gold = schema.add_block("minecraft:gold_block", &[]).unwrap();
    let chest = schema.add_block(CHEST, &[]).unwrap();
    let mut world =
        World::builder().backend(Backend::BlockFile).schema(schema).create(dir).unwrap();
    let mut chunk = Chunk::new(air);
    for x in 0..16 {
        for z in 0..16 {
            chunk.set(x, 0, z, stone);
        }
    }
    chunk.set(3, 1, 3, gold);
    chunk.set(9, 1, 9, chest);
    world.mark_generated(ColumnPos::new(0, 0)).unwrap();
    let mut save = TickSave::new();
    save.put_chunk(0, ChunkPos::new(0, 4, 0), chunk.encode(world.schema()));
    let diamonds = ContainerRecord { items: vec![ItemSlot::new(0, "minecraft:diamond", 5)] };
    game::put_container(&mut save, 0, [9, 65, 9], &diamonds);
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
        "timeoutMs": 90000,
        "steps": [
            { "see": { "pos": [3, 65, 3], "name": "gold_block" } },
            { "dig": [5, 64, 5] },
            { "place": { "against": [7, 64, 7], "item": "diamond_block" } },
        ],
    });
    let bot = Command::new("node")
        .arg(bots().join("steps.js"))
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
        // Placed (on the flat ground at the spawn) before the health update fires `spawn`.
        "\"event\":\"spawn\",\"pos\":[8.5,65,8.5]",
        "\"saw\":\"gold_block\"",
        "\"dug\":[5,64,5]",
        "\"placed\":[7,65,7]",
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

/// The server reports an edit before the save that holds it, so a server killed right after
/// a save has reported every edit its world holds (the kill tests check their worlds against
/// those reports). The server here is this test run again as a child that SIGKILLs itself
/// the moment it hears of its first edit: the world must not hold that edit yet.
#[test]
fn an_edit_is_reported_before_the_save_that_holds_it() {
    const CHILD: &str = "TERRANE_TEST_ABORT_ON_EDIT";
    if let Some(args) = std::env::var_os(CHILD) {
        let args = args.into_string().unwrap();
        let (port, dir) = args.split_once(' ').unwrap();
        let address = std::net::SocketAddr::from(([127, 0, 0, 1], port.parse().unwrap()));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        terrane_valence::ServerBuilder::new()
            .address(address)
            .report_edits(true)
            .terrain(terrane::worldgen::Terrain::Flat)
            .run(World::open(dir).unwrap(), stop, |event| {
                if let terrane_valence::ServerEvent::Applied(a) = event {
                    eprintln!("applied {a:?}: SIGKILL");
                    let me = std::process::id().to_string();
                    let _ = Command::new("kill").args(["-KILL", &me]).status();
                    std::thread::sleep(Duration::from_secs(60)); // the signal ends it here
                }
            })
            .unwrap();
        panic!("the server stopped without an edit");
    }
    let modules = node_modules();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    make_world(&dir);
    let port = free_port();
    let log = tmp.path().join("server.log");
    let mut server = ChildGuard::spawn(
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "an_edit_is_reported_before_the_save_that_holds_it", "--nocapture"])
            .env(CHILD, format!("{port} {}", dir.display()))
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(tmp.path().join("server.err")).unwrap()),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the child server never listened");
        assert!(server.try_wait().unwrap().is_none(), "the child server exited early");
        std::thread::sleep(Duration::from_millis(100));
    }
    let spec = serde_json::json!({
        "host": "127.0.0.1",
        "port": port,
        "username": "terrane_bot",
        "timeoutMs": 60000,
        "steps": [{ "dig": [5, 64, 5] }],
    });
    // The server dies under the bot: the bot's own outcome does not matter.
    let _ = Command::new("node")
        .arg(bots().join("steps.js"))
        .arg(spec.to_string())
        .env("NODE_PATH", &modules)
        .output()
        .expect("run node");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = server.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = server.kill();
            let err = std::fs::read_to_string(tmp.path().join("server.err")).unwrap();
            panic!("the bot is done and the child server still runs: no edit reached it\n{err}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let err = std::fs::read_to_string(tmp.path().join("server.err")).unwrap();
    use std::os::unix::process::ExitStatusExt as _;
    assert!(
        err.contains("SIGKILL") && status.signal() == Some(9),
        "the child server did not hear of the edit ({status}):\n{err}"
    );
    let world = World::open(&dir).unwrap();
    assert_eq!(
        block_name(&world, [5, 64, 5]),
        "minecraft:stone",
        "the world held an edit its server had not reported yet"
    );
}

/// Ctrl-C saves and stops; meanwhile the running server backed its world up on schedule
/// (`--backup-repo`, every 0.3 s here, keeping the newest 2) into a repository that
/// verifies.
#[test]
fn ctrl_c_saves_and_exits_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    make_world(&dir);
    let port = free_port();
    let log = tmp.path().join("serve.log");
    let repo = tmp.path().join("backups");
    let every =
        ["--backup-repo", repo.to_str().unwrap(), "--backup-every", "0.005", "--backup-keep", "2"];
    let (mut server, _lines) =
        serve(&dir, port, &log, &[&["--terrain", "flat"][..], &every[..]].concat());
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&log).unwrap().contains("pruned backups [1]") {
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
    assert!(!dir.join("serve.sock").exists(), "a clean stop removes the control socket");
    World::open(&dir).unwrap().verify().unwrap();
    let repo = terrane::backup::Repo::open(&repo).unwrap();
    assert_eq!(repo.list().unwrap().len(), 2, "--backup-keep 2");
    assert!(repo.verify().unwrap().is_clean());
}

/// `terrane restore` of a box and then of an area, while `terrane serve` plays the world and
/// a real client watches: the command reaches the server through the control socket in the
/// world's folder, the server saves, restores between two ticks and sends the columns again,
/// and the client sees the griefed blocks come back, then keeps playing there. After a
/// SIGKILL the world holds the restored blocks and the edit made after them; a server
/// started again replaces the socket the killed one left.
#[test]
fn a_griefed_box_and_area_go_back_while_the_server_runs() {
    let modules = node_modules();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    make_world(&dir);
    let repo = tmp.path().join("backups");
    let terrane = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_terrane")).args(args).output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(
            o.status.success(),
            "terrane {args:?}: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        out
    };
    let s = |p: &Path| p.to_str().unwrap().to_string();
    terrane(&["backup", &s(&dir), &s(&repo)]);
    let port = free_port();
    let log = tmp.path().join("serve.log");
    let (mut server, lines) = serve(&dir, port, &log, &["--terrain", "flat", "--print-edits"]);
    assert!(dir.join("serve.sock").exists(), "the control socket is in the world's folder");

    let spec = serde_json::json!({
        "host": "127.0.0.1",
        "port": port,
        "username": "griefer",
        "timeoutMs": 150000,
        "steps": [
            { "see": { "pos": [3, 65, 3], "name": "gold_block" } },
            { "dig": [3, 65, 3] },
            { "see": { "pos": [3, 65, 3], "name": "gold_block" }, "waitMs": 60000 },
            { "chest": [9, 65, 9], "item": "diamond", "expect": 5, "take": 5 },
            { "dig": [5, 64, 5] },
            { "see": { "pos": [5, 64, 5], "name": "stone" }, "waitMs": 60000 },
            { "chest": [9, 65, 9], "item": "diamond", "expect": 5, "take": 0, "waitMs": 20000 },
            { "place": { "against": [7, 64, 7], "item": "diamond_block" } },
        ],
    });
    let mut bot = ChildGuard::spawn(
        Command::new("node")
            .arg(bots().join("steps.js"))
            .arg(spec.to_string())
            .env("NODE_PATH", &modules)
            .stdout(Stdio::piped()),
    )
    .expect("run node");
    let (tx, said) = mpsc::channel();
    let out = child_stdout(&mut bot);
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut heard = String::new();
    let mut wait_for = |what: &str| {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = said.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "the bot never said {what}:\n{heard}\nserver log:\n{}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                )
            });
            heard.push_str(&line);
            heard.push('\n');
            assert!(!line.contains("\"error\""), "the bot failed:\n{heard}");
            if line.contains(what) {
                return;
            }
        }
    };
    // A client shows its own dig at once; the server applies it when it reads the packet,
    // maybe ticks later. The grief is restored once the server has it.
    let mut server_said = String::new();
    let mut applied = |edit: &str| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !server_said.lines().any(|l| l.starts_with("edit ") && l.ends_with(edit)) {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("the server never applied {edit}:\n{server_said}"));
            server_said.push_str(&line);
            server_said.push('\n');
        }
    };
    let restore = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["restore".to_string(), s(&repo), s(&dir), "--json".into()];
        args.extend(extra.iter().map(|a| a.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        serde_json::from_str(&terrane(&args)).unwrap()
    };

    wait_for("\"index\":1,");
    applied(" 3 65 3 minecraft:air");
    let b = restore(&["--from", "3,65,3", "--to", "3,65,3"]);
    assert_eq!(b["served"], true, "{b}");
    assert_eq!(b["restored"][0]["blocks_changed"], 1, "the gold block: {b}");
    assert!(b["restored"][0]["columns_resent"].as_u64().unwrap() >= 1, "{b}");
    wait_for("\"index\":2,");
    wait_for("\"index\":3,"); // the chest emptied
    wait_for("\"index\":4,");
    applied(" 5 64 5 minecraft:air");
    let a = restore(&["--area", "0,0"]);
    assert_eq!(a["served"], true, "{a}");
    assert!(a["restored"][0]["objects_written"].as_u64().unwrap() >= 1, "{a}");
    assert!(a["restored"][0]["columns_resent"].as_u64().unwrap() >= 1, "{a}");
    wait_for("\"index\":5,");
    wait_for("\"index\":6,"); // the chest as backed up: its open inventory was dropped
    wait_for("\"event\":\"done\"");
    assert!(bot.wait().unwrap().success(), "{heard}");
    applied(" 7 65 7 minecraft:diamond_block");

    let saved = last_saved(&lines, Duration::from_secs(3)).expect("the server printed `saved N`");
    server.kill().expect("SIGKILL the server");
    server.wait().unwrap();
    let world = World::open(&dir).unwrap();
    assert!(world.tick() >= saved);
    assert_eq!(block_name(&world, [3, 65, 3]), "minecraft:gold_block", "the box restored");
    assert_eq!(block_name(&world, [5, 64, 5]), "minecraft:stone", "the area restored");
    assert_eq!(block_name(&world, [7, 65, 7]), "minecraft:diamond_block", "placed after");
    let chests = game::containers(&world).unwrap();
    assert_eq!(chests[&(0, [9, 65, 9])].items, [ItemSlot::new(0, "minecraft:diamond", 5)]);
    world.verify().unwrap();
    drop(world);

    // The killed server left its socket: the next one replaces it and restores again.
    assert!(dir.join("serve.sock").exists());
    let (mut server, _lines) = serve(&dir, free_port(), &log, &["--terrain", "flat"]);
    let again = restore(&["--area", "0,0"]);
    assert_eq!(again["served"], true, "{again}");
    server.kill().unwrap();
    server.wait().unwrap();
    let world = World::open(&dir).unwrap();
    assert_eq!(block_name(&world, [7, 65, 7]), "minecraft:air", "the area is the backup's again");
}

/// A player is kept under the id the game gives their name offline
/// (`terrane::game::offline_player_id`), the id of their `playerdata` file in a Java world;
/// a world served before, which kept them under Valence's own offline id, still finds them,
/// and its next save moves the record to the game's id (one save: never both, never none).
#[test]
fn a_player_kept_under_valences_old_id_comes_back_and_moves_to_the_games() {
    use sha2::Digest as _;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    make_world(&dir);
    let name = "oldtimer";
    let legacy = u128::from_be_bytes(sha2::Sha256::digest(name)[..16].try_into().unwrap());
    let record = game::PlayerRecord {
        position: [3.5, 66.0, 7.5],
        items: vec![ItemSlot::new(36, "minecraft:emerald", 4)],
        ..game::PlayerRecord::default()
    };
    let mut world = World::open(&dir).unwrap();
    let mut save = TickSave::new();
    game::put_player(&mut save, legacy, &record);
    world.save_tick(2, save).unwrap();
    world.close().unwrap();

    let port = free_port();
    let log = tmp.path().join("serve.log");
    let (mut server, lines) = serve(&dir, port, &log, &["--terrain", "flat"]);
    let modules = node_modules();
    let spawn = join_spawn(port, name, &modules, &log);
    let pos: Vec<f64> =
        spawn["pos"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert!((pos[0] - 3.5).abs() < 1e-6 && (pos[2] - 7.5).abs() < 1e-6, "spawned at {pos:?}");
    // A save after the join, then a clean stop.
    assert!(last_saved(&lines, Duration::from_secs(2)).is_some(), "no save after the join");
    let sent = Command::new("kill").args(["-INT", &server.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "terrane serve did not stop on SIGINT");
        std::thread::sleep(Duration::from_millis(50));
    }
    let world = World::open(&dir).unwrap();
    assert_eq!(game::player(&world, legacy).unwrap(), None, "the old key is gone");
    let moved = game::player(&world, game::offline_player_id(name)).unwrap().expect("moved");
    assert_eq!(moved.items, record.items);
    assert!((moved.position[0] - 3.5).abs() < 1e-6 && (moved.position[2] - 7.5).abs() < 1e-6);
}

/// A world whose chest and signs hold block entities where an import of a Java world keeps
/// them (the block-entity component of their cells, `terrane::anvil::mapping`): a chest
/// holding a named, enchanted sword and 7 emeralds, as a 1.20.4 world holds them (`Count`
/// and `tag`) or, with `components`, as a 1.21.1 world does (`count` and `components`), and two
/// signs of 1.20 and later (`front_text`), at (6, 65, 9) near the spawn (8.5, 65, 8.5) and
/// at (0, 65, 15), 10.6 blocks from it (beyond a player's reach of 8).
fn world_with_block_entities(dir: &Path, components: bool) {
    use terrane::anvil::mapping::block_entity_component;
    use terrane::nbt::{Compound, Tag};
    let mut schema = Schema::new();
    let be = block_entity_component(&mut schema).unwrap();
    let air = schema.add_block("minecraft:air", &[]).unwrap();
    let stone = schema.add_block("minecraft:stone", &[]).unwrap();
    let chest = schema.add_block(CHEST, &[be]).unwrap();
    let sign = schema.add_block("minecraft:oak_sign[rotation=0,waterlogged=false]", &[be]).unwrap();
    let mut world =
        World::builder().backend(Backend::BlockFile).schema(schema).create(dir).unwrap();
    let mut chunk = Chunk::new(air);
    for x in 0..16 {
        for z in 0..16 {
            chunk.set(x, 0, z, stone);
        }
    }
    chunk.set(9, 1, 9, chest);
    chunk.set(6, 1, 9, sign);
    chunk.set(0, 1, 15, sign);
    let c = |pairs: Vec<(&str, Tag)>| {
        let mut c = Compound::new();
        for (k, v) in pairs {
            c.insert(k, v);
        }
        c
    };
    let s = |v: &str| Tag::String(v.to_string());
    let enchant = c(vec![("id", s("minecraft:sharpness")), ("lvl", Tag::Short(5))]);
    let tag = c(vec![
        ("display", Tag::Compound(c(vec![("Name", s(r#"{"text":"Excalibur"}"#))]))),
        ("Enchantments", Tag::compound_list([enchant])),
    ]);
    let mut sword = c(vec![
        ("Slot", Tag::Byte(0)),
        ("id", s("minecraft:diamond_sword")),
        ("Count", Tag::Byte(1)),
        ("tag", Tag::Compound(tag)),
    ]);
    let mut emeralds =
        c(vec![("Slot", Tag::Byte(4)), ("id", s("minecraft:emerald")), ("Count", Tag::Byte(7))]);
    if components {
        sword = terrane::anvil::item_data::item_to_components_form(&sword, 3955).item;
        emeralds = terrane::anvil::item_data::item_to_components_form(&emeralds, 3955).item;
        assert!(sword.contains_key("components"));
    }
    let chest_be =
        c(vec![("id", s("minecraft:chest")), ("Items", Tag::compound_list([sword, emeralds]))]);
    let text = |line: &str| {
        let blank = s(r#"{"text":""}"#);
        let lines =
            vec![s(&format!(r#"{{"text":"{line}"}}"#)), blank.clone(), blank.clone(), blank];
        Tag::Compound(c(vec![
            ("messages", Tag::list(lines)),
            ("color", s("black")),
            ("has_glowing_text", Tag::Byte(0)),
        ]))
    };
    let sign_be = c(vec![
        ("id", s("minecraft:sign")),
        ("front_text", text("kept by terrane")),
        ("back_text", text("")),
        ("is_waxed", Tag::Byte(0)),
    ]);
    for ((x, z), nbt) in [((9, 9), chest_be), ((6, 9), sign_be.clone()), ((0, 15), sign_be)] {
        let bytes = terrane::anvil::nbt::write_root(&nbt).unwrap();
        chunk
            .set_component(world.schema(), terrane::section::cell_index(x, 1, z), 0, be, &bytes)
            .unwrap();
    }
    world.mark_generated(ColumnPos::new(0, 0)).unwrap();
    let mut save = TickSave::new();
    save.put_chunk(0, ChunkPos::new(0, 4, 0), chunk.encode(world.schema()));
    world.save_tick(1, save).unwrap();
    world.close().unwrap();
}

/// An imported chest shows a real client its items with their data (a name, an
/// enchantment), and an imported sign its text; what the chest holds once opened is saved
/// as the game's record.
#[test]
fn imported_chests_and_signs_show_their_items_and_text() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    world_with_block_entities(&dir, false);
    shows_the_chest_and_sign(tmp.path(), &dir);
}

/// A chest of a 1.21.1 world (`count`, `components`) shows a real client its items with
/// their data, in the form the served 1.20.1 game reads (`terrane::anvil::item_data`).
#[test]
fn a_chest_of_a_newer_world_shows_its_items_with_their_data() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    world_with_block_entities(&dir, true);
    shows_the_chest_and_sign(tmp.path(), &dir);
}

/// Serves `dir` (a [`world_with_block_entities`]): a client sees the sign's text and the
/// chest's named, enchanted sword and emeralds; once opened the chest is the game's record.
fn shows_the_chest_and_sign(tmp: &Path, dir: &Path) {
    let modules = node_modules();
    let port = free_port();
    let log = tmp.join("serve.log");
    let (mut server, lines) = serve(dir, port, &log, &["--terrain", "flat"]);
    let steps = serde_json::json!([ { "sign": [6, 65, 9], "text": "kept by terrane" }, { "look": [9, 65, 9] } ]);
    let said = run_steps(port, "reader", steps, &modules, &log);
    let looked: serde_json::Value = said
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e.get("look").is_some())
        .expect("the chest's items");
    let items = looked["items"].as_array().unwrap();
    let sword = items.iter().find(|i| i["name"] == "diamond_sword").expect("the sword");
    // mineflayer reports the name as the item holds it: JSON text.
    assert_eq!(sword["customName"], r#"{"text":"Excalibur"}"#, "{looked}");
    assert_eq!(sword["enchants"], serde_json::json!([["sharpness", 5]]), "{looked}");
    let emeralds = items.iter().find(|i| i["name"] == "emerald").expect("the emeralds");
    assert_eq!(emeralds["count"], 7);
    // Opened, the chest is the game's: its record holds the same items, data included.
    assert!(last_saved(&lines, Duration::from_secs(2)).is_some());
    server.kill().unwrap();
    server.wait().unwrap();
    let world = World::open(dir).unwrap();
    let record = game::container(&world, 0, [9, 65, 9]).unwrap().expect("a record");
    assert_eq!(record.items.len(), 2);
    assert!(!record.items[0].data.is_empty(), "the sword's data: {:?}", record.items[0]);
}

/// A new player starts on the world's blocks at the spawn, not at the generator's height:
/// here a stone pillar up to y 90 stands where the flat generator's ground is at 64.
#[test]
fn a_new_player_starts_on_the_worlds_blocks() {
    let modules = node_modules();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    make_world(&dir);
    let mut world = World::open(&dir).unwrap();
    let stone = terrane::BlockId(world.schema().blocks().find("minecraft:stone").unwrap());
    let mut save = TickSave::new();
    for cy in 4..6 {
        let pos = ChunkPos::new(0, cy, 0);
        let mut chunk = world.get_chunk(pos).unwrap().unwrap_or_else(|| Chunk::new(world.air()));
        for y in 0..16 {
            if cy * 16 + y as i64 <= 90 {
                chunk.set(8, y, 8, stone);
            }
        }
        save.put_chunk(0, pos, chunk.encode(world.schema()));
    }
    world.save_tick(2, save).unwrap();
    world.close().unwrap();
    let port = free_port();
    let log = tmp.path().join("serve.log");
    let (_server, _lines) = serve(&dir, port, &log, &["--terrain", "flat"]);
    let spawn = join_spawn(port, "newcomer", &modules, &log);
    assert_eq!(spawn["pos"], serde_json::json!([8.5, 91, 8.5]), "{spawn}");
}

/// The block entity saved at block `p` of `world` (its chunk's block-entity component).
fn block_entity(world: &World, p: [i64; 3]) -> terrane::nbt::Compound {
    let be = world
        .schema()
        .components()
        .find(terrane::anvil::mapping::BLOCK_ENTITY_COMPONENT)
        .map(terrane::chunk::ComponentId::variable)
        .expect("the block-entity component");
    let pos = ChunkPos::new(p[0].div_euclid(16), p[1].div_euclid(16), p[2].div_euclid(16));
    let chunk = world.get_chunk(pos).unwrap().expect("the chunk is saved");
    let [x, y, z] = p.map(|c| c.rem_euclid(16) as u32);
    let bytes = chunk.component(terrane::section::cell_index(x, y, z), 0, be).expect("saved");
    terrane::nbt::Compound::from_bytes(bytes).unwrap()
}

/// The first line of the front of the sign saved at block `p` of `world`.
fn sign_front(world: &World, p: [i64; 3]) -> terrane::nbt::Tag {
    let nbt = block_entity(world, p);
    let Some(terrane::nbt::Tag::Compound(front)) = nbt.get("front_text") else { panic!("{nbt:?}") };
    let Some(terrane::nbt::Tag::List(_, lines)) = front.get("messages") else {
        panic!("{front:?}")
    };
    lines[0].clone()
}

/// A client may write a sign within 8 blocks of where it stands, and only there: new text
/// sent for a sign 10.6 blocks away changes nothing (not shown, not saved), while the same
/// packet for the sign beside it is applied.
#[test]
fn a_sign_beyond_a_players_reach_keeps_its_text() {
    let modules = node_modules();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    world_with_block_entities(&dir, false);
    let port = free_port();
    let log = tmp.path().join("serve.log");
    let (mut server, lines) = serve(&dir, port, &log, &["--terrain", "flat"]);
    let steps = serde_json::json!([
        { "see": { "pos": [0, 65, 15], "name": "oak_sign" } },
        { "forgeSign": [0, 65, 15], "text": "from afar" },
        { "forgeSign": [6, 65, 9], "text": "from near" },
        // Applied in order: once the near sign shows its text, the far one was decided.
        { "sign": [6, 65, 9], "text": "from near" },
        { "sign": [0, 65, 15], "text": "kept by terrane" },
    ]);
    let said = run_steps(port, "forger", steps, &modules, &log);
    assert!(said.contains(r#""spawn""#), "{said}");
    assert!(last_saved(&lines, Duration::from_secs(2)).is_some());
    server.kill().unwrap();
    server.wait().unwrap();
    let world = World::open(&dir).unwrap();
    let text = |t: &str| terrane::nbt::Tag::String(format!(r#"{{"text":"{t}"}}"#));
    assert_eq!(sign_front(&world, [6, 65, 9]), text("from near"));
    assert_eq!(sign_front(&world, [0, 65, 15]), text("kept by terrane"));
}

/// A sign a player places and writes keeps its text: every client sees it, and it is in the
/// world after a SIGKILL (the block entity saved with its block).
#[test]
fn a_sign_a_player_writes_survives_sigkill() {
    let modules = node_modules();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    make_world(&dir);
    let port = free_port();
    let log = tmp.path().join("serve.log");
    let (mut server, lines) = serve(&dir, port, &log, &["--terrain", "flat"]);
    let steps =
        serde_json::json!([ { "write": { "against": [6, 64, 6], "text": "terrane was here" } } ]);
    let said = run_steps(port, "writer", steps, &modules, &log);
    assert!(said.contains("\"wrote\":[6,65,6]"), "{said}");
    assert!(last_saved(&lines, Duration::from_secs(2)).is_some());
    server.kill().unwrap();
    server.wait().unwrap();

    let world = World::open(&dir).unwrap();
    assert!(block_name(&world, [6, 65, 6]).starts_with("minecraft:oak_sign"));
    let front = sign_front(&world, [6, 65, 6]);
    assert_eq!(front, terrane::nbt::Tag::String(r#"{"text":"terrane was here"}"#.into()));
}

/// A shulker box a player places holds what its item held, saved with the block (in the
/// world after a SIGKILL), and opens as a shulker box; a hopper opens its five slots.
#[test]
fn a_placed_shulker_box_keeps_its_items_and_a_hopper_opens_its_five_slots() {
    let modules = node_modules();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    make_world(&dir);
    let port = free_port();
    let log = tmp.path().join("serve.log");
    let (mut server, lines) = serve(&dir, port, &log, &["--terrain", "flat"]);
    let byte = |v: i64| serde_json::json!({ "type": "byte", "value": v });
    let string = |v: &str| serde_json::json!({ "type": "string", "value": v });
    let gold = serde_json::json!({ "Slot": byte(3), "id": string("minecraft:gold_ingot"), "Count": byte(5) });
    let items =
        serde_json::json!({ "type": "list", "value": { "type": "compound", "value": [gold] } });
    let nbt = serde_json::json!({ "type": "compound", "name": "", "value": {
        "BlockEntityTag": { "type": "compound", "value": { "Items": items } },
    } });
    let steps = serde_json::json!([
        { "place": { "against": [5, 64, 5], "item": "shulker_box", "nbt": nbt } },
        { "look": [5, 65, 5] },
        { "place": { "against": [10, 64, 5], "item": "hopper" } },
        { "look": [10, 65, 5], "empty": true },
    ]);
    let said = run_steps(port, "placer", steps, &modules, &log);
    let looked: Vec<serde_json::Value> = said
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.get("look").is_some())
        .collect();
    assert_eq!(looked.len(), 2, "{said}");
    assert_eq!(looked[0]["slots"], 27, "{said}");
    let shown = &looked[0]["items"][0];
    assert_eq!(
        (&shown["slot"], &shown["name"], &shown["count"]),
        (&3.into(), &"gold_ingot".into(), &5.into())
    );
    assert_eq!(looked[1]["slots"], 5, "{said}");
    assert!(last_saved(&lines, Duration::from_secs(2)).is_some());
    server.kill().unwrap();
    server.wait().unwrap();

    let world = World::open(&dir).unwrap();
    assert!(block_name(&world, [5, 65, 5]).starts_with("minecraft:shulker_box"));
    let record = game::container(&world, 0, [5, 65, 5]).unwrap().expect("saved with the block");
    assert_eq!(record.items, vec![ItemSlot::new(3, "minecraft:gold_ingot", 5)]);
}

/// A furnace and a brewing stand a player places open as their own windows and keep the
/// items put in them by the game's slot rules, saved with the blocks (in the world after a
/// SIGKILL).
#[test]
fn a_placed_furnace_and_brewing_stand_keep_the_items_put_in_them() {
    let modules = node_modules();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    make_world(&dir);
    let port = free_port();
    let log = tmp.path().join("serve.log");
    let (mut server, lines) = serve(&dir, port, &log, &["--terrain", "flat"]);
    let put = |pos: [i32; 3], item: &str, count: u8, slot: u8| serde_json::json!({ "put": pos, "item": item, "count": count, "slot": slot });
    let steps = serde_json::json!([
        { "place": { "against": [5, 64, 5], "item": "furnace" } },
        put([5, 65, 5], "raw_iron", 5, 0),
        put([5, 65, 5], "coal", 3, 1),
        { "look": [5, 65, 5] },
        { "place": { "against": [10, 64, 5], "item": "brewing_stand" } },
        put([10, 65, 5], "glass_bottle", 1, 2),
        put([10, 65, 5], "blaze_powder", 4, 4),
        { "look": [10, 65, 5] },
    ]);
    let said = run_steps(port, "smelter", steps, &modules, &log);
    let looked: Vec<serde_json::Value> = said
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.get("look").is_some())
        .collect();
    assert_eq!(looked.len(), 2, "{said}");
    assert_eq!((&looked[0]["slots"], &looked[1]["slots"]), (&3.into(), &5.into()), "{said}");
    assert!(last_saved(&lines, Duration::from_secs(2)).is_some());
    server.kill().unwrap();
    server.wait().unwrap();

    let world = World::open(&dir).unwrap();
    assert!(block_name(&world, [5, 65, 5]).starts_with("minecraft:furnace"));
    let furnace = game::container(&world, 0, [5, 65, 5]).unwrap().expect("saved with the block");
    let want =
        vec![ItemSlot::new(0, "minecraft:raw_iron", 5), ItemSlot::new(1, "minecraft:coal", 3)];
    assert_eq!(furnace.items, want);
    let stand = game::container(&world, 0, [10, 65, 5]).unwrap().expect("saved with the block");
    let want = vec![
        ItemSlot::new(2, "minecraft:glass_bottle", 1),
        ItemSlot::new(4, "minecraft:blaze_powder", 4),
    ];
    assert_eq!(stand.items, want);
}

/// A banner a player places keeps its item's patterns and a head its owner: their block
/// entities are saved with the blocks (in the world after a SIGKILL).
#[test]
fn a_placed_banner_keeps_its_patterns_and_a_head_its_owner() {
    let modules = node_modules();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    make_world(&dir);
    let port = free_port();
    let log = tmp.path().join("serve.log");
    let (mut server, lines) = serve(&dir, port, &log, &["--terrain", "flat"]);
    let v = |t: &str, v: serde_json::Value| serde_json::json!({ "type": t, "value": v });
    let pattern =
        serde_json::json!({ "Pattern": v("string", "bs".into()), "Color": v("int", 14.into()) });
    let patterns = v("list", serde_json::json!({ "type": "compound", "value": [pattern] }));
    let banner = serde_json::json!({ "type": "compound", "name": "", "value": {
        "BlockEntityTag": v("compound", serde_json::json!({ "Patterns": patterns })),
    } });
    let head = serde_json::json!({ "type": "compound", "name": "", "value": {
        "SkullOwner": v("string", "Notch".into()),
    } });
    let steps = serde_json::json!([
        { "place": { "against": [3, 64, 12], "item": "white_banner", "nbt": banner } },
        { "place": { "against": [12, 64, 12], "item": "player_head", "nbt": head } },
    ]);
    let said = run_steps(port, "decorator", steps, &modules, &log);
    assert!(said.contains("\"placed\":[12,65,12]"), "{said}");
    assert!(last_saved(&lines, Duration::from_secs(2)).is_some());
    server.kill().unwrap();
    server.wait().unwrap();

    let world = World::open(&dir).unwrap();
    let banner = block_entity(&world, [3, 65, 12]);
    let Some(terrane::nbt::Tag::List(_, patterns)) = banner.get("Patterns") else {
        panic!("{banner:?}")
    };
    assert_eq!(patterns.len(), 1, "{banner:?}");
    assert_eq!(
        block_entity(&world, [12, 65, 12]).get("SkullOwner"),
        Some(&terrane::nbt::Tag::String("Notch".into()))
    );
}

/// A player of an imported Java world joins the served world where their Java file says,
/// with its items: the file of their offline id (`playerdata/<uuid>.dat`, gzip NBT); one in
/// the Nether joins in the Nether, where theirs says.
#[test]
fn an_imported_java_player_joins_where_their_file_says() {
    use std::io::Write as _;
    use terrane::nbt::{Compound, Tag, Writer};
    let modules = node_modules();
    let tmp = tempfile::tempdir().unwrap();
    let java = terrane_anvil::testdata::java_world_finished(tmp.path(), "anvil/1.21.1/r.0.0.mca");
    let write_player = |name: &str, pos: [f64; 3], dimension: &str| {
        let mut player = Compound::new();
        player.insert("Pos", Tag::List(6, pos.map(Tag::Double).to_vec()));
        player.insert("Dimension", Tag::String(dimension.into()));
        let mut planks = Compound::new();
        planks.insert("Slot", Tag::Byte(0));
        planks.insert("id", Tag::String("minecraft:oak_planks".into()));
        planks.insert("Count", Tag::Byte(12));
        player.insert("Inventory", Tag::compound_list([planks]));
        let mut w = Writer::new();
        w.named("", &Tag::Compound(player)).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&w.out).unwrap();
        let file = format!("{}.dat", game::uuid_text(game::offline_player_id(name)));
        std::fs::create_dir_all(java.join("playerdata")).unwrap();
        std::fs::write(java.join("playerdata").join(file), gz.finish().unwrap()).unwrap();
    };
    write_player("javaplayer", [40.5, 150.0, 24.5], "minecraft:overworld");
    // In the Nether: there, with their items.
    write_player("netherplayer", [-10.5, 40.0, 2.5], "minecraft:the_nether");
    let dir = tmp.path().join("world");
    let mut world = World::builder().backend(Backend::BlockFile).create(&dir).unwrap();
    terrane::java::import_java_world(&mut world, &java, &mut |_, _| {}).unwrap();
    world.close().unwrap();

    let port = free_port();
    let log = tmp.path().join("serve.log");
    let (mut server, lines) = serve(&dir, port, &log, &[]);
    let spawn = join_spawn(port, "javaplayer", &modules, &log);
    assert_eq!(spawn["pos"], serde_json::json!([40.5, 150, 24.5]), "{spawn}");
    assert!(spawn["dimension"].as_str().is_some_and(|d| d.ends_with("overworld")), "{spawn}");
    let spawn = join_spawn(port, "netherplayer", &modules, &log);
    assert_eq!(spawn["pos"], serde_json::json!([-10.5, 40, 2.5]), "{spawn}");
    assert!(spawn["dimension"].as_str().is_some_and(|d| d.ends_with("the_nether")), "{spawn}");
    // Their record is the game's from the next save: the items of the Java file.
    assert!(last_saved(&lines, Duration::from_secs(2)).is_some());
    server.kill().unwrap();
    server.wait().unwrap();
    let world = World::open(&dir).unwrap();
    let record =
        game::player(&world, game::offline_player_id("javaplayer")).unwrap().expect("saved");
    assert_eq!(record.items, vec![ItemSlot::new(36, "minecraft:oak_planks", 12)]);
    let nether =
        game::player(&world, game::offline_player_id("netherplayer")).unwrap().expect("saved");
    assert_eq!(nether.items, record.items);
    assert_eq!((record.dimension, nether.dimension), (0, 1), "each in their own dimension");
}

/// A real client steps into a Nether portal of the served world and is in the Nether, in a
/// portal the server built there (at the portal's place scaled by 1/8), with the Nether's
/// blocks around it; after a SIGKILL the world holds that portal in the Nether and the
/// player's record names the Nether.
#[test]
fn a_real_client_goes_through_a_nether_portal() {
    let modules = node_modules();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    // A stone floor at y 64 over column (0, 0) and a lit obsidian frame standing along x at
    // z 12: x 12..=15, y 65..=69, its inside (13..=14, 66..=68) Nether portal.
    let mut schema = Schema::new();
    let air = schema.add_block("minecraft:air", &[]).unwrap();
    let stone = schema.add_block("minecraft:stone", &[]).unwrap();
    let obsidian = schema.add_block("minecraft:obsidian", &[]).unwrap();
    let portal = schema.add_block("minecraft:nether_portal[axis=x]", &[]).unwrap();
    let mut world =
        World::builder().backend(Backend::BlockFile).schema(schema).create(&dir).unwrap();
    let mut chunk = Chunk::new(air);
    for x in 0..16 {
        for z in 0..16 {
            chunk.set(x, 0, z, stone);
        }
    }
    for x in 12..=15u32 {
        for y in 1..=5u32 {
            let inside = (13..=14).contains(&x) && (2..=4).contains(&y);
            chunk.set(x, y, 12, if inside { portal } else { obsidian });
        }
    }
    world.mark_generated(ColumnPos::new(0, 0)).unwrap();
    let mut save = TickSave::new();
    save.put_chunk(0, ChunkPos::new(0, 4, 0), chunk.encode(world.schema()));
    world.save_tick(1, save).unwrap();
    world.close().unwrap();

    let port = free_port();
    let log = tmp.path().join("serve.log");
    let (mut server, lines) = serve(&dir, port, &log, &[]);
    let steps = serde_json::json!([
        { "enter": [13, 66, 12], "dimension": "the_nether", "feet": "nether_portal" }
    ]);
    let said = run_steps(port, "traveller", steps, &modules, &log);
    let entered = said
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["entered"].is_array())
        .unwrap_or_else(|| panic!("never entered: {said}"));
    assert!(entered["dimension"].as_str().is_some_and(|d| d.ends_with("the_nether")), "{entered}");
    assert_eq!(entered["feet"], "nether_portal", "arrived in a portal: {entered}");
    // (13, 12) / 8 is the block column (1, 1): the portal built there is two wide, from x 1.
    let pos = &entered["pos"];
    assert_eq!((pos[0].as_f64(), pos[2].as_f64()), (Some(2.0), Some(1.5)), "{entered}");
    let y = pos[1].as_f64().unwrap() as i64;

    assert!(last_saved(&lines, Duration::from_secs(2)).is_some());
    server.kill().unwrap();
    server.wait().unwrap();
    let world = World::open(&dir).unwrap();
    let record =
        game::player(&world, game::offline_player_id("traveller")).unwrap().expect("saved");
    assert_eq!(record.dimension, 1, "the Nether");
    assert_eq!(block_name_in(&world, 1, [1, y, 1]), "minecraft:nether_portal[axis=x]");
    assert_eq!(block_name_in(&world, 1, [0, y, 1]), "minecraft:obsidian");
    assert_eq!(block_name(&world, [13, 66, 12]), "minecraft:nether_portal[axis=x]");
}

/// A player's ender chest is their own: any ender chest block opens the items their record
/// keeps there, and they stay in the record.
#[test]
fn an_ender_chest_opens_the_players_own_items() {
    let modules = node_modules();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    make_world(&dir);
    let mut world = World::open(&dir).unwrap();
    let mut schema = world.schema().clone();
    schema.add_block("minecraft:ender_chest[facing=north,waterlogged=false]", &[]).unwrap();
    world.extend_schema(schema).unwrap();
    let ender = terrane::BlockId(
        world
            .schema()
            .blocks()
            .find("minecraft:ender_chest[facing=north,waterlogged=false]")
            .unwrap(),
    );
    let mut chunk = world.get_chunk(ChunkPos::new(0, 4, 0)).unwrap().unwrap();
    chunk.set(12, 1, 12, ender);
    let record = game::PlayerRecord {
        position: [8.5, 65.0, 8.5],
        ender_items: vec![ItemSlot::new(4, "minecraft:emerald", 11)],
        ..game::PlayerRecord::default()
    };
    let mut save = TickSave::new();
    save.put_chunk(0, ChunkPos::new(0, 4, 0), chunk.encode(world.schema()));
    game::put_player(&mut save, game::offline_player_id("keeper"), &record);
    world.save_tick(world.tick() + 1, save).unwrap();
    world.close().unwrap();

    let port = free_port();
    let log = tmp.path().join("serve.log");
    let (mut server, lines) = serve(&dir, port, &log, &["--terrain", "flat"]);
    let steps = serde_json::json!([ { "look": [12, 65, 12] } ]);
    let said = run_steps(port, "keeper", steps, &modules, &log);
    assert!(said.contains("\"name\":\"emerald\"") && said.contains("\"count\":11"), "{said}");
    assert!(last_saved(&lines, Duration::from_secs(2)).is_some());
    server.kill().unwrap();
    server.wait().unwrap();
    let world = World::open(&dir).unwrap();
    let saved = game::player(&world, game::offline_player_id("keeper")).unwrap().unwrap();
    assert_eq!(saved.ender_items, record.ender_items);
}

/// Joins the server on `port` as `name` with `join.js` (view distance 2) and returns its
/// `spawn` report: where the server placed the player.
fn join_spawn(port: u16, name: &str, modules: &Path, log: &Path) -> serde_json::Value {
    let spec = serde_json::json!({
        "host": "127.0.0.1", "port": port, "username": name, "viewDistance": 2,
        "timeoutMs": 90_000,
    });
    let mut child = ChildGuard::spawn(
        Command::new("node")
            .arg(bots().join("join.js"))
            .arg(spec.to_string())
            .env("NODE_PATH", modules)
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    )
    .expect("start node join.js");
    let out = std::io::read_to_string(child_stdout(&mut child)).unwrap_or_default();
    out.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .find(|e: &serde_json::Value| e["event"] == "spawn")
        .unwrap_or_else(|| panic!("no spawn: {out}\n{}", std::fs::read_to_string(log).unwrap()))
}

/// Runs `steps.js` as `name` with `steps` against the server on `port` and returns what it
/// reported, failing with the server's log when the bot failed.
fn run_steps(
    port: u16,
    name: &str,
    steps: serde_json::Value,
    modules: &Path,
    log: &Path,
) -> String {
    let spec = serde_json::json!({
        "host": "127.0.0.1", "port": port, "username": name, "timeoutMs": 90000, "steps": steps,
    });
    let bot = Command::new("node")
        .arg(bots().join("steps.js"))
        .arg(spec.to_string())
        .env("NODE_PATH", modules)
        .output()
        .expect("run node");
    let said = String::from_utf8_lossy(&bot.stdout).to_string();
    assert!(
        bot.status.success(),
        "the bot failed:\n{said}\n{}\nserver log:\n{}",
        String::from_utf8_lossy(&bot.stderr),
        std::fs::read_to_string(log).unwrap_or_default()
    );
    said
}
