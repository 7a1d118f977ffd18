//! Bedrock block states as terrane registry names (`docs/format/bedrock.md`, "Block names").
//!
//! A palette entry `{name, states, version}` becomes `name[key=value,...]`: keys sorted,
//! values typed as in SNBT (`1b` byte, `1s` short, `1` int, `1L` long, `"text"` string, `"`
//! and `\` escaped), brackets left out when there are no states, and `@version` appended when
//! the entry's version is not the world's block version. Entries that do not fit this shape
//! (other keys, other value types) keep their whole NBT: `bedrock-nbt:` and its bytes in hex.

use terrane_nbt::{Compound, Reader, Tag, Writer};

use crate::error::{Error, Result};

/// Prefix of the names of palette entries kept as raw NBT.
const RAW: &str = "bedrock-nbt:";

/// The terrane name of a palette entry, given the world's block version.
pub fn state_name(c: &Compound, world_version: i32) -> String {
    match plain_name(c, world_version) {
        Some(s) => s,
        None => {
            let mut w = Writer::sorted().little_endian();
            // A compound read from NBT always writes back.
            let _ = w.named("", &Tag::Compound(c.clone()));
            let mut s = String::from(RAW);
            for b in w.out {
                s.push_str(&format!("{b:02x}"));
            }
            s
        }
    }
}

fn plain_name(c: &Compound, world_version: i32) -> Option<String> {
    let Some(Tag::String(name)) = c.get("name") else { return None };
    if name.is_empty() || name.contains(['[', '@', ']']) || name.starts_with(RAW) {
        return None;
    }
    let states = match c.get("states") {
        Some(Tag::Compound(s)) => Some(s),
        None => None,
        Some(_) => return None,
    };
    let version = match c.get("version") {
        Some(Tag::Int(v)) => Some(*v),
        None => None,
        Some(_) => return None,
    };
    let known = 1 + usize::from(states.is_some()) + usize::from(version.is_some());
    if c.len() != known || states.is_none() || version.is_none() {
        // Entries without states or version are rare enough to keep whole.
        return None;
    }
    let mut s = name.clone();
    let states = states?;
    if !states.is_empty() {
        let mut kv: Vec<(&str, &Tag)> = states.iter().collect();
        kv.sort_unstable_by_key(|e| e.0);
        s.push('[');
        for (i, (k, v)) in kv.into_iter().enumerate() {
            if k.is_empty() || k.contains(['=', ',', '[', ']', '"']) {
                return None;
            }
            if i > 0 {
                s.push(',');
            }
            s.push_str(k);
            s.push('=');
            match v {
                Tag::Byte(x) => s.push_str(&format!("{x}b")),
                Tag::Short(x) => s.push_str(&format!("{x}s")),
                Tag::Int(x) => s.push_str(&format!("{x}")),
                Tag::Long(x) => s.push_str(&format!("{x}L")),
                Tag::String(t) => {
                    s.push('"');
                    for ch in t.chars() {
                        if ch == '"' || ch == '\\' {
                            s.push('\\');
                        }
                        s.push(ch);
                    }
                    s.push('"');
                }
                _ => return None,
            }
        }
        s.push(']');
    }
    if version? != world_version {
        s.push_str(&format!("@{}", version?));
    }
    Some(s)
}

/// The palette entry of a terrane name (the inverse of [`state_name`]). Names written by
/// other importers parse too: unquoted values are strings, and a name without `@` gets the
/// world's block version.
pub fn parse_state_name(s: &str, world_version: i32) -> Result<Compound> {
    let bad = || Error::BlockName(s.to_string());
    if let Some(hex) = s.strip_prefix(RAW) {
        if hex.len() % 2 != 0 || !hex.is_ascii() {
            return Err(bad());
        }
        let bytes: Option<Vec<u8>> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok())
            .collect();
        let bytes = bytes.ok_or_else(bad)?;
        return Reader::little_endian(&bytes).root_compound().map_err(|_| bad());
    }
    let (body, version) = match s.rsplit_once('@') {
        Some((b, v)) if !v.contains(['"', ']']) => (b, v.parse::<i32>().map_err(|_| bad())?),
        _ => (s, world_version),
    };
    let (name, states_src) = match body.find('[') {
        Some(i) => {
            let inner = body[i + 1..].strip_suffix(']').ok_or_else(bad)?;
            (&body[..i], Some(inner))
        }
        None => (body, None),
    };
    if name.is_empty() {
        return Err(bad());
    }
    let mut states = Compound::new();
    if let Some(src) = states_src {
        let mut rest = src;
        while !rest.is_empty() {
            let eq = rest.find('=').ok_or_else(bad)?;
            let key = &rest[..eq];
            rest = &rest[eq + 1..];
            let (value, after) = if let Some(q) = rest.strip_prefix('"') {
                let mut text = String::new();
                let mut chars = q.char_indices();
                let mut end = None;
                while let Some((i, ch)) = chars.next() {
                    match ch {
                        '\\' => text.push(chars.next().ok_or_else(bad)?.1),
                        '"' => {
                            end = Some(i + 1);
                            break;
                        }
                        c => text.push(c),
                    }
                }
                (Tag::String(text), &q[end.ok_or_else(bad)?..])
            } else {
                let end = rest.find(',').unwrap_or(rest.len());
                (typed(&rest[..end]), &rest[end..])
            };
            if key.is_empty() {
                return Err(bad());
            }
            states.insert(key, value);
            rest = match after.strip_prefix(',') {
                Some(r) if !r.is_empty() => r,
                None if after.is_empty() => after,
                _ => return Err(bad()),
            };
        }
    }
    let mut c = Compound::new();
    c.insert("name", Tag::String(name.to_string()));
    c.insert("states", Tag::Compound(states));
    c.insert("version", Tag::Int(version));
    Ok(c)
}

