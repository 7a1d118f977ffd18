//! The built `terrane` binary on temporary directories: a tiny demo, then every command that
//! opens its world; bad input exits non-zero with a clear message; `schem info` on the
//! fixtures.

use std::path::Path;
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_terrane"));
    c.env("RUST_LOG", "warn");
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run terrane")
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "terrane {args:?} failed ({}):\nstdout: {}\nstderr: {}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8 output")
}

/// Runs a command that must fail with `status`; returns stderr.
fn fails(args: &[&str], status: i32) -> String {
    let o = run(args);
    assert_eq!(
        o.status.code(),
        Some(status),
        "terrane {args:?}: stderr {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(err.contains("error"), "no error message: {err}");
    err
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(args)).expect("JSON output")
}

use terrane_section::testdata::{ChildGuard, fixture};

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn tiny_demo(dir: &Path, backend: &str) -> serde_json::Value {
    tiny_demo_at(&[s(dir), "--backend", backend])
}

/// The flags of a small, fast demo (besides its ticks or minutes).
const TINY: [&str; 20] = [
    "--tps",
    "200",
    "--players",
    "2",
    "--view",
    "1",
    "--walk",
    "64",
    "--speed",
    "2",
    "--pregen-radius",
    "3",
    "--pregen-threads",
    "1",
    "--workers",
    "1",
    "--arena",
    "8",
    "--region-work-us",
    "200",
];

/// A small demo at `location` (a directory and its backend, or `--store CONNECTION`).
fn tiny_demo_at(location: &[&str]) -> serde_json::Value {
    let mut args = vec!["demo"];
    args.extend(location);
    args.extend(["--ticks", "12", "--json"]);
    args.extend(TINY);
    json(&args)
}

fn demo_then_every_command(backend: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let world = tmp.path().join("world");
    let summary = tiny_demo(&world, backend);
    assert!(summary["chunks_generated"].as_u64().unwrap() > 0);
    assert!(summary["tick_saves"].as_u64().unwrap() >= 12);
    assert_eq!(summary["restore_exact"], true);
    assert!(summary["region_ticks"].as_u64().unwrap() > 0);
    assert!(summary["max_parallel_region_ticks"].as_u64().unwrap() >= 1);

    let info = json(&["info", s(&world), "--json"]);
    assert_eq!(info["backend"], backend);
    let chunks: u64 = info["chunks"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).sum();
    assert!(chunks > 0);
    assert_eq!(info["entities"], 2, "one entity per player");
    assert!(ok(&["info", s(&world)]).contains("generated"));

    let v = json(&["verify", s(&world), "--json"]);
    assert_eq!(v["ok"], true);
    assert_eq!(v["entity_refs"], 2);

    // Backups into a repository: the second, of an unchanged world, writes no value; the
    // first restores into a world that verifies with the same chunk count.
    let repo = tmp.path().join("backups");
    let first = json(&["backup", s(&world), s(&repo), "--json"]);
    assert_eq!((first["id"].as_u64(), first["removed"].as_u64()), (Some(1), Some(0)));
    assert!(first["pack_bytes"].as_u64().unwrap() > 0);
    assert_eq!(first["read"], first["objects"], "the first backup reads the whole world");
    let second = json(&["backup", s(&world), s(&repo), "--json"]);
    assert_eq!((second["changed"].as_u64(), second["pack_bytes"].as_u64()), (Some(0), Some(0)));
    assert_eq!(second["read"], 0, "the world records what it changes: nothing since");
    let listed = json(&["backup", "list", s(&repo), "--json"]);
    assert_eq!(listed.as_array().unwrap().len(), 2);
    ok(&["backup", "verify", s(&repo)]);
    // As of a moment: the newest backup taken then or before (RFC 3339 or an age).
    let taken = |i: usize| listed[i]["created"].as_str().unwrap().to_string();
    assert!(taken(0).ends_with('Z') && taken(0) <= taken(1), "{listed}");
    let as_of = |when: &str| {
        let to = tmp.path().join(format!("as-of-{}", when.replace(':', "-")));
        json(&["restore", s(&repo), s(&to), "--as-of", when, "--json"])["id"].as_u64()
    };
    assert_eq!(as_of("0s"), Some(2));
    assert!(matches!(as_of(&taken(0)), Some(1 | 2)), "taken within one second of each other");
    fails(&["restore", s(&repo), s(&tmp.path().join("r0")), "--as-of", "1971-01-01T00:00:00Z"], 2);
    fails(&["restore", s(&repo), s(&tmp.path().join("r0")), "--as-of", "yesterday"], 2);
    fails(&["restore", s(&repo), s(&tmp.path().join("r0")), "--as-of", "1h", "--at", "1"], 2);
    let backup = tmp.path().join("restored");
    ok(&["restore", s(&repo), s(&backup), "--at", "1"]);
    let bi = json(&["info", s(&backup), "--json"]);
    assert_eq!(bi["chunks"], info["chunks"]);
    ok(&["verify", s(&backup)]);
    fails(&["restore", s(&repo), s(&backup)], 2);
    fails(&["restore", s(&repo), s(&tmp.path().join("r9")), "--at", "9"], 2);
    fails(&["backup", "list", s(&tmp.path().join("nothing"))], 2);
    fails(&["backup", "prune", s(&tmp.path().join("nothing")), "--keep-last", "1"], 2);
    assert!(!tmp.path().join("nothing").exists(), "a prune creates no repository");
    let pruned = json(&["backup", "prune", s(&repo), "--keep-last", "1", "--json"]);
    assert_eq!(pruned["removed"], serde_json::json!([1]));
    ok(&["restore", s(&repo), s(&tmp.path().join("restored-2"))]);

    // Chunk (0, 0, 0) is the bedrock layer of the spawn column: pre-generated.
    let c = json(&["chunk", "get", s(&world), "0", "0", "0", "--json"]);
    assert!(c["blocks"]["minecraft:bedrock"].as_u64().unwrap() == 256);
    let raw = tmp.path().join("c.bin");
    ok(&["chunk", "get", s(&world), "0", "0", "0", "--out", s(&raw)]);
    ok(&["chunk", "put", s(&world), "5", "-1", "5", s(&raw)]);
    let moved = json(&["chunk", "get", s(&world), "5", "-1", "5", "--json"]);
    assert_eq!(moved["blocks"], c["blocks"]);
    assert_eq!(moved["level"], "L0", "a write promotes to L0");
    fails(&["chunk", "get", s(&world), "9999", "0", "0"], 2);
    // Area 0,0 back as the backup holds it: the chunk put there is gone again; the world
    // verifies.
    let get = |w: &Path| {
        let o = run(&["chunk", "get", s(w), "5", "-1", "5", "--json"]);
        (o.status.code(), String::from_utf8_lossy(&o.stdout).replace(s(w), "W"))
    };
    assert_ne!(get(&world), get(&backup));
    let r = json(&["restore", s(&repo), s(&world), "--area", "0,0", "--json"]);
    let written = r["restored"][0]["objects_written"].as_u64().unwrap();
    let removed = r["restored"][0]["objects_removed"].as_u64().unwrap();
    assert!(written + removed >= 1, "{r}");
    assert_eq!(get(&world), get(&backup), "the chunk is as the backup holds it");
    ok(&["verify", s(&world)]);
    fails(&["restore", s(&repo), s(&world), "--area", "zero"], 2);
    let b =
        json(&["restore", s(&repo), s(&world), "--from", "0,60,0", "--to", "15,70,15", "--json"]);
    assert_eq!(b["restored"][0]["chunks"].as_u64(), Some(2), "chunk y 3 and 4: {b}");
    fails(&["restore", s(&repo), s(&world), "--from", "0,60,0"], 2);

    // Schematics: export a box, inspect it, paste it elsewhere, the world still verifies.
    let schem = tmp.path().join("box.schem");
    ok(&["schem", "export", s(&world), "--from", "0,0,0", "--to", "7,70,7", s(&schem)]);
    let si = json(&["schem", "info", s(&schem), "--json"]);
    assert_eq!(si["version"], 3);
    assert_eq!(si["size"], serde_json::json!([8, 71, 8]));
    let counted: u64 =
        si["blocks"].as_array().unwrap().iter().map(|b| b["count"].as_u64().unwrap()).sum();
    assert_eq!(counted, 8 * 71 * 8);
    ok(&["schem", "import", s(&world), s(&schem), "--at", "100,0,-100"]);
    let pasted = json(&["chunk", "get", s(&world), "6", "0", "-7", "--json"]);
    assert!(pasted["blocks"]["minecraft:bedrock"].as_u64().unwrap() > 0);
    ok(&["verify", s(&world)]);

    // A fixture pasted into the world registers its states.
    ok(&[
        "schem",
        "import",
        s(&world),
        s(&fixture("schem/green-cottage.schem")),
        "--at",
        "-200,80,-200",
    ]);
    ok(&["verify", s(&world)]);

    // Render: a PNG, with and without regions.
    let png = tmp.path().join("map.png");
    ok(&["render", "--world", s(&world), s(&png)]);
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let out = ok(&["render", "--world", s(&world), "--regions", s(&png)]);
    assert!(out.contains("regions"), "{out}");
    // A world drawn smaller: a pixel per 4 × 4 blocks (the PNG header's width and height).
    let size = |png: &std::path::Path| {
        let b = std::fs::read(png).unwrap();
        let be = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().unwrap());
        (be(16), be(20))
    };
    ok(&["render", "--world", s(&world), s(&png)]);
    let (w, h) = size(&png);
    ok(&["render", "--world", s(&world), "--blocks-per-pixel", "4", s(&png)]);
    assert_eq!(size(&png), (w.div_ceil(4), h.div_ceil(4)));

    // The demo's region history replays.
    let log = world.join("regions.log");
    let replay = ok(&[
        "regionizer",
        "replay",
        "--input",
        s(&log),
        "--dim",
        "3",
        "--shift",
        "2",
        "--final-only",
    ]);
    let state: serde_json::Value = serde_json::from_str(replay.trim()).unwrap();
    assert!(!state["regions"].as_array().unwrap().is_empty());

    // A world built in terrane exports to Anvil as finished chunks: Minecraft regenerates a
    // chunk without `Status: minecraft:full` over the blocks it holds.
    let mca = tmp.path().join("exported/region");
    let out = json(&["export", "anvil", s(&world), s(&mca), "--json"]);
    assert!(out["columns"].as_u64().unwrap() > 0);
    let mut columns = 0;
    for (_, _, path) in terrane::anvil::region::list_regions(&mca).unwrap() {
        let region =
            terrane::anvil::region::RegionFile::new(std::fs::read(&path).unwrap()).unwrap();
        for e in region.entries() {
            let raw = region.read(&e).unwrap();
            let root = terrane::anvil::nbt::parse(&raw.nbt).unwrap();
            let status = root.get("Status").or_else(|| match root.get("Level") {
                Some(terrane::anvil::nbt::Tag::Compound(l)) => l.get("Status"),
                _ => None,
            });
            assert_eq!(
                status,
                Some(&terrane::anvil::nbt::Tag::String("minecraft:full".into())),
                "{}: column {:?}",
                path.display(),
                (e.local_x(), e.local_z())
            );
            columns += 1;
        }
    }
    assert_eq!(columns, out["columns"].as_u64().unwrap());
}

