//! Block states between the editions: Java's (`minecraft:oak_stairs[facing=north,...]`) and
//! Bedrock's as terrane names them ([`names`](crate::names)), through the table in
//! `data/java-bedrock.tsv.gz` (`docs/format/java-bedrock-table.md`), which `cargo xtask
//! tables` generates from the minecraft-data package.
//!
//! The table maps every Java state to one Bedrock state and every Bedrock state to one Java
//! state. Where the editions do not match one to one, these rules apply, and a
//! [`TranslationReport`] counts each state they touch, by its source name:
//! - **waterlogged**: Java's `waterlogged=true` becomes Bedrock's second layer holding still
//!   water, and back (water in the second layer of a block whose Java state has a
//!   `waterlogged` property). So do the blocks Java keeps in water without a property
//!   ([`ALWAYS_WATERLOGGED`]: seagrass, kelp, bubble columns). Exact both ways.
//! - **chests** ([`BEDROCK_PAIRED`]): Bedrock keeps a double chest's pairing in the block
//!   entity, so a chest's `type` is not part of the translation (Bedrock chests come as
//!   `type=single`, whatever minecraft-data's table says); the block entity carries it
//!   ([`block_entity`](crate::block_entity)). Exact. Beds likewise: Java's colour is the
//!   block (`minecraft:red_bed`), Bedrock's the block entity's.
//! - **renamed Java blocks** ([`JAVA_RENAMES`]): a state of an older world under a name the
//!   table lacks (`minecraft:grass`) is looked up under the new name (`minecraft:short_grass`).
//! - **approximated**: a state whose round trip through the table does not come back to it
//!   (Java properties Bedrock derives instead of storing, such as stair shapes, fence and
//!   redstone connections), and a state missing from the table whose block is in it (the
//!   state of that block with the most equal properties is taken).
//! - **dropped**: a block the other edition does not have (air is written), and a second
//!   layer that is not water (Java has no place for it).

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::sync::OnceLock;

use terrane_chunk::{BlockId, CELLS, Chunk, ChunkView, Schema, block_state, count_indices};

use crate::error::{Error, Result};

/// The embedded table: `docs/format/java-bedrock-table.md`.
const TABLE_GZ: &[u8] = include_bytes!("../data/java-bedrock.tsv.gz");

/// Bedrock's id of the plains biome: what a biome the table lacks becomes.
pub const PLAINS_BEDROCK: u32 = 1;

/// Still water in Bedrock's second layer: what Java's `waterlogged=true` becomes.
pub const BEDROCK_WATER: &str = "minecraft:water[liquid_depth=0]";

/// Java blocks whose other half Bedrock keeps in the block entity (a double chest's
/// pairing), not in the state: the table's state for them is taken with `type=single`, and
/// [`block_entity`](crate::block_entity) carries the half both ways.
pub const BEDROCK_PAIRED: [&str; 2] = ["minecraft:chest", "minecraft:trapped_chest"];

/// Java blocks that are always in water without a `waterlogged` property: Bedrock keeps
/// their water in the second layer.
pub const ALWAYS_WATERLOGGED: [&str; 5] = [
    "minecraft:seagrass",
    "minecraft:tall_seagrass",
    "minecraft:kelp",
    "minecraft:kelp_plant",
    "minecraft:bubble_column",
];

/// What a state became.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Fidelity {
    /// The other edition's state, and it comes back to this one.
    Exact,
    /// The nearest state the other edition has (see the module docs).
    Approximated,
    /// The other edition has no such block: air.
    Dropped,
}

/// One state in the other edition's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Translated {
    /// The state's name in the other edition.
    pub name: String,
    /// How faithful it is.
    pub fidelity: Fidelity,
    /// Java to Bedrock: the cell also holds water in Bedrock's second layer.
    pub water: bool,
}

impl Translated {
    /// A block the other edition does not have: air.
    fn dropped() -> Translated {
        Translated { name: "minecraft:air".into(), fidelity: Fidelity::Dropped, water: false }
    }
}

/// A piece of a name in [`EditionTable`]'s arena: start and length in bytes.
#[derive(Copy, Clone, Debug)]
struct Span {
    start: u32,
    len: u32,
}

/// A state name as two interned pieces, indices into [`EditionTable`]'s `pieces`: its block
/// (`minecraft:oak_stairs`) and its properties with their brackets (`[facing=north,...]`, or
/// empty). The table's 44,000 names share 1,400 blocks and 8,100 property lists.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Name {
    block: u32,
    props: u32,
}

/// A [`Name`]'s two pieces, compared and printed as the one string they make.
#[derive(Copy, Clone, Debug)]
struct Joined<'a>(&'a str, &'a str);

impl<'a> Joined<'a> {
    /// How the joined name orders against `q`, as `str`'s order would.
    fn cmp_str(self, q: &str) -> std::cmp::Ordering {
        let (a, q) = (self.0.as_bytes(), q.as_bytes());
        let n = a.len().min(q.len());
        a[..n].cmp(&q[..n]).then_with(|| match a.len() > q.len() {
            true => std::cmp::Ordering::Greater,
            false => self.1.as_bytes().cmp(&q[a.len()..]),
        })
    }

    /// How two joined names order, as `str`'s order would.
    fn cmp_joined(self, other: Joined<'_>) -> std::cmp::Ordering {
        let mine = self.0.bytes().chain(self.1.bytes());
        mine.cmp(other.0.bytes().chain(other.1.bytes()))
    }

