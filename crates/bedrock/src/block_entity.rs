//! Block entities between the editions: containers and signs, Java's form
//! (`{id:"minecraft:chest", Items:[{Slot:0b, id:"minecraft:stone", count:5}]}`) ⇄ Bedrock's
//! (`{id:"Chest", Items:[{Slot:0b, Name:"minecraft:stone", Count:5b, Damage:0s}]}`), by the
//! rules in `docs/format/java-bedrock-table.md`, "Block entities".
//!
//! - **Containers** (chests, trapped chests, barrels, shulker boxes, hoppers, dispensers,
//!   droppers, furnaces, blast furnaces, smokers): their items, each item through the table's
//!   item lines ([`EditionTable::java_item_to_bedrock`]); the custom name; the loot table
//!   (`minecraft:chests/x` ⇄ `loot_tables/chests/x.json`) and its seed. Java → Bedrock also
//!   writes a double chest's pairing (`pairx`, `pairz`, `pairlead`) from the chest's `type`
//!   and `facing`, and a shulker box's `facing` from its state.
//! - **Signs** and hanging signs: each side's text (Java's four lines ⇄ Bedrock's one text
//!   with line breaks), dye colour, glowing text, and the wax.
//! - **Spawners, hives, brewing stands, lecterns, jukeboxes, campfires, banners, heads and
//!   decorated pots**: the fields each keeps, a banner's colour and a head's rotation (Bedrock
//!   keeps them in the block entity, Java in the block) included.
//! - **Beds**: Bedrock keeps a bed's colour in its block entity (`color`), Java in the block
//!   (`minecraft:red_bed`): Java → Bedrock writes it from the block; Bedrock → Java counts a
//!   colour the Java block does not have as approximated.
//!
//! Everything else is counted in a [`BlockEntityReport`], never dropped silently: a block
//! entity with no rule is left out (`left`); an item the other edition lacks is left out of
//! its container (`items_dropped`); a field with no rule, an item's extra data (Java's
//! components, Bedrock's `tag`) and formatted sign text are counted as `approximated`.
//!
//! Bedrock → Java, a block entity can also correct its cell's state ([`java_state`]): a
//! bed's colour and a chest's half (`type`, from the pairing) live in Bedrock's block
//! entity, not its block.

use std::collections::BTreeMap;

use terrane_nbt::{Compound, Tag};

use crate::translate::{EditionTable, table};

mod functional;

pub use functional::{JAVA_POTTED, flower_pot_to_bedrock};

/// Java DataVersion from which text (sign lines, custom names) is a text component stored as
/// NBT (a 1.21.5 snapshot; the release is 4325); before it, a JSON string.
pub const SIGN_TEXT_NBT_DATA_VERSION: i32 = 4290;

/// What block-entity translation did, by the source block entity's id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BlockEntityReport {
    /// Source id → block entities translated.
    pub converted: BTreeMap<String, u64>,
    /// Source id → block entities left out: no rule translates them.
    pub left: BTreeMap<String, u64>,
    /// `source id: what` → times a part of a translated block entity was approximated or left
    /// out (a field with no rule, an item's extra data, formatted text).
    pub approximated: BTreeMap<String, u64>,
    /// Source item → items left out of containers: the other edition has no such item.
    pub items_dropped: BTreeMap<String, u64>,
}

impl BlockEntityReport {
    /// Block entities translated, over every id.
    pub fn converted_count(&self) -> u64 {
        self.converted.values().sum()
    }

    /// Block entities left out, over every id.
    pub fn left_count(&self) -> u64 {
        self.left.values().sum()
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &BlockEntityReport) {
        for (mine, theirs) in [
            (&mut self.converted, &other.converted),
            (&mut self.left, &other.left),
            (&mut self.approximated, &other.approximated),
            (&mut self.items_dropped, &other.items_dropped),
        ] {
            for (k, v) in theirs {
                *mine.entry(k.clone()).or_default() += v;
            }
        }
    }