#[test]
#[cfg(feature = "blockfile")]
fn demo_and_commands_on_blockfile() {
    demo_then_every_command("blockfile");
}

#[test]
#[cfg(feature = "rocksdb")]
fn demo_and_commands_on_rocksdb() {
    demo_then_every_command("rocksdb");
}

#[test]
fn bad_input_exits_non_zero_with_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    let err = fails(&["info", s(tmp.path())], 2);
    assert!(err.contains("not a terrane world"), "{err}");
    fails(&["verify", s(&tmp.path().join("missing"))], 2);

    // Not a schematic.
    let junk = tmp.path().join("junk.schem");
    std::fs::write(&junk, b"definitely not gzip nbt").unwrap();
    let err = fails(&["schem", "info", s(&junk)], 2);
    assert!(err.contains("junk.schem"), "{err}");
    fails(&["schem", "info", s(&tmp.path().join("absent.schem"))], 2);

    // --force never deletes a directory that is not a terrane world.
    let other = tmp.path().join("photos");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("cat.jpg"), b"meow").unwrap();
    let err = fails(&["demo", s(&other), "--force", "--backend", "blockfile"], 2);
    assert!(err.contains("not a terrane world"), "{err}");
    assert!(other.join("cat.jpg").exists());
    let err = fails(&["demo", s(&other), "--backend", "blockfile"], 2);
    assert!(err.contains("not empty"), "{err}");

    // Bad arguments (clap exits 2 as well).
    fails(&["schem", "export", "w", "--from", "1,2", "--to", "3,4,5", "o.schem"], 2);
    fails(&["demo", "--backend", "floppy"], 2);
    fails(&["regionizer", "replay", "--bogus"], 2);
}

#[test]
#[cfg(feature = "blockfile")]
fn a_bad_chunk_is_refused_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let world = tmp.path().join("w");
    tiny_demo(&world, "blockfile");
    let before = json(&["info", s(&world), "--json"]);
    let junk = tmp.path().join("junk.bin");
    std::fs::write(&junk, [0xffu8; 100]).unwrap();
    let err = fails(&["chunk", "put", s(&world), "1", "1", "1", s(&junk)], 2);
    assert!(err.contains("not a chunk"), "{err}");
    assert_eq!(json(&["info", s(&world), "--json"])["chunks"], before["chunks"]);
}

/// `schem info` on every fixture: the facts recorded in SOURCES.md.
#[test]
fn schem_info_on_the_fixtures() {
    // (file, version, size, palette size, most common state, its count)
    type Case = (&'static str, i64, [u64; 3], usize, &'static str, u64);
    let cases: [Case; 6] = [
        ("sponge-v1.schem", 1, [1, 41, 9], 366, "minecraft:dirt", 3),
        ("issue-1.schem", 2, [1, 41, 9], 366, "minecraft:dirt", 3),
        ("green-cottage.schem", 2, [17, 12, 12], 40, "minecraft:air", 1821),
        ("sponge-v3.schem", 3, [17, 12, 12], 40, "minecraft:air", 1821),
        ("1_20_1_read_fail.schem", 3, [15, 16, 20], 112, "minecraft:air", 3911),
        ("smallhouse1.schem", 2, [21, 28, 20], 173, "minecraft:air", 8559),
    ];
    for (file, version, size, palette, top, count) in cases {
        let path = fixture(&format!("schem/{file}"));
        let v = json(&["schem", "info", s(&path), "--json"]);
        assert_eq!(v["version"], version, "{file}");
        assert_eq!(v["size"], serde_json::json!(size), "{file}");
        assert_eq!(v["palette_size"], palette, "{file}");
        // The most common count, and the state SOURCES.md names with it (ties exist).
        assert_eq!(v["blocks"][0]["count"], count, "{file}");
        let named = v["blocks"].as_array().unwrap().iter().find(|b| b["state"] == top).unwrap();
        assert_eq!(named["count"], count, "{file}");
        let total: u64 =
            v["blocks"].as_array().unwrap().iter().map(|b| b["count"].as_u64().unwrap()).sum();
        assert_eq!(total, size.iter().product::<u64>(), "{file}");
        let human = ok(&["schem", "info", s(&path)]);
        assert!(human.contains(&format!("Sponge v{version}")), "{file}: {human}");
    }
    let v = json(&["schem", "info", s(&fixture("schem/smallhouse1.schem")), "--json"]);
    assert_eq!(v["block_entities"], 72);
    assert_eq!(v["offset"], serde_json::json!([224, 4, -127]));
}

/// A schematic's block entities survive `schem import` then `schem export` (stored as the
/// `minecraft:block_entity` component), and a second import / export round keeps them.
#[test]
#[cfg(feature = "blockfile")]
fn schem_block_entities_survive_import_and_export() {
    use terrane::snapshot::nbt::Compound;
    use terrane::snapshot::{BlockEntity, Schematic};

    // Position, id and the data without x/y/z/id (the component keeps the id once).
    fn normal(bes: &[BlockEntity]) -> Vec<([i32; 3], String, Compound)> {
        let mut v: Vec<_> = bes
            .iter()
            .map(|e| {
                let mut d = e.data.clone();
                for k in ["x", "y", "z", "id"] {
                    d.remove(k);
                }
                (e.pos, e.id.clone(), d)
            })
            .collect();
        v.sort_by_key(|e| e.0);
        v
    }

    let tmp = tempfile::tempdir().unwrap();
    let world = tmp.path().join("world");
    tiny_demo(&world, "blockfile");
    let src = fixture("schem/smallhouse1.schem");
    let original = Schematic::read_file(&src).unwrap();
    assert_eq!(original.block_entities.len(), 72);

    let out = ok(&["schem", "import", s(&world), s(&src), "--at", "300,60,300"]);
    assert!(out.contains("and 72 block entities"), "{out}");
    assert!(!out.contains("skipped"), "{out}");
    ok(&["verify", s(&world)]);

    // The same box out again: 21 x 28 x 20.
    let first = tmp.path().join("first.schem");
    let out = ok(&[
        "schem",
        "export",
        s(&world),
        "--from",
        "300,60,300",
        "--to",
        "320,87,319",
        s(&first),
    ]);
    assert!(out.contains("72 block entities"), "{out}");
    let exported = Schematic::read_file(&first).unwrap();
    assert_eq!(exported.block_entities.len(), 72);
    let (want, got) = (normal(&original.block_entities), normal(&exported.block_entities));
    let ids = |v: &[([i32; 3], String, Compound)]| {
        let mut ids: Vec<String> = v.iter().map(|e| e.1.clone()).collect();
        ids.sort();
        ids
    };
    assert_eq!(ids(&got), ids(&want));
    assert_eq!(got, want, "positions, ids and data");
    // At least one carries real data (a chest's items, a sign's text...).
    assert!(got.iter().any(|e| !e.2.is_empty()), "no block entity data at all");
    // The blocks at those positions are the schematic's.
    for e in &exported.block_entities {
        let [x, y, z] = e.pos.map(|v| v as u32);
        assert_eq!(exported.block(x, y, z), original.block(x, y, z), "{e:?}");
    }

    // Round two: the export pasted elsewhere and exported again is the same.
    let out = ok(&["schem", "import", s(&world), s(&first), "--at", "400,60,400"]);
    assert!(out.contains("and 72 block entities"), "{out}");
    let second = tmp.path().join("second.schem");
    ok(&["schem", "export", s(&world), "--from", "400,60,400", "--to", "420,87,419", s(&second)]);
    let again = Schematic::read_file(&second).unwrap();
    assert_eq!(again.block_entities, exported.block_entities);

    // Pasting the same blocks without block entities over the house removes its block
    // entities: a paste replaces the box, also where the block did not change.
    // A block entity whose block cannot carry one (here air) is reported as skipped.
    let mut bare = exported.clone();
    bare.block_entities.clear();
    assert_eq!(bare.block(0, 27, 0), Some("minecraft:air"));
    let mut stray = exported.block_entities[0].clone();
    stray.pos = [0, 27, 0];
    bare.block_entities.push(stray.clone());
    let bare_file = tmp.path().join("bare.schem");
    bare.write_file(&bare_file).unwrap();
    let out = ok(&["schem", "import", s(&world), s(&bare_file), "--at", "400,60,400"]);
    assert!(out.contains("and 0 block entities"), "{out}");
    assert!(out.contains("skipped 1 block entities"), "{out}");
    assert!(out.contains(&format!("{} at 400,87,400: block minecraft:air", stray.id)), "{out}");
    let emptied = tmp.path().join("emptied.schem");
    ok(&["schem", "export", s(&world), "--from", "400,60,400", "--to", "420,87,419", s(&emptied)]);
    assert!(Schematic::read_file(&emptied).unwrap().block_entities.is_empty());
    ok(&["verify", s(&world)]);
}

