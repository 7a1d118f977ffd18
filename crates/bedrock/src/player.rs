//! The player of a single-player world between the editions: Java's `level.dat`
//! `Data.Player` ⇄ Bedrock's `~local_player` record, by the rules in
//! `docs/format/java-bedrock-table.md`, "Players".
//!
//! What is translated: where the player is (position, motion, rotation, dimension), the
//! game mode, experience level and progress, the selected hotbar slot, and every item the
//! player carries — the inventory, the armour, the off hand and the ender chest — each
//! through the table's item lines (an item the other edition lacks is left out and counted
//! in `items_dropped`). Everything else (health, hunger, effects, abilities, the spawn
//! point, recipes…) is left out and counted by field as `approximated`: the game starts the
//! player with its defaults there. Other players of a world (Java's `playerdata/`,
//! Bedrock's `player_server_` records) are not translated; the callers count them.

use terrane_nbt::{Compound, Tag};

use crate::block_entity::{bedrock_item_to_java, java_item_to_bedrock};
use crate::entity::{EntityReport, doubles, floats, java_unique_id, numbers, uuid_of_unique_id};
use crate::translate::table;

/// The key of the single-player world's player in a Bedrock database.
pub const LOCAL_PLAYER_KEY: &[u8] = b"~local_player";

/// How far above the feet Bedrock keeps a player's position (its eye height): Java's `Pos`
/// is the feet.
pub const BEDROCK_EYE_HEIGHT: f64 = 1.62001;

/// The id the report counts players under.
const PLAYER: &str = "minecraft:player";

/// Java's dimensions by Bedrock's `DimensionId` (0, 1, 2).
const DIMENSIONS: [&str; 3] = ["minecraft:overworld", "minecraft:the_nether", "minecraft:the_end"];

/// Java `equipment` slots ⇄ Bedrock `Armor` list places (head first).
const ARMOR: [&str; 4] = ["head", "chest", "legs", "feet"];

/// Java inventory slots of the armour before 1.21.5 (feet 100 … head 103) and the off hand.
const JAVA_OLD_ARMOR_SLOTS: [i8; 4] = [103, 102, 101, 100];
const JAVA_OLD_OFFHAND_SLOT: i8 = -106;

/// Java fields this translation uses.
const JAVA_USED: &[&str] = &[
    "id",
    "UUID",
    "UUIDMost",
    "UUIDLeast",
    "Pos",
    "Motion",
    "Rotation",
    "Dimension",
    "playerGameType",
    "Inventory",
    "equipment",
    "EnderItems",
    "XpLevel",
    "XpP",
    "SelectedItemSlot",
    "OnGround",
    "Fire",
    "Air",
    "Invulnerable",
];

/// Bedrock's likewise.
const BEDROCK_USED: &[&str] = &[
    "identifier",
    "definitions",
    "UniqueID",
    "Pos",
    "Motion",
    "Rotation",
    "DimensionId",
    "PlayerGameMode",
    "Inventory",
    "Armor",
    "Offhand",
    "EnderChestInventory",
    "PlayerLevel",
    "PlayerLevelProgress",
    "SelectedInventorySlot",
    "OnGround",
    "Fire",
    "Air",
    "Invulnerable",
];

/// Fields both editions keep under one name and type.
const SAME: [&str; 4] = ["OnGround", "Fire", "Air", "Invulnerable"];

fn int(c: &Compound, key: &str) -> Option<i32> {
    c.get(key).and_then(|t| match t {
        Tag::Byte(b) => Some(i32::from(*b)),
        t => t.as_int(),
    })
}

fn compounds<'a>(c: &'a Compound, key: &str) -> impl Iterator<Item = &'a Compound> {
    c.get(key).and_then(Tag::as_list).unwrap_or(&[]).iter().filter_map(Tag::as_compound)
}

/// Bedrock's empty item (an unused armour or off-hand place).
fn bedrock_empty_item() -> Compound {
    let mut c = Compound::new();
    c.insert("Name", Tag::String(String::new()));
    c.insert("Count", Tag::Byte(0));
    c.insert("Damage", Tag::Short(0));
    c.insert("WasPickedUp", Tag::Byte(0));
    c
}

