//! Entities between the editions: mobs and dropped items, Java's form
//! (`{id:"minecraft:cow", Pos:[0.5d, 64.0d, 0.5d], UUID:[I; …]}`) ⇄ Bedrock's
//! (`{identifier:"minecraft:cow", Pos:[0.5f, 64.0f, 0.5f], UniqueID:…L,
//! definitions:["+minecraft:cow"]}`), by the rules in `docs/format/java-bedrock-table.md`,
//! "Entities".
//!
//! What is translated: the entity's kind (the same name in both editions, or one of
//! [`ENTITIES`]' renames), position, motion, rotation, identity, custom name, and the
//! flags both editions keep (on ground, invulnerable, persistent, baby, fire and air
//! ticks); a dropped item's item, through the table's item lines. Everything else of a
//! translated entity (health, equipment, a villager's trades, a tamed wolf's owner…) is
//! left out and counted by field as `approximated`: the game gives the entity its defaults
//! there. Entities of kinds not in [`ENTITIES`] (paintings, boats, minecarts, projectiles,
//! displays, markers…) are left out and counted in `left`, never written half-translated.
//!
//! Identity: Java's 128-bit `UUID` ⇄ Bedrock's 64-bit `UniqueID`. Java → Bedrock the id is
//! the UUID's two halves xor-ed; Bedrock → Java the UUID is the id followed by eight zero
//! bytes, so that Bedrock → Java → Bedrock keeps every id (Java → Bedrock → Java gives new
//! UUIDs, the same for the same entity).

use terrane_nbt::{Compound, Tag};

use crate::block_entity::{
    BlockEntityReport, bedrock_item_to_java, java_item_to_bedrock, java_text,
};
use crate::translate::table;

/// What entity translation did, by the source entity's id: the counts of a
/// [`BlockEntityReport`] (`converted`, `left`, `approximated` as `id: field`, and the items
/// of dropped-item entities the other edition lacks in `items_dropped`).
pub type EntityReport = BlockEntityReport;

/// The entities translated: Java id, Bedrock identifier (both without `minecraft:`). Mobs
/// both editions have under the same name, the renamed ones, and dropped items.
pub const ENTITIES: &[(&str, &str)] = &[
    ("allay", "allay"),
    ("armadillo", "armadillo"),
    ("axolotl", "axolotl"),
    ("bat", "bat"),
    ("bee", "bee"),
    ("blaze", "blaze"),
    ("bogged", "bogged"),
    ("breeze", "breeze"),
    ("camel", "camel"),
    ("cat", "cat"),
    ("cave_spider", "cave_spider"),
    ("chicken", "chicken"),
    ("cod", "cod"),
    ("cow", "cow"),
    ("creaking", "creaking"),
    ("creeper", "creeper"),
    ("dolphin", "dolphin"),
    ("donkey", "donkey"),
    ("drowned", "drowned"),
    ("elder_guardian", "elder_guardian"),
    ("ender_dragon", "ender_dragon"),
    ("enderman", "enderman"),
    ("endermite", "endermite"),
    ("evoker", "evocation_illager"),
    ("fox", "fox"),
    ("frog", "frog"),
    ("ghast", "ghast"),
    ("glow_squid", "glow_squid"),
    ("goat", "goat"),
    ("guardian", "guardian"),
    ("hoglin", "hoglin"),
    ("horse", "horse"),
    ("husk", "husk"),
    ("iron_golem", "iron_golem"),
    ("item", "item"),
    ("llama", "llama"),
    ("magma_cube", "magma_cube"),
    ("mooshroom", "mooshroom"),
    ("mule", "mule"),
    ("ocelot", "ocelot"),
    ("panda", "panda"),
    ("parrot", "parrot"),
    ("phantom", "phantom"),
    ("pig", "pig"),
    ("piglin", "piglin"),
    ("piglin_brute", "piglin_brute"),
    ("pillager", "pillager"),
    ("polar_bear", "polar_bear"),
    ("pufferfish", "pufferfish"),
    ("rabbit", "rabbit"),
    ("ravager", "ravager"),
    ("salmon", "salmon"),
    ("sheep", "sheep"),
    ("shulker", "shulker"),
    ("silverfish", "silverfish"),
    ("skeleton", "skeleton"),
    ("skeleton_horse", "skeleton_horse"),
    ("slime", "slime"),
    ("sniffer", "sniffer"),
    ("snow_golem", "snow_golem"),
    ("spider", "spider"),
    ("squid", "squid"),
    ("stray", "stray"),
    ("strider", "strider"),
    ("tadpole", "tadpole"),
    ("trader_llama", "trader_llama"),
    ("tropical_fish", "tropicalfish"),
    ("turtle", "turtle"),
    ("vex", "vex"),
    ("villager", "villager_v2"),
    ("vindicator", "vindicator"),
    ("wandering_trader", "wandering_trader"),
    ("warden", "warden"),
    ("witch", "witch"),
    ("wither", "wither"),
    ("wither_skeleton", "wither_skeleton"),
    ("wolf", "wolf"),
    ("zoglin", "zoglin"),
    ("zombie", "zombie"),
    ("zombie_horse", "zombie_horse"),
    ("zombie_villager", "zombie_villager_v2"),
    ("zombified_piglin", "zombie_pigman"),
];

