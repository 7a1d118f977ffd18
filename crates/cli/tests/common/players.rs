//! The players of the tests with several real clients: a flat world with a chest and a
//! furnace beside each player's lane (`make_world`), the items it holds (`totals`), and the
//! Node driver that plays them (`start_bots`, `crates/valence/tests/bots/play.js`).
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;

use terrane::game::{self, ContainerRecord, ItemSlot};
use terrane::nbt::{Compound, Tag};
use terrane::worldgen::flat;
use terrane::{Backend, ChunkPos, ColumnPos, TickSave, World};
use terrane_section::testdata::ChildGuard;

pub const LANE: i32 = 40;
pub const PLANKS: &str = "minecraft:oak_planks";
pub const CHEST: &str = "minecraft:chest[facing=south,type=single,waterlogged=false]";
pub const FURNACE: &str = "minecraft:furnace[facing=south,lit=false]";
pub const GRASS: &str = "minecraft:grass_block[snowy=false]";
pub const SWORD: &str = "minecraft:diamond_sword";
pub const SHULKER_BOX: &str = "minecraft:shulker_box";

fn compound(pairs: Vec<(&str, Tag)>) -> Compound {
    let mut c = Compound::new();
    for (k, v) in pairs {
        c.insert(k, v);
    }
    c
}

fn text(v: &str) -> Tag {
    Tag::String(v.to_string())
}

/// Item data as a record keeps it: the `tag` compound's binary NBT.
fn data(tag: Compound) -> Vec<u8> {
    terrane::nbt::to_bytes("", &Tag::Compound(tag)).unwrap()
}

