//! The crash test with real clients: four mineflayer players in survival
//! (`crates/valence/tests/bots/play.js`) dig, place planks from their inventories, move
//! planks, diamonds, emeralds, named swords and full shulker boxes between chests (two
//! players share each) and inventories, and raw iron and coal in and out of furnaces, on
//! `terrane serve`, which is SIGKILLed at random moments and started again; the players
//! reconnect.
//!
//! After every kill, from the world read through terrane (not from the server's memory):
//! - the world's tick is at least the last `saved N` the server printed;
//! - every block the server applied (`--print-edits`) in a tick at or before the world's
//!   tick holds that edit's state, and nothing from a later tick: the world is the state of
//!   exactly one save;
//! - the number of each item across all chests, furnaces and inventories (plus the planks placed as
//!   blocks) equals the start, an item's data (a named, enchanted, worn sword; a shulker box
//!   holding gold and a named book) part of what it is: nothing duplicated, nothing lost,
//!   nothing changed;
//! - each player rejoins where the world's record of them says, with its items.
//!
//! Kills: `TERRANE_GAME_KILLS` (default 30; `cargo xtask crash` runs 300).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::minecraft::{block_name, free_port, node_modules, serve};
use common::players::{GRASS, make_world, start_bots, totals};
use terrane::game;
use terrane::{Backend, World};
use terrane_store::conformance::Rng;

const BOTS: i32 = 4;

/// What the server printed: applied edits and acknowledged saves.
#[derive(Default)]
struct ServerLog {
    edits: Vec<(u64, [i64; 3], String)>,
    saved: Option<u64>,
}

fn drain(lines: &mpsc::Receiver<String>, log: &mut ServerLog) {
    while let Ok(line) = lines.try_recv() {
        parse_line(&line, log);
    }
}

/// [`drain`] to the end of a stopped server's output: until its reader thread has read the
/// pipe to its end (a busy machine can leave printed lines unread for a while), or 20 s.
fn drain_to_end(lines: &mpsc::Receiver<String>, log: &mut ServerLog) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => parse_line(&line, log),
            Err(_) => return, // the end of the output, or the deadline
        }
    }
}

/// One line of the server's stdout into the log: `saved N`, `edit T X Y Z STATE`.
fn parse_line(line: &str, log: &mut ServerLog) {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["saved", t] => log.saved = log.saved.max(t.parse().ok()),
        ["edit", t, x, y, z, state] => log.edits.push((
            t.parse().unwrap(),
            [x.parse().unwrap(), y.parse().unwrap(), z.parse().unwrap()],
            (*state).to_string(),
        )),
        _ => {}
    }
}

fn kills(default: u32) -> u32 {
    std::env::var("TERRANE_GAME_KILLS").ok().and_then(|k| k.parse().ok()).unwrap_or(default)
}

#[test]
fn players_survive_sigkill_with_every_acknowledged_edit_and_no_item_duplicated() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    let start = make_world(&dir, Backend::BlockFile, BOTS);
    let r = kill_rounds(&dir, tmp.path(), start, kills(30), Shape::Together, None);
    assert_eq!((r.duplicated, r.lost), (0, 0));
}

/// The comparison: the same players and kills against the same server saving the field's
/// usual way, players apart from the chunks and chests (`--players-apart`). It counts the
/// items duplicated and lost; the round's checks of one save's state do not apply to it.
#[test]
fn saved_apart_as_usual_the_same_kills_duplicate_or_lose_items() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("world");
    let start = make_world(&dir, Backend::BlockFile, BOTS);
    let r = kill_rounds(&dir, tmp.path(), start, kills(30), Shape::Apart, None);
    eprintln!(
        "saved apart: {} items duplicated, {} lost over {} kills ({} item moves, {} edits)",
        r.duplicated,
        r.lost,
        kills(30),
        r.moves,
        r.durable_edits
    );
}

/// The same on a world in PostgreSQL; every third round kills the database server instead
/// of the game server (which then stops on its failed save) and starts it again.
#[cfg(feature = "postgres")]
#[test]
fn on_postgresql_players_survive_kills_of_the_server_and_of_the_database() {
    use terrane::postgres::testing::PgServer;
    let pg = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let tmp = tempfile::tempdir().unwrap();
    let location = std::path::PathBuf::from(pg.conninfo());
    let start = make_world(&location, Backend::Postgres, BOTS);
    let r = kill_rounds(
        &location,
        tmp.path(),
        start,
        (kills(30) / 3).max(6),
        Shape::Together,
        Some(&pg),
    );
    assert_eq!((r.duplicated, r.lost), (0, 0));
}

/// How the server under test saves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// terrane's: chunks, chests and players in one save per tick.
    Together,
    /// The field's usual shape: chunks and chests every 40 ticks, players apart every 60.
    Apart,
}

/// What a run of kills counted.
struct Report {
    durable_edits: usize,
    moves: usize,
    /// Items that appeared (the per-item growth of the totals across each kill).
    duplicated: u64,
    /// Items that vanished.
    lost: u64,
}