/// A Java `Age` that makes a baby (what the game gives a newborn animal: -24,000 ticks).
const JAVA_BABY_AGE: i32 = -24_000;

/// Fields both editions keep under one name and type: Java ⇄ Bedrock.
const SAME: [&str; 5] = ["OnGround", "Invulnerable", "Fire", "Air", "CustomNameVisible"];

/// Java fields every translated entity has, used by the translation itself.
const JAVA_USED: [&str; 9] =
    ["id", "UUID", "UUIDMost", "UUIDLeast", "Pos", "Motion", "Rotation", "CustomName", "Age"];
/// Bedrock's likewise (`definitions` is the identifier's again).
const BEDROCK_USED: [&str; 8] =
    ["identifier", "definitions", "UniqueID", "Pos", "Motion", "Rotation", "CustomName", "IsBaby"];

fn bare(id: &str) -> &str {
    id.strip_prefix("minecraft:").unwrap_or(id)
}

/// A list of `n` finite numbers (`Pos`, `Motion`, `Rotation`; doubles or floats), as f64.
pub(crate) fn numbers(c: &Compound, key: &str, n: usize) -> Option<Vec<f64>> {
    let list = c.get(key)?.as_list()?;
    let out: Vec<f64> = list
        .iter()
        .filter_map(|t| match t {
            Tag::Double(d) => Some(*d),
            Tag::Float(f) => Some(f64::from(*f)),
            _ => None,
        })
        .collect();
    (out.len() == n && out.iter().all(|v| v.is_finite())).then_some(out)
}

/// A list of doubles (Java's `Pos`, `Motion`).
pub(crate) fn doubles(v: &[f64]) -> Tag {
    Tag::list(v.iter().map(|d| Tag::Double(*d)).collect())
}

/// A list of floats (Bedrock's `Pos`, `Motion`; both editions' `Rotation`).
pub(crate) fn floats(v: &[f64]) -> Tag {
    Tag::list(v.iter().map(|d| Tag::Float(*d as f32)).collect())
}

/// Bedrock's `UniqueID` of a Java `UUID` (four ints): its halves xor-ed (as
/// `UUIDMost ^ UUIDLeast`, the two longs of Java before 1.16).
pub fn unique_id_of_uuid(ints: &[i32]) -> Option<i64> {
    let [a, b, c, d] = ints else { return None };
    let hi = (i64::from(*a) << 32) | i64::from(*b as u32);
    let lo = (i64::from(*c) << 32) | i64::from(*d as u32);
    Some(hi ^ lo)
}

/// Bedrock's `UniqueID` of a Java entity's or player's UUID: `UUID` (four ints), or before
/// 1.16 `UUIDMost` and `UUIDLeast` (two longs); `None` without one.
pub(crate) fn java_unique_id(java: &Compound) -> Option<i64> {
    match (java.get("UUID"), java.get("UUIDMost"), java.get("UUIDLeast")) {
        (Some(Tag::IntArray(v)), _, _) => unique_id_of_uuid(v),
        (_, Some(Tag::Long(most)), Some(Tag::Long(least))) => Some(most ^ least),
        _ => None,
    }
}

/// Java's `UUID` (four ints) of a Bedrock `UniqueID`: the id, then zeros.
pub fn uuid_of_unique_id(id: i64) -> [i32; 4] {
    [(id >> 32) as i32, id as i32, 0, 0]
}

