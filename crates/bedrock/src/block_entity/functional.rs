//! The block entities both editions share beyond containers, signs and beds: mob spawners,
//! beehives and bee nests with their bees, brewing stands (a container whose slots differ),
//! lecterns, jukeboxes, campfires, banners, mob heads, decorated pots and flower pots (Java
//! keeps the plant in the block, Bedrock in a block entity), by the rules in
//! `docs/format/java-bedrock-table.md`, "Block entities". Each function fills the fields of
//! its kind into a compound that [`super`] has opened (id, position), names the source
//! fields it read in `used` (every other one is counted as approximated there), and counts
//! what it could not keep.

use terrane_nbt::{Compound, Tag};

use super::{
    BlockEntityReport, DYES, bedrock_item_to_java, byte, java_item_to_bedrock, java_text,
    state_prop, string,
};
use crate::entity::ENTITIES;
use crate::translate::{table, with_prop};

/// A brewing stand's Java slot (0–2 bottles, 3 ingredient, 4 fuel) → Bedrock's (0
/// ingredient, 1–3 bottles, 4 fuel).
pub(super) const BREWING_JAVA_TO_BEDROCK: [i8; 5] = [1, 2, 3, 0, 4];

/// The spawner fields both editions keep as shorts under the same name.
const SPAWNER_SHORTS: [&str; 7] = [
    "Delay",
    "MinSpawnDelay",
    "MaxSpawnDelay",
    "SpawnCount",
    "MaxNearbyEntities",
    "RequiredPlayerRange",
    "SpawnRange",
];

/// A bee's time in a hive when Bedrock does not say (Java's for a bee without nectar).
const BEE_TICKS: i32 = 600;

/// Java 1.20.5's banner pattern names and the codes Bedrock (and Java before 1.20.5) keeps.
const BANNER_PATTERNS: [(&str, &str); 43] = [
    ("base", "b"),
    ("square_bottom_left", "bl"),
    ("square_bottom_right", "br"),
    ("square_top_left", "tl"),
    ("square_top_right", "tr"),
    ("stripe_bottom", "bs"),
    ("stripe_top", "ts"),
    ("stripe_left", "ls"),
    ("stripe_right", "rs"),
    ("stripe_center", "cs"),
    ("stripe_middle", "ms"),
    ("stripe_downright", "drs"),
    ("stripe_downleft", "dls"),
    ("small_stripes", "ss"),
    ("cross", "cr"),
    ("straight_cross", "sc"),
    ("triangle_bottom", "bt"),
    ("triangle_top", "tt"),
    ("triangles_bottom", "bts"),
    ("triangles_top", "tts"),
    ("diagonal_left", "ld"),
    ("diagonal_up_right", "rd"),
    ("diagonal_up_left", "lud"),
    ("diagonal_right", "rud"),
    ("circle", "mc"),
    ("rhombus", "mr"),
    ("half_vertical", "vh"),
    ("half_horizontal", "hh"),
    ("half_vertical_right", "vhr"),
    ("half_horizontal_bottom", "hhb"),
    ("border", "bo"),
    ("curly_border", "cbo"),
    ("gradient", "gra"),
    ("gradient_up", "gru"),
    ("bricks", "bri"),
    ("globe", "glb"),
    ("creeper", "cre"),
    ("skull", "sku"),
    ("flower", "flo"),
    ("mojang", "moj"),
    ("piglin", "pig"),
    ("flow", "flw"),
    ("guster", "gus"),
];

/// Mob heads: the Java block (floor form; the wall form is `..._wall_...`) and Bedrock's
/// `SkullType`.
const SKULLS: [(&str, i8); 7] = [
    ("skeleton_skull", 0),
    ("wither_skeleton_skull", 1),
    ("zombie_head", 2),
    ("player_head", 3),
    ("creeper_head", 4),
    ("dragon_head", 5),
    ("piglin_head", 6),
];

fn bare(id: &str) -> &str {
    id.strip_prefix("minecraft:").unwrap_or(id)
}

fn int(c: &Compound, key: &str) -> Option<i32> {
    c.get(key).and_then(Tag::as_int)
}

/// A Java block's colour prefix (`minecraft:red_banner`, `minecraft:red_wall_banner`) as its
/// index in [`DYES`] (Java's order: white 0 … black 15).
fn java_color_of(block: &str, suffixes: &[&str]) -> Option<usize> {
    let name = bare(block.split_once('[').map_or(block, |(n, _)| n));
    let color = suffixes.iter().find_map(|s| name.strip_suffix(s))?;
    DYES.iter().position(|(n, _)| *n == color)
}

/// One item outside a container's list (a lectern's book, a record, a pot's item), without
/// its `Slot`.
fn java_single_item(item: Option<&Tag>, id: &str, report: &mut BlockEntityReport) -> Option<Tag> {
    let mut b = java_item_to_bedrock(table(), item?.as_compound()?, id, report)?;
    b.remove("Slot");
    Some(Tag::Compound(b))
}

fn bedrock_single_item(
    item: Option<&Tag>,
    id: &str,
    report: &mut BlockEntityReport,
) -> Option<Tag> {
    let mut j = bedrock_item_to_java(table(), item?.as_compound()?, id, report)?;
    j.remove("Slot");
    Some(Tag::Compound(j))
}