    pub(crate) fn approx(&mut self, id: &str, what: &str) {
        *self.approximated.entry(format!("{id}: {what}")).or_default() += 1;
    }
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Kind {
    Container,
    Sign,
    Bed,
    /// The rest: [`functional`].
    Functional,
}

/// Java id, Bedrock id, kind. The first Java id of a Bedrock id is what Bedrock's becomes,
/// unless the cell's block says otherwise (a trapped chest).
const KINDS: [(&str, &str, Kind); 22] = [
    ("minecraft:chest", "Chest", Kind::Container),
    ("minecraft:trapped_chest", "Chest", Kind::Container),
    ("minecraft:barrel", "Barrel", Kind::Container),
    ("minecraft:shulker_box", "ShulkerBox", Kind::Container),
    ("minecraft:hopper", "Hopper", Kind::Container),
    ("minecraft:dispenser", "Dispenser", Kind::Container),
    ("minecraft:dropper", "Dropper", Kind::Container),
    ("minecraft:furnace", "Furnace", Kind::Container),
    ("minecraft:blast_furnace", "BlastFurnace", Kind::Container),
    ("minecraft:smoker", "Smoker", Kind::Container),
    ("minecraft:sign", "Sign", Kind::Sign),
    ("minecraft:hanging_sign", "HangingSign", Kind::Sign),
    ("minecraft:bed", "Bed", Kind::Bed),
    ("minecraft:brewing_stand", "BrewingStand", Kind::Container),
    ("minecraft:mob_spawner", "MobSpawner", Kind::Functional),
    ("minecraft:beehive", "Beehive", Kind::Functional),
    ("minecraft:lectern", "Lectern", Kind::Functional),
    ("minecraft:jukebox", "Jukebox", Kind::Functional),
    ("minecraft:campfire", "Campfire", Kind::Functional),
    ("minecraft:banner", "Banner", Kind::Functional),
    ("minecraft:skull", "Skull", Kind::Functional),
    ("minecraft:decorated_pot", "DecoratedPot", Kind::Functional),
];

/// Java fields every block entity has, not data: never reported.
const JAVA_FRAME: [&str; 5] = ["id", "x", "y", "z", "keepPacked"];
/// Bedrock's likewise.
const BEDROCK_FRAME: [&str; 5] = ["id", "x", "y", "z", "isMovable"];

/// The 16 dye colours in Java's order (a bed's `color` is the index), with the sign text
/// colour Bedrock stores for each (RGB of `SignTextColor`: the dye's colour, black 0).
const DYES: [(&str, u32); 16] = [
    ("white", 0xF0F0F0),
    ("orange", 0xF9801D),
    ("magenta", 0xC74EBD),
    ("light_blue", 0x3AB3DA),
    ("yellow", 0xFED83D),
    ("lime", 0x80C71F),
    ("pink", 0xF38BAA),
    ("gray", 0x474F52),
    ("light_gray", 0x9D9D97),
    ("cyan", 0x169C9C),
    ("purple", 0x8932B8),
    ("blue", 0x3C44AA),
    ("brown", 0x835432),
    ("green", 0x5E7C16),
    ("red", 0xB02E26),
    ("black", 0x000000),
];

fn string(c: &Compound, key: &str) -> Option<String> {
    c.get(key).and_then(Tag::as_str).map(str::to_string)
}

fn byte(c: &Compound, key: &str) -> Option<i8> {
    match c.get(key) {
        Some(Tag::Byte(b)) => Some(*b),
        _ => None,
    }
}

/// A property of a block state name (`minecraft:chest[facing=north,type=left]`).
fn state_prop<'a>(state: &'a str, key: &str) -> Option<&'a str> {
    let (_, rest) = state.split_once('[')?;
    rest.trim_end_matches(']')
        .split(',')
        .filter_map(|p| p.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.trim_matches('"'))
}

/// A Java bed block's colour (`minecraft:red_bed[...]`) as Bedrock's index: the dye's place
/// in [`DYES`].
fn bed_color(block: &str) -> Option<i8> {
    let name = block.split_once('[').map_or(block, |(n, _)| n);
    let color = name.strip_prefix("minecraft:")?.strip_suffix("_bed")?;
    DYES.iter().position(|(n, _)| *n == color).map(|i| i as i8)
}

/// A horizontal facing as an (x, z) step.
fn step(facing: &str) -> Option<(i32, i32)> {
    Some(match facing {
        "north" => (0, -1),
        "south" => (0, 1),
        "west" => (-1, 0),
        "east" => (1, 0),
        _ => return None,
    })
}

