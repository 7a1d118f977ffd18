//! An item's data in both of Java's forms: the `tag` compound of releases before 1.20.5, and
//! the `components` of 1.20.5 and later (`DataVersion` 3837; text as NBT rather than JSON
//! from 1.21.5, 4325). A server of an older release reads a newer world's items through
//! [`item_to_tag_form`] (which tells the two text forms apart by their shape: NBT text that
//! is a string and not JSON is plain text); an export writes them back through
//! [`item_to_components_form`], in the text form of the world's `DataVersion`.
//!
//! Translated both ways: the name and lore (`custom_name`, `lore` ⇄ `display.Name`,
//! `display.Lore`), enchantments and stored enchantments, damage, repair cost, unbreakable,
//! dyed colour, potions, written and writable books, the items of a container item
//! (`container` ⇄ `BlockEntityTag.Items`, each translated in turn), and `custom_data` ⇄ the
//! `tag` keys no component owns (the rule of the game's own 1.20.5 upgrade).
//!
//! Not translated: every other component (attribute modifiers, banner patterns, trims,
//! fireworks, ...). They are returned beside the translation ([`Translated::left`]) so that a
//! caller can keep them on an item that did not change, and count them.

use terrane_nbt::{Compound, Tag};

/// The first `DataVersion` whose items carry `count` and `components` (1.20.5).
pub const COMPONENTS_DATA_VERSION: i32 = 3837;

/// The first `DataVersion` whose item text (names, lore, book pages) is NBT, not JSON (1.21.5).
pub const NBT_TEXT_DATA_VERSION: i32 = 4325;

/// An item (or its data) in the other form, and what did not translate.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Translated {
    /// The item in the form asked for.
    pub item: Compound,
    /// The components (or `tag` keys) with no translation, by name, from this item and the
    /// items it contains.
    pub left: Compound,
}

/// Whether items of `DataVersion` `v` carry `count` and `components`.
pub fn has_components(v: i32) -> bool {
    v >= COMPONENTS_DATA_VERSION
}

/// `item` (`id`, `count`, `components`, and `Slot` when it has one) in the form of 1.20.4 and
/// before (`id`, `Count`, `tag`); an item already in that form is returned as it is.
pub fn item_to_tag_form(item: &Compound) -> Translated {
    let mut out = Translated::default();
    if !item.contains_key("components") && !item.contains_key("count") {
        out.item = item.clone();
        return out;
    }
    for (k, v) in item.iter() {
        match k {
            "count" => {
                let n = v.as_int().unwrap_or(1).clamp(i32::from(i8::MIN), i32::from(i8::MAX));
                out.item.insert("Count", Tag::Byte(n as i8));
            }
            "components" => {
                if let Some(c) = v.as_compound() {
                    let tag = tag_of_components(c, &mut out.left);
                    if !tag.is_empty() {
                        out.item.insert("tag", Tag::Compound(tag));
                    }
                }
            }
            _ => {
                out.item.insert(k, v.clone());
            }
        }
    }
    if !out.item.contains_key("Count") {
        out.item.insert("Count", Tag::Byte(1));
    }
    out
}

/// `item` (`id`, `Count`, `tag`, and `Slot` when it has one) in the form of `data_version`
/// (1.20.5 or later: `id`, `count`, `components`); an item already in that form is returned
/// as it is.
pub fn item_to_components_form(item: &Compound, data_version: i32) -> Translated {
    let mut out = Translated::default();
    if item.contains_key("components") || item.contains_key("count") {
        out.item = item.clone();
        return out;
    }
    for (k, v) in item.iter() {
        match k {
            "Count" => {
                out.item.insert("count", Tag::Int(v.as_int().unwrap_or(1)));
            }
            "tag" => {
                if let Some(t) = v.as_compound() {
                    let c = components_of_tag(t, data_version, &mut out.left);
                    if !c.is_empty() {
                        out.item.insert("components", Tag::Compound(c));
                    }
                }
            }
            _ => {
                out.item.insert(k, v.clone());
            }
        }
    }
    if !out.item.contains_key("count") {
        out.item.insert("count", Tag::Int(1));
    }
    out
}