/// Import a region folder, export it, import the export: the same blocks; a re-run of the
/// import skips what is there (resumable).
#[test]
#[cfg(feature = "blockfile")]
fn anvil_import_export_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let src = fixture("anvil/1.13.1-offbyone");
    let a = tmp.path().join("a");
    let first = json(&["import", "anvil", s(&src), s(&a), "--backend", "blockfile", "--json"]);
    assert!(first["columns"].as_u64().unwrap() > 0);
    assert!(first["blocks"].as_u64().unwrap() > 0);
    assert_eq!(first["damaged"], serde_json::json!([]));
    let again = json(&["import", "anvil", s(&src), s(&a), "--json"]);
    assert_eq!(again["columns"], 0);
    assert_eq!(again["columns_skipped"], first["columns"]);
    ok(&["verify", s(&a)]);

    let mca = tmp.path().join("region");
    let out = json(&["export", "anvil", s(&a), s(&mca), "--json"]);
    assert_eq!(out["columns"], first["columns"]);
    let b = tmp.path().join("b");
    let second = json(&["import", "anvil", s(&mca), s(&b), "--backend", "blockfile", "--json"]);
    assert_eq!(second["blocks"], first["blocks"]);
    assert_eq!(second["chunks"], first["chunks"]);
    fails(&["import", "anvil", s(&tmp.path().join("nope")), s(&b)], 2);
}

/// Importing into a world that holds chunks of its own (here the demo's terrain) is refused,
/// with nothing written, unless `--merge` says to write over them.
#[test]
#[cfg(feature = "blockfile")]
fn anvil_import_over_existing_chunks_needs_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let world = tmp.path().join("w");
    tiny_demo(&world, "blockfile");
    let before = json(&["info", s(&world), "--json"]);
    let src = fixture("anvil/1.13.1-offbyone");
    let err = fails(&["import", "anvil", s(&src), s(&world)], 2);
    assert!(err.contains("already holds chunks") && err.contains("--merge"), "{err}");
    assert_eq!(json(&["info", s(&world), "--json"])["chunks"], before["chunks"]);
    let merged = json(&["import", "anvil", s(&src), s(&world), "--merge", "--json"]);
    assert!(merged["columns"].as_u64().unwrap() > 0);
    // Now a resumed import: allowed without the flag, and it skips what is there.
    let again = json(&["import", "anvil", s(&src), s(&world), "--json"]);
    assert_eq!(again["columns"], 0);
    ok(&["verify", s(&world)]);
}

/// An entity region (`entities/r.0.0.mca`) holding one pig in column (0, 0), as 1.17+ worlds
/// keep entities.
fn pig_entity_region() -> Vec<u8> {
    use terrane::anvil::nbt::{self, Compound, Tag};
    use terrane::anvil::region::RegionWriter;
    let mut pig = Compound::new();
    pig.insert("id".to_string(), Tag::String("minecraft:pig".into()));
    pig.insert("UUID".to_string(), Tag::IntArray(vec![1, 2, 3, 4]));
    pig.insert("Pos".to_string(), Tag::list(vec![Tag::Double(8.5); 3]));
    let mut chunk = Compound::new();
    chunk.insert("DataVersion".to_string(), Tag::Int(3955));
    chunk.insert("Position".to_string(), Tag::IntArray(vec![0, 0]));
    chunk.insert("Entities".to_string(), Tag::compound_list([pig]));
    let mut ew = RegionWriter::new(0, 0);
    ew.insert(0, nbt::write_root(&chunk).unwrap(), 10);
    ew.finish().unwrap().0
}

/// A 1.17+ Java world keeps entities in `entities/` beside `region/`: import picks the folder
/// up by default, export writes it back beside the region folder, and a re-import finds them.
#[test]
#[cfg(feature = "blockfile")]
fn anvil_entities_folder_beside_the_region_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let (region, entities) = (tmp.path().join("java/region"), tmp.path().join("java/entities"));
    std::fs::create_dir_all(&region).unwrap();
    std::fs::create_dir_all(&entities).unwrap();
    std::fs::copy(fixture("anvil/1.21.1/r.0.0.mca"), region.join("r.0.0.mca")).unwrap();
    std::fs::write(entities.join("r.0.0.mca"), pig_entity_region()).unwrap();

    let a = tmp.path().join("a");
    let first = json(&["import", "anvil", s(&region), s(&a), "--backend", "blockfile", "--json"]);
    assert_eq!(first["entities"], 1, "the pig of entities/r.0.0.mca");
    let out = tmp.path().join("out");
    json(&["export", "anvil", s(&a), s(&out.join("region")), "--json"]);
    assert!(out.join("entities/r.0.0.mca").is_file(), "entities written beside the regions");
    let b = tmp.path().join("b");
    let again = json(&[
        "import",
        "anvil",
        s(&out.join("region")),
        s(&b),
        "--backend",
        "blockfile",
        "--json",
    ]);
    assert_eq!(again["entities"], 1);
    assert_eq!(again["blocks"], first["blocks"]);
    // Without the folder the import says so instead of guessing.
    let missing = run(&[
        "import",
        "anvil",
        s(&region),
        s(&tmp.path().join("c")),
        "--entities",
        s(&tmp.path().join("nowhere")),
    ]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("is not a folder"));
    assert!(!tmp.path().join("c").exists(), "nothing written on bad input");
}

use terrane_store::conformance::files;

/// The commands that only read a world leave every byte of it as it was.
fn read_commands_change_nothing(backend: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let world = tmp.path().join("world");
    tiny_demo(&world, backend);
    let before = files(&world);
    ok(&["info", s(&world)]);
    ok(&["verify", s(&world)]);
    ok(&["chunk", "get", s(&world), "0", "0", "0", "--json"]);
    ok(&["render", "--world", s(&world), "--regions", s(&tmp.path().join("map.png"))]);
    // A backup records in the world what the next one reads (`docs/format/world-dir.md`,
    // "Backup changes"); while a reader holds the world it cannot, and backs it up whole.
    let reader = terrane::World::open_read_only(&world).unwrap();
    let b = json(&["backup", s(&world), s(&tmp.path().join("backups")), "--json"]);
    assert_eq!(b["read"], b["objects"], "{backend}: a world it cannot write is read whole");
    drop(reader);
    ok(&[
        "schem",
        "export",
        s(&world),
        "--from",
        "0,0,0",
        "--to",
        "3,3,3",
        s(&tmp.path().join("b.schem")),
    ]);
    ok(&["export", "anvil", s(&world), s(&tmp.path().join("region"))]);
    let after = files(&world);
    assert_eq!(before.keys().collect::<Vec<_>>(), after.keys().collect::<Vec<_>>());
    for (path, bytes) in &before {
        assert!(after[path] == *bytes, "{backend}: a read command changed {}", path.display());
    }
}

#[test]
#[cfg(feature = "blockfile")]
fn read_commands_change_nothing_on_blockfile() {
    read_commands_change_nothing("blockfile");
}

#[test]
#[cfg(feature = "rocksdb")]
fn read_commands_change_nothing_on_rocksdb() {
    read_commands_change_nothing("rocksdb");
}