/// The Java block entity `java` at `(x, y, z)`, whose cell holds the Java state `block`, in
/// Bedrock's form; `None` (counted in `report.left`) when no rule translates it.
/// `data_version` is the source column's (it says how sign text is stored).
pub fn java_to_bedrock(
    java: &Compound,
    (x, y, z): (i32, i32, i32),
    block: &str,
    data_version: Option<i32>,
    report: &mut BlockEntityReport,
) -> Option<Compound> {
    let id = string(java, "id").unwrap_or_else(|| "(no id)".into());
    let Some(&(_, bedrock_id, kind)) = KINDS.iter().find(|(j, _, _)| *j == id) else {
        *report.left.entry(id).or_default() += 1;
        return None;
    };
    let mut out = Compound::new();
    out.insert("id", Tag::String(bedrock_id.into()));
    out.insert("x", Tag::Int(x));
    out.insert("y", Tag::Int(y));
    out.insert("z", Tag::Int(z));
    out.insert("isMovable", Tag::Byte(1));
    let mut used: Vec<&str> = JAVA_FRAME.to_vec();
    match kind {
        Kind::Container => {
            used.extend(["Items", "CustomName", "LootTable", "LootTableSeed"]);
            let items = java.get("Items").and_then(Tag::as_list).unwrap_or(&[]);
            let t = table();
            let items: Vec<Compound> = items
                .iter()
                .filter_map(Tag::as_compound)
                .filter_map(|i| java_item_to_bedrock(t, i, &id, report))
                .collect();
            let mut items = items;
            if bedrock_id == "BrewingStand" {
                for i in &mut items {
                    let slot = byte(i, "Slot").and_then(|s| usize::try_from(s).ok());
                    let bedrock = slot.and_then(|s| functional::BREWING_JAVA_TO_BEDROCK.get(s));
                    i.insert("Slot", Tag::Byte(bedrock.copied().unwrap_or(-1)));
                }
                items.retain(|i| byte(i, "Slot") != Some(-1));
            }
            out.insert("Items", Tag::compound_list(items));
            if let Some(n) = java.get("CustomName") {
                out.insert("CustomName", Tag::String(java_text(n, data_version, &id, report)));
            }
            if let Some(l) = string(java, "LootTable") {
                let path = l.split_once(':').map_or(l.as_str(), |(_, p)| p);
                out.insert("LootTable", Tag::String(format!("loot_tables/{path}.json")));
            }
            if let Some(s) = java.get("LootTableSeed").and_then(Tag::as_i64) {
                if i32::try_from(s).is_err() {
                    report.approx(&id, "LootTableSeed (Bedrock keeps 32 bits)");
                }
                out.insert("LootTableSeed", Tag::Int(s as i32));
            }
            if bedrock_id == "Chest" {
                chest_pairing(block, (x, z), &mut out);
            }
            if bedrock_id == "ShulkerBox" {
                let facing = ["down", "up", "north", "south", "west", "east"]
                    .iter()
                    .position(|f| state_prop(block, "facing") == Some(f))
                    .unwrap_or(1);
                out.insert("facing", Tag::Byte(facing as i8));
            }
        }
        Kind::Sign => {
            used.extend(["front_text", "back_text", "is_waxed"]);
            used.extend(["Text1", "Text2", "Text3", "Text4", "Color", "GlowingText"]);
            let front = match java.get("front_text").and_then(Tag::as_compound) {
                Some(f) => java_side(f, data_version, &id, report),
                // Before 1.20: one side, `Text1`..`Text4`, `Color`, `GlowingText`.
                None => {
                    let mut f = Compound::new();
                    let lines: Vec<Tag> =
                        (1..=4).filter_map(|i| java.get(&format!("Text{i}")).cloned()).collect();
                    f.insert("messages", Tag::list(lines));
                    if let Some(c) = java.get("Color") {
                        f.insert("color", c.clone());
                    }
                    if let Some(g) = java.get("GlowingText") {
                        f.insert("has_glowing_text", g.clone());
                    }
                    java_side(&f, Some(0), &id, report)
                }
            };
            out.insert("FrontText", Tag::Compound(front));
            let back = java.get("back_text").and_then(Tag::as_compound);
            let back =
                back.map_or_else(bedrock_blank_side, |b| java_side(b, data_version, &id, report));
            out.insert("BackText", Tag::Compound(back));
            out.insert("IsWaxed", Tag::Byte(byte(java, "is_waxed").unwrap_or(0)));
        }
        Kind::Bed => {
            out.insert("color", Tag::Byte(bed_color(block).unwrap_or(0)));
        }
        Kind::Functional => {}
    }
    // The rest of a brewing stand, and the kinds `functional` keeps.
    if kind == Kind::Functional || bedrock_id == "BrewingStand" {
        functional::java_to_bedrock(
            bedrock_id,
            java,
            block,
            data_version,
            &mut out,
            &mut used,
            report,
        );
    }
    for key in java.keys().filter(|k| !used.contains(k)) {
        report.approx(&id, key);
    }
    *report.converted.entry(id).or_default() += 1;
    Some(out)
}

/// A Java chest's other half (its `type` and `facing`) as Bedrock's pairing fields; the
/// half whose Java `type` is `right` leads (Java's first half: the double chest's slots 0 to
/// 26).
fn chest_pairing(block: &str, (x, z): (i32, i32), out: &mut Compound) {
    let (Some(kind), Some((fx, fz))) =
        (state_prop(block, "type"), state_prop(block, "facing").and_then(step))
    else {
        return;
    };
    // The other half is to the facing's clockwise side for `left`, counter-clockwise for
    // `right` (clockwise of north, (0, -1), is east, (1, 0)).
    let (dx, dz) = match kind {
        "left" => (-fz, fx),
        "right" => (fz, -fx),
        _ => return,
    };
    out.insert("pairx", Tag::Int(x + dx));
    out.insert("pairz", Tag::Int(z + dz));
    out.insert("pairlead", Tag::Byte(i8::from(kind == "right")));
}

/// One Java container item (`Slot`, `id`, `count` or `Count`, extra data) in Bedrock's form.
pub(crate) fn java_item_to_bedrock(
    t: &EditionTable,
    item: &Compound,
    id: &str,
    report: &mut BlockEntityReport,
) -> Option<Compound> {
    let name = string(item, "id")?;
    let Some((bedrock, damage)) = t.java_item_to_bedrock(&name) else {
        *report.items_dropped.entry(name).or_default() += 1;
        return None;
    };
    let count = item.get("count").or_else(|| item.get("Count")).and_then(Tag::as_int).unwrap_or(1);
    let mut out = Compound::new();
    out.insert("Slot", Tag::Byte(byte(item, "Slot").unwrap_or(0)));
    out.insert("Name", Tag::String(bedrock.to_string()));
    out.insert("Count", Tag::Byte(count.clamp(0, 127) as i8));
    out.insert("Damage", Tag::Short(damage));
    out.insert("WasPickedUp", Tag::Byte(0));
    if item.contains_key("components") || item.contains_key("tag") {
        report.approx(id, &format!("{name} (item data)"));
    }
    Some(out)
}