    /// Whether the joined name starts with `p`.
    fn starts_with(self, p: &str) -> bool {
        match p.len() <= self.0.len() {
            true => self.0.starts_with(p),
            false => p.starts_with(self.0) && self.1.starts_with(&p[self.0.len()..]),
        }
    }

    /// The block piece: the name without its properties.
    fn block(self) -> &'a str {
        self.0
    }
}

impl std::fmt::Display for Joined<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)?;
        f.write_str(self.1)
    }
}

/// The Java ⇄ Bedrock block-state table. Its 44,000 state names are kept as pairs of
/// interned pieces (block, properties; 0.5 MiB in all where the names back to back take
/// 5 MiB), looked up by binary search.
#[derive(Debug)]
pub struct EditionTable {
    block_version: i32,
    bedrock_release: String,
    source: String,
    /// Every distinct piece of a name, back to back.
    arena: String,
    /// The pieces in `arena`, by index.
    pieces: Vec<Span>,
    /// Bedrock states (terrane's names) with their Java state, in the table's order.
    bedrock: Vec<(Name, Name)>,
    /// Indices into `bedrock`, by Bedrock name.
    bedrock_sorted: Vec<u32>,
    /// Java states by name, each with its index in `bedrock`.
    java: Vec<(Name, u32)>,
    /// Java biome → Bedrock biome id; Bedrock biome id → (Bedrock name, Java biome).
    java_biomes: HashMap<String, u32>,
    bedrock_biomes: HashMap<u32, (String, String)>,
    /// Java item → Bedrock item and `Damage`; Bedrock item and `Damage` (`None`: any) → Java
    /// item.
    java_items: HashMap<String, (String, i16)>,
    bedrock_items: HashMap<(String, Option<i16>), String>,
}

/// The table built into the crate, parsed on first use (streamed from the gzip: the 5 MiB
/// text is never whole in memory).
pub fn table() -> &'static EditionTable {
    static TABLE: OnceLock<EditionTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let text = std::io::BufReader::new(flate2::read::GzDecoder::new(TABLE_GZ));
        EditionTable::parse_from(text)
            .expect("the embedded block table is gzip-compressed and parses (checked by its tests)")
    })
}

fn block_of(state: &str) -> &str {
    state.split_once('[').map_or(state, |(n, _)| n)
}

/// A state's properties as `(key, value)` pairs (values as spelled).
fn props(state: &str) -> Vec<(&str, &str)> {
    match state.split_once('[') {
        Some((_, rest)) => {
            rest.trim_end_matches(']').split(',').filter_map(|p| p.split_once('=')).collect()
        }
        None => Vec::new(),
    }
}

/// Of `candidates`, the one sharing the most property values with `state` (the first of
/// equals).
fn nearest(state: &str, candidates: impl Iterator<Item = String>) -> Option<String> {
    let want = props(state);
    let mut best: Option<(usize, String)> = None;
    for c in candidates {
        let have = props(&c);
        let score = want.iter().filter(|p| have.contains(p)).count();
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, c));
        }
    }
    best.map(|(_, c)| c)
}

/// `state` with its property `key` set to `value`, if it has one.
pub(crate) fn with_prop(state: &str, key: &str, value: &str) -> Option<String> {
    let p = props(state);
    if !p.iter().any(|(k, _)| *k == key) {
        return None;
    }
    Some(block_state::canonical_from_parts(
        block_of(state),
        p.into_iter().map(|(k, old)| (k, if k == key { value } else { old })),
    ))
}

/// `state` with its `waterlogged` property set to `value`, if it has one.
fn with_waterlogged(state: &str, value: bool) -> Option<String> {
    with_prop(state, "waterlogged", if value { "true" } else { "false" })
}

/// A chest's state as Bedrock's block keeps it: without its half (`type=single`).
fn unpaired(state: &str) -> String {
    match BEDROCK_PAIRED.contains(&block_of(state)) {
        true => with_prop(state, "type", "single").unwrap_or_else(|| state.to_string()),
        false => state.to_string(),
    }
}

/// A state without what Bedrock keeps in the block entity, not the block: a chest's half
/// ([`unpaired`]) and a bed's colour (every bed as `minecraft:white_bed`).
fn without_block_entity_data(state: &str) -> String {
    let state = unpaired(state);
    let name = block_of(&state);
    match name.strip_prefix("minecraft:").and_then(|n| n.strip_suffix("_bed")) {
        Some(_) => format!("minecraft:white_bed{}", &state[name.len()..]),
        None => state,
    }
}

/// Java blocks renamed since the states of an older world were written, by their old name:
/// looked up under the new name when the table lacks the old one.
pub const JAVA_RENAMES: [(&str, &str); 1] = [
    // 1.20.3 (23w46a).
    ("minecraft:grass", "minecraft:short_grass"),
];

impl EditionTable {
    /// Parses the table's text (`docs/format/java-bedrock-table.md`).
    pub fn parse(text: &str) -> Result<EditionTable> {
        Self::parse_from(text.as_bytes())
    }

