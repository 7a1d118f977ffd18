//! Block entities a Java world's import kept on their cells (`terrane::anvil::mapping`'s
//! block-entity component), as the served game uses them: a container's `Items` fill its
//! inventory the first time it opens (until the game keeps a record of its own), and the
//! data a client draws (sign text, banner patterns, heads' owners) goes out with the column.
//!
//! Items of worlds from before 1.20.5 (`Count` and `tag`) keep their data; those of later
//! worlds (`count` and `components`, a format Minecraft 1.20.1 does not read) are read in
//! 1.20.1's form (`terrane::anvil::item_data`): names, lore, enchantments, damage, books,
//! colours, potions and the items of shulker boxes keep their data; components with no
//! 1.20.1 form are left out (reported once per container).

use valence::nbt::{Compound, List, Value};
use valence::prelude::{ItemKind, ItemStack};

/// The block entity component's bytes (a named root compound) as Valence's compound.
pub(crate) fn parse(bytes: &[u8]) -> Option<Compound> {
    let mut b = bytes;
    Compound::from_binary(&mut b).ok().map(|(c, _)| c)
}

/// Whether a client draws something of the block entity of block `name` (without
/// namespace): signs, banners and heads. Others (a chest's items) stay on the server.
pub(crate) fn client_draws(name: &str) -> bool {
    name.ends_with("sign")
        || name.ends_with("banner")
        || name.ends_with("_head")
        || name.ends_with("_skull")
}