/// One side of a Java sign (`messages`, `color`, `has_glowing_text`) as Bedrock's.
fn java_side(
    side: &Compound,
    data_version: Option<i32>,
    id: &str,
    report: &mut BlockEntityReport,
) -> Compound {
    let lines: Vec<String> = side
        .get("messages")
        .and_then(Tag::as_list)
        .unwrap_or(&[])
        .iter()
        .map(|m| java_text(m, data_version, id, report))
        .collect();
    let mut text = lines.join("\n");
    text.truncate(text.trim_end_matches('\n').len());
    let color = string(side, "color").unwrap_or_else(|| "black".into());
    let rgb = DYES.iter().find(|(n, _)| *n == color).map_or(0, |(_, c)| *c);
    let mut out = bedrock_blank_side();
    out.insert("Text", Tag::String(text));
    out.insert("SignTextColor", Tag::Int((0xFF00_0000 | rgb) as i32));
    out.insert("IgnoreLighting", Tag::Byte(byte(side, "has_glowing_text").unwrap_or(0)));
    out
}

/// A Bedrock sign side with no text.
fn bedrock_blank_side() -> Compound {
    let mut out = Compound::new();
    out.insert("Text", Tag::String(String::new()));
    out.insert("SignTextColor", Tag::Int(0xFF00_0000_u32 as i32));
    out.insert("IgnoreLighting", Tag::Byte(0));
    out.insert("HideGlowOutline", Tag::Byte(0));
    out.insert("PersistFormatting", Tag::Byte(1));
    out.insert("TextOwner", Tag::String(String::new()));
    out
}

/// Java text (a sign line, a custom name) as plain text: a JSON string before
/// [`SIGN_TEXT_NBT_DATA_VERSION`], an NBT text component from it. Formatting and
/// translated text are counted as approximated.
pub(crate) fn java_text(
    tag: &Tag,
    data_version: Option<i32>,
    id: &str,
    report: &mut BlockEntityReport,
) -> String {
    let mut formatted = false;
    let text = match tag {
        Tag::String(s) if data_version.unwrap_or(0) < SIGN_TEXT_NBT_DATA_VERSION => {
            match serde_json::from_str::<serde_json::Value>(s) {
                Ok(v) => json_plain(&v, &mut formatted),
                Err(_) => s.clone(),
            }
        }
        t => nbt_plain(t, &mut formatted),
    };
    if formatted {
        report.approx(id, "formatted text");
    }
    text
}

/// Keys of a text component that only style it or hold its text.
const PLAIN_KEYS: [&str; 3] = ["text", "extra", "type"];

fn json_plain(v: &serde_json::Value, formatted: &mut bool) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => a.iter().map(|v| json_plain(v, formatted)).collect(),
        serde_json::Value::Object(o) => {
            *formatted |= o.keys().any(|k| !PLAIN_KEYS.contains(&k.as_str()));
            let mut s = o.get("text").and_then(|t| t.as_str()).unwrap_or("").to_string();
            if let Some(serde_json::Value::Array(extra)) = o.get("extra") {
                for e in extra {
                    s.push_str(&json_plain(e, formatted));
                }
            }
            s
        }
        other => other.to_string(),
    }
}

fn nbt_plain(t: &Tag, formatted: &mut bool) -> String {
    match t {
        Tag::String(s) => s.clone(),
        Tag::List(_, items) => items.iter().map(|i| nbt_plain(i, formatted)).collect(),
        Tag::Compound(c) => {
            *formatted |= c.keys().any(|k| !PLAIN_KEYS.contains(&k));
            let mut s = string(c, "text").unwrap_or_default();
            if let Some(extra) = c.get("extra").and_then(Tag::as_list) {
                for e in extra {
                    s.push_str(&nbt_plain(e, formatted));
                }
            }
            s
        }
        other => {
            *formatted = true;
            format!("{other:?}")
        }
    }
}