/// The Java entity `java` in Bedrock's form; `None` (counted in `report.left`) when its
/// kind is not translated or it has no position. `data_version` is the source's (it says
/// how a custom name is stored).
pub fn java_to_bedrock(
    java: &Compound,
    data_version: Option<i32>,
    report: &mut EntityReport,
) -> Option<Compound> {
    let id = java.get("id").and_then(Tag::as_str).unwrap_or("(no id)").to_string();
    let (Some(&(_, bedrock)), Some(pos)) =
        (ENTITIES.iter().find(|(j, _)| *j == bare(&id)), numbers(java, "Pos", 3))
    else {
        *report.left.entry(id).or_default() += 1;
        return None;
    };
    let identifier = format!("minecraft:{bedrock}");
    let mut out = Compound::new();
    if bedrock == "item" {
        let item = java.get("Item").and_then(Tag::as_compound);
        let Some(mut item) = item.and_then(|i| java_item_to_bedrock(table(), i, &id, report))
        else {
            *report.left.entry(id).or_default() += 1;
            return None;
        };
        item.remove("Slot");
        out.insert("Item", Tag::Compound(item));
    }
    out.insert("identifier", Tag::String(identifier.clone()));
    out.insert("definitions", Tag::list(vec![Tag::String(format!("+{identifier}"))]));
    out.insert("Pos", floats(&pos));
    out.insert("Motion", floats(&numbers(java, "Motion", 3).unwrap_or(vec![0.0; 3])));
    out.insert("Rotation", floats(&numbers(java, "Rotation", 2).unwrap_or(vec![0.0; 2])));
    let uuid = java_unique_id(java);
    // Without a UUID, the position's bits: stable, and distinct for distinct places.
    let unique = uuid
        .unwrap_or_else(|| pos.iter().fold(0i64, |h, p| h.rotate_left(21) ^ p.to_bits() as i64));
    out.insert("UniqueID", Tag::Long(unique));
    if let Some(n) = java.get("CustomName") {
        out.insert("CustomName", Tag::String(java_text(n, data_version, &id, report)));
    }
    if bedrock != "item" && java.get("Age").and_then(Tag::as_int).is_some_and(|a| a < 0) {
        out.insert("IsBaby", Tag::Byte(1));
    }
    if let Some(p) = java.get("PersistenceRequired") {
        out.insert("Persistent", p.clone());
    }
    for key in SAME {
        if let Some(v) = java.get(key) {
            out.insert(key, v.clone());
        }
    }
    let used = |k: &str| {
        JAVA_USED.contains(&k) || SAME.contains(&k) || k == "PersistenceRequired" || k == "Item"
    };
    for key in java.keys().filter(|k| !used(k)) {
        report.approx(&id, key);
    }
    if bedrock == "item" && java.contains_key("Age") {
        report.approx(&id, "Age");
    }
    *report.converted.entry(id).or_default() += 1;
    Some(out)
}

