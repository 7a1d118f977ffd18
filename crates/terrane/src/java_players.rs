//! A Java world's imported players as a game server's records: the `playerdata/<uuid>.dat`
//! file an import kept byte for byte ([`crate::java::PLAYER_FILE_PREFIX`]) read as a
//! [`PlayerRecord`], so that a player joining a served world finds the inventory and place
//! they had in the Java world (an offline server names the file by
//! [`crate::game::offline_player_id`]).
//!
//! Read: `Pos`, `Rotation`, `playerGameType`, `Dimension`, and the inventory: `Inventory`
//! (hotbar 0–8, main 9–35; before 1.21.5 armour 100–103 and the off hand −106 too) and,
//! from 1.21.5, `equipment`; the ender chest (`EnderItems`). An item keeps its data: its
//! `tag` (before 1.20.5), or its components (1.20.5 and later) in that form
//! (`terrane_anvil::item_data`), those with no such form left out. Not read: health,
//! experience, effects.
//!
//! Written back on a Java export ([`with_record`]): a player the game saved gets those
//! fields from their record, the rest of their file kept (a player without a file gets one
//! of those fields), items in the format of the world's `DataVersion` as containers' are
//! (`docs/format/anvil.md`). Players the game saw in another dimension than the Overworld
//! keep their file's position and dimension.

use std::io::Read as _;

use terrane_nbt::{Compound, Tag, Writer};
use terrane_store::tables;

use crate::game::{ItemSlot, PlayerRecord};
use crate::{Result, World};

/// The `worldProperties` key prefix of a kept player file: then `data/`, `stats/` or
/// `advancements/` and the file's name (`<uuid>.dat`, `<uuid>.json`), as 26.1 names the
/// folders under `players/`.
pub const PLAYER_FILE_PREFIX: &[u8] = b"anvil:player:";

/// A player of an imported Java world.
#[derive(Clone, Debug, PartialEq)]
pub struct JavaPlayer {
    /// The player as a game record: position, look, game mode, inventory, and the dimension
    /// for the Overworld, the Nether and the End ([`vanilla_dimension`]; 0 in a datapack's).
    pub record: PlayerRecord,
    /// The dimension they were in (`minecraft:overworld`, `minecraft:the_nether`, ...).
    pub dimension: String,
}

/// Player `id` as the Java world imported into `world` left them, `None` when it had no
/// such player (or their file does not read as a player).
pub fn imported_player(world: &World, id: u128) -> Result<Option<JavaPlayer>> {
    let key =
        [PLAYER_FILE_PREFIX, b"data/", crate::game::uuid_text(id).as_bytes(), b".dat"].concat();
    let Some(o) = world.store().get(tables::WORLD_PROPERTIES, &key)? else { return Ok(None) };
    let mut raw = Vec::new();
    let bytes = match flate2::read::GzDecoder::new(&o.data[..]).read_to_end(&mut raw) {
        Ok(_) => &raw[..],
        Err(_) => &o.data[..], // stored uncompressed
    };
    Ok(Compound::from_bytes(bytes).ok().and_then(|c| player_of(&c)))
}