/// Chest `i`'s sword: named "Blade i", with sharpness V and some wear.
pub fn sword_data(i: i32) -> Vec<u8> {
    let sharpness = compound(vec![("id", text("minecraft:sharpness")), ("lvl", Tag::Short(5))]);
    data(compound(vec![
        (
            "display",
            Tag::Compound(compound(vec![("Name", text(&format!(r#"{{"text":"Blade {i}"}}"#)))])),
        ),
        ("Enchantments", Tag::compound_list([sharpness])),
        ("Damage", Tag::Int(7 + i)),
    ]))
}

/// Chest `i`'s shulker box: `i + 3` gold ingots and a named book inside.
pub fn shulker_data(i: i32) -> Vec<u8> {
    let gold = compound(vec![
        ("Slot", Tag::Byte(0)),
        ("id", text("minecraft:gold_ingot")),
        ("Count", Tag::Byte(i as i8 + 3)),
    ]);
    let book_tag = compound(vec![(
        "display",
        Tag::Compound(compound(vec![("Name", text(r#"{"text":"Ledger"}"#))])),
    )]);
    let book = compound(vec![
        ("Slot", Tag::Byte(13)),
        ("id", text("minecraft:book")),
        ("Count", Tag::Byte(1)),
        ("tag", Tag::Compound(book_tag)),
    ]);
    let items = compound(vec![("Items", Tag::compound_list([gold, book]))]);
    data(compound(vec![("BlockEntityTag", Tag::Compound(items))]))
}

/// Player `i`'s lane (blocks along x at this z): players walk in pairs, lanes 4 apart, 10
/// between pairs.
pub fn lane_z(i: i32) -> i32 {
    (i / 2) * 10 + (i % 2) * 4
}

/// The chest player `i` uses: one between the two lanes of its pair, shared by both players.
pub fn chest_at(i: i32) -> [i64; 3] {
    [0, 65, i64::from(lane_z(i - i % 2) + 2)]
}

/// Player `i`'s own furnace, beside its lane on the side away from the shared chest.
pub fn furnace_at(i: i32) -> [i64; 3] {
    let side = if i % 2 == 0 { -2 } else { 2 };
    [1, 65, i64::from(lane_z(i) + side)]
}

/// The start: flat ground over the lanes, a chest between each pair of lanes holding, for
/// each of its two players, 64 oak planks, 64 diamonds, 32 emeralds, a named, enchanted and
/// worn sword and a shulker box holding gold and a named book ([`sword_data`],
/// [`shulker_data`]), and beside each lane a furnace holding 16 raw iron (its input) and 8
/// coal (its fuel).
pub fn make_world(location: &Path, backend: Backend, bots: i32) -> BTreeMap<String, u64> {
    let mut schema = terrane::default_schema();
    for name in flat::BLOCKS.iter().copied().chain([CHEST, FURNACE, PLANKS]) {
        if schema.blocks().find(name).is_none() {
            schema.add_block(name, &[]).unwrap();
        }
    }
    let ids = terrane::worldgen::Terrain::Flat.ids(&schema).unwrap();
    let chest = schema.blocks().find(CHEST).unwrap();
    let furnace = schema.blocks().find(FURNACE).unwrap();
    let mut world = World::builder().backend(backend).schema(schema).create(location).unwrap();
    let mut save = TickSave::new();
    let mut columns: HashMap<(i64, i64), Vec<(i64, terrane::Chunk)>> = HashMap::new();
    let mut chests: BTreeMap<[i64; 3], Vec<ItemSlot>> = BTreeMap::new();
    for i in 0..bots {
        for ([x, y, z], block) in [(chest_at(i), chest), (furnace_at(i), furnace)] {
            let col = (x.div_euclid(16), z.div_euclid(16));
            let chunks = columns.entry(col).or_insert_with(|| flat::column(&ids));
            let (_, c) = chunks.iter_mut().find(|(cy, _)| *cy == y.div_euclid(16)).unwrap();
            c.set(
                x.rem_euclid(16) as u32,
                y.rem_euclid(16) as u32,
                z.rem_euclid(16) as u32,
                terrane::BlockId(block),
            );
        }
        // The pair's second player's stacks after the first's, in the same chest.
        let first = 5 * (i % 2) as u16;
        chests.entry(chest_at(i)).or_default().extend([
            ItemSlot::new(first, PLANKS, 64),
            ItemSlot::new(first + 1, "minecraft:diamond", 64),
            ItemSlot::new(first + 2, "minecraft:emerald", 32),
            ItemSlot::new(first + 3, SWORD, 1).with_data(sword_data(i)),
            ItemSlot::new(first + 4, SHULKER_BOX, 1).with_data(shulker_data(i)),
        ]);
        let fuelled = ContainerRecord {
            items: vec![
                ItemSlot::new(0, "minecraft:raw_iron", 16),
                ItemSlot::new(1, "minecraft:coal", 8),
            ],
        };
        game::put_container(&mut save, 0, furnace_at(i), &fuelled);
    }
    for (at, items) in chests {
        game::put_container(&mut save, 0, at, &ContainerRecord { items });
    }
    for ((cx, cz), chunks) in columns {
        for (cy, c) in chunks {
            save.put_chunk(0, ChunkPos::new(cx, cy, cz), c.encode(world.schema()));
        }
        world.mark_generated(ColumnPos::new(cx as i32, cz as i32)).unwrap();
    }
    world.save_tick(1, save).unwrap();
    let totals = totals(&world, bots);
    world.close().unwrap();
    totals
}

/// An item's key in [`totals`]: its name, and its data in a canonical text (compounds' keys
/// sorted) when it has some, so that a change to an item's data is a different item.
pub fn item_key(slot: &ItemSlot) -> String {
    fn canonical(t: &Tag) -> String {
        match t {
            Tag::Compound(c) => {
                let mut entries: Vec<String> =
                    c.iter().map(|(k, v)| format!("{k:?}:{}", canonical(v))).collect();
                entries.sort();
                format!("{{{}}}", entries.join(","))
            }
            Tag::List(_, items) => {
                format!("[{}]", items.iter().map(canonical).collect::<Vec<_>>().join(","))
            }
            other => format!("{other:?}"),
        }
    }
    if slot.data.is_empty() {
        return slot.item.clone();
    }
    let (_, tag) = terrane::nbt::from_bytes(&slot.data).expect("item data reads");
    format!("{}{}", slot.item, canonical(&tag))
}

/// Items in chests and inventories by [`item_key`], with the planks placed as blocks counted
/// as planks.
pub fn totals(world: &World, bots: i32) -> BTreeMap<String, u64> {
    let mut t = BTreeMap::new();
    let mut add = |s: &ItemSlot| *t.entry(item_key(s)).or_insert(0) += u64::from(s.count);
    for p in game::players(world).unwrap().values() {
        p.items.iter().chain(&p.ender_items).chain(&p.cursor).for_each(&mut add);
    }
    for c in game::containers(world).unwrap().values() {
        c.items.iter().for_each(&mut add);
    }
    let planks = world.schema().blocks().find(PLANKS).unwrap();
    let mut placed = 0;
    for cx in -1..=(LANE / 16 + 1) {
        for cz in -1..=(lane_z(bots) / 16 + 1) {
            if let Some(c) = world.get_chunk(ChunkPos::new(cx.into(), 4, cz.into())).unwrap() {
                for x in 0..16 {
                    for z in 0..16 {
                        placed += u64::from(c.get(x, 0, z).0 == planks);
                    }
                }
            }
        }
    }
    *t.entry(PLANKS.to_string()).or_default() += placed;
    t
}

/// The bots' driver: one Node process for all players, its JSON lines on a channel.
pub fn start_bots(
    port: u16,
    seed: u64,
    modules: &Path,
    bots: i32,
) -> (ChildGuard, mpsc::Receiver<serde_json::Value>) {
    let spec = serde_json::json!({
        "host": "127.0.0.1",
        "port": port,
        "seed": seed,
        "bots": (0..bots).map(|i| serde_json::json!({
            "name": format!("player{i}"),
            "lane": { "x0": 0, "z": lane_z(i), "length": LANE },
            "chest": chest_at(i),
            "furnace": furnace_at(i),
        })).collect::<Vec<_>>(),
    });
    let mut child = ChildGuard::spawn(
        Command::new("node")
            .arg(crate::common::minecraft::bots().join("play.js"))
            .arg(spec.to_string())
            .env("NODE_PATH", modules)
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    )
    .expect("start node play.js");
    let out = crate::common::minecraft::child_stdout(&mut child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str(&line)
                && tx.send(v).is_err()
            {
                break;
            }
        }
    });
    (child, rx)
}