    /// Parses the table's text line by line from `r`.
    pub fn parse_from(mut r: impl BufRead) -> Result<EditionTable> {
        let bad = |line: usize, what: &str| {
            Error::BlockName(format!("block table line {}: {what}", line + 1))
        };
        let mut t = EditionTable {
            block_version: 0,
            bedrock_release: String::new(),
            source: String::new(),
            arena: String::new(),
            pieces: Vec::new(),
            bedrock: Vec::new(),
            bedrock_sorted: Vec::new(),
            java: Vec::new(),
            java_biomes: HashMap::new(),
            bedrock_biomes: HashMap::new(),
            java_items: HashMap::new(),
            bedrock_items: HashMap::new(),
        };
        let mut interned: HashMap<String, u32> = HashMap::new();
        let mut buf = String::new();
        for n in 0.. {
            buf.clear();
            match r.read_line(&mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => return Err(bad(n, &format!("unreadable ({e})"))),
            }
            let line = buf.strip_suffix('\n').unwrap_or(&buf);
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split('\t').collect();
            match f.as_slice() {
                ["version", v, release, package] => {
                    t.block_version = v.parse().map_err(|_| bad(n, "a bad block version"))?;
                    t.bedrock_release = (*release).to_string();
                    t.source = format!("minecraft-data {package}, Bedrock {release}");
                }
                ["B", b, j] => {
                    let b = t.push(&mut interned, b, n)?;
                    let j = t.push(&mut interned, j, n)?;
                    t.bedrock.push((b, j));
                }
                ["J", j, i] => {
                    let i: u32 = i.parse().map_err(|_| bad(n, "a bad Bedrock index"))?;
                    if i as usize >= t.bedrock.len() {
                        return Err(bad(n, "a Bedrock index past the Bedrock states"));
                    }
                    let j = t.push(&mut interned, j, n)?;
                    t.java.push((j, i));
                }
                ["G", j, id] => {
                    let id = id.parse().map_err(|_| bad(n, "a bad Bedrock biome id"))?;
                    t.java_biomes.insert((*j).to_string(), id);
                }
                ["H", id, b, j] => {
                    let id = id.parse().map_err(|_| bad(n, "a bad Bedrock biome id"))?;
                    t.bedrock_biomes.insert(id, ((*b).to_string(), (*j).to_string()));
                }
                ["I", j, b, damage] => {
                    let damage = damage.parse().map_err(|_| bad(n, "a bad item Damage"))?;
                    t.java_items.insert((*j).to_string(), ((*b).to_string(), damage));
                }
                ["K", b, damage, j] => {
                    let damage = match *damage {
                        "" => None,
                        d => Some(d.parse().map_err(|_| bad(n, "a bad item Damage"))?),
                    };
                    t.bedrock_items.insert(((*b).to_string(), damage), (*j).to_string());
                }
                _ => {
                    return Err(bad(
                        n,
                        "not `version`, `B`, `J`, `G`, `H`, `I` or `K` with their fields",
                    ));
                }
            }
        }
        if t.block_version == 0 || t.bedrock.is_empty() || t.java.is_empty() {
            return Err(Error::BlockName("block table: no version line or no states".into()));
        }
        drop(interned);
        let mut java = std::mem::take(&mut t.java);
        java.sort_by(|a, b| t.name(a.0).cmp_joined(t.name(b.0)));
        t.java = java;
        if let Some(w) = t.java.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(Error::BlockName(format!(
                "block table: Java state {} twice",
                t.name(w[0].0)
            )));
        }
        let mut sorted: Vec<u32> = (0..t.bedrock.len() as u32).collect();
        sorted.sort_by(|&a, &b| {
            t.name(t.bedrock[a as usize].0).cmp_joined(t.name(t.bedrock[b as usize].0))
        });
        t.bedrock_sorted = sorted;
        t.arena.shrink_to_fit();
        t.pieces.shrink_to_fit();
        t.bedrock.shrink_to_fit();
        t.java.shrink_to_fit();
        Ok(t)
    }

    /// `s` as two interned pieces, each appended to the arena when new.
    fn push(&mut self, interned: &mut HashMap<String, u32>, s: &str, line: usize) -> Result<Name> {
        let (block, props) = s.split_at(s.find('[').unwrap_or(s.len()));
        let mut piece = |p: &str| -> Result<u32> {
            if let Some(&i) = interned.get(p) {
                return Ok(i);
            }
            let past = || Error::BlockName(format!("block table line {}: past 4 GiB", line + 1));
            let start = u32::try_from(self.arena.len()).map_err(|_| past())?;
            start.checked_add(p.len() as u32).ok_or_else(past)?;
            let i = self.pieces.len() as u32;
            self.arena.push_str(p);
            self.pieces.push(Span { start, len: p.len() as u32 });
            interned.insert(p.to_string(), i);
            Ok(i)
        };
        Ok(Name { block: piece(block)?, props: piece(props)? })
    }

    fn piece(&self, i: u32) -> &str {
        let s = self.pieces[i as usize];
        &self.arena[s.start as usize..(s.start + s.len) as usize]
    }

    fn name(&self, n: Name) -> Joined<'_> {
        Joined(self.piece(n.block), self.piece(n.props))
    }

    /// A Java state's index in `bedrock`.
    fn java_index(&self, java: &str) -> Option<u32> {
        let i = self.java.binary_search_by(|(n, _)| self.name(*n).cmp_str(java)).ok()?;
        Some(self.java[i].1)
    }

    /// A Bedrock state's index in `bedrock`.
    fn bedrock_index(&self, bedrock: &str) -> Option<u32> {
        let k = self
            .bedrock_sorted
            .binary_search_by(|&i| self.name(self.bedrock[i as usize].0).cmp_str(bedrock))
            .ok()?;
        Some(self.bedrock_sorted[k])
    }

    /// The Java states of `block`, in name order.
    fn java_of_block<'a>(&'a self, block: &'a str) -> impl Iterator<Item = String> + 'a {
        let from = self.java.partition_point(|(n, _)| self.name(*n).cmp_str(block).is_lt());
        self.java[from..]
            .iter()
            .map(|(n, _)| self.name(*n))
            .take_while(move |n| n.starts_with(block))
            .filter(move |n| n.block() == block)
            .map(|n| n.to_string())
    }

    /// The Bedrock states of `block`, in the table's order.
    fn bedrock_of_block(&self, block: &str) -> Vec<String> {
        let name = |i: u32| self.name(self.bedrock[i as usize].0);
        let from = self.bedrock_sorted.partition_point(|&i| name(i).cmp_str(block).is_lt());
        let mut found: Vec<u32> = self.bedrock_sorted[from..]
            .iter()
            .copied()
            .take_while(|&i| name(i).starts_with(block))
            .filter(|&i| name(i).block() == block)
            .collect();
        found.sort_unstable();
        found.into_iter().map(|i| name(i).to_string()).collect()
    }

    /// The Bedrock block version of the table's states (the `version` of palette entries).
    pub fn block_version(&self) -> i32 {
        self.block_version
    }

    /// The Bedrock release of the table's states (`1.26.30`).
    pub fn bedrock_release(&self) -> &str {
        &self.bedrock_release
    }

    /// Where the table comes from (package and Bedrock release), for reports.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Number of Java states and of Bedrock states in the table.
    pub fn len(&self) -> (usize, usize) {
        (self.java.len(), self.bedrock.len())
    }

    /// Whether the table is empty (never, for the built-in one).
    pub fn is_empty(&self) -> bool {
        self.java.is_empty()
    }

    /// A Java biome (`minecraft:plains`) as a Bedrock biome id. Exact when that id comes back
    /// to it; a biome the table lacks (a datapack's) becomes plains, approximated.
    pub fn java_biome_to_bedrock(&self, java: &str) -> (u32, Fidelity) {
        match self.java_biomes.get(java) {
            Some(&id) => {
                let back = self.bedrock_biomes.get(&id).map(|(_, j)| j.as_str());
                (id, if back == Some(java) { Fidelity::Exact } else { Fidelity::Approximated })
            }
            None => (PLAINS_BEDROCK, Fidelity::Approximated),
        }
    }

    /// A Bedrock biome id as a Java biome. Exact when that biome comes back to it; an id the
    /// table lacks becomes plains, approximated.
    pub fn bedrock_biome_to_java(&self, id: u32) -> (&str, Fidelity) {
        match self.bedrock_biomes.get(&id) {
            Some((_, j)) => {
                let exact = self.java_biomes.get(j) == Some(&id);
                (j.as_str(), if exact { Fidelity::Exact } else { Fidelity::Approximated })
            }
            None => ("minecraft:plains", Fidelity::Approximated),
        }
    }

    /// The Bedrock name of a Bedrock biome id, for reports.
    pub fn bedrock_biome_name(&self, id: u32) -> Option<&str> {
        self.bedrock_biomes.get(&id).map(|(b, _)| b.as_str())
    }

    /// A Java item (`minecraft:red_bed`) as a Bedrock item and its `Damage` (`minecraft:bed`,
    /// 14); `None` when Bedrock has no such item.
    pub fn java_item_to_bedrock(&self, java: &str) -> Option<(&str, i16)> {
        self.java_items.get(java).map(|(b, d)| (b.as_str(), *d))
    }

    /// A Bedrock item and its `Damage` as a Java item; `None` when Java has no such item.
    pub fn bedrock_item_to_java(&self, bedrock: &str, damage: i16) -> Option<&str> {
        let exact = self.bedrock_items.get(&(bedrock.to_string(), Some(damage)));
        exact.or_else(|| self.bedrock_items.get(&(bedrock.to_string(), None))).map(String::as_str)
    }

    /// A Java state in Bedrock.
    pub fn java_to_bedrock(&self, java: &str) -> Translated {
        let mut java = block_state::canonical(java);
        if let Some((_, new)) = JAVA_RENAMES.iter().find(|(old, _)| *old == block_of(&java))
            && self.java_index(&java).is_none()
        {
            java = format!("{new}{}", &java[block_of(&java).len()..]);
        }
        let water = props(&java).contains(&("waterlogged", "true"))
            || ALWAYS_WATERLOGGED.contains(&block_of(&java));
        let dry = if water { with_waterlogged(&java, false) } else { None };
        let key = dry.as_deref().unwrap_or(&java);
        let (i, mut fidelity) = match self.java_index(key) {
            Some(i) => (i, Fidelity::Exact),
            None => {
                let near = nearest(key, self.java_of_block(block_of(key)));
                match near.and_then(|n| self.java_index(&n)) {
                    Some(i) => (i, Fidelity::Approximated),
                    None => return Translated::dropped(),
                }
            }
        };
        let (bedrock, back) = self.bedrock[i as usize];
        let (bedrock, back) = (self.name(bedrock).to_string(), self.name(back).to_string());
        // A chest's half and a bed's colour travel in the block entity (`block_entity`).
        if fidelity == Fidelity::Exact
            && without_block_entity_data(&back) != without_block_entity_data(key)
        {
            fidelity = Fidelity::Approximated;
        }
        Translated { name: bedrock, fidelity, water }
    }

    /// A Bedrock state (terrane's name, with or without `@version`) in Java; `water` says the
    /// cell holds water in its second layer. A state the table does not hold is brought up
    /// to date first ([`upgrade`](crate::upgrade)): from its `@version`, else from the
    /// oldest schema.
    pub fn bedrock_to_java(&self, bedrock: &str, water: bool) -> Translated {
        self.bedrock_to_java_at(bedrock, water, None)
    }

    /// [`bedrock_to_java`](Self::bedrock_to_java), a name without `@version` being of the
    /// world's block version `world_version` when known.
    pub fn bedrock_to_java_at(
        &self,
        bedrock: &str,
        water: bool,
        world_version: Option<i32>,
    ) -> Translated {
        let name = match bedrock.rsplit_once('@') {
            Some((n, v)) if v.parse::<i32>().is_ok() => n,
            _ => bedrock,
        };
        let upgraded = match self.bedrock_index(name) {
            Some(_) => None,
            None => crate::names::parse_state_name(bedrock, world_version.unwrap_or(0))
                .ok()
                .and_then(|c| crate::upgrade::upgrade(&c))
                .map(|c| crate::names::state_name(&c, crate::upgrade::newest_version())),
        };
        let name = upgraded.as_deref().unwrap_or(name);
        let (i, mut fidelity) = match self.bedrock_index(name) {
            Some(i) => (i, Fidelity::Exact),
            None => {
                let near = nearest(name, self.bedrock_of_block(block_of(name)).into_iter());
                match near.and_then(|n| self.bedrock_index(&n)) {
                    Some(i) => (i, Fidelity::Approximated),
                    None => return Translated::dropped(),
                }
            }
        };
        let java = unpaired(&self.name(self.bedrock[i as usize].1).to_string());
        if fidelity == Fidelity::Exact && self.java_index(&java) != Some(i) {
            fidelity = Fidelity::Approximated;
        }
        let java = match water.then(|| with_waterlogged(&java, true)).flatten() {
            Some(wet) => wet,
            None => java,
        };
        Translated { name: java, fidelity, water: false }
    }
}