/// A mob's Java id (`minecraft:zombified_piglin`) as Bedrock's, through the entity renames;
/// a mob not among them keeps its name, counted.
fn entity_to_bedrock(java: &str, id: &str, report: &mut BlockEntityReport) -> String {
    match ENTITIES.iter().find(|(j, _)| *j == bare(java)) {
        Some((_, b)) => format!("minecraft:{b}"),
        None => {
            report.approx(id, &format!("{java} (no entity rule: its name is kept)"));
            java.to_string()
        }
    }
}

fn entity_to_java(bedrock: &str, id: &str, report: &mut BlockEntityReport) -> String {
    let name = bedrock.split_once('<').map_or(bedrock, |(n, _)| n);
    match ENTITIES.iter().find(|(_, b)| *b == bare(name)) {
        Some((j, _)) => format!("minecraft:{j}"),
        None => {
            report.approx(id, &format!("{name} (no entity rule: its name is kept)"));
            name.to_string()
        }
    }
}

/// Java → Bedrock: the fields of the block entity `java` (Java id `id`, Bedrock id
/// `bedrock_id`) at a cell holding `block`.
pub(super) fn java_to_bedrock(
    bedrock_id: &str,
    java: &Compound,
    block: &str,
    data_version: Option<i32>,
    out: &mut Compound,
    used: &mut Vec<&'static str>,
    report: &mut BlockEntityReport,
) {
    let id = string(java, "id").unwrap_or_default();
    let id = id.as_str();
    match bedrock_id {
        "MobSpawner" => {
            used.extend(["SpawnData", "SpawnPotentials"]);
            used.extend(SPAWNER_SHORTS);
            let data = java.get("SpawnData").and_then(Tag::as_compound);
            // 1.18 on: `SpawnData: {entity: {id}}`; before, the entity itself.
            let entity = data.map(|d| d.get("entity").and_then(Tag::as_compound).unwrap_or(d));
            if let Some(e) = entity.and_then(|e| string(e, "id")) {
                out.insert("EntityIdentifier", Tag::String(entity_to_bedrock(&e, id, report)));
            }
            if entity.is_some_and(|e| e.keys().any(|k| k != "id")) {
                report.approx(id, "SpawnData (the mob's data)");
            }
            if java.get("SpawnPotentials").and_then(Tag::as_list).is_some_and(|l| l.len() > 1) {
                report.approx(id, "SpawnPotentials (Bedrock spawns one kind)");
            }
            for k in SPAWNER_SHORTS {
                if let Some(v) = int(java, k) {
                    out.insert(k, Tag::Short(v.clamp(i16::MIN.into(), i16::MAX.into()) as i16));
                }
            }
        }
        "Beehive" => {
            used.extend(["bees", "Bees", "flower_pos", "FlowerPos"]);
            let bees = java.get("bees").or_else(|| java.get("Bees")).and_then(Tag::as_list);
            let mut occupants = Vec::new();
            for bee in bees.unwrap_or(&[]).iter().filter_map(Tag::as_compound) {
                let data = bee.get("entity_data").or_else(|| bee.get("EntityData"));
                let data = data.and_then(Tag::as_compound);
                let entity = data.and_then(|d| string(d, "id"));
                let entity = entity.unwrap_or_else(|| "minecraft:bee".into());
                let identifier = entity_to_bedrock(&entity, id, report);
                let min = int(bee, "min_ticks_in_hive").or_else(|| int(bee, "MinOccupationTicks"));
                let done = int(bee, "ticks_in_hive").or_else(|| int(bee, "TicksInHive"));
                let left = (min.unwrap_or(BEE_TICKS) - done.unwrap_or(0)).max(0);
                if data.is_some_and(|d| d.keys().any(|k| k != "id")) {
                    report.approx(id, "bees' data (each bee is a new bee)");
                }
                let mut save = Compound::new();
                save.insert("identifier", Tag::String(identifier.clone()));
                save.insert("definitions", Tag::list(vec![Tag::String(format!("+{identifier}"))]));
                let mut o = Compound::new();
                o.insert("ActorIdentifier", Tag::String(format!("{identifier}<>")));
                o.insert("SaveData", Tag::Compound(save));
                o.insert("TicksLeftToStay", Tag::Int(left));
                occupants.push(o);
            }
            if java.contains_key("flower_pos") || java.contains_key("FlowerPos") {
                report.approx(id, "flower_pos (the bees look for a flower again)");
            }
            out.insert("Occupants", Tag::compound_list(occupants));
            out.insert("ShouldSpawnBees", Tag::Byte(0));
        }
        "BrewingStand" => {
            used.extend(["BrewTime", "Fuel"]);
            out.insert("CookTime", Tag::Short(int(java, "BrewTime").unwrap_or(0) as i16));
            let fuel = i16::from(byte(java, "Fuel").unwrap_or(0));
            out.insert("FuelAmount", Tag::Short(fuel));
            out.insert("FuelTotal", Tag::Short(if fuel > 0 { 20 } else { 0 }));
        }
        "Lectern" => {
            used.extend(["Book", "Page"]);
            let book = java_single_item(java.get("Book"), id, report);
            out.insert("hasBook", Tag::Byte(i8::from(book.is_some())));
            if let Some(book) = book {
                out.insert("book", book);
                out.insert("page", Tag::Int(int(java, "Page").unwrap_or(0)));
                out.insert("totalPages", Tag::Int(book_pages(java.get("Book"))));
            }
        }
        "Jukebox" => {
            used.extend(["RecordItem", "ticks_since_song_started", "RecordStartTick", "TickCount"]);
            if let Some(record) = java_single_item(java.get("RecordItem"), id, report) {
                out.insert("RecordItem", record);
            }
        }
        "Campfire" => {
            used.extend(["Items", "CookingTimes", "CookingTotalTimes"]);
            let times = java.get("CookingTimes");
            for item in java.get("Items").and_then(Tag::as_list).unwrap_or(&[]) {
                let Some(slot) = item.as_compound().and_then(|i| byte(i, "Slot")) else { continue };
                if !(0..4).contains(&slot) {
                    continue;
                }
                if let Some(b) = java_single_item(Some(item), id, report) {
                    out.insert(format!("Item{}", slot + 1), b);
                    let time = match times {
                        Some(Tag::IntArray(t)) => t.get(slot as usize).copied().unwrap_or(0),
                        _ => 0,
                    };
                    out.insert(format!("ItemTime{}", slot + 1), Tag::Int(time));
                }
            }
        }
        "Banner" => {
            used.extend(["patterns", "Patterns", "CustomName"]);
            let base = java_color_of(block, &["_wall_banner", "_banner"]).unwrap_or(0);
            out.insert("Base", Tag::Int(15 - base as i32));
            let mut patterns = Vec::new();
            if let Some(list) = java.get("patterns").and_then(Tag::as_list) {
                for p in list.iter().filter_map(Tag::as_compound) {
                    let name = string(p, "pattern").unwrap_or_default();
                    let color = string(p, "color").unwrap_or_default();
                    let code = BANNER_PATTERNS.iter().find(|(n, _)| *n == bare(&name));
                    let color = DYES.iter().position(|(n, _)| *n == color);
                    match (code, color) {
                        (Some((_, code)), Some(c)) => patterns.push(bedrock_pattern(code, c)),
                        _ => report.approx(id, &format!("pattern {name} ({color:?})")),
                    }
                }
            } else if let Some(list) = java.get("Patterns").and_then(Tag::as_list) {
                // Before 1.20.5: the codes and colour indices Bedrock keeps.
                for p in list.iter().filter_map(Tag::as_compound) {
                    match (string(p, "Pattern"), int(p, "Color")) {
                        (Some(code), Some(c @ 0..=15)) => {
                            patterns.push(bedrock_pattern(&code, c as usize))
                        }
                        _ => report.approx(id, "a pattern without code or colour"),
                    }
                }
            }
            out.insert("Patterns", Tag::compound_list(patterns));
            out.insert("Type", Tag::Int(0));
            if let Some(n) = java.get("CustomName") {
                out.insert("CustomName", Tag::String(java_text(n, data_version, id, report)));
            }
        }
        "Skull" => {
            used.extend(["profile", "SkullOwner", "ExtraType", "note_block_sound"]);
            let name = bare(block.split_once('[').map_or(block, |(n, _)| n)).replace("_wall", "");
            let kind = SKULLS.iter().find(|(n, _)| *n == name).map_or(0, |(_, k)| *k);
            out.insert("SkullType", Tag::Byte(kind));
            let rotation = state_prop(block, "rotation").and_then(|r| r.parse::<u8>().ok());
            out.insert("Rotation", Tag::Float(f32::from(rotation.unwrap_or(0)) * 22.5));
            out.insert("MouthMoving", Tag::Byte(0));
            out.insert("MouthTickCount", Tag::Int(0));
            for k in ["profile", "SkullOwner", "ExtraType"] {
                if java.contains_key(k) {
                    report.approx(id, &format!("{k} (Bedrock heads have no skin)"));
                }
            }
            if java.contains_key("note_block_sound") {
                report.approx(id, "note_block_sound");
            }
        }
        "DecoratedPot" => {
            used.extend(["sherds", "item", "LootTable", "LootTableSeed"]);
            let sherds = java.get("sherds").and_then(Tag::as_list).map(<[Tag]>::to_vec);
            let sherds = sherds.unwrap_or_else(|| {
                vec![Tag::String("minecraft:brick".into()); 4] // Java leaves out plain bricks
            });
            out.insert("sherds", Tag::list(sherds));
            if let Some(item) = java_single_item(java.get("item"), id, report) {
                out.insert("item", item);
            }
            if let Some(l) = string(java, "LootTable") {
                let path = l.split_once(':').map_or(l.as_str(), |(_, p)| p);
                out.insert("LootTable", Tag::String(format!("loot_tables/{path}.json")));
            }
            if let Some(s) = java.get("LootTableSeed").and_then(Tag::as_i64) {
                out.insert("LootTableSeed", Tag::Int(s as i32));
            }
            out.insert("animation", Tag::Byte(0));
        }
        _ => {}
    }
}