/// The block entity as a 1.20.1 client reads it: a sign from before 1.20 (`Text1`–`Text4`,
/// `Color`, `GlowingText`) gets the 1.20 layout (`front_text`, `back_text`).
pub(crate) fn for_client(mut be: Compound) -> Compound {
    if be.contains_key("front_text") || !be.contains_key("Text1") {
        return be;
    }
    let text = |c: &mut Compound, k: &str| match c.remove(k) {
        Some(Value::String(s)) => s,
        _ => r#"{"text":""}"#.to_string(),
    };
    let messages: Vec<String> =
        ["Text1", "Text2", "Text3", "Text4"].iter().map(|k| text(&mut be, k)).collect();
    let color = match be.remove("Color") {
        Some(Value::String(c)) => c,
        _ => "black".to_string(),
    };
    let glow = matches!(be.remove("GlowingText"), Some(Value::Byte(1)));
    let mut front = Compound::new();
    front.insert("messages", List::String(messages));
    front.insert("color", color);
    front.insert("has_glowing_text", Value::Byte(glow.into()));
    let mut back = Compound::new();
    back.insert("messages", List::String(vec![r#"{"text":""}"#.to_string(); 4]));
    back.insert("color", "black");
    back.insert("has_glowing_text", Value::Byte(0));
    be.insert("front_text", front);
    be.insert("back_text", back);
    be
}

/// `item` of a world of 1.20.5 or later (`count`, `components`) in 1.20.1's form (`Count`,
/// `tag`), and whether part of its data has no such form; an item of an older world as it is.
fn in_tag_form(item: &Compound) -> (Compound, bool) {
    if !item.contains_key("components") {
        return (item.clone(), false);
    }
    let mut bytes = Vec::new();
    let theirs = match item.to_binary(&mut bytes, "") {
        Ok(()) => terrane::nbt::Compound::from_bytes(&bytes).ok(),
        Err(_) => None,
    };
    let Some(theirs) = theirs else { return (item.clone(), true) };
    let t = terrane::anvil::item_data::item_to_tag_form(&theirs);
    let ours = terrane::anvil::nbt::write_root(&t.item).ok().and_then(|b| parse(&b));
    match ours {
        Some(c) => (c, !t.left.is_empty()),
        None => (item.clone(), true),
    }
}

/// A container's `Items` as stacks by slot, and how many stacks lost part of their data (a
/// component of 1.20.5 and later with no 1.20.1 form) or were left out (an item 1.20.1 does
/// not have, a slot past `slots`).
pub(crate) fn items(be: &Compound, slots: u16) -> (Vec<(u16, ItemStack)>, usize, usize) {
    let (mut out, mut data_lost, mut left_out) = (Vec::new(), 0, 0);
    let Some(Value::List(List::Compound(items))) = be.get("Items") else {
        return (out, 0, 0);
    };
    for it in items {
        let (it, lost) = in_tag_form(it);
        let it = &it;
        if lost {
            data_lost += 1;
        }
        let slot = match it.get("Slot") {
            Some(Value::Byte(s)) => u16::try_from(*s).ok(),
            _ => None,
        };
        let kind = match it.get("id") {
            Some(Value::String(id)) => id.strip_prefix("minecraft:").and_then(ItemKind::from_str),
            _ => None,
        };
        let count = match (it.get("Count"), it.get("count")) {
            (Some(Value::Byte(n)), _) => u8::try_from(*n).ok(),
            (_, Some(Value::Int(n))) => u8::try_from(*n).ok(),
            _ => None,
        };
        let (Some(slot), Some(kind), Some(count)) = (slot, kind, count) else {
            left_out += 1;
            continue;
        };
        if slot >= slots || count == 0 {
            left_out += 1;
            continue;
        }
        let tag = match it.get("tag") {
            Some(Value::Compound(t)) => Some(t.clone()),
            _ => None,
        };
        out.push((slot, ItemStack::new(kind, count.min(kind.max_stack()), tag)));
    }
    (out, data_lost, left_out)
}

#[cfg(test)]
mod tests {
    use valence::nbt::compound;

    use super::*;

    #[test]
    fn items_of_both_formats_fill_their_slots() {
        let old = compound! {
            "Items" => List::Compound(vec![
                compound! { "Slot" => Value::Byte(0), "id" => "minecraft:diamond", "Count" => Value::Byte(5) },
                compound! {
                    "Slot" => Value::Byte(3), "id" => "minecraft:diamond_sword", "Count" => Value::Byte(1),
                    "tag" => compound! { "Damage" => 4 },
                },
                compound! { "Slot" => Value::Byte(40), "id" => "minecraft:stone", "Count" => Value::Byte(1) },
                compound! { "Slot" => Value::Byte(4), "id" => "minecraft:no_such_item", "Count" => Value::Byte(1) },
            ]),
        };
        let (got, lost, out) = items(&old, 27);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], (0, ItemStack::new(ItemKind::Diamond, 5, None)));
        assert_eq!(got[1].1.nbt, Some(compound! { "Damage" => 4 }));
        assert_eq!((lost, out), (0, 2));
        let new = compound! {
            "Items" => List::Compound(vec![compound! {
                "Slot" => Value::Byte(1), "id" => "minecraft:iron_sword", "count" => Value::Int(1),
                "components" => compound! {
                    "minecraft:damage" => 3,
                    "minecraft:custom_name" => compound! { "text" => "Old Iron" },
                    "minecraft:trim" => compound! { "pattern" => "minecraft:coast" },
                },
            }]),
        };
        // Its damage and name in 1.20.1's form; the trim has none (counted).
        let (got, lost, _) = items(&new, 27);
        let tag = compound! {
            "Damage" => 3,
            "display" => compound! { "Name" => r#"{"text":"Old Iron"}"# },
        };
        assert_eq!(got, vec![(1, ItemStack::new(ItemKind::IronSword, 1, Some(tag)))]);
        assert_eq!(lost, 1);
    }

    #[test]
    fn clients_get_what_they_draw_and_not_what_a_container_holds() {
        for drawn in
            ["oak_sign", "oak_wall_hanging_sign", "white_banner", "player_head", "skeleton_skull"]
        {
            assert!(client_draws(drawn), "{drawn}");
        }
        for kept in ["chest", "barrel", "furnace", "shulker_box", "hopper"] {
            assert!(!client_draws(kept), "{kept}");
        }
    }

    #[test]
    fn an_old_sign_gets_the_new_layout() {
        let old = compound! {
            "id" => "minecraft:sign",
            "Text1" => r#"{"text":"hello"}"#, "Text2" => "", "Text3" => "", "Text4" => "",
            "Color" => "red", "GlowingText" => Value::Byte(1),
        };
        let new = for_client(old);
        let Some(Value::Compound(front)) = new.get("front_text") else { panic!("{new:?}") };
        let Some(Value::List(List::String(m))) = front.get("messages") else { panic!() };
        assert_eq!(m[0], r#"{"text":"hello"}"#);
        assert_eq!(front.get("color"), Some(&Value::String("red".into())));
        assert!(!new.contains_key("Text1"));
    }
}