/// Which way a [`ChunkTranslator`] goes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Direction {
    /// Java states in, Bedrock states out.
    JavaToBedrock,
    /// Bedrock states in, Java states out.
    BedrockToJava,
}

/// What a translation approximated and dropped, in cells per source state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TranslationReport {
    /// Cells translated (every layer).
    pub cells: u64,
    /// Source state → cells given the nearest state of the other edition.
    pub approximated: BTreeMap<String, u64>,
    /// Source state → cells written as air: the other edition has no such block (second
    /// layers that are not water included).
    pub dropped: BTreeMap<String, u64>,
}

impl TranslationReport {
    /// Cells approximated, over every state.
    pub fn approximated_cells(&self) -> u64 {
        self.approximated.values().sum()
    }

    /// Cells dropped, over every state.
    pub fn dropped_cells(&self) -> u64 {
        self.dropped.values().sum()
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &TranslationReport) {
        self.cells += other.cells;
        for (k, v) in &other.approximated {
            *self.approximated.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &other.dropped {
            *self.dropped.entry(k.clone()).or_default() += v;
        }
    }
}

/// A source block id's translation into the target schema.
#[derive(Copy, Clone)]
struct Mapped {
    id: BlockId,
    fidelity: Fidelity,
    water: bool,
}

/// Chunks of one edition's schema re-encoded in the other's: block by block through
/// [`table`], the target schema growing as states appear, the report counting as it goes.
/// Extra layers, components and entity references of the source are not carried (Java has
/// no layers; block entities go through [`block_entity`](crate::block_entity)); see the
/// module docs for water.
pub struct ChunkTranslator {
    direction: Direction,
    to: Schema,
    /// By source block id: dry cells, then (Bedrock to Java) cells holding water.
    dry: Vec<Option<Mapped>>,
    wet: HashMap<BlockId, Mapped>,
    water: Option<BlockId>,
    report: TranslationReport,
    /// The Bedrock world's block version (names without `@version` are of it).
    bedrock_version: Option<i32>,
}

impl ChunkTranslator {
    /// A translator into `to`, the schema the translated chunks are encoded with (it grows:
    /// [`schema`](Self::schema)).
    pub fn new(direction: Direction, to: Schema) -> Self {
        ChunkTranslator {
            direction,
            to,
            dry: Vec::new(),
            wet: HashMap::new(),
            water: None,
            report: Default::default(),
            bedrock_version: None,
        }
    }