/// The Bedrock block entity `bedrock`, whose cell holds the Java state `block` once
/// translated, in Java's form (with `id`, `x`, `y`, `z`, as a chunk's `block_entities`
/// list holds it, for Java [`SIGN_TEXT_NBT_DATA_VERSION`] on); `None` (counted in
/// `report.left`) when no rule translates it.
pub fn bedrock_to_java(
    bedrock: &Compound,
    block: &str,
    report: &mut BlockEntityReport,
) -> Option<Compound> {
    let id = string(bedrock, "id").unwrap_or_else(|| "(no id)".into());
    if id == "FlowerPot" {
        functional::flower_pot_to_java(bedrock, report);
        return None;
    }
    let block_name = block.split_once('[').map_or(block, |(n, _)| n);
    // The Java id the cell's block names (a trapped chest), else the first of the Bedrock id's.
    let mut of_id = KINDS.iter().filter(|(_, b, _)| *b == id);
    let java_id = of_id.clone().find(|(j, _, _)| *j == block_name).or_else(|| of_id.next());
    let Some(&(java_id, _, kind)) = java_id else {
        *report.left.entry(id).or_default() += 1;
        return None;
    };
    let mut out = Compound::new();
    out.insert("id", Tag::String(java_id.into()));
    for k in ["x", "y", "z"] {
        out.insert(k, Tag::Int(bedrock.get(k).and_then(Tag::as_int).unwrap_or(0)));
    }
    let mut used: Vec<&str> = BEDROCK_FRAME.to_vec();
    match kind {
        Kind::Container => {
            used.extend(["Items", "CustomName", "LootTable", "LootTableSeed", "Findable"]);
            let t = table();
            let items = bedrock.get("Items").and_then(Tag::as_list).unwrap_or(&[]);
            let items: Vec<Compound> = items
                .iter()
                .filter_map(Tag::as_compound)
                .filter_map(|i| bedrock_item_to_java(t, i, &id, report))
                .collect();
            let mut items = items;
            if id == "BrewingStand" {
                for i in &mut items {
                    let slot = byte(i, "Slot");
                    let java =
                        functional::BREWING_JAVA_TO_BEDROCK.iter().position(|s| Some(*s) == slot);
                    i.insert("Slot", Tag::Byte(java.map_or(-1, |j| j as i8)));
                }
                items.retain(|i| byte(i, "Slot") != Some(-1));
            }
            out.insert("Items", Tag::compound_list(items));
            if let Some(n) = string(bedrock, "CustomName") {
                out.insert("CustomName", Tag::String(n));
            }
            if let Some(l) = string(bedrock, "LootTable") {
                let path = l.trim_start_matches("loot_tables/").trim_end_matches(".json");
                out.insert("LootTable", Tag::String(format!("minecraft:{path}")));
            }
            if let Some(s) = bedrock.get("LootTableSeed").and_then(Tag::as_i64) {
                out.insert("LootTableSeed", Tag::Long(s));
            }
            if id == "Chest" {
                // The pairing is the chest's `type` in Java ([`java_state`]).
                used.extend(["pairx", "pairz", "pairlead"]);
            }
            if id == "ShulkerBox" {
                used.push("facing");
                if byte(bedrock, "facing").is_some_and(|f| f != 1) {
                    report.approx(&id, "facing (up in Java)");
                }
            }
        }
        Kind::Sign => {
            used.extend(["FrontText", "BackText", "IsWaxed"]);
            let side = |key: &str, report: &mut BlockEntityReport| {
                let s = bedrock.get(key).and_then(Tag::as_compound);
                bedrock_side(s.unwrap_or(&Compound::new()), &id, report)
            };
            let front = side("FrontText", report);
            let back = side("BackText", report);
            out.insert("front_text", Tag::Compound(front));
            out.insert("back_text", Tag::Compound(back));
            out.insert("is_waxed", Tag::Byte(byte(bedrock, "IsWaxed").unwrap_or(0)));
        }
        Kind::Bed => {
            used.push("color");
            if byte(bedrock, "color").unwrap_or(0) != bed_color(block).unwrap_or(0) {
                report.approx(&id, "colour (the Java block's)");
            }
        }
        Kind::Functional => {}
    }
    if kind == Kind::Functional || id == "BrewingStand" {
        functional::bedrock_to_java(&id, bedrock, &mut out, &mut used, report);
    }
    for key in bedrock.keys().filter(|k| !used.contains(k)) {
        report.approx(&id, key);
    }
    *report.converted.entry(id).or_default() += 1;
    Some(out)
}

/// The Java state a Bedrock block entity gives its cell, where it knows better than the
/// table's translation `java_state` of the cell's block: a bed's or a banner's colour
/// (Bedrock's `bed` and banner blocks have none), a chest's half, a floor head's rotation.
/// `None` when `java_state` stands.
pub fn java_state(bedrock: &Compound, java_state: &str) -> Option<String> {
    let better = match string(bedrock, "id").as_deref() {
        Some("Bed") => {
            let want = DYES.get(usize::try_from(byte(bedrock, "color")?).ok()?)?.0;
            let (name, props) =
                java_state.split_at(java_state.find('[').unwrap_or(java_state.len()));
            name.strip_prefix("minecraft:")?.strip_suffix("_bed")?; // a bed, of any colour
            format!("minecraft:{want}_bed{props}")
        }
        Some("Chest") => {
            let (fx, fz) = step(state_prop(java_state, "facing")?)?;
            let n = |k: &str| bedrock.get(k).and_then(Tag::as_int);
            let half = match (n("pairx"), n("pairz"), n("x"), n("z")) {
                (Some(px), Some(pz), Some(x), Some(z)) => match (px - x, pz - z) {
                    d if d == (-fz, fx) => "left",
                    d if d == (fz, -fx) => "right",
                    _ => "single",
                },
                _ => "single",
            };
            crate::translate::with_prop(java_state, "type", half)?
        }
        _ => functional::java_state(bedrock, java_state)?,
    };
    (better != java_state).then_some(better)
}