/// The `tag` of `components`; what has no translation goes to `left`.
fn tag_of_components(components: &Compound, left: &mut Compound) -> Compound {
    let mut tag = Compound::new();
    let mut display = Compound::new();
    for (name, value) in components.iter() {
        let short = name.strip_prefix("minecraft:").unwrap_or(name);
        let done = match short {
            "custom_name" => text_to_json(value).map(|t| display.insert("Name", t)).is_some(),
            "lore" => value
                .as_list()
                .map(|l| {
                    let lines: Vec<Tag> = l.iter().filter_map(text_to_json).collect();
                    display.insert("Lore", Tag::list(lines));
                })
                .is_some(),
            "enchantments" | "stored_enchantments" => enchantments_to_list(value)
                .map(|l| {
                    let key =
                        if short == "enchantments" { "Enchantments" } else { "StoredEnchantments" };
                    tag.insert(key, l);
                })
                .is_some(),
            "damage" => value.as_int().map(|d| tag.insert("Damage", Tag::Int(d))).is_some(),
            "repair_cost" => {
                value.as_int().map(|d| tag.insert("RepairCost", Tag::Int(d))).is_some()
            }
            "unbreakable" => {
                tag.insert("Unbreakable", Tag::Byte(1));
                true
            }
            "dyed_color" => {
                let rgb = value.as_int().or_else(|| value.as_compound()?.get("rgb")?.as_int());
                rgb.map(|c| display.insert("color", Tag::Int(c))).is_some()
            }
            "potion_contents" => {
                let potion = match value {
                    Tag::String(s) => Some(s.clone()),
                    Tag::Compound(c) => c.get("potion").and_then(Tag::as_str).map(str::to_string),
                    _ => None,
                };
                potion.map(|p| tag.insert("Potion", Tag::String(p))).is_some()
            }
            "writable_book_content" => value
                .as_compound()
                .map(|c| {
                    let pages = pages(c).filter_map(|p| p.as_str().map(|s| Tag::String(s.into())));
                    tag.insert("pages", Tag::list(pages.collect()));
                })
                .is_some(),
            "written_book_content" => match value.as_compound() {
                Some(c) => {
                    written_book_to_tag(c, &mut tag);
                    true
                }
                None => false,
            },
            "container" => match value.as_list() {
                Some(slots) => {
                    let mut items = Vec::new();
                    for s in slots {
                        let Some(s) = s.as_compound() else { continue };
                        let (Some(slot), Some(Tag::Compound(it))) =
                            (s.get("slot").and_then(Tag::as_int), s.get("item"))
                        else {
                            continue;
                        };
                        let t = item_to_tag_form(it);
                        merge_left(left, t.left);
                        let mut it = t.item;
                        it.insert("Slot", Tag::Byte(slot as i8));
                        items.push(it);
                    }
                    let mut be = match tag.remove("BlockEntityTag") {
                        Some(Tag::Compound(be)) => be,
                        _ => Compound::new(),
                    };
                    be.insert("Items", Tag::compound_list(items));
                    tag.insert("BlockEntityTag", Tag::Compound(be));
                    true
                }
                None => false,
            },
            "custom_data" => match value.as_compound() {
                Some(c) => {
                    for (k, t) in c.iter() {
                        if !tag.contains_key(k) {
                            tag.insert(k, t.clone());
                        }
                    }
                    true
                }
                None => false,
            },
            _ => false,
        };
        if !done {
            left.insert(name, value.clone());
        }
    }
    if !display.is_empty() {
        tag.insert("display", Tag::Compound(display));
    }
    tag
}