    /// Says which block version the Bedrock names without `@version` are of (the world's),
    /// so that old states are brought up to date from there (Bedrock to Java).
    pub fn set_bedrock_version(&mut self, version: i32) {
        self.bedrock_version = Some(version);
    }

    /// The target schema, with every state translated so far.
    pub fn schema(&self) -> &Schema {
        &self.to
    }

    /// What was approximated and dropped so far.
    pub fn report(&self) -> &TranslationReport {
        &self.report
    }

    /// A translated chunk with cells (index `x << 8 | y << 4 | z`) set to other target
    /// states, registered when new: where a block entity knows the state better than the
    /// table (a Bedrock bed's colour, [`block_entity::java_state`](crate::block_entity::java_state)).
    pub fn restate(&mut self, chunk: &[u8], cells: &[(u16, String)]) -> Result<Vec<u8>> {
        let mut c = Chunk::decode(chunk, &self.to)?;
        self.restate_chunk(&mut c, cells)?;
        Ok(c.encode(&self.to))
    }

    /// [`restate`](Self::restate) on a decoded chunk (from [`translate`](Self::translate)).
    pub fn restate_chunk(&mut self, chunk: &mut Chunk, cells: &[(u16, String)]) -> Result<()> {
        for (i, name) in cells {
            let id = self.target(name)?;
            chunk.set_index(*i, id);
        }
        Ok(())
    }