/// A second command on a world a demo is writing is refused, naming the demo's pid; killing
/// the demo frees the world at once, and it verifies.
fn second_writer_refused(backend: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let world = tmp.path().join("world");
    let mut demo = ChildGuard::spawn(
        bin()
            .args(["demo", s(&world), "--backend", backend, "--ticks", "100000", "--tps", "50"])
            .args(["--players", "2", "--view", "1", "--pregen-radius", "2", "--workers", "1"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null()),
    )
    .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !world.join("terrane-world").exists() {
        assert!(std::time::Instant::now() < deadline, "the demo never created its world");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let region = fixture("anvil/1.13.1-offbyone");
    let import = run(&["import", "anvil", s(&region), s(&world)]);
    let info = run(&["info", s(&world)]);
    let still_running = demo.try_wait().unwrap().is_none();
    demo.kill().unwrap();
    demo.wait().unwrap();
    assert!(still_running, "the demo ended before the second command ran");
    for (what, out) in [("import anvil", import), ("info", info)] {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{backend}: {what} beside a writer succeeded");
        assert!(err.contains("in use") && err.contains(&format!("pid {}", demo.id())), "{err}");
    }
    let v = json(&["verify", s(&world), "--json"]);
    assert_eq!(v["ok"], true, "{backend}: {v}");
}

#[test]
#[cfg(feature = "blockfile")]
fn second_writer_refused_on_blockfile() {
    second_writer_refused("blockfile");
}

#[test]
#[cfg(feature = "rocksdb")]
fn second_writer_refused_on_rocksdb() {
    second_writer_refused("rocksdb");
}

/// A block file cut to half its length: every command refuses the world without changing a
/// byte and points at `terrane repair`, which keeps what is intact and lists what was lost.
/// The next backup of the repaired world reads all of it, not only what it recorded
/// changing since the last one (the repair lost objects without a write).
#[test]
#[cfg(feature = "blockfile")]
fn a_truncated_block_file_is_refused_until_repaired() {
    let tmp = tempfile::tempdir().unwrap();
    let world = tmp.path().join("world");
    tiny_demo(&world, "blockfile");
    let repo = tmp.path().join("repo");
    json(&["backup", s(&world), s(&repo), "--json"]);
    let again = json(&["backup", s(&world), s(&repo), "--json"]);
    assert_eq!(again["read"], 0, "the world records its changes: {again}");
    let tbf = world.join("world.tbf");
    let len = std::fs::metadata(&tbf).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&tbf).unwrap();
    f.set_len(len / 2).unwrap();
    drop(f);
    let damaged = std::fs::read(&tbf).unwrap();
    for args in [
        vec!["info", s(&world)],
        vec!["verify", s(&world)],
        vec!["chunk", "get", s(&world), "0", "0", "0"],
        vec!["import", "anvil", s(&tmp.path().join("none")), s(&world)],
    ] {
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded on a damaged world");
        if args[0] != "import" {
            assert!(err.contains("damaged") && err.contains("terrane repair"), "{args:?}: {err}");
        }
        assert!(std::fs::read(&tbf).unwrap() == damaged, "{args:?} changed the damaged file");
    }
    let v = run(&["verify", s(&world), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&v.stdout).unwrap();
    assert_eq!(v["ok"], false);
    let r = run(&["repair", s(&world), "--json"]);
    let r: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let lost = r["lost"].as_str().expect("the repair lists what was lost");
    assert!(lost.contains("lost"), "{lost}");
    // Repaired: the world opens again (what it lost may leave dangling references, which
    // `verify` names).
    json(&["info", s(&world), "--json"]);
    let after = json(&["backup", s(&world), s(&repo), "--json"]);
    assert_eq!(after["read"], after["objects"], "{after}");
}

/// Worlds on PostgreSQL: the demo on a connection string, every command on it, and `copy`
/// between PostgreSQL and both directory backends, each copy verified and identical.
#[test]
#[cfg(all(feature = "postgres", feature = "blockfile", feature = "rocksdb"))]
fn postgres_worlds_and_copies_in_every_direction() {
    let server = terrane_postgres::testing::PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let pg = |schema: &str| format!("{} schema={schema}", server.conninfo());
    let tmp = tempfile::tempdir().unwrap();
    let main = pg("main");
    let summary = tiny_demo_at(&["--store", &main]);
    assert_eq!(summary["restore_exact"], true);
    let info = json(&["info", &main, "--json"]);
    assert_eq!(info["backend"], "postgres");
    ok(&["verify", &main]);
    ok(&["chunk", "get", &main, "0", "0", "0", "--json"]);
    ok(&["render", "--world", &main, s(&tmp.path().join("map.png"))]);
    ok(&[
        "schem",
        "export",
        &main,
        "--from",
        "0,0,0",
        "--to",
        "3,3,3",
        s(&tmp.path().join("b.schem")),
    ]);
    ok(&["export", "anvil", &main, s(&tmp.path().join("region"))]);
    ok(&["backup", &main, s(&tmp.path().join("backups"))]);
    let restored = pg("restored");
    ok(&["restore", s(&tmp.path().join("backups")), &restored]);
    assert_eq!(json(&["info", &restored, "--json"])["chunks"], info["chunks"]);
    ok(&["restore", s(&tmp.path().join("backups")), s(&tmp.path().join("backup"))]);
    assert_eq!(json(&["info", s(&tmp.path().join("backup")), "--json"])["chunks"], info["chunks"]);
    // PostgreSQL -> each directory backend -> PostgreSQL.
    for backend in ["rocksdb", "blockfile"] {
        let dir = tmp.path().join(backend);
        ok(&["copy", &main, s(&dir), "--backend", backend]);
        assert_eq!(json(&["info", s(&dir), "--json"])["chunks"], info["chunks"], "{backend}");
        let back = pg(&format!("back_{backend}"));
        ok(&["copy", s(&dir), &back]);
        let again = json(&["info", &back, "--json"]);
        assert_eq!(again["chunks"], info["chunks"], "{backend}");
        assert_eq!(again["entities"], info["entities"], "{backend}");
    }
    // Java worlds in and out of PostgreSQL, and a schematic pasted into it.
    let imported = pg("imported");
    let first =
        json(&["import", "anvil", s(&fixture("anvil/1.13.1-offbyone")), &imported, "--json"]);
    assert!(first["columns"].as_u64().unwrap() > 0);
    let again =
        json(&["import", "anvil", s(&fixture("anvil/1.13.1-offbyone")), &imported, "--json"]);
    assert_eq!(again["columns_skipped"], first["columns"]);
    ok(&["schem", "import", &imported, s(&tmp.path().join("b.schem")), "--at", "0,200,0"]);
    ok(&["verify", &imported]);
    // PostgreSQL -> PostgreSQL, and a copy onto an existing world is refused.
    ok(&["copy", &main, &pg("twin")]);
    fails(&["copy", &main, &pg("twin")], 2);
    // A second writer is refused; a read-only command beside a reader is fine.
    let err = fails(&["demo", "--store", &main, "--ticks", "1"], 2);
    assert!(err.contains("exists"), "{err}");
    ok(&["demo", "--store", &main, "--force", "--ticks", "2", "--pregen-radius", "1"]);
}

/// A directory holding terrane's own unfinished creation (the intent file, part of a backend)
/// is taken over by `demo` without `--force`.
#[test]
#[cfg(feature = "blockfile")]
fn demo_takes_over_an_unfinished_creation() {
    let tmp = tempfile::tempdir().unwrap();
    let world = tmp.path().join("world");
    std::fs::create_dir_all(world.join("db")).unwrap();
    std::fs::write(world.join("db/LOCK"), b"").unwrap();
    std::fs::write(world.join("terrane-world.creating"), b"terrane world v1\nbackend = rocksdb\n")
        .unwrap();
    let summary = tiny_demo(&world, "blockfile");
    assert!(summary["tick_saves"].as_u64().unwrap() > 0);
    assert_eq!(json(&["info", s(&world), "--json"])["backend"], "blockfile");
    assert!(!world.join("terrane-world.creating").exists());
}

/// `terrane create` makes an empty world that every other command opens; `--blocks`
/// registers states up front and refuses a line that is not a block state, creating nothing.
#[test]
#[cfg(feature = "blockfile")]
fn create_an_empty_world() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path().join("w");
    let out = ok(&["create", s(&w), "--backend", "blockfile"]);
    assert!(out.contains("blockfile backend, 1 block states"), "{out}");
    let info = json(&["info", s(&w), "--json"]);
    assert_eq!(info["backend"], "blockfile");
    ok(&["verify", s(&w)]);
    // A second create over it is refused.
    fails(&["create", s(&w), "--backend", "blockfile"], 2);

    let list = t.path().join("blocks.txt");
    std::fs::write(&list, "# states\nminecraft:stone\n\nminecraft:chest[facing=north]\n").unwrap();
    let w2 = t.path().join("w2");
    let v = json(&["create", s(&w2), "--backend", "blockfile", "--blocks", s(&list), "--json"]);
    assert_eq!(v["block_states"], 3, "{v}");
    ok(&["verify", s(&w2)]);

    // Spellings of one state are one state.
    std::fs::write(&list, "minecraft:stone\nstone\nchest[ facing = north ]\n").unwrap();
    let w4 = t.path().join("w4");
    let v = json(&["create", s(&w4), "--backend", "blockfile", "--blocks", s(&list), "--json"]);
    assert_eq!(v["block_states"], 3, "{v}");

    std::fs::write(&list, "minecraft:stone\nminecraft:chest[facing]\n").unwrap();
    let w3 = t.path().join("w3");
    let err = fails(&["create", s(&w3), "--blocks", s(&list)], 2);
    assert!(err.contains(":2:") && err.contains("\"minecraft:chest[facing]\""), "{err}");
    assert!(err.contains("no `=value`"), "{err}");
    assert!(!w3.exists(), "a refused create leaves nothing behind");
}

const OAK_STAIRS: &str =
    "minecraft:oak_stairs[facing=north,half=bottom,shape=straight,waterlogged=false]";

/// A one-block schematic file whose palette holds `spelling` byte for byte (terrane's writer
/// writes canonical strings: the file is patched after it).
fn schematic_spelled(path: &Path, spelling: &str) {
    let s = terrane::Schematic::from_parts(1, 1, 1, vec![OAK_STAIRS.to_string()], vec![0]).unwrap();
    let nbt = s.to_nbt().unwrap();
    let field = |t: &str| [&(t.len() as u16).to_be_bytes()[..], t.as_bytes()].concat();
    let (old, new) = (field(OAK_STAIRS), field(spelling));
    let at = nbt.windows(old.len()).position(|w| w == old.as_slice()).expect("the palette key");
    let bytes = [&nbt[..at], &new[..], &nbt[at + old.len()..]].concat();
    std::fs::write(path, &bytes).unwrap();
    let back = terrane::Schematic::read(&bytes).unwrap();
    assert_eq!(back.palette(), [spelling], "the file holds the spelling verbatim");
}

/// Three schematics spelling one block state three ways: one registry id.
#[test]
fn dup_spellings_of_a_state_in_schematics_get_one_id() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path().join("w");
    ok(&["create", s(&w), "--backend", "blockfile"]);
    for (i, spelling) in [
        OAK_STAIRS,
        "minecraft:oak_stairs[waterlogged=false,shape=straight,half=bottom,facing=north]",
        "minecraft:oak_stairs[ facing = north ,half=bottom,shape=straight,waterlogged=false]",
    ]
    .into_iter()
    .enumerate()
    {
        let f = t.path().join(format!("{i}.schem"));
        schematic_spelled(&f, spelling);
        ok(&["schem", "import", s(&w), s(&f), "--at", &format!("{},64,0", 16 * i)]);
        let v = json(&["info", s(&w), "--json"]);
        assert_eq!(v["block_states"], 2, "air and one stair after {spelling:?}: {v}");
        assert_eq!(v["unused_spellings"], 0, "{v}");
    }
    ok(&["verify", s(&w)]);
}