/// The `components` of `tag` in the form of `DataVersion` `v`; what has no translation goes
/// to `left`.
fn components_of_tag(tag: &Compound, v: i32, left: &mut Compound) -> Compound {
    let mut c = Compound::new();
    let mut custom = Compound::new();
    for (key, value) in tag.iter() {
        match key {
            "display" => {
                let Some(d) = value.as_compound() else {
                    custom.insert(key, value.clone());
                    continue;
                };
                for (k, t) in d.iter() {
                    match k {
                        "Name" => {
                            if let Some(n) = json_to_text(t, v) {
                                c.insert("minecraft:custom_name", n);
                            }
                        }
                        "Lore" => {
                            let lines = t.as_list().unwrap_or_default();
                            let lines = lines.iter().filter_map(|l| json_to_text(l, v)).collect();
                            c.insert("minecraft:lore", one_type(lines));
                        }
                        "color" => {
                            if let Some(rgb) = t.as_int() {
                                let dyed = if v >= NBT_TEXT_DATA_VERSION {
                                    Tag::Int(rgb)
                                } else {
                                    Tag::Compound(compound([("rgb", Tag::Int(rgb))]))
                                };
                                c.insert("minecraft:dyed_color", dyed);
                            }
                        }
                        _ => {
                            left.insert(format!("display.{k}"), t.clone());
                        }
                    }
                }
            }
            "Enchantments" | "StoredEnchantments" => {
                let name = match key {
                    "Enchantments" => "minecraft:enchantments",
                    _ => "minecraft:stored_enchantments",
                };
                let mut levels = Compound::new();
                for e in value.as_list().unwrap_or_default() {
                    let Some(e) = e.as_compound() else { continue };
                    if let (Some(id), Some(lvl)) =
                        (e.get("id").and_then(Tag::as_str), e.get("lvl").and_then(Tag::as_int))
                    {
                        levels.insert(id, Tag::Int(lvl));
                    }
                }
                let value = if v >= NBT_TEXT_DATA_VERSION {
                    Tag::Compound(levels)
                } else {
                    Tag::Compound(compound([("levels", Tag::Compound(levels))]))
                };
                c.insert(name, value);
            }
            "Damage" => {
                c.insert("minecraft:damage", Tag::Int(value.as_int().unwrap_or(0)));
            }
            "RepairCost" => {
                c.insert("minecraft:repair_cost", Tag::Int(value.as_int().unwrap_or(0)));
            }
            "Unbreakable" => {
                if value.as_int().unwrap_or(0) != 0 {
                    c.insert("minecraft:unbreakable", Tag::Compound(Compound::new()));
                }
            }
            "Potion" => {
                let p = value.as_str().unwrap_or_default().to_string();
                c.insert(
                    "minecraft:potion_contents",
                    Tag::Compound(compound([("potion", Tag::String(p))])),
                );
            }
            "pages" | "title" | "author" | "generation" | "resolved" => {}
            "BlockEntityTag" => {
                let Some(be) = value.as_compound() else {
                    custom.insert(key, value.clone());
                    continue;
                };
                let mut slots = Vec::new();
                for it in be.get("Items").and_then(Tag::as_list).unwrap_or_default() {
                    let Some(it) = it.as_compound() else { continue };
                    let slot = it.get("Slot").and_then(Tag::as_int).unwrap_or(0);
                    let mut item = it.clone();
                    item.remove("Slot");
                    let t = item_to_components_form(&item, v);
                    merge_left(left, t.left);
                    slots.push(compound([
                        ("slot", Tag::Int(slot)),
                        ("item", Tag::Compound(t.item)),
                    ]));
                }
                c.insert("minecraft:container", Tag::compound_list(slots));
                for (k, t) in be.iter().filter(|(k, _)| *k != "Items") {
                    left.insert(format!("BlockEntityTag.{k}"), t.clone());
                }
            }
            _ => {
                custom.insert(key, value.clone());
            }
        }
    }
    if tag.contains_key("pages") {
        let pages = tag.get("pages").and_then(Tag::as_list).unwrap_or_default();
        if tag.contains_key("title") {
            let mut book = Compound::new();
            let text = |s: &str| Tag::String(s.to_string());
            let title = tag.get("title").and_then(Tag::as_str).unwrap_or_default();
            book.insert("title", Tag::Compound(compound([("raw", text(title))])));
            let author = tag.get("author").and_then(Tag::as_str).unwrap_or_default();
            book.insert("author", text(author));
            let generation = tag.get("generation").and_then(Tag::as_int).unwrap_or(0);
            book.insert("generation", Tag::Int(generation));
            let raw: Vec<Tag> = pages
                .iter()
                .filter_map(|p| json_to_text(p, v))
                .map(|p| Tag::Compound(compound([("raw", p)])))
                .collect();
            book.insert("pages", Tag::list(raw));
            let resolved = tag.get("resolved").and_then(Tag::as_int).unwrap_or(0);
            book.insert("resolved", Tag::Byte(resolved as i8));
            c.insert("minecraft:written_book_content", Tag::Compound(book));
        } else {
            let raw: Vec<Tag> = pages
                .iter()
                .filter_map(|p| p.as_str())
                .map(|p| Tag::Compound(compound([("raw", Tag::String(p.into()))])))
                .collect();
            let book = compound([("pages", Tag::list(raw))]);
            c.insert("minecraft:writable_book_content", Tag::Compound(book));
        }
    }
    if !custom.is_empty() {
        c.insert("minecraft:custom_data", Tag::Compound(custom));
    }
    c
}