/// An unquoted value: a typed number, or else a string (a Java-style `facing=east`).
fn typed(v: &str) -> Tag {
    let num = |t: &str| t.parse::<i64>().ok();
    if let Some(x) = v.strip_suffix('b').and_then(|t| t.parse::<i8>().ok()) {
        return Tag::Byte(x);
    }
    if let Some(x) = v.strip_suffix('s').and_then(|t| t.parse::<i16>().ok()) {
        return Tag::Short(x);
    }
    if let Some(x) = v.strip_suffix('L').and_then(num) {
        return Tag::Long(x);
    }
    match v.parse::<i32>() {
        Ok(x) => Tag::Int(x),
        Err(_) => Tag::String(v.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry(name: &str, states: Vec<(&str, Tag)>, version: i32) -> Compound {
        let mut c = Compound::new();
        c.insert("name", Tag::String(name.into()));
        c.insert(
            "states",
            Tag::Compound(states.into_iter().map(|(k, v)| (k.to_string(), v)).collect()),
        );
        c.insert("version", Tag::Int(version));
        c
    }

    #[test]
    fn names_are_pinned() {
        let e = entry(
            "minecraft:stone_slab",
            vec![
                ("minecraft:vertical_half", Tag::String("top".into())),
                ("age", Tag::Int(3)),
                ("open_bit", Tag::Byte(1)),
            ],
            18_100_737,
        );
        let n = state_name(&e, 18_100_737);
        assert_eq!(n, r#"minecraft:stone_slab[age=3,minecraft:vertical_half="top",open_bit=1b]"#);
        assert_eq!(parse_state_name(&n, 18_100_737).unwrap(), e);
        assert_eq!(state_name(&e, 1), format!("{n}@18100737"));
        assert_eq!(parse_state_name(&format!("{n}@18100737"), 1).unwrap(), e);
        let air = entry("minecraft:air", vec![], 7);
        assert_eq!(state_name(&air, 7), "minecraft:air");
        // Extra keys: kept whole.
        let mut odd = air.clone();
        odd.insert("val", Tag::Short(2));
        let n = state_name(&odd, 7);
        assert!(n.starts_with("bedrock-nbt:0a0000"), "{n}");
        assert_eq!(parse_state_name(&n, 7).unwrap(), odd);
        // A Java-style name parses with string values.
        let j = parse_state_name("minecraft:oak_stairs[facing=east,half=bottom]", 5).unwrap();
        assert_eq!(
            j,
            entry(
                "minecraft:oak_stairs",
                vec![
                    ("facing", Tag::String("east".into())),
                    ("half", Tag::String("bottom".into()))
                ],
                5
            )
        );
        for bad in [
            "",
            "[a=1]",
            "a[b=1",
            "a[=1]",
            "a[b=\"x]",
            "a@x",
            "bedrock-nbt:0",
            "bedrock-nbt:zz",
            "a[b=1,]",
        ] {
            assert!(parse_state_name(bad, 0).is_err(), "{bad}");
        }
    }

    fn value() -> impl Strategy<Value = Tag> {
        prop_oneof![
            any::<i8>().prop_map(Tag::Byte),
            any::<i16>().prop_map(Tag::Short),
            any::<i32>().prop_map(Tag::Int),
            any::<i64>().prop_map(Tag::Long),
            "[ -~é\"\\\\,=\\[\\]@]{0,8}".prop_map(Tag::String),
            any::<f32>().prop_map(Tag::Float),
        ]
    }

    proptest! {
        #[test]
        fn every_entry_round_trips_through_its_name(
            name in "[a-z:_@\\[]{1,12}",
            states in proptest::collection::vec(("[a-z_:=,\\[]{1,6}", value()), 0..4),
            version in any::<i32>(),
            world in prop_oneof![Just(18_100_737), any::<i32>()],
        ) {
            let e = entry(&name, states.iter().map(|(k, v)| (k.as_str(), v.clone())).collect(), version);
            let n = state_name(&e, world);
            prop_assert_eq!(parse_state_name(&n, world).unwrap(), e);
        }
    }
}