fn bedrock_pattern(code: &str, java_color: usize) -> Compound {
    let mut c = Compound::new();
    c.insert("Pattern", Tag::String(code.to_string()));
    c.insert("Color", Tag::Int(15 - java_color as i32));
    c
}

/// The pages of a Java book item (1.20.5's components, or the older `tag`).
fn book_pages(book: Option<&Tag>) -> i32 {
    let Some(book) = book.and_then(Tag::as_compound) else { return 0 };
    let pages = |c: &Compound| c.get("pages").and_then(Tag::as_list).map(<[Tag]>::len);
    let components = book.get("components").and_then(Tag::as_compound);
    let from_components = components.and_then(|c| {
        ["minecraft:written_book_content", "minecraft:writable_book_content"]
            .iter()
            .find_map(|k| c.get(k).and_then(Tag::as_compound).and_then(pages))
    });
    let from_tag = book.get("tag").and_then(Tag::as_compound).and_then(pages);
    from_components.or(from_tag).unwrap_or(0) as i32
}

/// Bedrock → Java: the fields of the block entity `bedrock` (Bedrock id `id`) into `out`.
pub(super) fn bedrock_to_java(
    id: &str,
    bedrock: &Compound,
    out: &mut Compound,
    used: &mut Vec<&'static str>,
    report: &mut BlockEntityReport,
) {
    match id {
        "MobSpawner" => {
            used.extend(["EntityIdentifier", "DisplayEntityWidth", "DisplayEntityHeight"]);
            used.extend(["DisplayEntityScale"]);
            used.extend(SPAWNER_SHORTS);
            if let Some(e) = string(bedrock, "EntityIdentifier").filter(|e| !e.is_empty()) {
                let mut entity = Compound::new();
                entity.insert("id", Tag::String(entity_to_java(&e, id, report)));
                let mut data = Compound::new();
                data.insert("entity", Tag::Compound(entity));
                out.insert("SpawnData", Tag::Compound(data));
            }
            for k in SPAWNER_SHORTS {
                if let Some(v) = int(bedrock, k) {
                    out.insert(k, Tag::Short(v as i16));
                }
            }
        }
        "Beehive" => {
            used.extend(["Occupants", "ShouldSpawnBees"]);
            let mut bees = Vec::new();
            for o in bedrock.get("Occupants").and_then(Tag::as_list).unwrap_or(&[]) {
                let Some(o) = o.as_compound() else { continue };
                let actor = string(o, "ActorIdentifier").unwrap_or_else(|| "minecraft:bee".into());
                let mut data = Compound::new();
                data.insert("id", Tag::String(entity_to_java(&actor, id, report)));
                if o.get("SaveData").and_then(Tag::as_compound).is_some_and(|s| s.len() > 2) {
                    report.approx(id, "bees' data (each bee is a new bee)");
                }
                let mut bee = Compound::new();
                bee.insert("entity_data", Tag::Compound(data));
                bee.insert("min_ticks_in_hive", Tag::Int(int(o, "TicksLeftToStay").unwrap_or(0)));
                bee.insert("ticks_in_hive", Tag::Int(0));
                bees.push(bee);
            }
            out.insert("bees", Tag::compound_list(bees));
            if byte(bedrock, "ShouldSpawnBees").unwrap_or(0) != 0 {
                report.approx(id, "ShouldSpawnBees (a nest the game has not filled yet)");
            }
        }
        "BrewingStand" => {
            used.extend(["CookTime", "FuelAmount", "FuelTotal"]);
            out.insert("BrewTime", Tag::Short(int(bedrock, "CookTime").unwrap_or(0) as i16));
            let fuel = int(bedrock, "FuelAmount").unwrap_or(0).clamp(0, 127);
            out.insert("Fuel", Tag::Byte(fuel as i8));
        }
        "Lectern" => {
            used.extend(["book", "page", "totalPages", "hasBook"]);
            if let Some(book) = bedrock_single_item(bedrock.get("book"), id, report) {
                out.insert("Book", book);
                out.insert("Page", Tag::Int(int(bedrock, "page").unwrap_or(0)));
            }
        }
        "Jukebox" => {
            used.extend(["RecordItem"]);
            if let Some(record) = bedrock_single_item(bedrock.get("RecordItem"), id, report) {
                out.insert("RecordItem", record);
            }
        }
        "Campfire" => {
            let mut items = Vec::new();
            let mut times = vec![0; 4];
            for n in 1..=4u8 {
                let (item, time) = (format!("Item{n}"), format!("ItemTime{n}"));
                if let Some(Tag::Compound(mut j)) =
                    bedrock_single_item(bedrock.get(&item), id, report)
                {
                    j.insert("Slot", Tag::Byte(n as i8 - 1));
                    items.push(j);
                    times[usize::from(n) - 1] = int(bedrock, &time).unwrap_or(0);
                }
            }
            used.extend(["Item1", "Item2", "Item3", "Item4"]);
            used.extend(["ItemTime1", "ItemTime2", "ItemTime3", "ItemTime4"]);
            out.insert("Items", Tag::compound_list(items));
            out.insert("CookingTimes", Tag::IntArray(times));
            // Every campfire recipe cooks for 600 ticks.
            out.insert("CookingTotalTimes", Tag::IntArray(vec![600; 4]));
        }
        "Banner" => {
            used.extend(["Base", "Patterns", "Type", "CustomName"]);
            let mut patterns = Vec::new();
            for p in bedrock.get("Patterns").and_then(Tag::as_list).unwrap_or(&[]) {
                let Some(p) = p.as_compound() else { continue };
                let code = string(p, "Pattern").unwrap_or_default();
                let name = BANNER_PATTERNS.iter().find(|(_, c)| *c == code);
                let color = int(p, "Color").filter(|c| (0..16).contains(c));
                match (name, color) {
                    (Some((name, _)), Some(c)) => {
                        let mut j = Compound::new();
                        j.insert("color", Tag::String(DYES[15 - c as usize].0.into()));
                        j.insert("pattern", Tag::String(format!("minecraft:{name}")));
                        patterns.push(j);
                    }
                    _ => report.approx(id, &format!("pattern {code:?}")),
                }
            }
            out.insert("patterns", Tag::compound_list(patterns));
            if int(bedrock, "Type").unwrap_or(0) != 0 {
                report.approx(id, "Type (an ominous banner: its patterns are kept)");
            }
            if let Some(n) = string(bedrock, "CustomName") {
                out.insert("CustomName", Tag::String(n));
            }
        }
        "Skull" => {
            // Kind and rotation are the Java block's ([`java_state`]).
            used.extend(["SkullType", "Rotation", "MouthMoving", "MouthTickCount"]);
        }
        "DecoratedPot" => {
            used.extend(["sherds", "item", "animation", "LootTable", "LootTableSeed"]);
            if let Some(s) = bedrock.get("sherds").and_then(Tag::as_list) {
                out.insert("sherds", Tag::list(s.to_vec()));
            }
            if let Some(item) = bedrock_single_item(bedrock.get("item"), id, report) {
                out.insert("item", item);
            }
            if let Some(l) = string(bedrock, "LootTable") {
                let path = l.trim_start_matches("loot_tables/").trim_end_matches(".json");
                out.insert("LootTable", Tag::String(format!("minecraft:{path}")));
            }
            if let Some(s) = bedrock.get("LootTableSeed").and_then(Tag::as_i64) {
                out.insert("LootTableSeed", Tag::Long(s));
            }
        }
        _ => {}
    }
}