    fn target(&mut self, name: &str) -> Result<BlockId> {
        match self.to.blocks().find(name) {
            Some(i) => Ok(BlockId(i)),
            None => Ok(self.to.add_block(name, &[])?),
        }
    }

    fn map(&mut self, from: &Schema, id: BlockId, wet: bool) -> Result<Mapped> {
        let cached = if wet {
            self.wet.get(&id).copied()
        } else {
            self.dry.get(id.0 as usize).copied().flatten()
        };
        if let Some(m) = cached {
            return Ok(m);
        }
        let name = from.blocks().get(id.0).ok_or_else(|| {
            Error::BlockName(format!("block id {} is not in the source's registry", id.0))
        })?;
        let t = match self.direction {
            Direction::JavaToBedrock => table().java_to_bedrock(name),
            Direction::BedrockToJava => table().bedrock_to_java_at(name, wet, self.bedrock_version),
        };
        let m = Mapped { id: self.target(&t.name)?, fidelity: t.fidelity, water: t.water };
        if wet {
            self.wet.insert(id, m);
        } else {
            let i = id.0 as usize;
            if self.dry.len() <= i {
                self.dry.resize(i + 1, None);
            }
            self.dry[i] = Some(m);
        }
        Ok(m)
    }

    fn count(&mut self, from: &Schema, id: BlockId, fidelity: Fidelity, n: u64) {
        let list = match fidelity {
            Fidelity::Exact => return,
            Fidelity::Approximated => &mut self.report.approximated,
            Fidelity::Dropped => &mut self.report.dropped,
        };
        let name = from.blocks().get(id.0).unwrap_or("?");
        match list.get_mut(name) {
            Some(c) => *c += n,
            None => drop(list.insert(name.to_string(), n)),
        }
    }

    /// One chunk (encoded with `from`) re-encoded with the target schema.
    pub fn chunk(&mut self, bytes: &[u8], from: &Schema) -> Result<Vec<u8>> {
        let view = ChunkView::parse(bytes)?;
        let out = if view.layered_block_count() == 0 {
            let source: Vec<BlockId> = view.palette_iter().collect();
            let mut locals = [0u16; CELLS];
            view.read_locals(&mut locals);
            self.paletted(&source, &locals, view.bits_per_block(), from)?
        } else {
            self.cells(&Chunk::decode(bytes, from)?, from)?
        };
        Ok(out.encode(&self.to))
    }

    /// [`chunk`](Self::chunk) on a decoded chunk: its blocks (`from`'s states) translated into
    /// a chunk of the target schema ([`schema`](Self::schema)), for a caller that encodes the
    /// result once in the format it ends in. Only blocks are carried (no components or
    /// entities), as by `chunk`.
    pub fn translate(&mut self, chunk: &Chunk, from: &Schema) -> Result<Chunk> {
        if chunk.layered_block_count() == 0 {
            let mut locals = [0u16; CELLS];
            chunk.read_locals(&mut locals);
            return self.paletted(chunk.palette(), &locals, chunk.bits_per_block(), from);
        }
        self.cells(chunk, from)
    }

    /// The cell-by-cell translation of a chunk with extra layers.
    fn cells(&mut self, src: &Chunk, from: &Schema) -> Result<Chunk> {
        let mut blocks = [BlockId(0); CELLS];
        // Cells per source block: dry ones by id, wet ones apart (rare).
        let mut dry_counts: Vec<u32> = vec![0; from.blocks().len()];
        let mut wet_counts: HashMap<BlockId, u64> = HashMap::new();
        let mut water_cells = Vec::new();
        for i in 0..CELLS as u16 {
            let b = src.get_index(i);
            let extra = src.layers(i);
            let mut wet = false;
            if self.direction == Direction::BedrockToJava {
                for &l in extra {
                    let name = from.blocks().get(l.0).unwrap_or("?");
                    if name.starts_with("minecraft:water[")
                        || name.starts_with("minecraft:flowing_water[")
                    {
                        wet = true;
                    } else {
                        self.report.cells += 1;
                        *self
                            .report
                            .dropped
                            .entry(format!("{name} (second layer)"))
                            .or_default() += 1;
                    }
                }
            }
            let m = self.map(from, b, wet)?;
            match (wet, dry_counts.get_mut(b.0 as usize)) {
                (false, Some(c)) => *c += 1,
                _ => *wet_counts.entry(b).or_default() += 1,
            }
            blocks[i as usize] = m.id;
            if m.water {
                water_cells.push(i);
            }
        }
        for (id, &n) in dry_counts.iter().enumerate() {
            if n > 0 {
                let b = BlockId(id as u32);
                let m = self.map(from, b, false)?;
                self.count(from, b, m.fidelity, u64::from(n));
                self.report.cells += u64::from(n);
            }
        }
        for (b, n) in wet_counts {
            let m = self.map(from, b, true)?;
            self.count(from, b, m.fidelity, n);
            self.report.cells += n;
        }
        let mut out = Chunk::new(blocks[0]);
        out.set_blocks(&blocks);
        if !water_cells.is_empty() {
            let water = match self.water {
                Some(w) => w,
                None => {
                    let w = self.target(BEDROCK_WATER)?;
                    self.water = Some(w);
                    w
                }
            };
            for i in water_cells {
                out.push_layer(i, water);
                self.report.cells += 1;
            }
        }
        out.compact();
        Ok(out)
    }

