//! An imported Java world's players as a game server reads them
//! (`terrane::java::imported_player`): the `playerdata` file of a player's offline id gives
//! their place, look, game mode and inventory (armour and off hand in their screen slots,
//! item data kept), and their dimension.

use std::io::Write as _;

use terrane::game::{self, ItemSlot};
use terrane::nbt::{Compound, Tag, Writer};
use terrane::{Backend, World};

fn c(pairs: Vec<(&str, Tag)>) -> Compound {
    let mut c = Compound::new();
    for (k, v) in pairs {
        c.insert(k, v);
    }
    c
}

fn item(slot: i8, id: &str, count: i8, tag: Option<Compound>) -> Compound {
    let mut i = c(vec![
        ("Slot", Tag::Byte(slot)),
        ("id", Tag::String(id.into())),
        ("Count", Tag::Byte(count)),
    ]);
    if let Some(t) = tag {
        i.insert("tag", Tag::Compound(t));
    }
    i
}

fn write_player(dir: &std::path::Path, name: &str, player: Compound) {
    let file = format!("{}.dat", game::uuid_text(game::offline_player_id(name)));
    let mut w = Writer::new();
    w.named("", &Tag::Compound(player)).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&w.out).unwrap();
    std::fs::create_dir_all(dir.join("playerdata")).unwrap();
    std::fs::write(dir.join("playerdata").join(file), gz.finish().unwrap()).unwrap();
}