fn is_bedrock_empty(item: &Compound) -> bool {
    item.get("Name").and_then(Tag::as_str).is_none_or(str::is_empty)
        || matches!(item.get("Count"), Some(Tag::Byte(0)))
}

/// Java game mode (0 survival, 1 creative, 2 adventure, 3 spectator) as Bedrock's (the same,
/// spectator 6).
fn bedrock_game_mode(java: i32) -> i32 {
    if java == 3 { 6 } else { java.clamp(0, 2) }
}

/// Bedrock game mode as Java's: spectator 6 is 3; Bedrock's "the world's default" (5) and
/// anything else is survival.
fn java_game_mode(bedrock: i32) -> i32 {
    match bedrock {
        0..=2 => bedrock,
        6 => 3,
        _ => 0,
    }
}

/// The Java player `java` (`level.dat`'s `Data.Player`) in Bedrock's form (the value of
/// [`LOCAL_PLAYER_KEY`]); `None` (counted in `report.left`) without a position.
pub fn java_to_bedrock(java: &Compound, report: &mut EntityReport) -> Option<Compound> {
    let Some(mut pos) = numbers(java, "Pos", 3) else {
        *report.left.entry(PLAYER.into()).or_default() += 1;
        return None;
    };
    pos[1] += BEDROCK_EYE_HEIGHT;
    let t = table();
    let mut out = Compound::new();
    out.insert("identifier", Tag::String(PLAYER.into()));
    out.insert("Pos", floats(&pos));
    out.insert("Motion", floats(&numbers(java, "Motion", 3).unwrap_or(vec![0.0; 3])));
    out.insert("Rotation", floats(&numbers(java, "Rotation", 2).unwrap_or(vec![0.0; 2])));
    out.insert("UniqueID", Tag::Long(java_unique_id(java).unwrap_or(-4_294_967_295)));
    let dimension = match java.get("Dimension") {
        Some(Tag::String(d)) => DIMENSIONS.iter().position(|n| n == d),
        // Before 1.16: 0 the Overworld, -1 the Nether, 1 the End.
        Some(t) => match t.as_int() {
            Some(0) => Some(0),
            Some(-1) => Some(1),
            Some(1) => Some(2),
            _ => None,
        },
        None => Some(0),
    };
    if dimension.is_none() {
        report.approx(PLAYER, "Dimension (not one of the three: the Overworld written)");
    }
    out.insert("DimensionId", Tag::Int(dimension.unwrap_or(0) as i32));
    if let Some(g) = int(java, "playerGameType") {
        out.insert("PlayerGameMode", Tag::Int(bedrock_game_mode(g)));
    }
    // The inventory, and before 1.21.5 the armour and the off hand in it.
    let mut inventory = Vec::new();
    let mut armor: [Option<Compound>; 4] = Default::default();
    let mut offhand = None;
    for item in compounds(java, "Inventory") {
        let slot = match item.get("Slot") {
            Some(Tag::Byte(s)) => *s,
            _ => continue,
        };
        let Some(mut b) = java_item_to_bedrock(t, item, PLAYER, report) else { continue };
        if let Some(i) = JAVA_OLD_ARMOR_SLOTS.iter().position(|s| *s == slot) {
            b.remove("Slot");
            armor[i] = Some(b);
        } else if slot == JAVA_OLD_OFFHAND_SLOT {
            b.remove("Slot");
            offhand = Some(b);
        } else if (0..36).contains(&slot) {
            inventory.push(b);
        } else {
            report.approx(PLAYER, &format!("Inventory slot {slot}"));
        }
    }
    // From 1.21.5: `equipment`.
    if let Some(eq) = java.get("equipment").and_then(Tag::as_compound) {
        for (key, item) in eq.iter() {
            let Some(item) = item.as_compound() else { continue };
            let place = ARMOR.iter().position(|a| *a == key);
            if place.is_none() && key != "offhand" {
                report.approx(PLAYER, &format!("equipment.{key}"));
                continue;
            }
            let Some(mut b) = java_item_to_bedrock(t, item, PLAYER, report) else { continue };
            b.remove("Slot");
            match place {
                Some(i) => armor[i] = Some(b),
                None => offhand = Some(b),
            }
        }
    }
    out.insert("Inventory", Tag::compound_list(inventory));
    out.insert("Armor", Tag::compound_list(armor.map(|a| a.unwrap_or_else(bedrock_empty_item))));
    out.insert("Offhand", Tag::compound_list([offhand.unwrap_or_else(bedrock_empty_item)]));
    let ender: Vec<Compound> = compounds(java, "EnderItems")
        .filter_map(|i| java_item_to_bedrock(t, i, PLAYER, report))
        .collect();
    out.insert("EnderChestInventory", Tag::compound_list(ender));
    if let Some(l) = int(java, "XpLevel") {
        out.insert("PlayerLevel", Tag::Int(l));
    }
    if let Some(Tag::Float(p)) = java.get("XpP") {
        out.insert("PlayerLevelProgress", Tag::Float(*p));
    }
    if let Some(s) = int(java, "SelectedItemSlot") {
        out.insert("SelectedInventorySlot", Tag::Int(s.clamp(0, 8)));
    }
    for key in SAME {
        if let Some(v) = java.get(key) {
            out.insert(key, v.clone());
        }
    }
    for key in java.keys().filter(|k| !JAVA_USED.contains(k)) {
        report.approx(PLAYER, key);
    }
    *report.converted.entry(PLAYER.into()).or_default() += 1;
    Some(out)
}

