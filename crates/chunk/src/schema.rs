//! The world schema: block, component, entity and structure registries, component sizes and
//! the block → components map, with their `worldMeta` encodings.
//!
//! Layout of the encodings: `docs/format/chunk-v1.md`, section "Registries and schema".

use std::fmt;

use crate::{Error, Result};

/// A global block id: the block's registration index in the world's block registry.
///
/// Stored as `u64` in the chunk palette; values beyond `u32` are rejected on decode.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    zerocopy::IntoBytes,
    zerocopy::FromBytes,
    zerocopy::Immutable,
    zerocopy::KnownLayout,
)]
#[repr(transparent)]
pub struct BlockId(pub u32);

/// A component id as stored in chunks: the registration index, with the most significant bit
/// set for variable-size components (MSB = 0: fixed size).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComponentId(pub u64);

impl ComponentId {
    /// The variable-size flag (the most significant bit).
    pub const VARIABLE: u64 = 1 << 63;

    /// The id of the fixed-size component registered at `index`.
    pub const fn fixed(index: u32) -> Self {
        ComponentId(index as u64)
    }

    /// The id of the variable-size component registered at `index`.
    pub const fn variable(index: u32) -> Self {
        ComponentId(index as u64 | Self::VARIABLE)
    }

    /// The registration index (the id without its size-class bit).
    pub const fn index(self) -> u64 {
        self.0 & !Self::VARIABLE
    }

    /// Whether the id names a variable-size component.
    pub const fn is_variable(self) -> bool {
        self.0 & Self::VARIABLE != 0
    }
}

impl fmt::LowerHex for ComponentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

/// The size class of a component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ComponentKind {
    /// Every value has exactly this many bytes (0 is allowed: a marker component).
    Fixed(u32),
    /// Values of any length, located through an offset table.
    Variable,
}

impl fmt::Display for ComponentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ComponentKind::Fixed(n) => write!(f, "fixed {n} bytes"),
            ComponentKind::Variable => f.write_str("variable size"),
        }
    }
}

/// A registry: names in registration order; an entry's id is its index and never changes.
///
/// Encoding: LEB128 count, then per entry LEB128 byte length and the UTF-8 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Registry {
    name: &'static str,
    names: Vec<String>,
    index: ahash::AHashMap<String, u32>,
}

impl Registry {
    /// An empty registry; `name` ("blocks", "components", ...) appears in error messages.
    pub fn new(name: &'static str) -> Self {
        Registry { name, names: Vec::new(), index: ahash::AHashMap::new() }
    }

    /// Registers `entry` and returns its id, or [`Error::DuplicateName`].
    pub fn push(&mut self, entry: &str) -> Result<u32> {
        if self.index.contains_key(entry) {
            return Err(Error::DuplicateName { registry: self.name, name: entry.to_owned() });
        }
        let id = u32::try_from(self.names.len())
            .map_err(|_| Error::BadSchema(format!("{} registry is full", self.name)))?;
        self.names.push(entry.to_owned());
        self.index.insert(entry.to_owned(), id);
        Ok(id)
    }

    /// The name registered under `id`.
    pub fn get(&self, id: u32) -> Option<&str> {
        self.names.get(id as usize).map(String::as_str)
    }

    /// The id of `name`.
    pub fn find(&self, name: &str) -> Option<u32> {
        self.index.get(name).copied()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the registry is empty.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The names in id order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.names.iter().map(String::as_str)
    }

    /// The `worldMeta` encoding.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_leb(&mut out, self.names.len() as u64);
        for n in &self.names {
            write_leb(&mut out, n.len() as u64);
            out.extend_from_slice(n.as_bytes());
        }
        out
    }

    /// Decodes the `worldMeta` encoding; the whole input must be consumed.
    pub fn decode(name: &'static str, bytes: &[u8]) -> Result<Self> {
        let mut r = Reader { bytes, pos: 0, what: name };
        let count = r.leb()?;
        let mut reg = Registry::new(name);
        for i in 0..count {
            let len = r.leb()?;
            let raw = r.take(len)?;
            let s = std::str::from_utf8(raw)
                .map_err(|_| Error::BadUtf8 { registry: name, index: i as usize })?;
            reg.push(s)?;
        }
        r.finish()?;
        Ok(reg)
    }

    fn check_extends(&self, old: &Registry) -> Result<()> {
        if self.names.len() < old.names.len() {
            return Err(Error::RegistryShrunk {
                registry: self.name,
                old: old.names.len(),
                new: self.names.len(),
            });
        }
        for (i, (o, n)) in old.names.iter().zip(&self.names).enumerate() {
            if o != n {
                return Err(Error::RegistryEntryChanged {
                    registry: self.name,
                    index: i,
                    old: o.clone(),
                    new: n.clone(),
                });
            }
        }
        Ok(())
    }
}