/// A compound of `pairs`.
fn compound<const N: usize>(pairs: [(&str, Tag); N]) -> Compound {
    let mut c = Compound::new();
    for (k, v) in pairs {
        c.insert(k, v);
    }
    c
}

/// Adds `more` to `left`.
fn merge_left(left: &mut Compound, more: Compound) {
    for (k, v) in more.iter() {
        left.insert(k, v.clone());
    }
}

/// The pages of a book component (each `{raw, filtered}` or the text itself), raw.
fn pages(book: &Compound) -> impl Iterator<Item = &Tag> {
    book.get("pages").and_then(Tag::as_list).unwrap_or_default().iter().map(|p| match p {
        Tag::Compound(c) => c.get("raw").unwrap_or(p),
        _ => p,
    })
}

/// A written book's component as `tag`'s `title`, `author`, `generation`, `pages` (JSON) and
/// `resolved`.
fn written_book_to_tag(book: &Compound, tag: &mut Compound) {
    let title = match book.get("title") {
        Some(Tag::Compound(t)) => t.get("raw").and_then(Tag::as_str),
        Some(t) => t.as_str(),
        None => None,
    };
    tag.insert("title", Tag::String(title.unwrap_or_default().to_string()));
    if let Some(a) = book.get("author").and_then(Tag::as_str) {
        tag.insert("author", Tag::String(a.to_string()));
    }
    tag.insert("generation", Tag::Int(book.get("generation").and_then(Tag::as_int).unwrap_or(0)));
    let pages: Vec<Tag> = pages(book).filter_map(text_to_json).collect();
    tag.insert("pages", Tag::list(pages));
    if let Some(r) = book.get("resolved").and_then(Tag::as_int) {
        tag.insert("resolved", Tag::Byte(r as i8));
    }
}

/// An enchantments component (`{levels: {id: level}}` before 1.21.5, `{id: level}` from it)
/// as the `tag` form's list of `{id, lvl}`.
fn enchantments_to_list(value: &Tag) -> Option<Tag> {
    let c = value.as_compound()?;
    let levels = match c.get("levels") {
        Some(Tag::Compound(l)) => l,
        _ => c,
    };
    let list = levels
        .iter()
        .filter_map(|(id, lvl)| {
            let lvl = i16::try_from(lvl.as_int()?).ok()?;
            Some(compound([("id", Tag::String(id.to_string())), ("lvl", Tag::Short(lvl))]))
        })
        .collect::<Vec<_>>();
    Some(Tag::compound_list(list))
}

/// A text component of either form as JSON text in an NBT string (the `tag` form's): a
/// string that reads as JSON is JSON text already (before 1.21.5); another string is plain
/// text, and a compound or list NBT text (from 1.21.5).
fn text_to_json(t: &Tag) -> Option<Tag> {
    if let Tag::String(s) = t
        && serde_json::from_str::<serde_json::Value>(s).is_ok()
    {
        return Some(t.clone());
    }
    let mut out = String::new();
    write_json(t, &mut out)?;
    Some(Tag::String(out))
}

/// JSON text (an NBT string of the `tag` form) as a text component of `DataVersion` `v`.
fn json_to_text(t: &Tag, v: i32) -> Option<Tag> {
    let s = t.as_str()?;
    if v < NBT_TEXT_DATA_VERSION {
        return Some(Tag::String(s.to_string()));
    }
    Some(match serde_json::from_str::<serde_json::Value>(s) {
        Ok(j) => json_to_nbt(&j),
        // Not JSON: the game read such a name as plain text.
        Err(_) => Tag::String(s.to_string()),
    })
}

