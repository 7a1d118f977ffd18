//! Bedrock block states of every version brought up to date before they are translated:
//! Bedrock never rewrites a chunk it has not loaded, so an old world holds the states of
//! every version that wrote it (`minecraft:grass`, renamed `minecraft:grass_block` in
//! 1.20.70; `minecraft:stone` with `stone_type` before 1.20.50, ...).
//!
//! The rules are the public upgrade schemas of pmmp/BedrockBlockUpgradeSchema (CC0), vendored
//! unchanged in `data/block-upgrade-schema/` (`data/SOURCES.md`), one JSON file per step of
//! Bedrock's versions, read here from their documented format (the README beside them):
//! `remappedStates` first and alone, else `remappedPropertyValues`, `flattenedProperties`,
//! `removedProperties`, `renamedProperties`, `addedProperties` and `renamedIds`, every rule
//! looked up by the state's old id and old property names. A state is taken through every
//! schema from the first whose version is not older than its own, in order
//! (`docs/format/bedrock.md`, "Old block states").

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;
use terrane_nbt::{Compound, Tag};

/// The schemas, in the order they apply (their file names sort in that order).
const SCHEMAS: &[(&str, &str)] = &[
    (
        "0001_1.9.0_to_1.10.0.json",
        include_str!("../data/block-upgrade-schema/0001_1.9.0_to_1.10.0.json"),
    ),
    (
        "0011_1.10.0_to_1.12.0.json",
        include_str!("../data/block-upgrade-schema/0011_1.10.0_to_1.12.0.json"),
    ),
    (
        "0021_1.12.0_to_1.13.0.json",
        include_str!("../data/block-upgrade-schema/0021_1.12.0_to_1.13.0.json"),
    ),
    (
        "0031_1.13.0_to_1.14.0.json",
        include_str!("../data/block-upgrade-schema/0031_1.13.0_to_1.14.0.json"),
    ),
    (
        "0041_1.14.0_to_1.16.0.57_beta.json",
        include_str!("../data/block-upgrade-schema/0041_1.14.0_to_1.16.0.57_beta.json"),
    ),
    (
        "0051_1.16.0.57_beta_to_1.16.0.59_beta.json",
        include_str!("../data/block-upgrade-schema/0051_1.16.0.57_beta_to_1.16.0.59_beta.json"),
    ),
    (
        "0061_1.16.0.59_beta_to_1.16.0.68_beta.json",
        include_str!("../data/block-upgrade-schema/0061_1.16.0.59_beta_to_1.16.0.68_beta.json"),
    ),
    (
        "0071_1.16.0_to_1.16.100.json",
        include_str!("../data/block-upgrade-schema/0071_1.16.0_to_1.16.100.json"),
    ),
    (
        "0081_1.16.200_to_1.16.210.json",
        include_str!("../data/block-upgrade-schema/0081_1.16.200_to_1.16.210.json"),
    ),
    (
        "0091_1.17.10_to_1.17.30.json",
        include_str!("../data/block-upgrade-schema/0091_1.17.10_to_1.17.30.json"),
    ),
    (
        "0101_1.17.30_to_1.17.40.json",
        include_str!("../data/block-upgrade-schema/0101_1.17.30_to_1.17.40.json"),
    ),
    (
        "0111_1.18.0_to_1.18.10.json",
        include_str!("../data/block-upgrade-schema/0111_1.18.0_to_1.18.10.json"),
    ),
    (
        "0121_1.18.10_to_1.18.20.27_beta.json",
        include_str!("../data/block-upgrade-schema/0121_1.18.10_to_1.18.20.27_beta.json"),
    ),
    (
        "0131_1.18.20.27_beta_to_1.18.30.json",
        include_str!("../data/block-upgrade-schema/0131_1.18.20.27_beta_to_1.18.30.json"),
    ),
    (
        "0141_1.18.30_to_1.19.0.34_beta.json",
        include_str!("../data/block-upgrade-schema/0141_1.18.30_to_1.19.0.34_beta.json"),
    ),
    (
        "0151_1.19.0.34_beta_to_1.19.20.json",
        include_str!("../data/block-upgrade-schema/0151_1.19.0.34_beta_to_1.19.20.json"),
    ),
    (
        "0161_1.19.50_to_1.19.60.26_beta.json",
        include_str!("../data/block-upgrade-schema/0161_1.19.50_to_1.19.60.26_beta.json"),
    ),
    (
        "0171_1.19.60_to_1.19.70.26_beta.json",
        include_str!("../data/block-upgrade-schema/0171_1.19.60_to_1.19.70.26_beta.json"),
    ),
    (
        "0181_1.19.70_to_1.19.80.24_beta.json",
        include_str!("../data/block-upgrade-schema/0181_1.19.70_to_1.19.80.24_beta.json"),
    ),
    (
        "0191_1.19.80.24_beta_to_1.20.0.23_beta.json",
        include_str!("../data/block-upgrade-schema/0191_1.19.80.24_beta_to_1.20.0.23_beta.json"),
    ),
    (
        "0201_1.20.0.23_beta_to_1.20.10.24_beta.json",
        include_str!("../data/block-upgrade-schema/0201_1.20.0.23_beta_to_1.20.10.24_beta.json"),
    ),
    (
        "0211_1.20.10.24_beta_to_1.20.20.23_beta.json",
        include_str!("../data/block-upgrade-schema/0211_1.20.10.24_beta_to_1.20.20.23_beta.json"),
    ),
    (
        "0221_1.20.20.23_beta_to_1.20.30.22_beta.json",
        include_str!("../data/block-upgrade-schema/0221_1.20.20.23_beta_to_1.20.30.22_beta.json"),
    ),
    (
        "0231_1.20.30.22_beta_to_1.20.40.24_beta.json",
        include_str!("../data/block-upgrade-schema/0231_1.20.30.22_beta_to_1.20.40.24_beta.json"),
    ),
    (
        "0241_1.20.40.24_beta_to_1.20.50.23_beta.json",
        include_str!("../data/block-upgrade-schema/0241_1.20.40.24_beta_to_1.20.50.23_beta.json"),
    ),
    (
        "0251_1.20.50.23_beta_to_1.20.60.26_beta.json",
        include_str!("../data/block-upgrade-schema/0251_1.20.50.23_beta_to_1.20.60.26_beta.json"),
    ),
    (
        "0261_1.20.60.26_beta_to_1.20.70.24_beta.json",
        include_str!("../data/block-upgrade-schema/0261_1.20.60.26_beta_to_1.20.70.24_beta.json"),
    ),
    (
        "0271_1.20.70.24_beta_to_1.20.80.24_beta.json",
        include_str!("../data/block-upgrade-schema/0271_1.20.70.24_beta_to_1.20.80.24_beta.json"),
    ),
    (
        "0281_1.20.80.24_beta_to_1.21.0.25_beta.json",
        include_str!("../data/block-upgrade-schema/0281_1.20.80.24_beta_to_1.21.0.25_beta.json"),
    ),
    (
        "0291_1.21.0.25_beta_to_1.21.20.24_beta.json",
        include_str!("../data/block-upgrade-schema/0291_1.21.0.25_beta_to_1.21.20.24_beta.json"),
    ),
    (
        "0301_1.21.20.24_beta_to_1.21.30.24_beta.json",
        include_str!("../data/block-upgrade-schema/0301_1.21.20.24_beta_to_1.21.30.24_beta.json"),
    ),
    (
        "0311_1.21.30.24_beta_to_1.21.40.25_beta.json",
        include_str!("../data/block-upgrade-schema/0311_1.21.30.24_beta_to_1.21.40.25_beta.json"),
    ),
    (
        "0321_1.21.50.29_beta_to_1.21.60.28_beta.json",
        include_str!("../data/block-upgrade-schema/0321_1.21.50.29_beta_to_1.21.60.28_beta.json"),
    ),
    (
        "0331_1.21.100.23_beta_to_1.21.110.26_beta.json",
        include_str!("../data/block-upgrade-schema/0331_1.21.100.23_beta_to_1.21.110.26_beta.json"),
    ),
];