/// The prefix of Java's potted plants (`minecraft:potted_poppy`).
pub const JAVA_POTTED: &str = "minecraft:potted_";

/// Java → Bedrock: the `FlowerPot` block entity of a cell holding the Java potted plant
/// `block` (`minecraft:potted_poppy`) at `(x, y, z)`: its `PlantBlock` the plant's Bedrock
/// state. `None` for a block that is not a potted plant.
pub fn flower_pot_to_bedrock(
    block: &str,
    (x, y, z): (i32, i32, i32),
    report: &mut BlockEntityReport,
) -> Option<Compound> {
    let plant = bare(block.split_once('[').map_or(block, |(n, _)| n)).strip_prefix("potted_")?;
    let t = table();
    let translated = t.java_to_bedrock(&format!("minecraft:{plant}"));
    let id = "minecraft:flower_pot";
    let mut out = Compound::new();
    out.insert("id", Tag::String("FlowerPot".into()));
    out.insert("x", Tag::Int(x));
    out.insert("y", Tag::Int(y));
    out.insert("z", Tag::Int(z));
    out.insert("isMovable", Tag::Byte(1));
    match crate::names::parse_state_name(&translated.name, t.block_version()) {
        Ok(state) if translated.fidelity != crate::translate::Fidelity::Dropped => {
            out.insert("PlantBlock", Tag::Compound(state));
        }
        _ => report.approx(id, &format!("{plant} (Bedrock has no such plant: the pot is empty)")),
    }
    *report.converted.entry(id.to_string()).or_default() += 1;
    Some(out)
}