/// NBT text as JSON: compounds as objects, lists as arrays, strings as strings, bytes as
/// booleans (`bold`, `italic`, ...), other numbers as numbers. `None` for what JSON cannot
/// hold.
fn write_json(t: &Tag, out: &mut String) -> Option<()> {
    match t {
        Tag::String(s) => out.push_str(&serde_json::to_string(s).ok()?),
        Tag::Byte(b) => out.push_str(if *b != 0 { "true" } else { "false" }),
        Tag::Short(n) => out.push_str(&n.to_string()),
        Tag::Int(n) => out.push_str(&n.to_string()),
        Tag::Long(n) => out.push_str(&n.to_string()),
        Tag::Float(f) if f.is_finite() => out.push_str(&f.to_string()),
        Tag::Double(f) if f.is_finite() => out.push_str(&f.to_string()),
        Tag::List(_, items) => {
            out.push('[');
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(it, out)?;
            }
            out.push(']');
        }
        Tag::Compound(c) => {
            out.push('{');
            for (i, (k, v)) in c.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).ok()?);
                out.push(':');
                write_json(v, out)?;
            }
            out.push('}');
        }
        _ => return None,
    }
    Some(())
}

/// Text components as one NBT list: of one type as they are, else each that is not a
/// compound as `{text: ...}` (an NBT list holds one type).
fn one_type(items: Vec<Tag>) -> Tag {
    if items.windows(2).all(|w| w[0].type_id() == w[1].type_id()) {
        return Tag::list(items);
    }
    let wrapped = items.into_iter().map(|t| match t {
        Tag::Compound(c) => Tag::Compound(c),
        other => Tag::Compound(compound([("text", other)])),
    });
    Tag::list(wrapped.collect())
}