/// A property value as the schemas write it: `{"int": 1}`, `{"byte": 0}`, `{"string": "x"}`.
fn property(v: &Value) -> Option<Tag> {
    let o = v.as_object()?;
    let (kind, v) = o.iter().next()?;
    match kind.as_str() {
        "int" => Some(Tag::Int(i32::try_from(v.as_i64()?).ok()?)),
        "byte" => Some(Tag::Byte(i8::try_from(v.as_i64()?).ok()?)),
        "string" => Some(Tag::String(v.as_str()?.to_string())),
        _ => None,
    }
}

/// A property's value as text, as a flattened id spells it.
fn text(t: &Tag) -> Option<String> {
    match t {
        Tag::String(s) => Some(s.clone()),
        Tag::Int(i) => Some(i.to_string()),
        Tag::Byte(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A new id made of a property's value: `prefix + value + suffix`.
#[derive(Debug)]
struct Flatten {
    prefix: String,
    property: String,
    suffix: String,
    remaps: HashMap<String, String>,
}

impl Flatten {
    fn parse(v: &Value) -> Option<Flatten> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let remaps = match v.get("flattenedValueRemaps") {
            Some(Value::Object(m)) => {
                m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect()
            }
            _ => HashMap::new(),
        };
        Some(Flatten {
            prefix: s("prefix")?,
            property: s("flattenedProperty")?,
            suffix: s("suffix")?,
            remaps,
        })
    }

    /// The id of a state whose properties are `states`; `None` without the property.
    fn id(&self, states: &Compound) -> Option<String> {
        let value = text(states.get(&self.property)?)?;
        let value = self.remaps.get(&value).cloned().unwrap_or(value);
        Some(format!("{}{value}{}", self.prefix, self.suffix))
    }
}

/// One `remappedStates` rule: states of the id matching `old` become `name` with `new` and
/// the `copied` properties of the old state.
#[derive(Debug)]
struct Remap {
    old: Vec<(String, Tag)>,
    name: Result<String, Flatten>,
    new: Vec<(String, Tag)>,
    copied: Vec<String>,
}

/// The properties of a `{"key": {"int": 1}, ...}` object (none for `null`).
fn properties(v: Option<&Value>) -> Vec<(String, Tag)> {
    match v {
        Some(Value::Object(m)) => {
            m.iter().filter_map(|(k, v)| Some((k.clone(), property(v)?))).collect()
        }
        _ => Vec::new(),
    }
}

/// A property's (old value, new value) pairs.
type ValuePairs = Vec<(Tag, Tag)>;

/// One step of Bedrock's versions.
#[derive(Debug, Default)]
struct Schema {
    /// The version its states have after it (`major << 24 | minor << 16 | patch << 8 | revision`).
    version: i32,
    renamed_ids: HashMap<String, String>,
    renamed_properties: HashMap<String, Vec<(String, String)>>,
    added_properties: HashMap<String, Vec<(String, Tag)>>,
    removed_properties: HashMap<String, Vec<String>>,
    /// Per id: each property with its (old value, new value) pairs.
    remapped_values: HashMap<String, Vec<(String, ValuePairs)>>,
    flattened: HashMap<String, Flatten>,
    remapped_states: HashMap<String, Vec<Remap>>,
}

fn map_of<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = (&'a String, &'a Value)> {
    v.get(key).and_then(Value::as_object).into_iter().flatten()
}

impl Schema {
    fn parse(file: &str, json: &str) -> Result<Schema, String> {
        let v: Value = serde_json::from_str(json).map_err(|e| format!("{file}: {e}"))?;
        let part = |k: &str| {
            v.get(k)
                .and_then(Value::as_i64)
                .and_then(|n| u8::try_from(n).ok())
                .ok_or_else(|| format!("{file}: {k}"))
        };
        let version = i32::from_be_bytes([
            part("maxVersionMajor")?,
            part("maxVersionMinor")?,
            part("maxVersionPatch")?,
            part("maxVersionRevision")?,
        ]);
        let mut s = Schema { version, ..Schema::default() };
        for (id, to) in map_of(&v, "renamedIds") {
            s.renamed_ids.insert(id.clone(), to.as_str().ok_or(file)?.to_string());
        }
        for (id, m) in map_of(&v, "renamedProperties") {
            let pairs = m.as_object().ok_or(file)?;
            let pairs =
                pairs.iter().filter_map(|(a, b)| Some((a.clone(), b.as_str()?.to_string())));
            s.renamed_properties.insert(id.clone(), pairs.collect());
        }
        for (id, m) in map_of(&v, "addedProperties") {
            s.added_properties.insert(id.clone(), properties(Some(m)));
        }
        for (id, list) in map_of(&v, "removedProperties") {
            let names =
                list.as_array().ok_or(file)?.iter().filter_map(|n| Some(n.as_str()?.to_string()));
            s.removed_properties.insert(id.clone(), names.collect());
        }
        let index: HashMap<&String, Vec<(Tag, Tag)>> = map_of(&v, "remappedPropertyValuesIndex")
            .map(|(k, list)| {
                let pairs = list
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| Some((property(p.get("old")?)?, property(p.get("new")?)?)));
                (k, pairs.collect())
            })
            .collect();
        for (id, m) in map_of(&v, "remappedPropertyValues") {
            let mut props = Vec::new();
            for (prop, key) in m.as_object().ok_or(file)? {
                let key = key.as_str().ok_or(file)?.to_string();
                let pairs = index.get(&key).ok_or_else(|| format!("{file}: no index {key}"))?;
                props.push((prop.clone(), pairs.clone()));
            }
            s.remapped_values.insert(id.clone(), props);
        }
        for (id, rule) in map_of(&v, "flattenedProperties") {
            s.flattened
                .insert(id.clone(), Flatten::parse(rule).ok_or_else(|| format!("{file}: {id}"))?);
        }
        for (id, rules) in map_of(&v, "remappedStates") {
            let mut out = Vec::new();
            for r in rules.as_array().ok_or(file)? {
                let name =
                    match (r.get("newName").and_then(Value::as_str), r.get("newFlattenedName")) {
                        (Some(n), _) => Ok(n.to_string()),
                        (None, Some(f)) => {
                            Err(Flatten::parse(f).ok_or_else(|| format!("{file}: {id}"))?)
                        }
                        (None, None) => {
                            return Err(format!("{file}: {id}: a remap without a new name"));
                        }
                    };
                let copied = r.get("copiedState").and_then(Value::as_array).into_iter().flatten();
                out.push(Remap {
                    old: properties(r.get("oldState")),
                    name,
                    new: properties(r.get("newState")),
                    copied: copied.filter_map(|c| Some(c.as_str()?.to_string())).collect(),
                });
            }
            s.remapped_states.insert(id.clone(), out);
        }
        Ok(s)
    }

    /// `(id, states)` after this step.
    fn apply(&self, id: &str, states: &Compound) -> (String, Compound) {
        if let Some(rules) = self.remapped_states.get(id) {
            for r in rules {
                if r.old.iter().all(|(k, v)| states.get(k) == Some(v)) {
                    let name = match &r.name {
                        Ok(n) => n.clone(),
                        Err(f) => match f.id(states) {
                            Some(n) => n,
                            None => continue,
                        },
                    };
                    let mut new: Compound = Compound::new();
                    for (k, v) in &r.new {
                        new.insert(k.clone(), v.clone());
                    }
                    for k in &r.copied {
                        if let Some(v) = states.get(k) {
                            new.insert(k.clone(), v.clone());
                        }
                    }
                    return (name, new);
                }
            }
        }
        let mut out = states.clone();
        if let Some(props) = self.remapped_values.get(id) {
            for (prop, pairs) in props {
                if let Some(now) = states.get(prop)
                    && let Some((_, to)) = pairs.iter().find(|(from, _)| from == now)
                {
                    out.insert(prop.clone(), to.clone());
                }
            }
        }
        let mut name = id.to_string();
        if let Some(f) = self.flattened.get(id)
            && let Some(n) = f.id(states)
        {
            out.remove(&f.property);
            name = n;
        }
        for prop in self.removed_properties.get(id).into_iter().flatten() {
            out.remove(prop);
        }
        for (from, to) in self.renamed_properties.get(id).into_iter().flatten() {
            if let Some(v) = out.remove(from) {
                out.insert(to.clone(), v);
            }
        }
        for (prop, v) in self.added_properties.get(id).into_iter().flatten() {
            if out.get(prop).is_none() {
                out.insert(prop.clone(), v.clone());
            }
        }
        if let Some(to) = self.renamed_ids.get(id) {
            name = to.clone();
        }
        (name, out)
    }
}

/// Every schema, parsed once.
fn schemas() -> &'static [Schema] {
    static ALL: OnceLock<Vec<Schema>> = OnceLock::new();
    ALL.get_or_init(|| {
        SCHEMAS
            .iter()
            .map(|(file, json)| {
                Schema::parse(file, json).expect("the vendored schemas parse (a test checks)")
            })
            .collect()
    })
}