/// The encodings of a [`Schema`], one per `worldMeta` property (see [`SchemaBytes::KEYS`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchemaBytes {
    /// `blocks`: the block registry.
    pub blocks: Vec<u8>,
    /// `components`: the component registry.
    pub components: Vec<u8>,
    /// `entities`: the entity type registry.
    pub entities: Vec<u8>,
    /// `structures`: the structure registry.
    pub structures: Vec<u8>,
    /// `schema`: component sizes and the block → components map.
    pub layout: Vec<u8>,
}

impl SchemaBytes {
    /// The `worldMeta` property names, in field order.
    pub const KEYS: [&'static str; 5] =
        ["blocks", "components", "entities", "structures", "schema"];
}

/// A world's schema: the four registries, each component's size class, and the components
/// every block carries.
///
/// A world's schema only grows: [`Schema::check_extends`] rejects a schema that renames,
/// reorders, removes or resizes an existing entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    blocks: Registry,
    components: Registry,
    entities: Registry,
    structures: Registry,
    kinds: Vec<ComponentKind>,
    block_components: Vec<Vec<ComponentId>>,
}

impl Default for Schema {
    fn default() -> Self {
        Self::new()
    }
}

impl Schema {
    /// An empty schema.
    pub fn new() -> Self {
        Schema {
            blocks: Registry::new("blocks"),
            components: Registry::new("components"),
            entities: Registry::new("entities"),
            structures: Registry::new("structures"),
            kinds: Vec::new(),
            block_components: Vec::new(),
        }
    }

    /// A schema holding only `minecraft:air` (block id 0): the schema of a world created
    /// without one, and where a conversion's block states start.
    pub fn air_only() -> Self {
        let mut s = Self::new();
        s.add_block("minecraft:air", &[]).expect("a fresh schema accepts air");
        s
    }

    /// Registers a component and returns its chunk id (MSB set for variable size).
    pub fn add_component(&mut self, name: &str, kind: ComponentKind) -> Result<ComponentId> {
        let i = self.components.push(name)?;
        self.kinds.push(kind);
        Ok(match kind {
            ComponentKind::Fixed(_) => ComponentId::fixed(i),
            ComponentKind::Variable => ComponentId::variable(i),
        })
    }

    /// Registers a block carrying `components` (registered before; order does not matter,
    /// duplicates are ignored) and returns its global id.
    pub fn add_block(&mut self, name: &str, components: &[ComponentId]) -> Result<BlockId> {
        let mut comps = components.to_vec();
        comps.sort_unstable();
        comps.dedup();
        for &c in &comps {
            if self.component_kind(c).is_none() {
                return Err(Error::UnknownComponent { id: c.0 });
            }
        }
        let id = self.blocks.push(name)?;
        self.block_components.push(comps);
        Ok(BlockId(id))
    }

    /// Registers an entity type and returns its id.
    pub fn add_entity(&mut self, name: &str) -> Result<u32> {
        self.entities.push(name)
    }

    /// Registers a structure and returns its id.
    pub fn add_structure(&mut self, name: &str) -> Result<u32> {
        self.structures.push(name)
    }

    /// The block registry.
    pub fn blocks(&self) -> &Registry {
        &self.blocks
    }

    /// The component registry.
    pub fn components(&self) -> &Registry {
        &self.components
    }

    /// The entity type registry.
    pub fn entities(&self) -> &Registry {
        &self.entities
    }

    /// The structure registry.
    pub fn structures(&self) -> &Registry {
        &self.structures
    }

    /// The size class of `id`, or `None` when it is unknown or its MSB disagrees with the
    /// registered size class.
    pub fn component_kind(&self, id: ComponentId) -> Option<ComponentKind> {
        let k = *self.kinds.get(usize::try_from(id.index()).ok()?)?;
        (matches!(k, ComponentKind::Variable) == id.is_variable()).then_some(k)
    }

    /// The components `block` carries, ascending; empty for unknown blocks.
    pub fn block_components(&self, block: BlockId) -> &[ComponentId] {
        self.block_components.get(block.0 as usize).map_or(&[], Vec::as_slice)
    }

    /// Whether `block` is registered.
    pub fn has_block(&self, block: BlockId) -> bool {
        (block.0 as usize) < self.blocks.len()
    }

    /// Checks that `self` (the schema mods register now) extends `old` (the world's stored
    /// schema): every existing entry keeps its name and index, every existing component its
    /// size class, every existing block its components. Adding entries is fine.
    pub fn check_extends(&self, old: &Schema) -> Result<()> {
        self.blocks.check_extends(&old.blocks)?;
        self.components.check_extends(&old.components)?;
        self.entities.check_extends(&old.entities)?;
        self.structures.check_extends(&old.structures)?;
        for (i, (o, n)) in old.kinds.iter().zip(&self.kinds).enumerate() {
            if o != n {
                return Err(Error::ComponentResized {
                    name: old.components.names[i].clone(),
                    old: *o,
                    new: *n,
                });
            }
        }
        for (i, (o, n)) in old.block_components.iter().zip(&self.block_components).enumerate() {
            if o != n {
                return Err(Error::BlockComponentsChanged { name: old.blocks.names[i].clone() });
            }
        }
        Ok(())
    }