fn numbers(c: &Compound, key: &str) -> Option<Vec<f64>> {
    match c.get(key)? {
        Tag::List(_, items) => items
            .iter()
            .map(|t| match t {
                Tag::Double(v) => Some(*v),
                Tag::Float(v) => Some(f64::from(*v)),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// The record of one Java player compound; `None` without a finite `Pos`.
fn player_of(c: &Compound) -> Option<JavaPlayer> {
    let pos = numbers(c, "Pos").filter(|p| p.len() == 3 && p.iter().all(|v| v.is_finite()))?;
    let rot = numbers(c, "Rotation").filter(|r| r.len() == 2).unwrap_or(vec![0.0, 0.0]);
    let game_mode = c.get("playerGameType").and_then(Tag::as_int).filter(|g| (0..=3).contains(g));
    let dimension = match c.get("Dimension") {
        Some(Tag::String(d)) => d.clone(),
        Some(t) => match t.as_int() {
            Some(-1) => "minecraft:the_nether".into(),
            Some(1) => "minecraft:the_end".into(),
            _ => "minecraft:overworld".into(),
        },
        None => "minecraft:overworld".into(),
    };
    let mut items: Vec<ItemSlot> = Vec::new();
    if let Some(Tag::List(_, list)) = c.get("Inventory") {
        for t in list {
            let Tag::Compound(item) = t else { continue };
            let Some(Tag::Byte(s)) = item.get("Slot") else { continue };
            let slot = match *s {
                s @ 0..=8 => 36 + s as u16,
                s @ 9..=35 => s as u16,
                s @ 100..=103 => 108 - s as u16, // feet 100 → 8 … head 103 → 5
                -106 => 45,
                _ => continue,
            };
            items.extend(stack(item, slot));
        }
    }
    if let Some(Tag::Compound(eq)) = c.get("equipment") {
        for (name, slot) in [("head", 5), ("chest", 6), ("legs", 7), ("feet", 8), ("offhand", 45)] {
            if let Some(Tag::Compound(item)) = eq.get(name) {
                items.extend(stack(item, slot));
            }
        }
    }
    items.sort_by_key(|s| s.slot);
    items.dedup_by_key(|s| s.slot);
    let mut ender_items: Vec<ItemSlot> = Vec::new();
    if let Some(Tag::List(_, list)) = c.get("EnderItems") {
        for t in list {
            let Tag::Compound(item) = t else { continue };
            let Some(Tag::Byte(s @ 0..=26)) = item.get("Slot") else { continue };
            ender_items.extend(stack(item, *s as u16));
        }
    }
    ender_items.sort_by_key(|s| s.slot);
    ender_items.dedup_by_key(|s| s.slot);
    let record = PlayerRecord {
        position: [pos[0], pos[1], pos[2]],
        yaw: rot[0] as f32,
        pitch: rot[1] as f32,
        game_mode: game_mode.unwrap_or(0) as u8,
        items,
        cursor: None,
        open_container: None,
        ender_items,
        dimension: vanilla_dimension(&dimension).unwrap_or(0),
    };
    Some(JavaPlayer { record, dimension })
}

/// terrane's number of a vanilla Java dimension (`minecraft:overworld` 0, `minecraft:the_nether`
/// 1, `minecraft:the_end` 2, as imports number them); `None` for a datapack's dimension.
pub fn vanilla_dimension(name: &str) -> Option<u64> {
    let name = name.strip_prefix("minecraft:")?;
    let id = terrane_anvil::folder::VANILLA.iter().position(|v| *v == name)?;
    Some(id as u64)
}

/// One Java item compound as a stack in `slot`: `id`, `Count` (a byte) or `count` (an int),
/// and its `tag` as data (its components in that form).
fn stack(item: &Compound, slot: u16) -> Option<ItemSlot> {
    let item = &terrane_anvil::item_data::item_to_tag_form(item).item;
    let Some(Tag::String(id)) = item.get("id") else { return None };
    let count = match (item.get("Count"), item.get("count")) {
        (Some(t), _) | (None, Some(t)) => t.as_int()?,
        (None, None) => 1,
    };
    let count = u8::try_from(count).ok().filter(|&n| n > 0)?;
    let name = if id.contains(':') { id.clone() } else { format!("minecraft:{id}") };
    let mut data = Vec::new();
    if let Some(Tag::Compound(tag)) = item.get("tag") {
        let mut w = Writer::new();
        if w.named("", &Tag::Compound(tag.clone())).is_ok() {
            data = w.out;
        }
    }
    Some(ItemSlot::new(slot, name, count).with_data(data))
}

/// Before 1.21.5 (`DataVersion` 4325) armour and the off hand are `Inventory` slots.
const EQUIPMENT_DATA_VERSION: i32 = 4325;

/// The player file `file` (gzip NBT, `None` for a player without one) with what `record`
/// holds: `Pos`, `Rotation`, `playerGameType`, the inventory and the ender chest, items in the format of
/// `data_version`. `None` when `file` does not read as NBT (it is written back as it was).
pub(crate) fn with_record(
    file: Option<&[u8]>,
    record: &PlayerRecord,
    data_version: Option<i32>,
) -> Option<Vec<u8>> {
    use std::io::Write as _;
    let mut player = match file {
        Some(bytes) => {
            let mut raw = Vec::new();
            flate2::read::GzDecoder::new(bytes).read_to_end(&mut raw).ok()?;
            Compound::from_bytes(&raw).ok()?
        }
        None => {
            let mut c = Compound::new();
            if let Some(v) = data_version {
                c.insert("DataVersion", Tag::Int(v));
            }
            c.insert("Dimension", Tag::String("minecraft:overworld".into()));
            c
        }
    };
    let overworld = match player.get("Dimension") {
        Some(Tag::String(d)) => d == "minecraft:overworld",
        Some(t) => t.as_int() == Some(0),
        None => true,
    };
    if overworld {
        player.insert("Pos", Tag::List(6, record.position.map(Tag::Double).to_vec()));
        player.insert(
            "Rotation",
            Tag::List(5, vec![Tag::Float(record.yaw), Tag::Float(record.pitch)]),
        );
    }
    player.insert("playerGameType", Tag::Int(i32::from(record.game_mode)));
    let equipment = data_version.is_some_and(|v| v >= EQUIPMENT_DATA_VERSION);
    let before = match player.get("Inventory") {
        Some(Tag::List(_, items)) => items.clone(),
        _ => Vec::new(),
    };
    let mut inventory = Vec::new();
    let mut worn = Compound::new();
    for s in &record.items {
        let (slot, wear) = match s.slot {
            36..=44 => (s.slot as i8 - 36, None),
            9..=35 => (s.slot as i8, None),
            5..=8 => {
                (108 - s.slot as i8, Some(["head", "chest", "legs", "feet"][s.slot as usize - 5]))
            }
            45 => (-106, Some("offhand")),
            _ => continue,
        };
        let mut item = crate::java_containers::item_tag(s, slot, data_version, &before);
        match wear {
            Some(name) if equipment => {
                item.remove("Slot");
                worn.insert(name, Tag::Compound(item));
            }
            _ => inventory.push(item),
        }
    }
    player.insert("Inventory", Tag::compound_list(inventory));
    let before = match player.get("EnderItems") {
        Some(Tag::List(_, items)) => items.clone(),
        _ => Vec::new(),
    };
    let ender = record.ender_items.iter().filter(|s| s.slot < 27);
    let ender =
        ender.map(|s| crate::java_containers::item_tag(s, s.slot as i8, data_version, &before));
    player.insert("EnderItems", Tag::compound_list(ender.collect::<Vec<_>>()));
    if equipment {
        player.insert("equipment", Tag::Compound(worn));
    }
    let mut w = Writer::new();
    w.named("", &Tag::Compound(player)).ok()?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&w.out).ok()?;
    gz.finish().ok()
}