/// The version a state has once brought up to date: the newest schema's.
pub fn newest_version() -> i32 {
    schemas().iter().map(|s| s.version).max().unwrap_or(0)
}

/// The palette entry `{name, states, version}` brought up to date through every schema from
/// the first not older than its `version` (0 when it has none), its version then
/// [`newest_version`]; `None` when no schema changes it. An entry `{name, val}` of a world
/// from before 1.13 is its 1.12.0 state first ([`legacy`](crate::legacy)).
pub fn upgrade(entry: &Compound) -> Option<Compound> {
    // A numeric meta of a world from before 1.13: its 1.12.0 state first.
    let legacy = crate::legacy::state_of_entry(entry);
    let entry = legacy.unwrap_or(entry);
    let Some(Tag::String(name)) = entry.get("name") else { return None };
    let version = match entry.get("version") {
        Some(Tag::Int(v)) => *v,
        _ => 0,
    };
    let empty = Compound::new();
    let states = match entry.get("states") {
        Some(Tag::Compound(s)) => s,
        _ => &empty,
    };
    let (mut id, mut now, mut at) = (name.clone(), states.clone(), version);
    for s in schemas() {
        if at > s.version {
            continue;
        }
        (id, now) = s.apply(&id, &now);
        at = s.version;
    }
    if id == *name && now == *states && legacy.is_none() {
        return None;
    }
    let mut out = Compound::new();
    out.insert("name".to_string(), Tag::String(id));
    out.insert("states".to_string(), Tag::Compound(now));
    out.insert("version".to_string(), Tag::Int(newest_version().max(version)));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, version: i32, states: &[(&str, Tag)]) -> Compound {
        let mut s = Compound::new();
        for (k, v) in states {
            s.insert(k.to_string(), v.clone());
        }
        let mut c = Compound::new();
        c.insert("name".to_string(), Tag::String(name.into()));
        c.insert("states".to_string(), Tag::Compound(s));
        c.insert("version".to_string(), Tag::Int(version));
        c
    }

    fn name_and_states(c: &Compound) -> (String, Compound) {
        let Some(Tag::String(n)) = c.get("name") else { panic!("{c:?}") };
        let Some(Tag::Compound(s)) = c.get("states") else { panic!("{c:?}") };
        (n.clone(), s.clone())
    }

    #[test]
    fn every_vendored_schema_parses_and_the_list_is_the_folder() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/block-upgrade-schema");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json"))
            .collect();
        files.sort();
        let listed: Vec<&str> = SCHEMAS.iter().map(|(f, _)| *f).collect();
        assert_eq!(listed, files, "SCHEMAS lists every file of {}", dir.display());
        for (file, json) in SCHEMAS {
            Schema::parse(file, json).unwrap();
        }
        // The newest step (1.21.100 to 1.21.110) kept the block version of 1.21.60.
        assert_eq!(newest_version(), i32::from_be_bytes([1, 21, 60, 33]));
    }

    #[test]
    fn old_states_become_the_states_of_today() {
        let v1_20_60 = i32::from_be_bytes([1, 20, 60, 26]);
        // Renamed id (1.20.70).
        let up = upgrade(&entry("minecraft:grass", v1_20_60, &[])).unwrap();
        assert_eq!(name_and_states(&up).0, "minecraft:grass_block");
        assert_eq!(up.get("version"), Some(&Tag::Int(newest_version())));
        // A whole-state remap with a flattened name and a copied property (1.20.70).
        let wood = entry(
            "minecraft:wood",
            v1_20_60,
            &[
                ("wood_type", Tag::String("birch".into())),
                ("stripped_bit", Tag::Byte(1)),
                ("pillar_axis", Tag::String("x".into())),
            ],
        );
        let (n, s) = name_and_states(&upgrade(&wood).unwrap());
        assert_eq!(n, "minecraft:stripped_birch_wood");
        assert_eq!(s.get("pillar_axis"), Some(&Tag::String("x".into())));
        assert_eq!(s.len(), 1, "{s:?}");
        // A state of today is left as it is.
        let today = entry("minecraft:grass_block", newest_version(), &[]);
        assert!(upgrade(&today).is_none());
        // Through many steps: a 1.12 log with its old properties is today's oak log.
        let log = entry(
            "minecraft:log",
            i32::from_be_bytes([1, 12, 0, 0]),
            &[
                ("old_log_type", Tag::String("oak".into())),
                ("pillar_axis", Tag::String("y".into())),
            ],
        );
        let (n, s) = name_and_states(&upgrade(&log).unwrap());
        assert_eq!(n, "minecraft:oak_log");
        assert_eq!(s.get("pillar_axis"), Some(&Tag::String("y".into())));
    }

    #[test]
    fn added_removed_and_flattened_properties_apply() {
        let v = |a, b, c, d| i32::from_be_bytes([a, b, c, d]);
        // Added (1.10, 1.12): a bell of 1.9 gains its attachment and toggle bit.
        let (n, s) =
            name_and_states(&upgrade(&entry("minecraft:bell", v(1, 9, 0, 0), &[])).unwrap());
        assert_eq!(n, "minecraft:bell");
        assert_eq!(s.get("attachment"), Some(&Tag::String("standing".into())));
        assert_eq!(s.get("toggle_bit"), Some(&Tag::Byte(0)));
        // Removed (1.10): grass loses its `mapped_type` before its rename.
        let grass = entry(
            "minecraft:grass",
            v(1, 9, 0, 0),
            &[("mapped_type", Tag::String("default".into()))],
        );
        let (n, s) = name_and_states(&upgrade(&grass).unwrap());
        assert_eq!((n.as_str(), s.len()), ("minecraft:grass_block", 0), "{s:?}");
        // Flattened through a value remap (1.20.50): smooth granite is polished granite.
        let stone = entry(
            "minecraft:stone",
            v(1, 20, 40, 3),
            &[("stone_type", Tag::String("granite_smooth".into()))],
        );
        let (n, s) = name_and_states(&upgrade(&stone).unwrap());
        assert_eq!((n.as_str(), s.len()), ("minecraft:polished_granite", 0), "{s:?}");
    }
}