/// Bedrock → Java: the Java state of a pot whose `FlowerPot` block entity is `bedrock`: the
/// potted plant of its `PlantBlock`, `minecraft:flower_pot` when it has none (or Java has no
/// pot for that plant, counted).
fn potted_java_state(bedrock: &Compound, report: Option<&mut BlockEntityReport>) -> String {
    let t = table();
    let plant = bedrock.get("PlantBlock").and_then(Tag::as_compound).map(|p| {
        let name = crate::names::state_name(p, t.block_version());
        t.bedrock_to_java(&name, false).name
    });
    let Some(plant) = plant else { return "minecraft:flower_pot".into() };
    let bare_plant = bare(plant.split_once('[').map_or(plant.as_str(), |(n, _)| n));
    let potted = format!("{JAVA_POTTED}{bare_plant}");
    if t.java_to_bedrock(&potted).fidelity == crate::translate::Fidelity::Dropped {
        if let Some(r) = report {
            r.approx("FlowerPot", &format!("{plant} (Java has no pot for it: the pot is empty)"));
        }
        return "minecraft:flower_pot".into();
    }
    potted
}

/// Bedrock → Java: a `FlowerPot` block entity has no Java block entity (the plant is the
/// block, [`java_state`]); counts it.
pub(super) fn flower_pot_to_java(bedrock: &Compound, report: &mut BlockEntityReport) {
    potted_java_state(bedrock, Some(report));
    *report.converted.entry("FlowerPot".to_string()).or_default() += 1;
}