/// The Bedrock player `bedrock` (a `~local_player` record) in Java's form, as `level.dat`'s
/// `Data.Player` for Java DataVersion 4325 (1.21.5) on (armour and off hand in
/// `equipment`); `None` (counted in `report.left`) without a position.
pub fn bedrock_to_java(bedrock: &Compound, report: &mut EntityReport) -> Option<Compound> {
    let Some(mut pos) = numbers(bedrock, "Pos", 3) else {
        *report.left.entry(PLAYER.into()).or_default() += 1;
        return None;
    };
    pos[1] -= BEDROCK_EYE_HEIGHT;
    let t = table();
    let mut out = Compound::new();
    out.insert("Pos", doubles(&pos));
    out.insert("Motion", doubles(&numbers(bedrock, "Motion", 3).unwrap_or(vec![0.0; 3])));
    out.insert("Rotation", floats(&numbers(bedrock, "Rotation", 2).unwrap_or(vec![0.0; 2])));
    let unique = bedrock.get("UniqueID").and_then(Tag::as_i64).unwrap_or(0);
    out.insert("UUID", Tag::IntArray(uuid_of_unique_id(unique).to_vec()));
    let dimension = int(bedrock, "DimensionId").unwrap_or(0);
    let name = usize::try_from(dimension).ok().and_then(|d| DIMENSIONS.get(d));
    if name.is_none() {
        report.approx(PLAYER, "DimensionId (not one of the three: the Overworld written)");
    }
    out.insert("Dimension", Tag::String(name.unwrap_or(&DIMENSIONS[0]).to_string()));
    if let Some(g) = int(bedrock, "PlayerGameMode") {
        out.insert("playerGameType", Tag::Int(java_game_mode(g)));
    }
    let mut inventory = Vec::new();
    for item in compounds(bedrock, "Inventory").filter(|i| !is_bedrock_empty(i)) {
        let slot = match item.get("Slot") {
            Some(Tag::Byte(s)) if (0..36).contains(s) => *s,
            _ => {
                report.approx(PLAYER, "Inventory slot beyond 35");
                continue;
            }
        };
        if let Some(mut j) = bedrock_item_to_java(t, item, PLAYER, report) {
            j.insert("Slot", Tag::Byte(slot));
            inventory.push(j);
        }
    }
    out.insert("Inventory", Tag::compound_list(inventory));
    let mut equipment = Compound::new();
    let armor = compounds(bedrock, "Armor").map(Some).chain(std::iter::repeat(None));
    for (key, item) in ARMOR.iter().zip(armor) {
        let Some(item) = item.filter(|i| !is_bedrock_empty(i)) else { continue };
        if let Some(mut j) = bedrock_item_to_java(t, item, PLAYER, report) {
            j.remove("Slot");
            equipment.insert(*key, Tag::Compound(j));
        }
    }
    if let Some(item) = compounds(bedrock, "Offhand").find(|i| !is_bedrock_empty(i))
        && let Some(mut j) = bedrock_item_to_java(t, item, PLAYER, report)
    {
        j.remove("Slot");
        equipment.insert("offhand", Tag::Compound(j));
    }
    if !equipment.is_empty() {
        out.insert("equipment", Tag::Compound(equipment));
    }
    let ender: Vec<Compound> = compounds(bedrock, "EnderChestInventory")
        .filter(|i| !is_bedrock_empty(i))
        .filter_map(|i| bedrock_item_to_java(t, i, PLAYER, report))
        .collect();
    out.insert("EnderItems", Tag::compound_list(ender));
    if let Some(l) = int(bedrock, "PlayerLevel") {
        out.insert("XpLevel", Tag::Int(l));
    }
    if let Some(Tag::Float(p)) = bedrock.get("PlayerLevelProgress") {
        out.insert("XpP", Tag::Float(*p));
    }
    if let Some(s) = int(bedrock, "SelectedInventorySlot") {
        out.insert("SelectedItemSlot", Tag::Int(s.clamp(0, 8)));
    }
    for key in SAME {
        if let Some(v) = bedrock.get(key) {
            out.insert(key, v.clone());
        }
    }
    for key in bedrock.keys().filter(|k| !BEDROCK_USED.contains(k)) {
        report.approx(PLAYER, key);
    }
    *report.converted.entry(PLAYER.into()).or_default() += 1;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(slot: Option<i8>, id: &str, count: i32) -> Compound {
        let mut c = Compound::new();
        if let Some(s) = slot {
            c.insert("Slot", Tag::Byte(s));
        }
        c.insert("id", Tag::String(id.into()));
        c.insert("count", Tag::Int(count));
        c
    }

    fn java_player() -> Compound {
        let mut c = Compound::new();
        c.insert("Pos", doubles(&[10.5, 64.0, -20.25]));
        c.insert("Rotation", floats(&[45.0, 10.0]));
        c.insert("UUID", Tag::IntArray(vec![5, 6, 7, 8]));
        c.insert("Dimension", Tag::String("minecraft:the_nether".into()));
        c.insert("playerGameType", Tag::Int(3));
        c.insert("XpLevel", Tag::Int(12));
        c.insert("XpP", Tag::Float(0.5));
        c.insert("SelectedItemSlot", Tag::Int(4));
        c.insert("Health", Tag::Float(20.0));
        c.insert(
            "Inventory",
            Tag::compound_list([
                item(Some(0), "minecraft:stone", 64),
                item(Some(20), "minecraft:diamond", 3),
            ]),
        );
        let mut eq = Compound::new();
        eq.insert("head", Tag::Compound(item(None, "minecraft:iron_helmet", 1)));
        eq.insert("offhand", Tag::Compound(item(None, "minecraft:torch", 16)));
        c.insert("equipment", Tag::Compound(eq));
        c.insert("EnderItems", Tag::compound_list([item(Some(3), "minecraft:emerald", 9)]));
        c
    }

    #[test]
    fn a_player_keeps_place_mode_level_and_every_item_both_ways() {
        let mut report = EntityReport::default();
        let b = java_to_bedrock(&java_player(), &mut report).unwrap();
        let pos = numbers(&b, "Pos", 3).unwrap();
        assert!((pos[1] - (64.0 + BEDROCK_EYE_HEIGHT)).abs() < 1e-4, "eye height: {pos:?}");
        assert_eq!(b.get("DimensionId"), Some(&Tag::Int(1)));
        assert_eq!(b.get("PlayerGameMode"), Some(&Tag::Int(6)), "spectator");
        assert_eq!(b.get("PlayerLevel"), Some(&Tag::Int(12)));
        assert_eq!(compounds(&b, "Inventory").count(), 2);
        let armor: Vec<&Compound> = compounds(&b, "Armor").collect();
        assert_eq!(armor.len(), 4);
        assert_eq!(armor[0].get("Name").and_then(Tag::as_str), Some("minecraft:iron_helmet"));
        assert!(is_bedrock_empty(armor[3]));
        let off = compounds(&b, "Offhand").next().unwrap();
        assert_eq!(off.get("Name").and_then(Tag::as_str), Some("minecraft:torch"));
        assert_eq!(report.approximated.get("minecraft:player: Health"), Some(&1));

        let j = bedrock_to_java(&b, &mut report).unwrap();
        let jpos = numbers(&j, "Pos", 3).unwrap();
        assert!((jpos[1] - 64.0).abs() < 1e-4, "{jpos:?}");
        assert_eq!(j.get("Dimension").and_then(Tag::as_str), Some("minecraft:the_nether"));
        assert_eq!(j.get("playerGameType"), Some(&Tag::Int(3)));
        assert_eq!(j.get("XpLevel"), Some(&Tag::Int(12)));
        assert_eq!(j.get("SelectedItemSlot"), Some(&Tag::Int(4)));
        let slots: Vec<(i8, String, i32)> = compounds(&j, "Inventory")
            .map(|i| {
                let Some(Tag::Byte(s)) = i.get("Slot") else { panic!("a slot") };
                let id = i.get("id").and_then(Tag::as_str).unwrap().to_string();
                (*s, id, i.get("count").and_then(Tag::as_int).unwrap())
            })
            .collect();
        assert_eq!(slots, [(0, "minecraft:stone".into(), 64), (20, "minecraft:diamond".into(), 3)]);
        let eq = j.get("equipment").and_then(Tag::as_compound).unwrap();
        let id = |k: &str| {
            eq.get(k).and_then(Tag::as_compound).and_then(|c| c.get("id")).and_then(Tag::as_str)
        };
        assert_eq!(id("head"), Some("minecraft:iron_helmet"));
        assert_eq!(id("offhand"), Some("minecraft:torch"));
        assert_eq!(id("feet"), None, "an empty place stays empty");
        assert_eq!(compounds(&j, "EnderItems").count(), 1);
        // Bedrock → Java → Bedrock keeps the unique id.
        let again = java_to_bedrock(&j, &mut report).unwrap();
        assert_eq!(again.get("UniqueID"), b.get("UniqueID"));
    }

    #[test]
    fn armour_in_the_inventory_before_1_21_5_goes_to_its_place() {
        let mut report = EntityReport::default();
        let mut p = java_player();
        p.remove("equipment");
        p.insert(
            "Inventory",
            Tag::compound_list([
                item(Some(100), "minecraft:iron_boots", 1),
                item(Some(-106), "minecraft:shield", 1),
            ]),
        );
        p.insert("Dimension", Tag::Int(1));
        let b = java_to_bedrock(&p, &mut report).unwrap();
        let armor: Vec<&Compound> = compounds(&b, "Armor").collect();
        assert_eq!(armor[3].get("Name").and_then(Tag::as_str), Some("minecraft:iron_boots"));
        assert_eq!(compounds(&b, "Inventory").count(), 0);
        assert_eq!(b.get("DimensionId"), Some(&Tag::Int(2)), "1 was the End");
    }

    #[test]
    fn a_player_without_a_position_is_left_never_a_panic() {
        let mut report = EntityReport::default();
        let mut p = java_player();
        p.insert("Pos", Tag::String("x".into()));
        assert!(java_to_bedrock(&p, &mut report).is_none());
        p.insert("Inventory", Tag::Int(3));
        p.insert("Pos", doubles(&[0.0, 0.0, 0.0]));
        assert!(java_to_bedrock(&p, &mut report).is_some(), "a damaged inventory is empty");
        assert!(bedrock_to_java(&Compound::new(), &mut report).is_none());
        assert_eq!(report.left.get(PLAYER), Some(&2));
    }
}