    /// The translation of a chunk without extra layers (every Java chunk, most Bedrock ones),
    /// given as its `source` palette and the cells' `locals`, packed at `bits`: the palette
    /// translated once, the local ids carried over as they are, no lookup per cell.
    fn paletted(
        &mut self,
        source: &[BlockId],
        locals: &[u16; CELLS],
        bits: u32,
        from: &Schema,
    ) -> Result<Chunk> {
        // Counted over every value the packing can hold: one outside the palette is damage.
        let counts = count_indices(locals, 1 << bits);
        if counts.iter().skip(source.len()).any(|&n| n > 0) || source.is_empty() {
            // Unreachable for a parsed view (parsing checks every local id), kept as an error.
            return Err(Error::SubChunk(
                "a cell's palette index is past the end of the chunk's palette".into(),
            ));
        }
        let mut target = Vec::with_capacity(source.len());
        let mut water = false;
        for (&b, &n) in source.iter().zip(&counts) {
            let m = self.map(from, b, false)?;
            target.push(m.id);
            if n > 0 {
                self.count(from, b, m.fidelity, u64::from(n));
                self.report.cells += u64::from(n);
                water |= m.water;
            }
        }
        let mut out = Chunk::new(target[0]);
        out.set_blocks_paletted(&target, locals);
        if water {
            let w = match self.water {
                Some(w) => w,
                None => {
                    let w = self.target(BEDROCK_WATER)?;
                    self.water = Some(w);
                    w
                }
            };
            for (i, &l) in locals.iter().enumerate() {
                if self.map(from, source[l as usize], false)?.water {
                    out.push_layer(i as u16, w);
                    self.report.cells += 1;
                }
            }
        }
        out.compact();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_table_parses_and_holds_both_editions() {
        let t = table();
        let (java, bedrock) = t.len();
        assert!(java > 30_000 && bedrock > 11_000, "{java} Java, {bedrock} Bedrock states");
        assert_eq!(t.block_version(), 18_168_865);
    }

    #[test]
    fn plain_and_typed_states_translate_exactly() {
        let t = table();
        let stone = t.java_to_bedrock("minecraft:stone");
        assert_eq!((stone.name.as_str(), stone.fidelity), ("minecraft:stone", Fidelity::Exact));
        let lava = t.java_to_bedrock("minecraft:lava[level=0]");
        assert_eq!(lava.name, "minecraft:lava[liquid_depth=0]");
        let back = t.bedrock_to_java(&lava.name, false);
        assert_eq!(
            (back.name.as_str(), back.fidelity),
            ("minecraft:lava[level=0]", Fidelity::Exact)
        );
        let chest =
            t.java_to_bedrock("minecraft:chest[facing=north,type=single,waterlogged=false]");
        assert_eq!(chest.name, "minecraft:chest[minecraft:cardinal_direction=\"north\"]");
        // A chest's half and a bed's colour are the block entity's in Bedrock: exact here.
        let left = t.java_to_bedrock("minecraft:chest[facing=north,type=left,waterlogged=false]");
        assert_eq!((left.name, left.fidelity), (chest.name, Fidelity::Exact));
        for part in ["foot", "head"] {
            let bed = format!("minecraft:yellow_bed[facing=west,occupied=false,part={part}]");
            assert_eq!(t.java_to_bedrock(&bed).fidelity, Fidelity::Exact, "{bed}");
        }
        // Before 1.20.3, short grass was `minecraft:grass`.
        let grass = t.java_to_bedrock("minecraft:grass");
        assert_eq!(grass, t.java_to_bedrock("minecraft:short_grass"));
        assert_ne!(grass.fidelity, Fidelity::Dropped);
    }

    #[test]
    fn waterlogged_goes_to_the_second_layer_and_back() {
        let t = table();
        let java = "minecraft:oak_slab[type=bottom,waterlogged=true]";
        let b = t.java_to_bedrock(java);
        assert!(b.water);
        assert_eq!(b.fidelity, Fidelity::Exact, "{b:?}");
        let j = t.bedrock_to_java(&b.name, true);
        assert_eq!((j.name.as_str(), j.fidelity), (java, Fidelity::Exact));
    }

    #[test]
    fn biomes_cross_by_bedrock_ids_and_legacy_variants_are_approximated() {
        let t = table();
        assert_eq!(t.java_biome_to_bedrock("minecraft:plains"), (1, Fidelity::Exact));
        assert_eq!(t.java_biome_to_bedrock("minecraft:nether_wastes"), (8, Fidelity::Exact));
        assert_eq!(t.bedrock_biome_name(8), Some("hell"));
        assert_eq!(t.bedrock_biome_to_java(0), ("minecraft:ocean", Fidelity::Exact));
        let (j, f) = t.bedrock_biome_to_java(t.java_biomes["minecraft:desert"] + 128);
        assert_eq!((j, f), ("minecraft:desert", Fidelity::Approximated), "desert_mutated");
        assert_eq!(t.java_biome_to_bedrock("mymod:glade").1, Fidelity::Approximated);
        assert_eq!(t.java_biome_to_bedrock("minecraft:end_highlands").1, Fidelity::Approximated);
    }

    #[test]
    fn blocks_always_in_water_get_bedrock_water() {
        let t = table();
        let grass = t.java_to_bedrock("minecraft:tall_seagrass[half=upper]");
        assert!(grass.water && grass.fidelity == Fidelity::Exact, "{grass:?}");
        let back = t.bedrock_to_java(&grass.name, true);
        assert_eq!(back.name, "minecraft:tall_seagrass[half=upper]");
        assert!(!t.java_to_bedrock("minecraft:stone").water);
    }

    /// A chunk translated as it is ([`ChunkTranslator::translate`]) and encoded
    /// ([`ChunkTranslator::chunk`]) comes out the same, with the same report: paletted, with
    /// water to add, and with extra layers (the cell-by-cell path).
    #[test]
    fn a_decoded_chunk_translates_as_its_encoding_does() {
        let mut from = Schema::new();
        let mut id = |n: &str| from.add_block(n, &[]).unwrap();
        let (air, stone) = (id("minecraft:air"), id("minecraft:stone"));
        let slab = id("minecraft:oak_slab[type=bottom,waterlogged=true]");
        let wire = id("minecraft:redstone_wire[east=side,north=none,power=3,south=none,west=none]");
        let machine = id("mymod:machine[on=true]");
        let mut paletted = Chunk::new(air);
        for i in 0..300u16 {
            paletted.set_index(i * 13 % 4096, [stone, slab, wire, machine][usize::from(i % 4)]);
        }
        let mut layered = paletted.clone();
        layered.push_layer(5, stone);
        layered.push_layer(4000, machine);
        for direction in [Direction::JavaToBedrock, Direction::BedrockToJava] {
            for c in [&Chunk::new(air), &paletted, &layered] {
                let mut encoded = ChunkTranslator::new(direction, Schema::new());
                let mut decoded = ChunkTranslator::new(direction, Schema::new());
                let bytes = encoded.chunk(&c.encode(&from), &from).unwrap();
                let chunk = decoded.translate(c, &from).unwrap();
                assert_eq!(encoded.schema().blocks(), decoded.schema().blocks());
                assert_eq!(Chunk::decode(&bytes, encoded.schema()).unwrap(), chunk);
                assert_eq!(encoded.report(), decoded.report(), "{direction:?}");
            }
        }
    }

    #[test]
    fn many_to_one_states_are_approximated_and_unknown_blocks_dropped() {
        let t = table();
        let wire = "minecraft:redstone_wire[east=side,north=none,power=3,south=none,west=none]";
        assert_eq!(t.java_to_bedrock(wire).fidelity, Fidelity::Approximated);
        let gone = t.java_to_bedrock("mymod:machine[on=true]");
        assert_eq!((gone.name.as_str(), gone.fidelity), ("minecraft:air", Fidelity::Dropped));
        let near = t.java_to_bedrock("minecraft:oak_log[axis=sideways]");
        assert_eq!(near.fidelity, Fidelity::Approximated);
        assert!(near.name.starts_with("minecraft:oak_log["), "{near:?}");
    }

    #[test]
    fn damaged_tables_are_errors() {
        for text in [
            "",
            "version\tx\t1\t2\n",
            "version\t1\t1\t2\nJ\tminecraft:stone\t0\n",
            "Q\n",
            "G\tminecraft:plains\tx\n",
            "I\tminecraft:bed\tminecraft:bed\tx\n",
            // One Java state twice.
            "version\t1\t1\t2\nB\tminecraft:stone\tminecraft:stone\nJ\tminecraft:stone\t0\nJ\tminecraft:stone\t0\n",
        ] {
            assert!(EditionTable::parse(text).is_err(), "{text:?}");
        }
    }

    proptest::proptest! {
        /// A name kept as two pieces orders, compares and prints as the string they make
        /// (the binary searches rely on it).
        #[test]
        fn a_name_in_two_pieces_orders_as_its_string(
            block in "[a-c:_]{0,5}",
            props in "(\\[[a-c=,]{0,5}\\])?",
            other_block in "[a-c:_]{0,5}",
            other_props in "(\\[[a-c=,]{0,5}\\])?",
            query in "[a-c:_\\[=,\\]]{0,8}",
        ) {
            let (joined, other) = (Joined(&block, &props), Joined(&other_block, &other_props));
            let whole = format!("{block}{props}");
            proptest::prop_assert_eq!(joined.to_string(), whole.clone());
            proptest::prop_assert_eq!(joined.cmp_str(&query), whole.as_str().cmp(query.as_str()));
            proptest::prop_assert_eq!(joined.starts_with(&query), whole.starts_with(&query));
            proptest::prop_assert_eq!(joined.starts_with(&block), true);
            proptest::prop_assert_eq!(
                joined.cmp_joined(other),
                whole.cmp(&format!("{other_block}{other_props}"))
            );
        }
    }

    #[test]
    fn a_name_is_its_interned_pieces() {
        let t = table();
        let (java, bedrock) = t.len();
        // Far fewer pieces than names: the point of keeping them apart.
        assert!(t.pieces.len() * 4 < java + bedrock, "{} pieces", t.pieces.len());
        for &(n, i) in t.java.iter().step_by(97) {
            let name = t.name(n).to_string();
            assert_eq!(t.java_index(&name), Some(i), "{name}");
        }
    }
}