/// The Java state a banner's, a head's or a pot's Bedrock block entity gives its cell: a
/// banner's colour (`Base`; Bedrock's block has none), a floor head's rotation (`Rotation`,
/// degrees; Bedrock's block has only its facing), a pot's plant. `None` for other block
/// entities.
pub(super) fn java_state(bedrock: &Compound, java_state: &str) -> Option<String> {
    match string(bedrock, "id").as_deref() {
        Some("FlowerPot")
            if java_state.starts_with(JAVA_POTTED)
                || java_state.starts_with("minecraft:flower_pot") =>
        {
            Some(potted_java_state(bedrock, None))
        }
        Some("Banner") => {
            let base = int(bedrock, "Base").filter(|b| (0..16).contains(b))?;
            let want = DYES[15 - base as usize].0;
            let (name, props) =
                java_state.split_at(java_state.find('[').unwrap_or(java_state.len()));
            let wall = name.ends_with("_wall_banner");
            java_color_of(name, &["_wall_banner", "_banner"])?; // a banner, of any colour
            let kind = if wall { "wall_banner" } else { "banner" };
            Some(format!("minecraft:{want}_{kind}{props}"))
        }
        Some("Skull") => {
            state_prop(java_state, "rotation")?;
            let degrees = match bedrock.get("Rotation") {
                Some(Tag::Float(f)) if f.is_finite() => *f,
                _ => return None,
            };
            let r = ((degrees / 22.5).round() as i32).rem_euclid(16);
            with_prop(java_state, "rotation", &r.to_string())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{bedrock_to_java as to_java, java_to_bedrock as to_bedrock};
    use super::*;

    fn compound(fields: Vec<(&str, Tag)>) -> Compound {
        let mut c = Compound::new();
        for (k, v) in fields {
            c.insert(k, v);
        }
        c
    }

    fn s(v: &str) -> Tag {
        Tag::String(v.into())
    }

    fn item(slot: Option<i8>, id: &str, count: i32) -> Tag {
        let mut c = compound(vec![("id", s(id)), ("count", Tag::Int(count))]);
        if let Some(slot) = slot {
            c.insert("Slot", Tag::Byte(slot));
        }
        Tag::Compound(c)
    }

    /// Java → Bedrock → Java: the Bedrock form, the Java form back, and the report.
    fn round(java: Compound, block: &str) -> (Compound, Compound, BlockEntityReport) {
        let mut report = BlockEntityReport::default();
        let b = to_bedrock(&java, (1, 64, 2), block, Some(4325), &mut report).expect("converted");
        let j = to_java(&b, block, &mut report).expect("converted back");
        (b, j, report)
    }

    fn get<'a>(c: &'a Compound, path: &[&str]) -> Option<&'a Tag> {
        let (last, parents) = path.split_last()?;
        let mut c = c;
        for p in parents {
            c = c.get(p)?.as_compound()?;
        }
        c.get(last)
    }

    #[test]
    fn a_spawner_keeps_its_mob_under_the_other_editions_name_and_its_timings() {
        let entity = compound(vec![("id", s("minecraft:zombified_piglin"))]);
        let java = compound(vec![
            ("id", s("minecraft:mob_spawner")),
            ("SpawnData", Tag::Compound(compound(vec![("entity", Tag::Compound(entity))]))),
            ("Delay", Tag::Short(20)),
            ("MinSpawnDelay", Tag::Short(200)),
            ("MaxSpawnDelay", Tag::Short(800)),
            ("SpawnCount", Tag::Short(4)),
            ("RequiredPlayerRange", Tag::Short(16)),
        ]);
        let (b, j, report) = round(java, "minecraft:spawner");
        assert_eq!(b.get("id"), Some(&s("MobSpawner")));
        assert_eq!(b.get("EntityIdentifier"), Some(&s("minecraft:zombie_pigman")));
        assert_eq!(b.get("MinSpawnDelay"), Some(&Tag::Short(200)));
        assert_eq!(get(&j, &["SpawnData", "entity", "id"]), Some(&s("minecraft:zombified_piglin")));
        for (k, v) in [("Delay", 20), ("MaxSpawnDelay", 800), ("SpawnCount", 4)] {
            assert_eq!(j.get(k), Some(&Tag::Short(v)), "{k}");
        }
        assert!(report.approximated.is_empty(), "{report:?}");
    }

    #[test]
    fn a_hive_keeps_its_bees_and_their_time_left() {
        let bee = |ticks: i32| {
            Tag::Compound(compound(vec![
                ("entity_data", Tag::Compound(compound(vec![("id", s("minecraft:bee"))]))),
                ("min_ticks_in_hive", Tag::Int(600)),
                ("ticks_in_hive", Tag::Int(ticks)),
            ]))
        };
        let java = compound(vec![
            ("id", s("minecraft:beehive")),
            ("bees", Tag::list(vec![bee(100), bee(0)])),
        ]);
        let (b, j, _) = round(java, "minecraft:bee_nest[facing=south,honey_level=0]");
        let occupants = b.get("Occupants").and_then(Tag::as_list).unwrap();
        assert_eq!(occupants.len(), 2);
        let first = occupants[0].as_compound().unwrap();
        assert_eq!(first.get("ActorIdentifier"), Some(&s("minecraft:bee<>")));
        assert_eq!(first.get("TicksLeftToStay"), Some(&Tag::Int(500)));
        assert_eq!(get(first, &["SaveData", "identifier"]), Some(&s("minecraft:bee")));
        let bees = j.get("bees").and_then(Tag::as_list).unwrap();
        assert_eq!(bees.len(), 2);
        let first = bees[0].as_compound().unwrap();
        assert_eq!(get(first, &["entity_data", "id"]), Some(&s("minecraft:bee")));
        assert_eq!(first.get("min_ticks_in_hive"), Some(&Tag::Int(500)));
    }

    #[test]
    fn a_brewing_stand_moves_its_slots_to_bedrocks_places_and_back() {
        let java = compound(vec![
            ("id", s("minecraft:brewing_stand")),
            (
                "Items",
                Tag::list(vec![
                    item(Some(3), "minecraft:nether_wart", 2),
                    item(Some(1), "minecraft:glass_bottle", 1),
                    item(Some(4), "minecraft:blaze_powder", 3),
                ]),
            ),
            ("BrewTime", Tag::Short(120)),
            ("Fuel", Tag::Byte(7)),
        ]);
        let (b, j, report) = round(java.clone(), "minecraft:brewing_stand");
        let slots = |c: &Compound, name: &str| -> Vec<(i8, String)> {
            let list = c.get("Items").and_then(Tag::as_list).unwrap();
            list.iter()
                .filter_map(Tag::as_compound)
                .map(|i| (byte(i, "Slot").unwrap(), string(i, name).unwrap()))
                .collect()
        };
        assert_eq!(
            slots(&b, "Name"),
            [
                (0, "minecraft:nether_wart".into()),
                (2, "minecraft:glass_bottle".into()),
                (4, "minecraft:blaze_powder".into())
            ]
        );
        assert_eq!(b.get("CookTime"), Some(&Tag::Short(120)));
        assert_eq!(b.get("FuelAmount"), Some(&Tag::Short(7)));
        assert_eq!(slots(&j, "id"), slots(&java, "id"));
        assert_eq!(j.get("BrewTime"), Some(&Tag::Short(120)));
        assert_eq!(j.get("Fuel"), Some(&Tag::Byte(7)));
        assert!(report.approximated.is_empty(), "{report:?}");
    }

    #[test]
    fn a_lectern_keeps_its_book_and_page_and_a_jukebox_its_record() {
        let pages = Tag::list(vec![s("a"), s("b"), s("c")]);
        let content = compound(vec![("pages", pages)]);
        let mut book = compound(vec![("id", s("minecraft:writable_book")), ("count", Tag::Int(1))]);
        book.insert(
            "components",
            Tag::Compound(compound(vec![(
                "minecraft:writable_book_content",
                Tag::Compound(content),
            )])),
        );
        let java = compound(vec![
            ("id", s("minecraft:lectern")),
            ("Book", Tag::Compound(book)),
            ("Page", Tag::Int(2)),
        ]);
        let (b, j, _) = round(java, "minecraft:lectern[facing=north,has_book=true,powered=false]");
        assert_eq!(get(&b, &["book", "Name"]), Some(&s("minecraft:writable_book")));
        assert_eq!(b.get("page"), Some(&Tag::Int(2)));
        assert_eq!(b.get("totalPages"), Some(&Tag::Int(3)));
        assert_eq!(b.get("hasBook"), Some(&Tag::Byte(1)));
        assert_eq!(get(&j, &["Book", "id"]), Some(&s("minecraft:writable_book")));
        assert_eq!(j.get("Page"), Some(&Tag::Int(2)));

        let java = compound(vec![
            ("id", s("minecraft:jukebox")),
            ("RecordItem", item(None, "minecraft:music_disc_cat", 1)),
        ]);
        let (b, j, _) = round(java, "minecraft:jukebox[has_record=true]");
        assert_eq!(get(&b, &["RecordItem", "Name"]), Some(&s("minecraft:music_disc_cat")));
        assert_eq!(get(&j, &["RecordItem", "id"]), Some(&s("minecraft:music_disc_cat")));
    }

    #[test]
    fn a_campfire_keeps_each_item_in_its_place_with_its_cooking_time() {
        let java = compound(vec![
            ("id", s("minecraft:campfire")),
            (
                "Items",
                Tag::list(vec![
                    item(Some(0), "minecraft:beef", 1),
                    item(Some(2), "minecraft:porkchop", 1),
                ]),
            ),
            ("CookingTimes", Tag::IntArray(vec![10, 0, 30, 0])),
            ("CookingTotalTimes", Tag::IntArray(vec![600; 4])),
        ]);
        let (b, j, report) = round(java, "minecraft:campfire[facing=north,lit=true]");
        assert_eq!(get(&b, &["Item1", "Name"]), Some(&s("minecraft:beef")));
        assert_eq!(get(&b, &["Item3", "Name"]), Some(&s("minecraft:porkchop")));
        assert_eq!(b.get("Item2"), None);
        assert_eq!(b.get("ItemTime3"), Some(&Tag::Int(30)));
        assert_eq!(j.get("CookingTimes"), Some(&Tag::IntArray(vec![10, 0, 30, 0])));
        let slots: Vec<_> = j
            .get("Items")
            .and_then(Tag::as_list)
            .unwrap()
            .iter()
            .map(|i| byte(i.as_compound().unwrap(), "Slot").unwrap())
            .collect();
        assert_eq!(slots, [0, 2]);
        assert!(report.approximated.is_empty(), "{report:?}");
    }

    #[test]
    fn a_banner_keeps_its_colour_and_patterns_in_bedrocks_numbering() {
        let pattern =
            compound(vec![("color", s("blue")), ("pattern", s("minecraft:stripe_bottom"))]);
        let java = compound(vec![
            ("id", s("minecraft:banner")),
            ("patterns", Tag::list(vec![Tag::Compound(pattern.clone())])),
        ]);
        let (b, j, report) = round(java, "minecraft:red_banner[rotation=4]");
        // Bedrock numbers colours the other way round: red 1, blue 4.
        assert_eq!(b.get("Base"), Some(&Tag::Int(1)));
        let p = b.get("Patterns").and_then(Tag::as_list).unwrap()[0].as_compound().unwrap();
        assert_eq!((p.get("Pattern"), p.get("Color")), (Some(&s("bs")), Some(&Tag::Int(4))));
        assert_eq!(j.get("patterns"), Some(&Tag::list(vec![Tag::Compound(pattern)])));
        // The table's Java state for Bedrock's colourless banner is black: the base corrects it.
        assert_eq!(
            java_state(&b, "minecraft:black_banner[rotation=4]").as_deref(),
            Some("minecraft:red_banner[rotation=4]")
        );
        assert_eq!(
            java_state(&b, "minecraft:black_wall_banner[facing=east]").as_deref(),
            Some("minecraft:red_wall_banner[facing=east]")
        );
        assert!(report.approximated.is_empty(), "{report:?}");
    }

    #[test]
    fn a_head_keeps_its_kind_and_rotation() {
        let java = compound(vec![("id", s("minecraft:skull"))]);
        let (b, _, _) = round(java, "minecraft:zombie_head[powered=false,rotation=4]");
        assert_eq!(b.get("SkullType"), Some(&Tag::Byte(2)));
        assert_eq!(b.get("Rotation"), Some(&Tag::Float(90.0)));
        assert_eq!(
            java_state(&b, "minecraft:zombie_head[powered=false,rotation=15]").as_deref(),
            Some("minecraft:zombie_head[powered=false,rotation=4]")
        );
        // A wall head's facing is its block's.
        assert_eq!(java_state(&b, "minecraft:zombie_wall_head[facing=north,powered=false]"), None);
    }

    #[test]
    fn a_decorated_pot_keeps_its_sherds_and_item() {
        let sherds: Vec<Tag> = ["angler", "brick", "brick", "skull"]
            .iter()
            .map(|n| {
                s(&format!(
                    "minecraft:{}",
                    if *n == "brick" { "brick".into() } else { format!("{n}_pottery_sherd") }
                ))
            })
            .collect();
        let java = compound(vec![
            ("id", s("minecraft:decorated_pot")),
            ("sherds", Tag::list(sherds.clone())),
            ("item", item(None, "minecraft:diamond", 3)),
        ]);
        let (b, j, _) =
            round(java, "minecraft:decorated_pot[cracked=false,facing=north,waterlogged=false]");
        assert_eq!(b.get("sherds"), Some(&Tag::list(sherds.clone())));
        assert_eq!(get(&b, &["item", "Count"]), Some(&Tag::Byte(3)));
        assert_eq!(j.get("sherds"), Some(&Tag::list(sherds)));
        assert_eq!(get(&j, &["item", "id"]), Some(&s("minecraft:diamond")));
    }

    #[test]
    fn a_pot_keeps_its_plant_in_bedrocks_block_entity_and_back_in_javas_block() {
        let mut report = BlockEntityReport::default();
        let b = flower_pot_to_bedrock("minecraft:potted_poppy", (1, 2, 3), &mut report).unwrap();
        assert_eq!(b.get("id"), Some(&s("FlowerPot")));
        let plant = get(&b, &["PlantBlock", "name"]).and_then(Tag::as_str).unwrap();
        assert!(plant.contains("poppy") || plant.contains("red_flower"), "{plant}");
        // The table's Java state for Bedrock's pot is some potted plant: the entity says which.
        let table_guess = "minecraft:potted_closed_eyeblossom";
        assert_eq!(java_state(&b, table_guess).as_deref(), Some("minecraft:potted_poppy"));
        let empty = compound(vec![("id", s("FlowerPot"))]);
        assert_eq!(java_state(&empty, table_guess).as_deref(), Some("minecraft:flower_pot"));
        // A pot's entity on a cell that holds no pot changes nothing.
        assert_eq!(java_state(&b, "minecraft:stone"), None);
        let mut back = BlockEntityReport::default();
        assert!(to_java(&b, "minecraft:potted_poppy", &mut back).is_none(), "no Java entity");
        assert_eq!(back.converted.get("FlowerPot"), Some(&1));
        assert!(back.left.is_empty() && back.approximated.is_empty(), "{back:?}");
        assert!(flower_pot_to_bedrock("minecraft:stone", (0, 0, 0), &mut report).is_none());
    }

    #[test]
    fn a_bubble_column_keeps_its_water_in_bedrocks_second_layer() {
        for drag in ["true", "false"] {
            let t = table().java_to_bedrock(&format!("minecraft:bubble_column[drag={drag}]"));
            assert!(t.water, "drag={drag}");
        }
    }
}