/// One Bedrock container item (`Slot`, `Name`, `Count`, `Damage`, extra data) in Java's form.
pub(crate) fn bedrock_item_to_java(
    t: &EditionTable,
    item: &Compound,
    id: &str,
    report: &mut BlockEntityReport,
) -> Option<Compound> {
    let name = string(item, "Name")?;
    let damage = match item.get("Damage") {
        Some(Tag::Short(d)) => *d,
        _ => 0,
    };
    let Some(java) = t.bedrock_item_to_java(&name, damage) else {
        *report.items_dropped.entry(name).or_default() += 1;
        return None;
    };
    let mut out = Compound::new();
    out.insert("Slot", Tag::Byte(byte(item, "Slot").unwrap_or(0)));
    out.insert("id", Tag::String(java.to_string()));
    out.insert("count", Tag::Int(byte(item, "Count").map_or(1, |c| i32::from(c as u8))));
    if item.contains_key("tag") || item.contains_key("Block") {
        report.approx(id, &format!("{name} (item data)"));
    }
    Some(out)
}

/// One side of a Bedrock sign (`Text`, `SignTextColor`, `IgnoreLighting`) as Java's.
fn bedrock_side(side: &Compound, id: &str, report: &mut BlockEntityReport) -> Compound {
    let text = string(side, "Text").unwrap_or_default();
    let mut lines: Vec<Tag> = text.split('\n').map(|l| Tag::String(l.to_string())).collect();
    if lines.len() > 4 {
        report.approx(id, "text beyond four lines");
        lines.truncate(4);
    }
    lines.resize(4, Tag::String(String::new()));
    let argb = side.get("SignTextColor").and_then(Tag::as_int).unwrap_or(0xFF00_0000_u32 as i32);
    let rgb = (argb as u32) & 0xFF_FFFF;
    let color = match DYES.iter().find(|(_, c)| *c == rgb) {
        Some((n, _)) => *n,
        None => {
            report.approx(id, "text colour (nearest dye)");
            nearest_dye(rgb)
        }
    };
    let mut out = Compound::new();
    out.insert("messages", Tag::list(lines));
    out.insert("color", Tag::String(color.into()));
    out.insert("has_glowing_text", Tag::Byte(byte(side, "IgnoreLighting").unwrap_or(0)));
    out
}