#[test]
fn an_imported_players_file_reads_as_their_game_record() {
    let tmp = tempfile::tempdir().unwrap();
    let java = terrane_anvil::testdata::java_world_finished(tmp.path(), "anvil/1.21.1/r.0.0.mca");
    let damage = c(vec![("Damage", Tag::Int(9))]);
    let inventory = vec![
        item(0, "minecraft:diamond_sword", 1, Some(damage.clone())),
        item(9, "minecraft:oak_planks", 19, None),
        item(100, "minecraft:iron_boots", 1, None),
        item(103, "minecraft:iron_helmet", 1, None),
        item(-106, "minecraft:shield", 1, None),
    ];
    let doubles = |v: &[f64]| Tag::List(6, v.iter().map(|x| Tag::Double(*x)).collect());
    let floats = |v: &[f32]| Tag::List(5, v.iter().map(|x| Tag::Float(*x)).collect());
    write_player(
        &java,
        "Alex",
        c(vec![
            ("Pos", doubles(&[3.5, 70.0, 7.5])),
            ("Rotation", floats(&[90.0, -10.0])),
            ("playerGameType", Tag::Int(1)),
            ("Dimension", Tag::String("minecraft:overworld".into())),
            ("Inventory", Tag::compound_list(inventory)),
            ("EnderItems", Tag::compound_list([item(26, "minecraft:emerald", 3, None)])),
        ]),
    );
    write_player(
        &java,
        "Bob",
        c(vec![
            ("Pos", doubles(&[-10.0, 40.0, 2.0])),
            ("Dimension", Tag::String("minecraft:the_nether".into())),
        ]),
    );
    // A player of 1.20.5 and later: the sword's components read as its 1.20.1 data.
    let components = c(vec![
        ("minecraft:damage", Tag::Int(9)),
        ("minecraft:custom_name", Tag::String(r#"{"text":"Cleo's"}"#.into())),
    ]);
    let sword = c(vec![
        ("Slot", Tag::Byte(0)),
        ("id", Tag::String("minecraft:diamond_sword".into())),
        ("count", Tag::Int(1)),
        ("components", Tag::Compound(components)),
    ]);
    let cleo =
        c(vec![("Pos", doubles(&[0.5, 70.0, 0.5])), ("Inventory", Tag::compound_list([sword]))]);
    write_player(&java, "Cleo", cleo);
    let mut world = World::builder().backend(Backend::Memory).create(tmp.path().join("w")).unwrap();
    terrane::java::import_java_world(&mut world, &java, &mut |_, _| {}).unwrap();

    let cleo = terrane::java::imported_player(&world, game::offline_player_id("Cleo"))
        .unwrap()
        .expect("Cleo");
    let display = c(vec![("Name", Tag::String(r#"{"text":"Cleo's"}"#.into()))]);
    let tag = c(vec![("Damage", Tag::Int(9)), ("display", Tag::Compound(display))]);
    let data = Compound::from_bytes(&cleo.record.items[0].data).unwrap();
    assert_eq!(data, tag);

    let alex = terrane::java::imported_player(&world, game::offline_player_id("Alex"))
        .unwrap()
        .expect("Alex");
    assert_eq!(alex.dimension, "minecraft:overworld");
    assert_eq!(alex.record.position, [3.5, 70.0, 7.5]);
    assert_eq!((alex.record.yaw, alex.record.pitch, alex.record.game_mode), (90.0, -10.0, 1));
    let mut w = Writer::new();
    w.named("", &Tag::Compound(damage)).unwrap();
    assert_eq!(
        alex.record.items,
        vec![
            ItemSlot::new(5, "minecraft:iron_helmet", 1),
            ItemSlot::new(8, "minecraft:iron_boots", 1),
            ItemSlot::new(9, "minecraft:oak_planks", 19),
            ItemSlot::new(36, "minecraft:diamond_sword", 1).with_data(w.out),
            ItemSlot::new(45, "minecraft:shield", 1),
        ]
    );
    assert_eq!(alex.record.ender_items, vec![ItemSlot::new(26, "minecraft:emerald", 3)]);
    let bob = terrane::java::imported_player(&world, game::offline_player_id("Bob")).unwrap();
    let bob = bob.expect("Bob");
    assert_eq!(bob.dimension, "minecraft:the_nether");
    assert_eq!((alex.record.dimension, bob.record.dimension), (0, 1), "terrane's numbers");
    assert_eq!(terrane::java::vanilla_dimension("minecraft:the_end"), Some(2));
    assert_eq!(terrane::java::vanilla_dimension("terrane:mining"), None);
    assert!(
        terrane::java::imported_player(&world, game::offline_player_id("Nobody"))
            .unwrap()
            .is_none()
    );
}

/// What a game saved of players goes back out with `export anvil`: into the file each was
/// imported with (other fields kept), or a new one; items in the world's release's format
/// (1.21.1 here: `count`, armour in `Inventory` slots 100–103).
#[test]
fn the_games_records_go_back_into_the_players_files() {
    let tmp = tempfile::tempdir().unwrap();
    let java = terrane_anvil::testdata::java_world_finished(tmp.path(), "anvil/1.21.1/r.0.0.mca");
    let doubles = |v: &[f64]| Tag::List(6, v.iter().map(|x| Tag::Double(*x)).collect());
    write_player(
        &java,
        "Alex",
        c(vec![
            ("Pos", doubles(&[3.5, 70.0, 7.5])),
            ("XpLevel", Tag::Int(30)),
            ("Inventory", Tag::compound_list([item(0, "minecraft:stone", 1, None)])),
        ]),
    );
    // In the Nether: the game (which serves the Overworld) keeps their place.
    write_player(
        &java,
        "Bob",
        c(vec![
            ("Pos", doubles(&[-10.0, 40.0, 2.0])),
            ("Dimension", Tag::String("minecraft:the_nether".into())),
        ]),
    );
    let mut world = World::builder().backend(Backend::Memory).create(tmp.path().join("w")).unwrap();
    terrane::java::import_java_world(&mut world, &java, &mut |_, _| {}).unwrap();
    let moved = game::PlayerRecord {
        position: [10.5, 80.0, -4.5],
        game_mode: 1,
        items: vec![
            ItemSlot::new(36, "minecraft:emerald", 7),
            ItemSlot::new(5, "minecraft:iron_helmet", 1),
        ],
        ..game::PlayerRecord::default()
    };
    let carl = game::PlayerRecord {
        position: [1.5, 65.0, 1.5],
        items: vec![ItemSlot::new(9, "minecraft:diamond", 2)],
        ender_items: vec![ItemSlot::new(0, "minecraft:emerald", 4)],
        ..game::PlayerRecord::default()
    };
    let mut save = terrane::TickSave::new();
    game::put_player(&mut save, game::offline_player_id("Alex"), &moved);
    game::put_player(&mut save, game::offline_player_id("Carl"), &carl);
    let bob = game::PlayerRecord { position: [8.5, 65.0, 8.5], ..game::PlayerRecord::default() };
    game::put_player(&mut save, game::offline_player_id("Bob"), &bob);
    world.save_tick(world.tick() + 1, save).unwrap();

    let out = tmp.path().join("out");
    terrane::java::export_java_world(
        &world,
        &out,
        terrane::export::Overwrite::Refuse,
        &mut |_, _| {},
    )
    .unwrap();
    // Read back through the importer's own reader.
    let mut again =
        World::builder().backend(Backend::Memory).create(tmp.path().join("w2")).unwrap();
    terrane::java::import_java_world(&mut again, &out, &mut |_, _| {}).unwrap();
    let alex =
        terrane::java::imported_player(&again, game::offline_player_id("Alex")).unwrap().unwrap();
    assert_eq!(alex.record.position, [10.5, 80.0, -4.5]);
    assert_eq!(alex.record.game_mode, 1);
    assert_eq!(alex.record.items, moved.items.iter().rev().cloned().collect::<Vec<_>>());
    let carl_back =
        terrane::java::imported_player(&again, game::offline_player_id("Carl")).unwrap().unwrap();
    assert_eq!(carl_back.record.items, carl.items);
    assert_eq!(carl_back.record.ender_items, carl.ender_items);
    let bob_back =
        terrane::java::imported_player(&again, game::offline_player_id("Bob")).unwrap().unwrap();
    assert_eq!(bob_back.dimension, "minecraft:the_nether");
    assert_eq!(bob_back.record.position, [-10.0, 40.0, 2.0], "the Nether place kept");
    // Alex's other fields are his file's.
    let name = format!("{}.dat", game::uuid_text(game::offline_player_id("Alex")));
    let mut raw = Vec::new();
    use std::io::Read as _;
    flate2::read::GzDecoder::new(&std::fs::read(out.join("playerdata").join(name)).unwrap()[..])
        .read_to_end(&mut raw)
        .unwrap();
    let file = Compound::from_bytes(&raw).unwrap();
    assert_eq!(file.get("XpLevel"), Some(&Tag::Int(30)));
    let Some(Tag::List(_, inv)) = file.get("Inventory") else { panic!("{file:?}") };
    let helmet = inv.iter().find_map(|t| match t {
        Tag::Compound(i) if i.get("Slot") == Some(&Tag::Byte(103)) => Some(i.clone()),
        _ => None,
    });
    assert_eq!(helmet.and_then(|h| h.get("count").cloned()), Some(Tag::Int(1)), "{inv:?}");
}