fn kill_rounds(
    location: &Path,
    tmp: &Path,
    start: BTreeMap<String, u64>,
    kills: u32,
    shape: Shape,
    #[cfg(feature = "postgres")] pg: Option<&terrane::postgres::testing::PgServer>,
    #[cfg(not(feature = "postgres"))] pg: Option<&()>,
) -> Report {
    let modules = node_modules();
    let dir = location;
    let port = free_port();
    let server_log = tmp.join("serve.log");
    // Columns load one chunk at a time (a round trip each on PostgreSQL): a short view keeps
    // the joins of every restart quick.
    let mut extra = vec![
        "--game-mode",
        "survival",
        "--print-edits",
        "--view-distance",
        "4",
        "--terrain",
        "flat",
    ];
    if shape == Shape::Apart {
        extra.extend(["--save-every", "40", "--players-apart", "60"]);
    }
    let (mut duplicated, mut lost) = (0, 0);
    let mut before = start.clone();
    let (mut bots_child, bot_lines) = start_bots(port, 7, &modules, BOTS);
    let mut rng = Rng::new(0x5eed);
    // Every applied edit still part of the world's history: (tick, position, state).
    let mut history: Vec<(u64, [i64; 3], String)> = Vec::new();
    let mut players: BTreeMap<u128, game::PlayerRecord> = BTreeMap::new();
    let (mut durable_edits, mut spawns_checked) = (0usize, 0usize);
    // Item moves between chests and inventories, by item.
    let mut moves: BTreeMap<String, usize> = BTreeMap::new();

    let mut ever_edited: std::collections::BTreeSet<[i64; 3]> = Default::default();
    for round in 0..kills {
        let (mut server, lines) = serve(dir, port, &server_log, &extra);
        let mut log = ServerLog::default();
        let mut seen = std::collections::HashSet::new();
        // Kill at a random moment once the players are back: after a random number of the
        // server's ticks (6 to 126, 0.3 s to 6.3 s at full speed) have been saved, so that a
        // busy machine, on which the server ticks slowly, still sees the players play. Bounds
        // for a round that stalls: 120 s for the joins, 120 s of play.
        let started = Instant::now();
        let mut joined = 0;
        // (ticks to play, since when, the first tick saved since the joins)
        let mut play: Option<(u64, Instant, Option<u64>)> = None;
        loop {
            drain(&lines, &mut log);
            joined += check_bot_lines(
                &bot_lines,
                &players,
                &mut seen,
                round,
                &mut spawns_checked,
                &mut moves,
            );
            let now = Instant::now();
            if joined >= BOTS as usize && play.is_none() {
                play = Some((6 + rng.below(121), now, log.saved));
            }
            if let Some((_, _, base @ None)) = &mut play {
                *base = log.saved;
            }
            let played = play.is_some_and(|(ticks, since, base)| {
                base.zip(log.saved).is_some_and(|(b, t)| t >= b + ticks)
                    || now - since > Duration::from_secs(120)
            });
            if played || (play.is_none() && now - started > Duration::from_secs(120)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let database_killed = pg.is_some() && round % 3 == 2;
        #[cfg(feature = "postgres")]
        if let Some(pg) = pg.filter(|_| database_killed) {
            pg.kill_primary().unwrap_or_else(|e| panic!("{e}"));
            // The server finds out at its next save and stops with the error.
            let deadline = Instant::now() + Duration::from_secs(20);
            while server.try_wait().unwrap().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let _ = server.kill();
        server.wait().unwrap();
        #[cfg(feature = "postgres")]
        if let Some(pg) = pg.filter(|_| database_killed) {
            pg.restart_primary().unwrap_or_else(|e| panic!("{e}"));
        }
        drain_to_end(&lines, &mut log);
        check_bot_lines(&bot_lines, &players, &mut seen, round, &mut spawns_checked, &mut moves);
        ever_edited.extend(log.edits.iter().map(|e| e.1));
        history.extend(log.edits);

        if std::env::var_os("TERRANE_GAME_VERBOSE").is_some() {
            eprintln!("{}", std::fs::read_to_string(&server_log).unwrap_or_default());
        }
        let world = World::open(dir).unwrap();
        let w = world.tick();
        if let Some(saved) = log.saved {
            assert!(
                w >= saved,
                "round {round}: the world is at tick {w}, the server acknowledged {saved}"
            );
        }
        // Edits of ticks after the world's never happened: the next server reuses the ticks.
        history.retain(|(t, _, _)| *t <= w);
        let now = totals(&world, BOTS);
        for item in before.keys().chain(now.keys()) {
            let (b, n) =
                (before.get(item).copied().unwrap_or(0), now.get(item).copied().unwrap_or(0));
            duplicated += n.saturating_sub(b);
            lost += b.saturating_sub(n);
        }
        before = now;
        players = game::players(&world).unwrap();
        durable_edits = history.len();
        if shape == Shape::Apart {
            // A world saved in parts is no one tick's state: only its items are counted.
            world.close().unwrap();
            eprintln!(
                "round {round} (saved apart): world tick {w}, {duplicated} items duplicated, {lost} lost so far"
            );
            continue;
        }
        let mut expected: BTreeMap<[i64; 3], &str> =
            ever_edited.iter().map(|p| (*p, GRASS)).collect();
        for (_, pos, state) in &history {
            expected.insert(*pos, state);
        }
        for (pos, state) in &expected {
            assert_eq!(
                block_name(&world, *pos),
                *state,
                "round {round}: block {pos:?} at world tick {w}"
            );
        }
        assert_eq!(before, start, "round {round}: items at world tick {w}");
        world.close().unwrap();
        eprintln!(
            "round {round}{}: world tick {w}, acknowledged {:?}, {durable_edits} durable edits, {} players saved",
            if database_killed { " (database killed)" } else { "" },
            log.saved,
            players.len()
        );
    }
    bots_child.kill().ok();
    let with_data = |name: &str| moves.get(name).copied().unwrap_or(0);
    let (swords, boxes) = (with_data("diamond_sword"), with_data("shulker_box"));
    let furnace = with_data("raw_iron") + with_data("coal");
    let moves: usize = moves.values().sum();
    eprintln!(
        "item moves: {swords} of named, enchanted swords, {boxes} of full shulker boxes, \
         {furnace} in and out of furnaces"
    );
    eprintln!(
        "{kills} kills: {durable_edits} edits durable, {spawns_checked} rejoins checked, {moves} item moves, \
         {duplicated} items duplicated, {lost} lost"
    );
    // An edit per kill, up to 100: the lanes hold 64 planks each, so long runs run out of
    // planks to place (item moves go on).
    if shape == Shape::Together {
        assert!(
            durable_edits >= (kills as usize).min(100),
            "the players made too few edits to test anything: {durable_edits} in {kills} kills"
        );
    }
    assert!(spawns_checked >= kills as usize, "too few rejoins were checked: {spawns_checked}");
    assert!(moves > 0, "no item moved between a chest and an inventory");
    if kills >= 10 {
        assert!(swords > 0 && boxes > 0, "no item with data moved: {swords} swords, {boxes} boxes");
        assert!(furnace > 0, "nothing moved in or out of a furnace");
    }
    Report { durable_edits, moves, duplicated, lost }
}

/// Reads the bots' lines: checks each player's first join to this server against `players`
/// (the world's records when it started; a later join to the same server, after a player
/// quit, meets what this server saved since), counts item moves. Returns the joins seen.
fn check_bot_lines(
    bot_lines: &mpsc::Receiver<serde_json::Value>,
    players: &BTreeMap<u128, game::PlayerRecord>,
    seen: &mut std::collections::HashSet<u128>,
    round: u32,
    spawns_checked: &mut usize,
    moves: &mut BTreeMap<String, usize>,
) -> usize {
    let mut joined = 0;
    while let Ok(v) = bot_lines.try_recv() {
        if std::env::var_os("TERRANE_GAME_VERBOSE").is_some() {
            eprintln!("bot: {v}");
        }
        match v["event"].as_str() {
            Some("spawn") => {
                joined += 1;
                // Records go by the game's offline id of the name (not Valence's own id,
                // which the client is given).
                let id = game::offline_player_id(v["bot"].as_str().expect("a bot name"));
                if !seen.insert(id) {
                    continue;
                }
                let Some(record) = players.get(&id) else { continue };
                let pos: Vec<f64> =
                    v["pos"].as_array().unwrap().iter().map(|p| p.as_f64().unwrap()).collect();
                assert!(
                    (pos[0] - record.position[0]).abs() < 1e-6
                        && (pos[2] - record.position[2]).abs() < 1e-6
                        && (pos[1] - record.position[1]).abs() < 0.6,
                    "round {round}: {} rejoined at {pos:?}, the world says {:?}",
                    v["bot"],
                    record.position
                );
                let mut want: BTreeMap<String, u64> = BTreeMap::new();
                for (item, n) in
                    record.items.iter().chain(&record.cursor).map(|s| (&s.item, &s.count))
                {
                    *want.entry(item.trim_start_matches("minecraft:").to_string()).or_default() +=
                        u64::from(*n);
                }
                let got: BTreeMap<String, u64> = v["items"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, n)| (k.clone(), n.as_u64().unwrap()))
                    .collect();
                assert_eq!(
                    got, want,
                    "round {round}: {} rejoined with other items than its record {record:?}",
                    v["bot"]
                );
                *spawns_checked += 1;
            }
            Some("action") => {
                if matches!(v["what"].as_str(), Some("withdraw" | "deposit")) {
                    *moves.entry(v["item"].as_str().unwrap_or("?").to_string()).or_default() += 1;
                }
            }
            Some("kicked") => panic!("round {round}: a player was kicked: {v}"),
            _ => {}
        }
    }
    joined
}