/// JSON text as NBT text: objects as compounds, arrays as lists (a mixed array's strings as
/// `{text}` compounds, as one type per list requires), booleans as bytes.
fn json_to_nbt(j: &serde_json::Value) -> Tag {
    use serde_json::Value as J;
    match j {
        J::String(s) => Tag::String(s.clone()),
        J::Bool(b) => Tag::Byte(i8::from(*b)),
        J::Number(n) => match n.as_i64().and_then(|n| i32::try_from(n).ok()) {
            Some(n) => Tag::Int(n),
            None => Tag::Double(n.as_f64().unwrap_or(0.0)),
        },
        J::Null => Tag::String(String::new()),
        J::Array(a) => one_type(a.iter().map(json_to_nbt).collect()),
        J::Object(o) => {
            let mut c = Compound::new();
            for (k, v) in o {
                c.insert(k.as_str(), json_to_nbt(v));
            }
            Tag::Compound(c)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1_21_1: i32 = 3955;
    const V1_21_5: i32 = 4325;

    fn s(v: &str) -> Tag {
        Tag::String(v.to_string())
    }

    /// A named, enchanted, worn sword as a 1.20.4 item in slot 3.
    fn old_sword() -> Compound {
        let display = compound([
            ("Name", s(r#"{"text":"Excalibur"}"#)),
            ("Lore", Tag::list(vec![s(r#"{"text":"old"}"#)])),
        ]);
        let tag = compound([
            ("display", Tag::Compound(display)),
            (
                "Enchantments",
                Tag::compound_list([compound([
                    ("id", s("minecraft:sharpness")),
                    ("lvl", Tag::Short(5)),
                ])]),
            ),
            ("Damage", Tag::Int(12)),
            ("RepairCost", Tag::Int(3)),
            ("Unbreakable", Tag::Byte(1)),
            ("CustomModelData", Tag::Int(7)),
        ]);
        compound([
            ("Slot", Tag::Byte(3)),
            ("id", s("minecraft:diamond_sword")),
            ("Count", Tag::Byte(1)),
            ("tag", Tag::Compound(tag)),
        ])
    }

    #[test]
    fn a_sword_goes_to_components_and_back_unchanged_in_both_text_forms() {
        for v in [V1_21_1, V1_21_5] {
            let new = item_to_components_form(&old_sword(), v);
            assert!(new.left.is_empty(), "{v}: {:?}", new.left);
            let c = new.item.get("components").and_then(Tag::as_compound).unwrap();
            assert_eq!(c.get("minecraft:damage"), Some(&Tag::Int(12)));
            assert_eq!(new.item.get("count"), Some(&Tag::Int(1)));
            // Unknown keys go to custom_data, as the game's own upgrade puts them.
            let custom = c.get("minecraft:custom_data").and_then(Tag::as_compound).unwrap();
            assert_eq!(custom.get("CustomModelData"), Some(&Tag::Int(7)));
            let name = c.get("minecraft:custom_name").unwrap();
            if v >= NBT_TEXT_DATA_VERSION {
                assert_eq!(name, &Tag::Compound(compound([("text", s("Excalibur"))])));
                let e = c.get("minecraft:enchantments").and_then(Tag::as_compound).unwrap();
                assert_eq!(e.get("minecraft:sharpness"), Some(&Tag::Int(5)));
            } else {
                assert_eq!(name, &s(r#"{"text":"Excalibur"}"#));
                let e = c.get("minecraft:enchantments").and_then(Tag::as_compound).unwrap();
                assert!(e.get("levels").is_some());
            }
            let back = item_to_tag_form(&new.item);
            assert!(back.left.is_empty(), "{v}: {:?}", back.left);
            assert_eq!(back.item, old_sword(), "{v}");
        }
    }

    #[test]
    fn a_shulker_box_keeps_its_items_and_a_book_its_pages() {
        let book_tag = compound([
            ("title", s("Notes")),
            ("author", s("Alex")),
            ("generation", Tag::Int(0)),
            ("pages", Tag::list(vec![s(r#"{"text":"page one"}"#)])),
            ("resolved", Tag::Byte(1)),
        ]);
        let book = compound([
            ("Slot", Tag::Byte(0)),
            ("id", s("minecraft:written_book")),
            ("Count", Tag::Byte(1)),
            ("tag", Tag::Compound(book_tag)),
        ]);
        let gold = compound([
            ("Slot", Tag::Byte(5)),
            ("id", s("minecraft:gold_ingot")),
            ("Count", Tag::Byte(9)),
        ]);
        let be = compound([("Items", Tag::compound_list([book, gold, old_sword()]))]);
        let shulker = compound([
            ("id", s("minecraft:shulker_box")),
            ("Count", Tag::Byte(1)),
            ("tag", Tag::Compound(compound([("BlockEntityTag", Tag::Compound(be))]))),
        ]);
        for v in [V1_21_1, V1_21_5] {
            let new = item_to_components_form(&shulker, v);
            assert!(new.left.is_empty(), "{v}: {:?}", new.left);
            let c = new.item.get("components").and_then(Tag::as_compound).unwrap();
            let slots = c.get("minecraft:container").and_then(Tag::as_list).unwrap();
            assert_eq!(slots.len(), 3);
            let back = item_to_tag_form(&new.item);
            assert_eq!(back.item, shulker, "{v}");
        }
        // A writable book's pages are plain text.
        let writable = compound([
            ("id", s("minecraft:writable_book")),
            ("Count", Tag::Byte(1)),
            ("tag", Tag::Compound(compound([("pages", Tag::list(vec![s("draft")]))]))),
        ]);
        let new = item_to_components_form(&writable, V1_21_1);
        let back = item_to_tag_form(&new.item);
        assert_eq!(back.item, writable);
    }

    #[test]
    fn components_without_a_translation_are_left_out_and_named() {
        let item = compound([
            ("id", s("minecraft:diamond_helmet")),
            ("count", Tag::Int(1)),
            (
                "components",
                Tag::Compound(compound([
                    ("minecraft:damage", Tag::Int(2)),
                    (
                        "minecraft:trim",
                        Tag::Compound(compound([("pattern", s("minecraft:coast"))])),
                    ),
                ])),
            ),
        ]);
        let t = item_to_tag_form(&item);
        assert_eq!(t.item.get("Count"), Some(&Tag::Byte(1)));
        assert!(t.left.contains_key("minecraft:trim"));
        let tag = t.item.get("tag").and_then(Tag::as_compound).unwrap();
        assert_eq!(tag.get("Damage"), Some(&Tag::Int(2)));
        // An item in the other form already is returned as it is.
        assert_eq!(item_to_components_form(&item, V1_21_1).item, item);
        assert_eq!(item_to_tag_form(&old_sword()).item, old_sword());
    }

    #[test]
    fn nbt_text_and_json_text_translate_both_ways() {
        let json = r#"{"text":"A","bold":true,"extra":["b",{"text":"c"}]}"#;
        let nbt = json_to_text(&s(json), V1_21_5).unwrap();
        let Tag::Compound(c) = &nbt else { panic!("{nbt:?}") };
        assert_eq!(c.get("bold"), Some(&Tag::Byte(1)));
        let extra = c.get("extra").and_then(Tag::as_list).unwrap();
        assert!(extra.iter().all(|t| t.as_compound().is_some()), "one type per list");
        let back = text_to_json(&nbt).unwrap();
        let parsed =
            |t: &Tag| serde_json::from_str::<serde_json::Value>(t.as_str().unwrap()).unwrap();
        let want = s(r#"{"text":"A","bold":true,"extra":[{"text":"b"},{"text":"c"}]}"#);
        assert_eq!(parsed(&back), parsed(&want));
        // A 1.21.5 name that is a plain string is plain text.
        assert_eq!(text_to_json(&s("Bob \"the\" sword")), Some(s(r#""Bob \"the\" sword""#)));
        // JSON text (before 1.21.5) is kept as it is.
        assert_eq!(text_to_json(&s(r#"{"text":"x"}"#)), Some(s(r#"{"text":"x"}"#)));
    }

    /// Any value under any key of either form: translating never panics, and an item of
    /// well-formed `tag` data comes back from components as it went.
    mod props {
        use super::*;
        use proptest::prelude::*;

        fn value() -> impl Strategy<Value = Tag> {
            let leaf = prop_oneof![
                any::<i8>().prop_map(Tag::Byte),
                any::<i32>().prop_map(Tag::Int),
                "[a-z{}\":,]{0,12}".prop_map(Tag::String),
            ];
            leaf.prop_recursive(3, 16, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4).prop_map(Tag::list),
                    prop::collection::vec(("[a-z_:]{1,8}", inner), 0..4).prop_map(|kv| {
                        let mut c = Compound::new();
                        for (k, v) in kv {
                            c.insert(k, v);
                        }
                        Tag::Compound(c)
                    }),
                ]
            })
        }

        const KEYS: [&str; 14] = [
            "minecraft:custom_name",
            "minecraft:lore",
            "minecraft:enchantments",
            "minecraft:damage",
            "minecraft:dyed_color",
            "minecraft:container",
            "minecraft:written_book_content",
            "minecraft:potion_contents",
            "display",
            "Enchantments",
            "BlockEntityTag",
            "pages",
            "title",
            "Damage",
        ];

        proptest! {
            #[test]
            fn any_data_translates_without_panicking(
                data in prop::collection::vec((0..KEYS.len(), value()), 0..6),
                v in prop_oneof![Just(3955), Just(4325)],
            ) {
                let mut c = Compound::new();
                for (k, t) in data {
                    c.insert(KEYS[k], t);
                }
                let new = compound([
                    ("id", Tag::String("minecraft:stone".into())),
                    ("count", Tag::Int(1)),
                    ("components", Tag::Compound(c.clone())),
                ]);
                let old = item_to_tag_form(&new);
                let _ = item_to_components_form(&old.item, v);
                let old = compound([
                    ("id", Tag::String("minecraft:stone".into())),
                    ("Count", Tag::Byte(1)),
                    ("tag", Tag::Compound(c)),
                ]);
                let _ = item_to_tag_form(&item_to_components_form(&old, v).item);
            }

            #[test]
            fn well_formed_data_comes_back(
                name in "[a-zA-Z ]{1,12}",
                damage in 0..2000i32,
                levels in prop::collection::btree_map("[a-z]{1,8}", 1..6i16, 0..3),
                custom in prop::option::of(any::<i32>()),
                v in prop_oneof![Just(3955), Just(4325)],
            ) {
                let json = |s: &str| Tag::String(format!("{{\"text\":\"{s}\"}}"));
                let mut tag = compound([
                    ("display", Tag::Compound(compound([("Name", json(&name))]))),
                    ("Damage", Tag::Int(damage)),
                ]);
                let list: Vec<Compound> = levels
                    .iter()
                    .map(|(id, l)| compound([("id", Tag::String(format!("minecraft:{id}"))), ("lvl", Tag::Short(*l))]))
                    .collect();
                if !list.is_empty() {
                    tag.insert("Enchantments", Tag::compound_list(list));
                }
                if let Some(n) = custom {
                    tag.insert("CustomModelData", Tag::Int(n));
                }
                let item = compound([
                    ("id", Tag::String("minecraft:bow".into())),
                    ("Count", Tag::Byte(1)),
                    ("tag", Tag::Compound(tag)),
                ]);
                let there = item_to_components_form(&item, v);
                prop_assert!(there.left.is_empty());
                let back = item_to_tag_form(&there.item);
                prop_assert!(back.left.is_empty());
                prop_assert_eq!(back.item, item);
            }
        }
    }
}