/// The `dup-states` fixture (crates/terrane/tests/data/dup-states: a world written before
/// imports canonicalised block states): `verify` names the spellings and the command that
/// merges them, `repair` merges them, and the world then verifies and exports the same blocks.
#[test]
fn dup_states_are_reported_by_verify_and_merged_by_repair() {
    let t = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../terrane/tests/data/dup-states/world");
    let w = t.path().join("w");
    std::fs::create_dir(&w).unwrap();
    for f in ["terrane-world", "world.tbf"] {
        std::fs::copy(from.join(f), w.join(f)).unwrap();
    }
    let export = |name: &str| {
        let out = t.path().join(name);
        ok(&["schem", "export", s(&w), "--from", "0,64,0", "--to", "18,64,16", s(&out)]);
        terrane::Schematic::read_file(&out).unwrap()
    };
    let before = export("before.schem");

    let err = fails(&["verify", s(&w)], 1);
    for needle in [
        OAK_STAIRS,
        "minecraft:oak_stairs[waterlogged=false,shape=straight,half=bottom,facing=north]",
        "minecraft:chest[ type = single , facing=west,waterlogged=false]",
        &format!("`terrane repair {}`", w.display()),
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    assert_eq!(json(&["info", s(&w), "--json"])["block_states"], 8);
    // A copy holds what the world holds, and says so.
    let copy = t.path().join("copy");
    let out = ok(&["copy", s(&w), s(&copy), "--backend", "blockfile"]);
    assert!(out.contains("as in the source, 2 block states stored under several ids"), "{out}");

    let out = ok(&["repair", s(&w)]);
    assert!(out.contains("merged 2 block states") && out.contains("3 chunks rewritten"), "{out}");
    ok(&["verify", s(&w)]);
    let v = json(&["info", s(&w), "--json"]);
    assert_eq!(
        (v["block_states"].as_u64(), v["unused_spellings"].as_u64()),
        (Some(4), Some(4)),
        "{v}"
    );
    let after = export("after.schem");
    assert_eq!(after.palette().len(), 4, "air, stair, stone, chest: {:?}", after.palette());
    for x in 0..19 {
        for z in 0..17 {
            assert_eq!(after.block(x, 0, z), before.block(x, 0, z), "{x},{z}");
        }
    }
    assert_eq!(after.block_entities, before.block_entities);
    assert_eq!(after.block_entities.len(), 3);

    let out = ok(&["repair", s(&w)]);
    assert!(out.contains("every block state has one id"), "{out}");
}

/// A closed pipe ends a command quietly: status 0 and nothing on stderr (`| head`).
#[test]
fn a_closed_pipe_ends_a_command_quietly() {
    use std::io::Read as _;
    use std::process::Stdio;
    let house = fixture("schem/smallhouse1.schem");
    for args in [&["schem", "info", s(&house)][..], &["schem", "info", s(&house), "--json"]] {
        let mut child =
            ChildGuard::spawn(bin().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()))
                .unwrap();
        // The reading end closes before the command writes its first line (it reads and
        // parses the file first), so every write meets a closed pipe.
        drop(child.stdout.take());
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        let status = child.wait().unwrap();
        assert!(status.success(), "{args:?}: {status}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

/// Positions print as users type them (`224,4,-127`), not as Rust debug forms.
#[test]
fn positions_print_as_users_type_them() {
    let out = ok(&["schem", "info", s(&fixture("schem/smallhouse1.schem"))]);
    assert!(out.contains("offset   224,4,-127"), "{out}");
    assert!(!out.contains("Some(") && !out.contains("[224"), "{out}");
}

/// A whole Java world folder as players have it: `level.dat`, the Overworld's `region/`, the
/// Nether's `DIM-1/region` and the End's `DIM1/region` become three dimensions; imported
/// columns count as generated; `export anvil --world-folder` writes the same folder back
/// (level.dat byte for byte) and it imports to the same blocks. A folder without region files
/// is refused with nothing written.
#[test]
#[cfg(feature = "blockfile")]
fn anvil_whole_java_world_in_and_out() {
    let tmp = tempfile::tempdir().unwrap();
    let java = tmp.path().join("My World");
    for (dir, src) in [
        ("region", "anvil/1.21.1/r.0.0.mca"),
        ("DIM-1/region", "anvil/1.18.2/r.0.0.mca"),
        ("DIM1/region", "anvil/1.17.1/r.-3.-2.mca"),
    ] {
        std::fs::create_dir_all(java.join(dir)).unwrap();
        let name = std::path::Path::new(src).file_name().unwrap();
        std::fs::copy(fixture(src), java.join(dir).join(name)).unwrap();
    }
    // The Overworld's entities, in its own entities folder.
    std::fs::create_dir_all(java.join("entities")).unwrap();
    std::fs::write(java.join("entities/r.0.0.mca"), pig_entity_region()).unwrap();
    let level_dat = b"\x1f\x8b level.dat bytes, kept as they are".to_vec();
    std::fs::write(java.join("level.dat"), &level_dat).unwrap();

    let a = tmp.path().join("a");
    let v = json(&["import", "anvil", s(&java), s(&a), "--backend", "blockfile", "--json"]);
    let dims = &v["dimensions"];
    assert_eq!(dims["overworld"]["columns"], 225, "{v}");
    assert_eq!(dims["overworld"]["entities"], 1, "the pig of entities/r.0.0.mca: {v}");
    assert_eq!(dims["the_nether"]["columns"], 280, "{v}");
    assert!(dims["the_end"]["columns"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["level_dat"], true);
    let info = json(&["info", s(&a), "--json"]);
    assert_eq!(info["generated_columns"], 225, "imported Overworld columns are generated");
    ok(&["verify", s(&a)]);
    // Resumed: nothing imported twice, in any dimension.
    let again = json(&["import", "anvil", s(&java), s(&a), "--json"]);
    assert_eq!(again["columns"], 0);
    assert_eq!(again["columns_skipped"], v["columns"]);

    let out = tmp.path().join("Back Again");
    let e = json(&["export", "anvil", s(&a), s(&out), "--world-folder", "--json"]);
    assert_eq!(e["columns"], v["columns"]);
    assert_eq!(std::fs::read(out.join("level.dat")).unwrap(), level_dat);
    for f in [
        "region/r.0.0.mca",
        "entities/r.0.0.mca",
        "DIM-1/region/r.0.0.mca",
        "DIM1/region/r.-3.-2.mca",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let b = tmp.path().join("b");
    let w = json(&["import", "anvil", s(&out), s(&b), "--backend", "blockfile", "--json"]);
    for d in ["overworld", "the_nether", "the_end"] {
        assert_eq!(w["dimensions"][d]["blocks"], dims[d]["blocks"], "{d}");
        assert_eq!(w["dimensions"][d]["chunks"], dims[d]["chunks"], "{d}");
        assert_eq!(w["dimensions"][d]["entities"], dims[d]["entities"], "{d}");
    }

    // A folder with no region files at all: refused, no world created.
    let empty = tmp.path().join("empty-java");
    std::fs::create_dir_all(empty.join("region")).unwrap();
    std::fs::write(empty.join("level.dat"), b"x").unwrap();
    let c = tmp.path().join("c");
    let err = fails(&["import", "anvil", s(&empty), s(&c)], 2);
    assert!(err.contains("no region files"), "{err}");
    assert!(!c.exists(), "nothing written");
    let err = fails(&["import", "anvil", s(&tmp.path().join("empty-java/region")), s(&c)], 2);
    assert!(err.contains("no region files"), "{err}");
}

/// A demo on a full disk ends with one line naming the world and the tick, what happened and
/// what to do, exit status 1, no panic; the world it left opens read-only.
#[test]
fn a_full_disk_ends_the_demo_with_a_clear_error() {
    for backend in ["blockfile", "rocksdb"] {
        let fs = terrane_store::conformance::full_disk::Tmpfs::mount(6 * 1024);
        let w = fs.path().join("w");
        let err = fails(&["demo", s(&w), "--backend", backend], 1);
        assert!(err.contains(&format!("error: world {}: saving tick", w.display())), "{err}");
        assert!(err.contains("No space left on device"), "{err}");
        assert!(err.contains("the disk is full: every save before this one is kept"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        ok(&["info", s(&w)]);
    }
}

/// `import bedrock` / `export bedrock` on the Bedrock test world: resumable, verified, the
/// export re-imports to the same counts, and misuse exits 2 with a message and nothing written.
#[test]
#[cfg(feature = "blockfile")]
fn bedrock_import_export_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bedrock/tests/data/world");
    let a = tmp.path().join("a");
    let first = json(&["import", "bedrock", s(&src), s(&a), "--backend", "blockfile", "--json"]);
    assert_eq!(first["columns"], 27);
    // Six entities of digp lists and the sheep of a pre-1.18.30 entity list.
    assert_eq!((first["entities"].as_u64(), first["block_entities"].as_u64()), (Some(7), Some(3)));
    assert_eq!(first["damaged"], serde_json::json!([]));
    let again = json(&["import", "bedrock", s(&src), s(&a), "--json"]);
    assert_eq!((again["columns"].as_u64(), again["columns_skipped"].as_u64()), (Some(0), Some(27)));
    ok(&["verify", s(&a)]);

    let out = tmp.path().join("out");
    let e = json(&["export", "bedrock", s(&a), s(&out), "--json"]);
    assert_eq!(e["columns"], 27);
    let err = fails(&["export", "bedrock", s(&a), s(&out)], 2);
    assert!(err.contains("already holds a Bedrock world"), "{err}");
    let b = tmp.path().join("b");
    let second = json(&["import", "bedrock", s(&out), s(&b), "--backend", "blockfile", "--json"]);
    for k in ["columns", "chunks", "blocks", "entities", "block_entities", "world_records"] {
        assert_eq!(second[k], first[k], "{k}");
    }
    // Not a Bedrock world; a world with chunks of its own needs --merge.
    let err = fails(&["import", "bedrock", s(tmp.path()), s(&b)], 2);
    assert!(err.contains("not a Bedrock world folder"), "{err}");
    let demo = tmp.path().join("demo");
    tiny_demo(&demo, "blockfile");
    let err = fails(&["import", "bedrock", s(&src), s(&demo)], 2);
    assert!(err.contains("--merge"), "{err}");
}

/// `demo --minutes`: the soak runs on the clock, restores the arena again and again, and
/// reports a row per interval (here a second) and the verdict; a missed goal is exit 1 with a
/// message naming the goal, the table still printed.
#[test]
#[cfg(feature = "blockfile")]
fn a_short_soak_reports_rows_and_a_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let w = tmp.path().join("soak");
    let mut args = vec!["demo", s(&w), "--backend", "blockfile", "--minutes", "0.1"];
    args.extend(["--soak-row-seconds", "1", "--json"]);
    args.extend(TINY);
    let o = run(&args);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON summary");
    let rows = v["soak"].as_array().expect("soak rows");
    assert!(rows.len() >= 5, "{rows:?}");
    for r in rows {
        assert!(r["ticks"].as_u64().unwrap() > 0 && r["rss_mib"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["save_p99_ms"].as_f64().unwrap() >= r["save_p50_ms"].as_f64().unwrap(), "{r}");
    }
    let restores: u64 = rows.iter().map(|r| r["restores"].as_u64().unwrap()).sum();
    let exact: u64 = rows.iter().map(|r| r["restores_exact"].as_u64().unwrap()).sum();
    // At least one, however slow the machine: a soak plays on until a row has counted one.
    assert!(restores >= 1 && exact == restores, "{restores} restores, {exact} exact");
    assert!(rows.iter().all(|r| r["cache_mib"].as_f64().is_some()), "cache column in {rows:?}");
    let verdict = &v["soak_verdict"];
    match o.status.code() {
        Some(0) => assert_eq!(verdict["goal_met"], true),
        Some(1) => {
            assert_eq!(verdict["goal_met"], false);
            assert!(String::from_utf8_lossy(&o.stderr).contains("soak goal was not met"));
        }
        other => panic!("exit {other:?}: {}", String::from_utf8_lossy(&o.stderr)),
    }
    ok(&["verify", s(&w)]);
}

/// Log lines reach a file or a pipe as plain text: colour escapes only on a terminal (and
/// never with `NO_COLOR`).
#[test]
fn logs_to_a_pipe_carry_no_colour_escapes() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("ops.txt");
    std::fs::write(&log, "add 0 0\ntick 0 0\nrelease 0 0\n").unwrap();
    let o = bin()
        .env("RUST_LOG", "info")
        .args(["regionizer", "replay", "--input", s(&log), "--final-only"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("INFO") && err.contains("replayed"), "no log line: {err}");
    assert!(!err.contains('\u{1b}'), "colour escapes in a pipe: {err:?}");
}

/// `terrane regionizer generate` writes the seeded operation log the replay benchmark runs:
/// the same bytes for the same seed, and a log the replay accepts.
#[test]
fn a_generated_operation_log_is_seeded_and_replays() {
    let args = ["regionizer", "generate", "--ops", "2000", "--seed", "9"];
    let a = ok(&args);
    assert_eq!(a, ok(&args));
    assert_eq!(a.lines().count(), 2000);
    assert_ne!(a, ok(&["regionizer", "generate", "--ops", "2000", "--seed", "10"]));
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("mixed.ops");
    std::fs::write(&log, &a).unwrap();
    let last = ok(&["regionizer", "replay", "--input", s(&log), "--final-only"]);
    assert!(last.contains("\"op\":2000"), "{last}");
    fails(&["regionizer", "generate", "--shift", "7"], 2);
}

/// Every file under `dir` (relative path → bytes).
fn files_under(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A region folder holding copies of `fixtures` (paths under the test data).
fn region_folder(dir: &Path, fixtures: &[&str]) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    for f in fixtures {
        let name = Path::new(f).file_name().unwrap();
        std::fs::copy(fixture(f), dir.join(name)).unwrap();
    }
    dir.to_path_buf()
}

/// `export anvil A out` then `export anvil B out`: refused (exit 2, nothing written) unless
/// `--merge` (B's regions over A's, A's others kept) or `--force` (exactly B). The same rule for
/// `--world-folder`, `export bedrock` and `schem export`; a file where a folder goes is exit 2.
#[test]
#[cfg(feature = "blockfile")]
fn an_export_over_an_existing_one_needs_force_or_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    // A: regions 0,0 and -3,-2; B: regions 0,0 (the same column, a schematic pasted in it)
    // and -1,-1.
    let src_a =
        region_folder(&t.join("src-a"), &["anvil/1.15.2/r.0.0.mca", "anvil/1.17.1/r.-3.-2.mca"]);
    let src_b = region_folder(
        &t.join("src-b"),
        &["anvil/1.15.2/r.0.0.mca", "anvil/1.18-21w44a/r.-1.-1.mca"],
    );
    let (a, b) = (t.join("a"), t.join("b"));
    ok(&["import", "anvil", s(&src_a), s(&a), "--backend", "blockfile"]);
    ok(&["import", "anvil", s(&src_b), s(&b), "--backend", "blockfile"]);
    let house = fixture("schem/sponge-v3.schem");
    ok(&["schem", "import", s(&b), s(&house), "--at", "0,100,0"]);

    let out = t.join("out");
    ok(&["export", "anvil", s(&a), s(&out.join("region"))]);
    let before = files_under(&out);
    let err = fails(&["export", "anvil", s(&b), s(&out.join("region"))], 2);
    assert!(err.contains("already holds region files"), "{err}");
    assert!(err.contains("--force") && err.contains("--merge"), "{err}");
    assert_eq!(files_under(&out), before, "nothing written");
    fails(&["export", "anvil", s(&b), s(&out.join("region")), "--force", "--merge"], 2);

    ok(&["export", "anvil", s(&b), s(&out.join("region")), "--merge"]);
    let merged = files_under(&out);
    let names: Vec<&str> = merged.keys().map(String::as_str).collect();
    assert_eq!(names, ["region/r.-1.-1.mca", "region/r.-3.-2.mca", "region/r.0.0.mca"]);
    assert_eq!(merged["region/r.-3.-2.mca"], before["region/r.-3.-2.mca"], "A's other region");
    assert_ne!(merged["region/r.0.0.mca"], before["region/r.0.0.mca"], "B's over A's");

    ok(&["export", "anvil", s(&b), s(&out.join("region")), "--force"]);
    let names: Vec<String> = files_under(&out).into_keys().collect();
    assert_eq!(names, ["region/r.-1.-1.mca", "region/r.0.0.mca"], "exactly B");
    let (c, d) = (t.join("c"), t.join("d"));
    ok(&["export", "anvil", s(&b), s(&t.join("b-alone"))]);
    let back = json(&["import", "anvil", s(&out.join("region")), s(&c), "--json"]);
    let alone = json(&["import", "anvil", s(&t.join("b-alone")), s(&d), "--json"]);
    assert_eq!((&back["columns"], &back["blocks"]), (&alone["columns"], &alone["blocks"]));

    // A whole world folder: the same rule.
    let java = t.join("java");
    ok(&["export", "anvil", s(&a), s(&java), "--world-folder"]);
    let err = fails(&["export", "anvil", s(&b), s(&java), "--world-folder"], 2);
    assert!(err.contains("already holds a Java world"), "{err}");
    ok(&["export", "anvil", s(&b), s(&java), "--world-folder", "--force"]);
    // A region folder export into a Java world folder is a mistake whatever the flags.
    let err = fails(&["export", "anvil", s(&b), s(&java), "--force"], 2);
    assert!(err.contains("--world-folder"), "{err}");

    // A file where a folder goes: exit 2, saying a folder is needed.
    let file = t.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    for args in [
        &["export", "anvil", s(&a), s(&file)][..],
        &["export", "anvil", s(&a), s(&file), "--world-folder"],
        &["export", "bedrock", s(&a), s(&file)],
    ] {
        let err = fails(args, 2);
        assert!(err.contains("is a file") && err.contains("folder"), "{err}");
        assert!(!err.contains("os error"), "{err}");
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"x");

    // Bedrock: a Bedrock world there needs --force or --merge.
    let bed = t.join("bedrock");
    ok(&["export", "bedrock", s(&a), s(&bed)]);
    let before = files_under(&bed);
    let err = fails(&["export", "bedrock", s(&b), s(&bed)], 2);
    assert!(err.contains("already holds a Bedrock world"), "{err}");
    assert_eq!(files_under(&bed), before);
    ok(&["export", "bedrock", s(&b), s(&bed), "--force"]);

    // A schematic file: --force only.
    let schem = t.join("box.schem");
    std::fs::write(&schem, b"a player's schematic").unwrap();
    let box_args = ["schem", "export", s(&b), "--from", "0,0,0", "--to", "3,3,3", s(&schem)];
    let err = fails(&box_args, 2);
    assert!(err.contains("already holds a file") && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(&schem).unwrap(), b"a player's schematic");
    let mut forced = box_args.to_vec();
    forced.push("--force");
    ok(&forced);
    assert!(terrane::Schematic::read_file(&schem).is_ok());
}

/// A copy of the 1.21.1 region with the chunks whose index satisfies `damage` made unreadable
/// (an unknown compression type).
fn damaged_region(damage: impl Fn(usize) -> bool) -> Vec<u8> {
    let mut r = std::fs::read(fixture("anvil/1.21.1/r.0.0.mca")).unwrap();
    for i in (0..1024).filter(|&i| damage(i)) {
        let l = &r[4 * i..4 * i + 4];
        let offset = u32::from_be_bytes([0, l[0], l[1], l[2]]) as usize * 4096;
        if offset > 0 {
            r[offset + 4] = 99;
        }
    }
    r
}

/// A conversion whose every chunk is damaged fails (exit 1, no world written); one where some
/// are says so in its last line; the real region's unfinished chunks are counted by stage.
#[test]
fn a_damaged_conversion_fails_or_says_it_is_partial() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let world = |name: &str, region: Vec<u8>| {
        let w = t.join(name);
        std::fs::create_dir_all(w.join("region")).unwrap();
        std::fs::write(w.join("region/r.0.0.mca"), region).unwrap();
        std::fs::write(w.join("level.dat"), []).unwrap();
        w
    };
    let all = world("all", damaged_region(|_| true));
    let out = t.join("all-bedrock");
    let err = fails(&["convert", s(&all), s(&out), "--to", "bedrock", "--force"], 1);
    assert!(err.contains("nothing was converted") && err.contains("damaged"), "{err}");
    assert!(!out.exists(), "no world written");

    // An empty level.dat: refused (nothing written) unless --force rebuilds it.
    let half = world("half", damaged_region(|i| i % 2 == 0));
    let err = fails(&["convert", s(&half), s(&t.join("refused")), "--to", "bedrock"], 1);
    assert!(err.contains("level.dat") && err.contains("--force"), "{err}");
    assert!(!t.join("refused").exists());
    let out = ok(&["convert", s(&half), s(&t.join("half-bedrock")), "--to", "bedrock", "--force"]);
    let last = out.lines().last().unwrap();
    assert!(last.starts_with("partial conversion: ") && last.contains("damaged"), "{out}");
    assert!(out.contains("unfinished: ") && out.contains("at stage"), "{out}");
    assert!(out.contains("level.dat: damaged"), "an empty level.dat is said: {out}");
}

/// `terrane convert` runs `terrane-convert` (the binary without RocksDB) when it sits beside
/// it, and converts in its own process when it does not; `terrane-convert` takes the same
/// arguments. The same conversion all three ways.
#[test]
fn a_conversion_is_the_same_from_either_binary() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let java = t.join("java");
    std::fs::create_dir_all(java.join("region")).unwrap();
    std::fs::write(java.join("region/r.0.0.mca"), damaged_region(|i| i % 3 == 0)).unwrap();
    // `terrane` alone in a folder: nothing to run beside it.
    let alone = t.join("alone/terrane");
    std::fs::create_dir_all(alone.parent().unwrap()).unwrap();
    let terrane = env!("CARGO_BIN_EXE_terrane");
    if std::fs::hard_link(terrane, &alone).is_err() {
        std::fs::copy(terrane, &alone).unwrap();
    }
    let runs = [
        (terrane, vec!["-q", "convert"]),
        (alone.to_str().unwrap(), vec!["convert", "-q"]),
        (env!("CARGO_BIN_EXE_terrane-convert"), vec!["-q"]),
    ];
    let mut reports = Vec::new();
    for (i, (program, first)) in runs.iter().enumerate() {
        let out = t.join(format!("bedrock-{i}"));
        let mut args = first.clone();
        args.extend([s(&java), s(&out), "--to", "bedrock", "--force", "--json"]);
        let o = Command::new(program).args(&args).output().unwrap();
        assert!(o.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(o.stderr.is_empty(), "-q: {}", String::from_utf8_lossy(&o.stderr));
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        for timing in ["seconds", "columns_per_second"] {
            v.as_object_mut().unwrap().remove(timing);
        }
        assert!(v["columns"].as_u64().unwrap() >= 10, "{v}");
        reports.push(v);
    }
    assert_eq!(reports[0], reports[1], "in its own process");
    assert_eq!(reports[0], reports[2], "terrane-convert by hand");
    // Beside `terrane`, whatever is named `terrane-convert` is what runs, with the arguments
    // but the subcommand, and its exit status is the command's.
    let fake = alone.with_file_name("terrane-convert");
    std::fs::write(&fake, "#!/bin/sh\necho \"$@\"\nexit 7\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let o = Command::new(&alone)
            .args(["-q", "convert", s(&java), "elsewhere", "--to", "java"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(7));
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            format!("-q {} elsewhere --to java\n", s(&java))
        );
    }
    // A refusal is the same: status 2 and its words, from the binary that converts.
    let o = Command::new(env!("CARGO_BIN_EXE_terrane-convert"))
        .args([s(&java), s(&t.join("bedrock-0")), "--to", "bedrock"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("already holds"));
}

/// An import whose every chunk is damaged fails (exit 1, nothing imported); one where some are
/// says so in its last line. The same for Bedrock, whose damaged records are kept as stored.
#[test]
#[cfg(feature = "blockfile")]
fn a_damaged_import_fails_or_says_it_is_partial() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let all = t.join("all");
    std::fs::create_dir(&all).unwrap();
    std::fs::write(all.join("r.0.0.mca"), damaged_region(|_| true)).unwrap();
    let err = fails(&["import", "anvil", s(&all), s(&t.join("w1")), "--backend", "blockfile"], 1);
    assert!(err.contains("nothing was imported") && err.contains("damaged"), "{err}");
    let o =
        run(&["import", "anvil", s(&all), s(&t.join("w1b")), "--backend", "blockfile", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the JSON summary still");
    assert!(!v["damaged"].as_array().unwrap().is_empty());

    let half = t.join("half");
    std::fs::create_dir(&half).unwrap();
    std::fs::write(half.join("r.0.0.mca"), damaged_region(|i| i % 2 == 0)).unwrap();
    let out = ok(&["import", "anvil", s(&half), s(&t.join("w2")), "--backend", "blockfile"]);
    let last = out.lines().last().unwrap();
    assert!(
        last.starts_with("partial import: ") && last.contains("damaged chunks skipped"),
        "{out}"
    );
    assert!(out.contains(" non-air blocks, "), "{out}");
    let clean = ok(&[
        "import",
        "anvil",
        s(&fixture("anvil/1.15.2")),
        s(&t.join("w3")),
        "--backend",
        "blockfile",
    ]);
    assert!(!clean.contains("partial"), "{clean}");

    // Bedrock: the test world with one sub-chunk damaged, then with all of them.
    use terrane::bedrock::format::db::{ReadDb, WriteDb};
    use terrane::bedrock::format::key::{DbKey, tag};
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bedrock/tests/data/world");
    let mut records = Vec::new();
    ReadDb::open(&src.join("db"))
        .unwrap()
        .for_each(|k, v| {
            records.push((k.to_vec(), v.to_vec()));
            Ok(())
        })
        .unwrap();
    let damaged_world = |name: &str, how_many: usize| {
        let dir = t.join(name);
        std::fs::create_dir(&dir).unwrap();
        for f in ["level.dat", "levelname.txt"] {
            std::fs::copy(src.join(f), dir.join(f)).unwrap();
        }
        let mut db = WriteDb::create(&dir.join("db")).unwrap();
        let mut n = 0;
        for (k, v) in &records {
            let sub = matches!(DbKey::parse(k), DbKey::Chunk { tag: tag::SUB_CHUNK, .. });
            if sub && n < how_many {
                n += 1;
                db.put(k, &[0xee, 0xee, 0xee]).unwrap();
            } else {
                db.put(k, v).unwrap();
            }
        }
        db.finish().unwrap();
        dir
    };
    let one = damaged_world("bedrock-one", 1);
    let out = ok(&["import", "bedrock", s(&one), s(&t.join("b1")), "--backend", "blockfile"]);
    let last = out.lines().last().unwrap();
    assert!(last.starts_with("partial import: 1 damaged records kept as stored"), "{out}");
    assert!(out.contains(" non-air blocks, ") && out.contains(" 7 entities, "), "{out}");
    let every = damaged_world("bedrock-all", usize::MAX);
    let err =
        fails(&["import", "bedrock", s(&every), s(&t.join("b2")), "--backend", "blockfile"], 1);
    assert!(err.contains("nothing was converted"), "{err}");
}

/// Messages say what to do in the command's own words: the command that creates a missing
/// world, the flag of a bound first, why a file is not a schematic, where a world's chunks
/// came from.
#[test]
#[cfg(feature = "blockfile")]
fn messages_name_commands_and_flags() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing");
    for args in
        [&["info", s(&missing)][..], &["export", "anvil", s(&missing), s(&tmp.path().join("out"))]]
    {
        let err = fails(args, 2);
        assert!(err.contains(&format!("terrane create {}", missing.display())), "{err}");
        assert!(!err.contains("World::builder"), "{err}");
    }

    let house = fixture("schem/smallhouse1.schem");
    let err = fails(&["schem", "info", s(&house), "--max-palette", "10"], 2);
    assert!(err.contains("smallhouse1.schem: --max-palette 10 refuses it"), "{err}");
    assert!(!err.contains("ReadOptions"), "{err}");

    let junk = tmp.path().join("junk.schem");
    std::fs::write(&junk, b"definitely not gzip nbt").unwrap();
    let err = fails(&["schem", "info", s(&junk)], 2);
    assert!(
        err.contains("not a Sponge schematic") && err.contains("neither gzip-compressed nor NBT"),
        "{err}"
    );
    assert!(!err.contains("root"), "{err}");

    // A Bedrock import, then a Java one over it: the chunks came from an import.
    let w = tmp.path().join("w");
    let bedrock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bedrock/tests/data/world");
    ok(&["import", "bedrock", s(&bedrock), s(&w), "--backend", "blockfile"]);
    let err = fails(&["import", "anvil", s(&fixture("anvil/1.21.1")), s(&w)], 2);
    assert!(err.contains("imported from a Bedrock world") && err.contains("--merge"), "{err}");
}

/// `terrane trim` on the demo's world (hills, seed 42): the dry run counts what the real run
/// removes; the columns the demo changed (its builders, its players standing in them, the
/// arena) stay; the world verifies, and a second trim finds nothing more.
#[test]
fn trim_removes_what_nobody_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let world = tmp.path().join("world");
    tiny_demo(&world, "blockfile");
    let args = |dry: bool| {
        let mut a = vec!["trim", s(&world), "--terrain", "hills", "--seed", "42", "--json"];
        if dry {
            a.push("--dry-run");
        }
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run_json = |a: Vec<String>| json(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let dry = run_json(args(true));
    let real = run_json(args(false));
    for k in
        ["columns_checked", "columns_trimmed", "chunks_removed", "bytes_removed", "columns_changed"]
    {
        assert_eq!(dry[k], real[k], "{k}: dry {dry} real {real}");
    }
    assert!(real["columns_trimmed"].as_u64().unwrap() > 0, "{real}");
    assert!(real["columns_changed"].as_u64().unwrap() > 0, "the demo changed some: {real}");
    ok(&["verify", s(&world)]);
    let again = run_json(args(false));
    assert_eq!(again["columns_trimmed"], 0, "{again}");
    assert_eq!(again["columns_checked"], real["columns_changed"], "{again}");
    fails(&["trim", s(&world), "--terrain", "hills", "--seed", "42", "--keep-area", "one"], 2);
}

/// Runs `terrane args` and SIGKILLs it `delay_ms` after `started` appears (or once it ended
/// by itself).
#[cfg(feature = "rocksdb")]
fn killed_after(args: &[&str], started: &Path, delay_ms: u64) {
    use std::time::{Duration, Instant};
    let mut cmd = bin();
    cmd.args(args);
    cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let mut child = ChildGuard::spawn(&mut cmd).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !started.exists() && child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "terrane {args:?} never started");
        std::thread::sleep(Duration::from_micros(200));
    }
    std::thread::sleep(Duration::from_millis(delay_ms));
    let _ = child.kill();
    child.wait().unwrap();
}

/// `terrane copy` killed (SIGKILL) while it runs leaves the whole copy or a folder that
/// refuses to open and that the next copy replaces: never part of the world that opens.
#[test]
#[cfg(feature = "rocksdb")]
fn a_killed_copy_never_opens_as_part_of_the_world() {
    let t = tempfile::tempdir().unwrap();
    let w = t.path().join("w");
    ok(&["import", "anvil", s(&fixture("anvil/1.18.2")), s(&w)]);
    let chunks = json(&["info", s(&w), "--json"])["chunks"].clone();
    let mut cut = 0;
    for delay_ms in [0u64, 1, 3, 10, 30] {
        let to = t.path().join(format!("copy-{delay_ms}"));
        // From the moment its creation intent is there, the copy is under way.
        killed_after(&["copy", s(&w), s(&to)], &to.join("terrane-world.creating"), delay_ms);
        let info = run(&["info", s(&to), "--json"]);
        if info.status.success() {
            let v: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
            assert_eq!(v["chunks"], chunks, "a copy that opens is whole");
            continue;
        }
        cut += 1;
        let err = String::from_utf8_lossy(&info.stderr).to_string();
        assert!(err.contains("cut off"), "{err}");
        let err = fails(&["repair", s(&to)], 1);
        assert!(err.contains("a copy that was cut off"), "{err}");
        ok(&["copy", s(&w), s(&to)]);
        assert_eq!(json(&["info", s(&to), "--json"])["chunks"], chunks);
    }
    assert!(cut > 0, "every copy ended before its kill");
}

/// `terrane import` killed (SIGKILL) while it runs leaves a world that does not open but to
/// the same import, which goes on where it stopped: never part of the source that opens.
#[test]
#[cfg(feature = "rocksdb")]
fn a_killed_import_never_opens_until_the_import_goes_on() {
    let t = tempfile::tempdir().unwrap();
    let src = fixture("anvil/1.18.2");
    let whole = t.path().join("whole");
    ok(&["import", "anvil", s(&src), s(&whole)]);
    let chunks = json(&["info", s(&whole), "--json"])["chunks"].clone();
    let mut cut = 0;
    for delay_ms in [0u64, 1, 3, 10, 30] {
        let to = t.path().join(format!("import-{delay_ms}"));
        // From the moment the world is there, the import is under way.
        let import = ["import", "anvil", s(&src), s(&to)];
        killed_after(&import, &to.join("terrane-world"), delay_ms);
        let info = run(&["info", s(&to), "--json"]);
        if info.status.success() {
            let v: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
            assert_eq!(v["chunks"], chunks, "an imported world that opens is whole");
            continue;
        }
        cut += 1;
        let err = String::from_utf8_lossy(&info.stderr).to_string();
        assert!(err.contains("import") && err.contains("cut off"), "{err}");
        ok(&["import", "anvil", s(&src), s(&to)]);
        assert_eq!(json(&["info", s(&to), "--json"])["chunks"], chunks);
    }
    assert!(cut > 0, "every import ended before its kill");
}