    /// The `worldMeta` encodings.
    ///
    /// `layout` is: LEB128 component count, per component LEB128 `0` (variable) or `size + 1`
    /// (fixed); LEB128 block count, per block LEB128 `k` then `k` ascending LEB128 component
    /// registration indices.
    pub fn encode(&self) -> SchemaBytes {
        let mut layout = Vec::new();
        write_leb(&mut layout, self.kinds.len() as u64);
        for k in &self.kinds {
            write_leb(
                &mut layout,
                match k {
                    ComponentKind::Variable => 0,
                    ComponentKind::Fixed(n) => u64::from(*n) + 1,
                },
            );
        }
        write_leb(&mut layout, self.block_components.len() as u64);
        for comps in &self.block_components {
            write_leb(&mut layout, comps.len() as u64);
            for c in comps {
                write_leb(&mut layout, c.index());
            }
        }
        SchemaBytes {
            blocks: self.blocks.encode(),
            components: self.components.encode(),
            entities: self.entities.encode(),
            structures: self.structures.encode(),
            layout,
        }
    }

    /// Decodes the `worldMeta` encodings; counts must agree between registries and layout.
    pub fn decode(bytes: &SchemaBytes) -> Result<Schema> {
        let mut s = Schema {
            blocks: Registry::decode("blocks", &bytes.blocks)?,
            components: Registry::decode("components", &bytes.components)?,
            entities: Registry::decode("entities", &bytes.entities)?,
            structures: Registry::decode("structures", &bytes.structures)?,
            kinds: Vec::new(),
            block_components: Vec::new(),
        };
        let mut r = Reader { bytes: &bytes.layout, pos: 0, what: "schema" };
        let nc = r.leb()?;
        if nc != s.components.len() as u64 {
            return Err(Error::BadSchema(format!(
                "layout lists {nc} components, the registry {}",
                s.components.len()
            )));
        }
        for _ in 0..nc {
            let v = r.leb()?;
            s.kinds.push(match v {
                0 => ComponentKind::Variable,
                v => ComponentKind::Fixed(u32::try_from(v - 1).map_err(|_| {
                    Error::BadSchema(format!("component size {} beyond u32", v - 1))
                })?),
            });
        }
        let nb = r.leb()?;
        if nb != s.blocks.len() as u64 {
            return Err(Error::BadSchema(format!(
                "layout lists {nb} blocks, the registry {}",
                s.blocks.len()
            )));
        }
        for b in 0..nb {
            let k = r.leb()?;
            if k > nc {
                return Err(Error::BadSchema(format!(
                    "block {b} lists {k} components, only {nc} exist"
                )));
            }
            let mut comps = Vec::with_capacity(k as usize);
            let mut prev = None;
            for _ in 0..k {
                let c = r.leb()?;
                if c >= nc || prev.is_some_and(|p| p >= c) {
                    return Err(Error::BadSchema(format!(
                        "block {b}: component index {c} unknown or not ascending"
                    )));
                }
                prev = Some(c);
                comps.push(match s.kinds[c as usize] {
                    ComponentKind::Variable => ComponentId::variable(c as u32),
                    ComponentKind::Fixed(_) => ComponentId::fixed(c as u32),
                });
            }
            comps.sort_unstable();
            s.block_components.push(comps);
        }
        r.finish()?;
        Ok(s)
    }
}

fn write_leb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    /// Canonical unsigned LEB128 (at most 10 bytes, no redundant trailing zero groups).
    fn leb(&mut self) -> Result<u64> {
        let start = self.pos;
        let bad = || Error::BadLeb128 { what: self.what, offset: start };
        let mut v = 0u64;
        for i in 0..10 {
            let b = *self.bytes.get(self.pos).ok_or_else(bad)?;
            self.pos += 1;
            let low = u64::from(b & 0x7f);
            if i == 9 && low > 1 {
                return Err(bad());
            }
            v |= low << (7 * i);
            if b & 0x80 == 0 {
                if b == 0 && i > 0 {
                    return Err(bad());
                }
                return Ok(v);
            }
        }
        Err(bad())
    }

    fn take(&mut self, len: u64) -> Result<&'a [u8]> {
        let rest = self.bytes.len() - self.pos;
        if len > rest as u64 {
            return Err(Error::BadSchema(format!(
                "{}: entry of {len} bytes at byte {} but only {rest} left",
                self.what, self.pos
            )));
        }
        let s = &self.bytes[self.pos..self.pos + len as usize];
        self.pos += len as usize;
        Ok(s)
    }

    fn finish(&self) -> Result<()> {
        if self.pos != self.bytes.len() {
            return Err(Error::BadSchema(format!(
                "{}: {} trailing bytes",
                self.what,
                self.bytes.len() - self.pos
            )));
        }
        Ok(())
    }
}