/// The Bedrock entity `bedrock` in Java's form (for Java DataVersion
/// [`SIGN_TEXT_NBT_DATA_VERSION`](crate::block_entity::SIGN_TEXT_NBT_DATA_VERSION) on: a
/// custom name is written as an NBT string); `None` (counted in `report.left`) when its kind
/// is not translated or it has no position.
pub fn bedrock_to_java(bedrock: &Compound, report: &mut EntityReport) -> Option<Compound> {
    let id = bedrock.get("identifier").and_then(Tag::as_str).unwrap_or("(no id)").to_string();
    let (Some(&(java, _)), Some(pos)) =
        (ENTITIES.iter().find(|(_, b)| *b == bare(&id)), numbers(bedrock, "Pos", 3))
    else {
        *report.left.entry(id).or_default() += 1;
        return None;
    };
    let mut out = Compound::new();
    if java == "item" {
        let item = bedrock.get("Item").and_then(Tag::as_compound);
        let Some(mut item) = item.and_then(|i| bedrock_item_to_java(table(), i, &id, report))
        else {
            *report.left.entry(id).or_default() += 1;
            return None;
        };
        item.remove("Slot");
        out.insert("Item", Tag::Compound(item));
    }
    out.insert("id", Tag::String(format!("minecraft:{java}")));
    out.insert("Pos", doubles(&pos));
    out.insert("Motion", doubles(&numbers(bedrock, "Motion", 3).unwrap_or(vec![0.0; 3])));
    out.insert("Rotation", floats(&numbers(bedrock, "Rotation", 2).unwrap_or(vec![0.0; 2])));
    let unique = bedrock.get("UniqueID").and_then(Tag::as_i64).unwrap_or(0);
    out.insert("UUID", Tag::IntArray(uuid_of_unique_id(unique).to_vec()));
    if let Some(n) = bedrock.get("CustomName").and_then(Tag::as_str) {
        out.insert("CustomName", Tag::String(n.to_string()));
    }
    if matches!(bedrock.get("IsBaby"), Some(Tag::Byte(b)) if *b != 0) {
        out.insert("Age", Tag::Int(JAVA_BABY_AGE));
    }
    if let Some(p) = bedrock.get("Persistent") {
        out.insert("PersistenceRequired", p.clone());
    }
    for key in SAME {
        if let Some(v) = bedrock.get(key) {
            out.insert(key, v.clone());
        }
    }
    let used = |k: &str| {
        BEDROCK_USED.contains(&k) || SAME.contains(&k) || k == "Persistent" || k == "Item"
    };
    for key in bedrock.keys().filter(|k| !used(k)) {
        report.approx(&id, key);
    }
    *report.converted.entry(id).or_default() += 1;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(tag: fn(f64) -> Tag, v: &[f64]) -> Tag {
        Tag::list(v.iter().map(|d| tag(*d)).collect())
    }

    fn java_cow() -> Compound {
        let mut c = Compound::new();
        c.insert("id", Tag::String("minecraft:cow".into()));
        c.insert("Pos", list(Tag::Double, &[1.5, 64.0, -3.25]));
        c.insert("Motion", list(Tag::Double, &[0.0, -0.078, 0.0]));
        c.insert("Rotation", list(|d| Tag::Float(d as f32), &[90.0, 0.0]));
        c.insert("UUID", Tag::IntArray(vec![1, 2, 3, 4]));
        c.insert("Age", Tag::Int(-1200));
        c.insert("OnGround", Tag::Byte(1));
        c.insert("PersistenceRequired", Tag::Byte(1));
        c.insert("Health", Tag::Float(10.0));
        c
    }

    #[test]
    fn a_mob_keeps_its_place_flags_and_youth_and_counts_what_it_leaves() {
        let mut report = EntityReport::default();
        let b = java_to_bedrock(&java_cow(), Some(4671), &mut report).unwrap();
        assert_eq!(b.get("identifier").and_then(Tag::as_str), Some("minecraft:cow"));
        assert_eq!(numbers(&b, "Pos", 3), Some(vec![1.5, 64.0, -3.25]));
        assert!(matches!(b.get("Pos").and_then(Tag::as_list), Some([Tag::Float(_), ..])));
        assert_eq!(
            b.get("UniqueID").and_then(Tag::as_i64),
            Some(unique_id_of_uuid(&[1, 2, 3, 4]).unwrap())
        );
        assert_eq!(b.get("IsBaby"), Some(&Tag::Byte(1)));
        assert_eq!(b.get("Persistent"), Some(&Tag::Byte(1)));
        assert_eq!(b.get("OnGround"), Some(&Tag::Byte(1)));
        assert_eq!(report.approximated.get("minecraft:cow: Health"), Some(&1));
        assert_eq!(report.converted.get("minecraft:cow"), Some(&1));

        let j = bedrock_to_java(&b, &mut report).unwrap();
        assert_eq!(j.get("id").and_then(Tag::as_str), Some("minecraft:cow"));
        assert_eq!(numbers(&j, "Pos", 3), Some(vec![1.5, 64.0, -3.25]));
        assert!(matches!(j.get("Pos").and_then(Tag::as_list), Some([Tag::Double(_), ..])));
        assert_eq!(j.get("Age"), Some(&Tag::Int(JAVA_BABY_AGE)));
        assert_eq!(j.get("PersistenceRequired"), Some(&Tag::Byte(1)));
        // Bedrock → Java → Bedrock keeps the unique id.
        let again = java_to_bedrock(&j, Some(4671), &mut report).unwrap();
        assert_eq!(again.get("UniqueID"), b.get("UniqueID"));
        assert!(report.approximated.keys().all(|k| !k.contains("definitions")));
    }

    #[test]
    fn a_uuid_before_1_16_and_a_custom_name_cross_both_ways() {
        let mut report = EntityReport::default();
        let mut c = java_cow();
        c.remove("UUID");
        c.insert("UUIDMost", Tag::Long(0x0123_4567_89ab_cdef));
        c.insert("UUIDLeast", Tag::Long(0x1111));
        c.insert("CustomName", Tag::String(r#"{"text":"Daisy"}"#.into()));
        let b = java_to_bedrock(&c, Some(2586), &mut report).unwrap();
        assert_eq!(b.get("UniqueID"), Some(&Tag::Long(0x0123_4567_89ab_cdef ^ 0x1111)));
        assert_eq!(b.get("CustomName").and_then(Tag::as_str), Some("Daisy"));
        assert!(report.approximated.keys().all(|k| !k.contains("UUID")), "{report:?}");
        let j = bedrock_to_java(&b, &mut report).unwrap();
        assert_eq!(j.get("CustomName").and_then(Tag::as_str), Some("Daisy"));
        let ints = match j.get("UUID") {
            Some(Tag::IntArray(v)) => v.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(unique_id_of_uuid(&ints), b.get("UniqueID").and_then(Tag::as_i64));
    }

    #[test]
    fn renamed_kinds_translate_and_kinds_without_a_rule_are_left() {
        let mut report = EntityReport::default();
        let mut c = java_cow();
        c.insert("id", Tag::String("minecraft:zombified_piglin".into()));
        let b = java_to_bedrock(&c, None, &mut report).unwrap();
        assert_eq!(b.get("identifier").and_then(Tag::as_str), Some("minecraft:zombie_pigman"));
        let j = bedrock_to_java(&b, &mut report).unwrap();
        assert_eq!(j.get("id").and_then(Tag::as_str), Some("minecraft:zombified_piglin"));
        c.insert("id", Tag::String("minecraft:painting".into()));
        assert!(java_to_bedrock(&c, None, &mut report).is_none());
        c.insert("id", Tag::String("minecraft:cow".into()));
        c.remove("Pos");
        assert!(java_to_bedrock(&c, None, &mut report).is_none(), "no position");
        assert_eq!(report.left.get("minecraft:painting"), Some(&1));
        assert_eq!(report.left.get("minecraft:cow"), Some(&1));
    }

    #[test]
    fn a_dropped_item_carries_its_item_through_the_item_lines() {
        let mut report = EntityReport::default();
        let mut item = Compound::new();
        item.insert("id", Tag::String("minecraft:stone_stairs".into()));
        item.insert("count", Tag::Int(5));
        let mut c = java_cow();
        c.insert("id", Tag::String("minecraft:item".into()));
        c.insert("Item", Tag::Compound(item));
        c.insert("Age", Tag::Short(20));
        let b = java_to_bedrock(&c, None, &mut report).unwrap();
        let bi = b.get("Item").and_then(Tag::as_compound).unwrap();
        assert_eq!(bi.get("Name").and_then(Tag::as_str), Some("minecraft:normal_stone_stairs"));
        assert_eq!(bi.get("Count"), Some(&Tag::Byte(5)));
        assert!(b.get("IsBaby").is_none(), "an item's Age is not youth");
        let j = bedrock_to_java(&b, &mut report).unwrap();
        let ji = j.get("Item").and_then(Tag::as_compound).unwrap();
        assert_eq!(ji.get("id").and_then(Tag::as_str), Some("minecraft:stone_stairs"));
        assert_eq!(ji.get("count"), Some(&Tag::Int(5)));
        assert!(ji.get("Slot").is_none());
    }

    #[test]
    fn damaged_entities_are_left_never_a_panic() {
        let mut report = EntityReport::default();
        let mut c = java_cow();
        c.insert("Pos", list(Tag::Double, &[f64::NAN, 0.0, 0.0]));
        assert!(java_to_bedrock(&c, None, &mut report).is_none());
        c.insert("Pos", Tag::String("here".into()));
        assert!(java_to_bedrock(&c, None, &mut report).is_none());
        let mut b = Compound::new();
        b.insert("identifier", Tag::Int(3));
        assert!(bedrock_to_java(&b, &mut report).is_none());
        assert_eq!(report.left.values().sum::<u64>(), 3);
    }
}