/// The dye whose text colour is nearest `rgb` (squared distance per channel).
fn nearest_dye(rgb: u32) -> &'static str {
    let ch = |c: u32, s: u32| ((c >> s) & 0xFF) as i32;
    let d = |c: u32| (0..3).map(|i| (ch(c, i * 8) - ch(rgb, i * 8)).pow(2)).sum::<i32>();
    DYES.iter().min_by_key(|(_, c)| d(*c)).map_or("black", |(n, _)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(slot: i8, id: &str, count: i32) -> Compound {
        let mut c = Compound::new();
        c.insert("Slot", Tag::Byte(slot));
        c.insert("id", Tag::String(id.into()));
        c.insert("count", Tag::Int(count));
        c
    }

    fn chest(items: Vec<Compound>) -> Compound {
        let mut c = Compound::new();
        c.insert("id", Tag::String("minecraft:chest".into()));
        c.insert("Items", Tag::compound_list(items));
        c
    }

    #[test]
    fn a_chest_and_its_items_go_to_bedrock_and_back() {
        let mut r = BlockEntityReport::default();
        let java = chest(vec![
            item(0, "minecraft:stone", 5),
            item(3, "minecraft:red_bed", 1),
            item(4, "minecraft:cobblestone_stairs", 64),
            item(5, "minecraft:debug_stick", 1),
        ]);
        let state = "minecraft:chest[facing=north,type=single,waterlogged=false]";
        let b = java_to_bedrock(&java, (16, 70, -3), state, Some(4671), &mut r).unwrap();
        assert_eq!(string(&b, "id").as_deref(), Some("Chest"));
        assert_eq!(b.get("x"), Some(&Tag::Int(16)));
        let items = b.get("Items").and_then(Tag::as_list).unwrap();
        let names: Vec<_> = items
            .iter()
            .map(|i| {
                let i = i.as_compound().unwrap();
                (string(i, "Name").unwrap(), i.get("Damage").cloned(), byte(i, "Count"))
            })
            .collect();
        assert_eq!(
            names,
            [
                ("minecraft:stone".into(), Some(Tag::Short(0)), Some(5)),
                ("minecraft:bed".into(), Some(Tag::Short(14)), Some(1)),
                ("minecraft:stone_stairs".into(), Some(Tag::Short(0)), Some(64)),
            ]
        );
        assert_eq!(r.items_dropped.get("minecraft:debug_stick"), Some(&1));
        assert!(!b.contains_key("pairx"), "a single chest has no pair");
        let mut back_report = BlockEntityReport::default();
        let j = bedrock_to_java(&b, state, &mut back_report).unwrap();
        let mut want = java.clone();
        let Some(Tag::List(_, items)) = want.get_mut("Items") else { unreachable!() };
        items.pop();
        for (k, v) in [("x", 16), ("y", 70), ("z", -3)] {
            want.insert(k, Tag::Int(v));
        }
        assert_eq!(j, want);
        assert!(back_report.approximated.is_empty(), "{back_report:?}");
        assert_eq!(r.converted.get("minecraft:chest"), Some(&1));
    }

    #[test]
    fn a_double_chest_pairs_with_its_other_half() {
        let mut r = BlockEntityReport::default();
        let java = chest(vec![]);
        // Facing north: `left`'s other half is east (+x), `right`'s west.
        let left = "minecraft:chest[facing=north,type=left,waterlogged=false]";
        let b = java_to_bedrock(&java, (5, 64, 9), left, None, &mut r).unwrap();
        assert_eq!((b.get("pairx"), b.get("pairz")), (Some(&Tag::Int(6)), Some(&Tag::Int(9))));
        assert_eq!(b.get("pairlead"), Some(&Tag::Byte(0)));
        let right = "minecraft:chest[facing=south,type=right,waterlogged=false]";
        let b = java_to_bedrock(&java, (5, 64, 9), right, None, &mut r).unwrap();
        // Facing south, counter-clockwise is east.
        assert_eq!((b.get("pairx"), b.get("pairz")), (Some(&Tag::Int(6)), Some(&Tag::Int(9))));
        assert_eq!(b.get("pairlead"), Some(&Tag::Byte(1)));
        // Back in Java, the pairing is the state's half again.
        let single = "minecraft:chest[facing=south,type=single,waterlogged=false]";
        assert_eq!(java_state(&b, single).as_deref(), Some(right));
        let b = java_to_bedrock(&java, (5, 64, 9), left, None, &mut r).unwrap();
        let north = "minecraft:chest[facing=north,type=single,waterlogged=false]";
        assert_eq!(java_state(&b, north).as_deref(), Some(left));
        let lone = java_to_bedrock(&java, (5, 64, 9), single, None, &mut r).unwrap();
        assert_eq!(java_state(&lone, right).as_deref(), Some(single));
        assert_eq!(java_state(&lone, single), None);
    }

    #[test]
    fn sign_text_of_both_java_forms_and_back() {
        let mut r = BlockEntityReport::default();
        let mut front = Compound::new();
        let json = ["{\"text\":\"Hello\"}", "\"world\"", "\"\"", "\"\""];
        front.insert(
            "messages",
            Tag::list(json.iter().map(|s| Tag::String(s.to_string())).collect()),
        );
        front.insert("color", Tag::String("red".into()));
        front.insert("has_glowing_text", Tag::Byte(1));
        let mut java = Compound::new();
        java.insert("id", Tag::String("minecraft:sign".into()));
        java.insert("front_text", Tag::Compound(front));
        java.insert("is_waxed", Tag::Byte(1));
        let b =
            java_to_bedrock(&java, (0, 0, 0), "minecraft:oak_sign[rotation=0]", Some(3955), &mut r)
                .unwrap();
        let f = b.get("FrontText").and_then(Tag::as_compound).unwrap();
        assert_eq!(string(f, "Text").as_deref(), Some("Hello\nworld"));
        assert_eq!(f.get("SignTextColor"), Some(&Tag::Int(0xFFB0_2E26_u32 as i32)));
        assert_eq!(f.get("IgnoreLighting"), Some(&Tag::Byte(1)));
        assert_eq!(b.get("IsWaxed"), Some(&Tag::Byte(1)));
        assert!(r.approximated.is_empty(), "{r:?}");

        let mut back = BlockEntityReport::default();
        let j = bedrock_to_java(&b, "minecraft:oak_sign[rotation=0]", &mut back).unwrap();
        let f = j.get("front_text").and_then(Tag::as_compound).unwrap();
        let lines: Vec<_> = f.get("messages").and_then(Tag::as_list).unwrap().to_vec();
        let want: Vec<Tag> =
            ["Hello", "world", "", ""].iter().map(|s| Tag::String(s.to_string())).collect();
        assert_eq!(lines, want);
        assert_eq!(string(f, "color").as_deref(), Some("red"));
        assert!(back.approximated.is_empty(), "{back:?}");

        // From 1.21.5 the lines are NBT text: a JSON-looking line is literal text.
        let mut r = BlockEntityReport::default();
        let j2b =
            java_to_bedrock(&j, (0, 0, 0), "minecraft:oak_sign[rotation=0]", Some(4671), &mut r)
                .unwrap();
        assert_eq!(j2b.get("FrontText"), b.get("FrontText"));
    }

    #[test]
    fn a_shulker_box_faces_as_its_block_and_a_trapped_chest_stays_trapped() {
        let mut r = BlockEntityReport::default();
        let mut java = Compound::new();
        java.insert("id", Tag::String("minecraft:shulker_box".into()));
        let b = java_to_bedrock(
            &java,
            (0, 0, 0),
            "minecraft:red_shulker_box[facing=west]",
            None,
            &mut r,
        )
        .unwrap();
        assert_eq!(b.get("facing"), Some(&Tag::Byte(4)));
        let mut back = BlockEntityReport::default();
        bedrock_to_java(&b, "minecraft:red_shulker_box[facing=up]", &mut back).unwrap();
        assert_eq!(back.approximated.get("ShulkerBox: facing (up in Java)"), Some(&1));
        let mut trapped = chest(vec![]);
        trapped.insert("id", Tag::String("minecraft:trapped_chest".into()));
        let state = "minecraft:trapped_chest[facing=north,type=single,waterlogged=false]";
        let b = java_to_bedrock(&trapped, (0, 0, 0), state, None, &mut r).unwrap();
        assert_eq!(string(&b, "id").as_deref(), Some("Chest"));
        let j = bedrock_to_java(&b, state, &mut back).unwrap();
        assert_eq!(string(&j, "id").as_deref(), Some("minecraft:trapped_chest"));
    }

    #[test]
    fn a_sign_from_before_1_20_has_one_side() {
        let mut r = BlockEntityReport::default();
        let mut java = Compound::new();
        java.insert("id", Tag::String("minecraft:sign".into()));
        for (i, line) in ["\"Old\"", "{\"text\":\"sign\"}", "\"\"", "\"\""].iter().enumerate() {
            java.insert(format!("Text{}", i + 1), Tag::String(line.to_string()));
        }
        java.insert("Color", Tag::String("blue".into()));
        let b =
            java_to_bedrock(&java, (0, 0, 0), "minecraft:oak_sign[rotation=0]", Some(1343), &mut r)
                .unwrap();
        let f = b.get("FrontText").and_then(Tag::as_compound).unwrap();
        assert_eq!(string(f, "Text").as_deref(), Some("Old\nsign"));
        assert_eq!(f.get("SignTextColor"), Some(&Tag::Int(0xFF3C_44AA_u32 as i32)));
        let back = b.get("BackText").and_then(Tag::as_compound).unwrap();
        assert_eq!(string(back, "Text").as_deref(), Some(""));
        assert!(r.approximated.is_empty(), "{r:?}");
    }

    #[test]
    fn a_bed_carries_its_colour_from_the_block() {
        let mut r = BlockEntityReport::default();
        let mut java = Compound::new();
        java.insert("id", Tag::String("minecraft:bed".into()));
        let red = "minecraft:red_bed[facing=north,occupied=false,part=head]";
        let b = java_to_bedrock(&java, (1, 2, 3), red, None, &mut r).unwrap();
        assert_eq!(
            (string(&b, "id").as_deref(), b.get("color")),
            (Some("Bed"), Some(&Tag::Byte(14)))
        );
        let mut back = BlockEntityReport::default();
        let j = bedrock_to_java(&b, red, &mut back).unwrap();
        assert_eq!(string(&j, "id").as_deref(), Some("minecraft:bed"));
        assert!(back.approximated.is_empty(), "{back:?}");
        bedrock_to_java(&b, "minecraft:white_bed[part=head]", &mut back).unwrap();
        assert_eq!(back.approximated.get("Bed: colour (the Java block's)"), Some(&1));
    }

    #[test]
    fn what_no_rule_covers_is_counted() {
        let mut r = BlockEntityReport::default();
        let mut beacon = Compound::new();
        beacon.insert("id", Tag::String("minecraft:beacon".into()));
        assert!(java_to_bedrock(&beacon, (0, 0, 0), "minecraft:beacon", None, &mut r).is_none());
        assert_eq!(r.left.get("minecraft:beacon"), Some(&1));
        let mut c = chest(vec![]);
        c.insert("Lock", Tag::String("key".into()));
        let mut styled = item(0, "minecraft:diamond_sword", 1);
        styled.insert("components", Tag::Compound(Compound::new()));
        c.insert("Items", Tag::compound_list([styled]));
        java_to_bedrock(&c, (0, 0, 0), "minecraft:chest", None, &mut r).unwrap();
        assert_eq!(r.approximated.get("minecraft:chest: Lock"), Some(&1));
        assert_eq!(
            r.approximated.get("minecraft:chest: minecraft:diamond_sword (item data)"),
            Some(&1)
        );
        let mut odd = Compound::new();
        odd.insert("id", Tag::String("Sign".into()));
        let mut side = Compound::new();
        side.insert("SignTextColor", Tag::Int(0xFF10_0000_u32 as i32));
        odd.insert("FrontText", Tag::Compound(side));
        let j = bedrock_to_java(&odd, "minecraft:oak_sign", &mut r).unwrap();
        let f = j.get("front_text").and_then(Tag::as_compound).unwrap();
        assert_eq!(string(f, "color").as_deref(), Some("black"));
        assert_eq!(r.approximated.get("Sign: text colour (nearest dye)"), Some(&1));
    }
}
