//! What a game server keeps beside its chunks: players (position, game mode, inventory, the
//! item on the cursor, the container open, their ender chest) and containers (a chest's items), saved in the same
//! [`TickSave`] as the chunks they belong with, so a crash never separates them.
//!
//! The byte layout is specified in `docs/format/game-records.md` (players version 3,
//! containers version 2; version 1 records, which have no item data, and version 2 player
//! records, which have no dimension, still read). Items go by their namespaced name
//! (`minecraft:diamond`), count and data: the item's own NBT (a name, enchantments, damage,
//! a book's pages, a shulker box's items), kept as the bytes the server gives.
//!
//! ```
//! use terrane::game::{self, ItemSlot, PlayerRecord};
//!
//! let alice = PlayerRecord {
//!     position: [8.5, 65.0, 8.5],
//!     items: vec![ItemSlot::new(36, "minecraft:diamond", 3)],
//!     ..PlayerRecord::default()
//! };
//! let mut save = terrane::TickSave::new();
//! game::put_player(&mut save, 0xa11ce, &alice);
//! assert_eq!(game::decode_player(&game::encode_player(&alice)).unwrap(), alice);
//! ```

use std::collections::BTreeMap;

use terrane_store::tables::WORLD_PROPERTIES;

use crate::{Error, Result, TickSave, World};

/// The key prefix of player records in `worldProperties`; 16 bytes of UUID follow.
pub const PLAYER_PREFIX: &[u8] = b"game:player:";
/// The key prefix of container records in `worldProperties`; dimension and position follow.
pub const CONTAINER_PREFIX: &[u8] = b"game:container:";

const PLAYER_MAGIC: &[u8; 4] = b"TGP3";
const CONTAINER_MAGIC: &[u8; 4] = b"TGC2";
const PLAYER_MAGIC_V2: &[u8; 4] = b"TGP2";
const PLAYER_MAGIC_V1: &[u8; 4] = b"TGP1";
const CONTAINER_MAGIC_V1: &[u8; 4] = b"TGC1";
/// Bytes of one item's data at most.
pub const MAX_ITEM_DATA: usize = 1 << 20;
/// Slots per record at most (a double chest has 54; a player 46).
pub const MAX_SLOTS: usize = 256;

/// One stack of items in a numbered slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemSlot {
    /// The slot, in the numbering of the inventory it is in (Minecraft's window slots).
    pub slot: u16,
    /// The namespaced item name, e.g. `minecraft:diamond`.
    pub item: String,
    /// How many, 1–255.
    pub count: u8,
    /// The item's data: Minecraft Java's item `tag` compound as uncompressed binary NBT (a
    /// root compound; its name is not data), empty for an item without any. At most
    /// [`MAX_ITEM_DATA`] bytes.
    pub data: Vec<u8>,
}

impl ItemSlot {
    /// A stack of `count` `item` in `slot`, without data.
    pub fn new(slot: u16, item: impl Into<String>, count: u8) -> Self {
        Self { slot, item: item.into(), count, data: Vec::new() }
    }

    /// The same stack with `data` ([`ItemSlot::data`]).
    pub fn with_data(mut self, data: Vec<u8>) -> Self {
        self.data = data;
        self
    }
}

/// A player as the last save left them.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PlayerRecord {
    /// Block coordinates of the feet: x, y, z.
    pub position: [f64; 3],
    /// Yaw, degrees.
    pub yaw: f32,
    /// Pitch, degrees.
    pub pitch: f32,
    /// Minecraft's game mode number: 0 survival, 1 creative, 2 adventure, 3 spectator.
    pub game_mode: u8,
    /// The inventory's stacks, by slot, ascending.
    pub items: Vec<ItemSlot>,
    /// The stack held on the cursor in an open window (counted with the inventory); its
    /// `slot` is not stored (0).
    pub cursor: Option<ItemSlot>,
    /// The container the player had open: dimension and block position.
    pub open_container: Option<(u64, [i64; 3])>,
    /// The player's ender chest, slots 0–26 (every ender chest block opens the same one).
    pub ender_items: Vec<ItemSlot>,
    /// The dimension the player is in: 0 the Overworld, 1 the Nether, 2 the End (terrane's
    /// numbers, as imports give them).
    pub dimension: u64,
}

/// A container block's contents (chest, barrel...).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ContainerRecord {
    /// The stacks, by slot, ascending.
    pub items: Vec<ItemSlot>,
}

/// The id Minecraft Java gives a player in offline mode: the version 3 UUID of the bytes
/// `OfflinePlayer:` + name (MD5), as a big-endian `u128`. A server keys its players' records
/// by it, so that the players of an imported world (whose `playerdata/<uuid>.dat` files an
/// offline server named so) find their own.
pub fn offline_player_id(name: &str) -> u128 {
    use md5::{Digest, Md5};
    let mut h: [u8; 16] = Md5::digest(format!("OfflinePlayer:{name}").as_bytes()).into();
    h[6] = (h[6] & 0x0f) | 0x30; // version 3
    h[8] = (h[8] & 0x3f) | 0x80; // the IETF variant
    u128::from_be_bytes(h)
}

pub use terrane_anvil::folder::uuid_text;

/// The key of player `id` (a UUID as a big-endian `u128`).
pub fn player_key(id: u128) -> Vec<u8> {
    let mut k = PLAYER_PREFIX.to_vec();
    k.extend_from_slice(&id.to_be_bytes());
    k
}

/// The key of the container at `pos` in dimension `dim`.
pub fn container_key(dim: u64, pos: [i64; 3]) -> Vec<u8> {
    let mut k = CONTAINER_PREFIX.to_vec();
    k.extend_from_slice(&dim.to_be_bytes());
    for v in pos {
        k.extend_from_slice(&v.to_be_bytes());
    }
    k
}

/// The dimension and position of a [`container_key`]; `None` for any other key.
pub fn parse_container_key(key: &[u8]) -> Option<(u64, [i64; 3])> {
    let b = key.strip_prefix(CONTAINER_PREFIX).filter(|b| b.len() == 32)?;
    let n = |i: usize| <[u8; 8]>::try_from(&b[i..i + 8]).unwrap_or_default();
    let v = |i: usize| i64::from_be_bytes(n(i));
    Some((u64::from_be_bytes(n(0)), [v(8), v(16), v(24)]))
}

/// Whether `key` is the record of a container in `area` of dimension `dim`.
pub fn container_in_area(key: &[u8], dim: u64, area: terrane_section::AreaId) -> bool {
    parse_container_key(key).is_some_and(|(d, [x, y, z])| {
        d == dim
            && terrane_section::AreaId::of_chunk(crate::ChunkPos::new(x >> 4, y >> 4, z >> 4))
                == area
    })
}

/// Writes `record` as player `id` in `save`.
pub fn put_player(save: &mut TickSave, id: u128, record: &PlayerRecord) {
    save.put_object(WORLD_PROPERTIES, player_key(id), encode_player(record));
}

/// Writes `record` as the container at `pos` of dimension `dim` in `save`.
pub fn put_container(save: &mut TickSave, dim: u64, pos: [i64; 3], record: &ContainerRecord) {
    save.put_object(WORLD_PROPERTIES, container_key(dim, pos), encode_container(record));
}

/// Deletes the container at `pos` of dimension `dim` in `save`.
pub fn delete_container(save: &mut TickSave, dim: u64, pos: [i64; 3]) {
    save.delete_object(WORLD_PROPERTIES, container_key(dim, pos));
}

/// Player `id`'s record, `None` when the world has never saved them.
pub fn player(world: &World, id: u128) -> Result<Option<PlayerRecord>> {
    let key = player_key(id);
    match world.store().get(WORLD_PROPERTIES, &key)? {
        Some(o) => decode_player(&o.data).map(Some).map_err(|e| e.at_key(&key)),
        None => Ok(None),
    }
}

/// Every saved player, by id.
pub fn players(world: &World) -> Result<BTreeMap<u128, PlayerRecord>> {
    let mut out = BTreeMap::new();
    for entry in world.store().scan_prefix(WORLD_PROPERTIES, PLAYER_PREFIX)? {
        let (key, o) = entry?;
        let id = key
            .strip_prefix(PLAYER_PREFIX)
            .and_then(|b| <[u8; 16]>::try_from(b).ok())
            .map(u128::from_be_bytes)
            .ok_or_else(|| RecordError::new(0, "the key is not 16 bytes of UUID").at_key(&key))?;
        out.insert(id, decode_player(&o.data).map_err(|e| e.at_key(&key))?);
    }
    Ok(out)
}

/// The container at `pos` of dimension `dim`, `None` when none was saved.
pub fn container(world: &World, dim: u64, pos: [i64; 3]) -> Result<Option<ContainerRecord>> {
    let key = container_key(dim, pos);
    match world.store().get(WORLD_PROPERTIES, &key)? {
        Some(o) => decode_container(&o.data).map(Some).map_err(|e| e.at_key(&key)),
        None => Ok(None),
    }
}

/// Starts reading the records of the containers at `positions` of dimension `dim` ahead
/// ([`World::read_ahead_objects`]).
pub fn read_ahead_containers(world: &World, dim: u64, positions: &[[i64; 3]]) -> Option<u64> {
    world.read_ahead_objects(
        WORLD_PROPERTIES,
        positions.iter().map(|&p| container_key(dim, p)).collect(),
    )
}

/// Every saved container, by dimension and position.
pub fn containers(world: &World) -> Result<BTreeMap<(u64, [i64; 3]), ContainerRecord>> {
    let mut out = BTreeMap::new();
    for entry in world.store().scan_prefix(WORLD_PROPERTIES, CONTAINER_PREFIX)? {
        let (key, o) = entry?;
        let at = parse_container_key(&key).ok_or_else(|| {
            RecordError::new(0, "the key is not a dimension and position").at_key(&key)
        })?;
        out.insert(at, decode_container(&o.data).map_err(|e| e.at_key(&key))?);
    }
    Ok(out)
}

/// How many of each item the world's players (cursor and ender chest included) and
/// containers hold: the sum
/// a server that neither creates nor destroys items keeps constant.
pub fn item_totals(world: &World) -> Result<BTreeMap<String, u64>> {
    let mut totals = BTreeMap::new();
    let mut add = |item: &str, n: u8| *totals.entry(item.to_string()).or_insert(0) += u64::from(n);
    for p in players(world)?.values() {
        p.items.iter().chain(&p.ender_items).for_each(|s| add(&s.item, s.count));
        if let Some(c) = &p.cursor {
            add(&c.item, c.count);
        }
    }
    for c in containers(world)?.values() {
        c.items.iter().for_each(|s| add(&s.item, s.count));
    }
    Ok(totals)
}

/// A damaged record: where in its bytes, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("byte {offset}: {reason}")]
pub struct RecordError {
    /// The offset in the record's bytes.
    pub offset: usize,
    /// What is wrong.
    pub reason: &'static str,
}

impl RecordError {
    fn new(offset: usize, reason: &'static str) -> Self {
        Self { offset, reason }
    }

    fn at_key(self, key: &[u8]) -> Error {
        Error::DamagedRecord { key: String::from_utf8_lossy(key).into_owned(), source: self }
    }
}

/// The bytes of a player record (its stacks in ascending slot order, the first of two in
/// one slot kept: the order the decoder accepts).
pub fn encode_player(p: &PlayerRecord) -> Vec<u8> {
    let mut out = PLAYER_MAGIC.to_vec();
    for v in p.position {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&p.yaw.to_le_bytes());
    out.extend_from_slice(&p.pitch.to_le_bytes());
    out.push(p.game_mode);
    match &p.open_container {
        Some((dim, pos)) => {
            out.push(1);
            out.extend_from_slice(&dim.to_le_bytes());
            pos.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
        }
        None => out.push(0),
    }
    match &p.cursor {
        Some(c) => {
            out.push(1);
            put_stack(&mut out, c);
        }
        None => out.push(0),
    }
    put_slots(&mut out, &p.items);
    put_slots(&mut out, &p.ender_items);
    out.extend_from_slice(&p.dimension.to_le_bytes());
    out
}

/// The bytes of a container record.
pub fn encode_container(c: &ContainerRecord) -> Vec<u8> {
    let mut out = CONTAINER_MAGIC.to_vec();
    put_slots(&mut out, &c.items);
    out
}

fn put_stack(out: &mut Vec<u8>, s: &ItemSlot) {
    let name = &s.item.as_bytes()[..s.item.len().min(255)];
    out.push(name.len() as u8);
    out.extend_from_slice(name);
    out.push(s.count);
    let data = if s.data.len() <= MAX_ITEM_DATA { &s.data[..] } else { &[] };
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
}

fn put_slots(out: &mut Vec<u8>, items: &[ItemSlot]) {
    // Slots go in ascending order, one stack each (the first given), as the decoder reads.
    let mut sorted: Vec<&ItemSlot> = items.iter().collect();
    sorted.sort_by_key(|s| s.slot);
    sorted.dedup_by_key(|s| s.slot);
    let items = &sorted[..sorted.len().min(MAX_SLOTS)];
    out.extend_from_slice(&(items.len() as u16).to_le_bytes());
    for s in items {
        out.extend_from_slice(&s.slot.to_le_bytes());
        put_stack(out, s);
    }
}

/// A player record from its bytes, validated (finite position, known flags, item names,
/// counts of 1 or more, slots ascending, nothing after the end).
pub fn decode_player(bytes: &[u8]) -> std::result::Result<PlayerRecord, RecordError> {
    let mut r = Reader { bytes, at: 0, version: 3 };
    match r.take(4)? {
        m if m == PLAYER_MAGIC => {}
        m if m == PLAYER_MAGIC_V2 => r.version = 2,
        m if m == PLAYER_MAGIC_V1 => r.version = 1,
        _ => {
            return Err(RecordError::new(
                0,
                "not a player record (magic TGP3, TGP2 or TGP1 expected)",
            ));
        }
    }
    let mut position = [0.0; 3];
    for v in &mut position {
        *v = f64::from_le_bytes(r.array()?);
        if !v.is_finite() {
            return Err(RecordError::new(r.at - 8, "the position is not a finite number"));
        }
    }
    let yaw = f32::from_le_bytes(r.array()?);
    let pitch = f32::from_le_bytes(r.array()?);
    if !yaw.is_finite() || !pitch.is_finite() {
        return Err(RecordError::new(r.at - 4, "the look angles are not finite numbers"));
    }
    let game_mode = r.byte()?;
    if game_mode > 3 {
        return Err(RecordError::new(r.at - 1, "the game mode is not 0–3"));
    }
    let open_container = match r.flag()? {
        true => {
            let dim = u64::from_le_bytes(r.array()?);
            let mut pos = [0; 3];
            for v in &mut pos {
                *v = i64::from_le_bytes(r.array()?);
            }
            Some((dim, pos))
        }
        false => None,
    };
    let cursor = match r.flag()? {
        true => Some(r.stack(0)?),
        false => None,
    };
    let items = r.slots()?;
    let ender_items = if r.version >= 2 { r.slots()? } else { Vec::new() };
    let dimension = if r.version >= 3 { u64::from_le_bytes(r.array()?) } else { 0 };
    r.end()?;
    Ok(PlayerRecord {
        position,
        yaw,
        pitch,
        game_mode,
        items,
        cursor,
        open_container,
        ender_items,
        dimension,
    })
}

/// A container record from its bytes, validated as [`decode_player`] validates items.
pub fn decode_container(bytes: &[u8]) -> std::result::Result<ContainerRecord, RecordError> {
    let mut r = Reader { bytes, at: 0, version: 2 };
    match r.take(4)? {
        m if m == CONTAINER_MAGIC => {}
        m if m == CONTAINER_MAGIC_V1 => r.version = 1,
        _ => {
            return Err(RecordError::new(
                0,
                "not a container record (magic TGC2 or TGC1 expected)",
            ));
        }
    }
    let items = r.slots()?;
    r.end()?;
    Ok(ContainerRecord { items })
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The record's format version: 1 has no item data.
    version: u8,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], RecordError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(RecordError::new(self.at, "the record ends early"))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> std::result::Result<[u8; N], RecordError> {
        let at = self.at;
        <[u8; N]>::try_from(self.take(N)?)
            .map_err(|_| RecordError::new(at, "the record ends early"))
    }

    fn byte(&mut self) -> std::result::Result<u8, RecordError> {
        Ok(self.take(1)?[0])
    }

    fn flag(&mut self) -> std::result::Result<bool, RecordError> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(RecordError::new(self.at - 1, "a presence flag is not 0 or 1")),
        }
    }

    fn stack(&mut self, slot: u16) -> std::result::Result<ItemSlot, RecordError> {
        let len = usize::from(self.byte()?);
        let at = self.at;
        let name = self.take(len)?;
        let valid = name
            .iter()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' | b'/' | b':'))
            && name.iter().filter(|&&b| b == b':').count() == 1
            && name.first() != Some(&b':')
            && name.last() != Some(&b':');
        if !valid {
            return Err(RecordError::new(at, "an item name is not `namespace:name`"));
        }
        let count = self.byte()?;
        if count == 0 {
            return Err(RecordError::new(self.at - 1, "an item count is 0"));
        }
        let item = String::from_utf8_lossy(name).into_owned();
        let mut data = Vec::new();
        if self.version >= 2 {
            let at = self.at;
            let len = u32::from_le_bytes(self.array()?) as usize;
            if len > MAX_ITEM_DATA {
                return Err(RecordError::new(at, "an item's data is longer than 1 MiB"));
            }
            let bytes = self.take(len)?;
            if len > 0 {
                let mut nbt = terrane_nbt::Reader::new(bytes);
                match nbt.root() {
                    Ok((_, terrane_nbt::Tag::Compound(_))) if nbt.remaining() == 0 => {}
                    _ => {
                        return Err(RecordError::new(
                            at + 4,
                            "an item's data is not one NBT compound",
                        ));
                    }
                }
            }
            data = bytes.to_vec();
        }
        Ok(ItemSlot { slot, item, count, data })
    }

    fn slots(&mut self) -> std::result::Result<Vec<ItemSlot>, RecordError> {
        let n = usize::from(u16::from_le_bytes(self.array()?));
        if n > MAX_SLOTS {
            return Err(RecordError::new(self.at - 2, "more than 256 slots"));
        }
        let mut items: Vec<ItemSlot> = Vec::with_capacity(n);
        for _ in 0..n {
            let at = self.at;
            let slot = u16::from_le_bytes(self.array()?);
            if items.last().is_some_and(|l| l.slot >= slot) {
                return Err(RecordError::new(at, "slots are not in ascending order"));
            }
            items.push(self.stack(slot)?);
        }
        Ok(items)
    }

    fn end(&self) -> std::result::Result<(), RecordError> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(RecordError::new(self.at, "bytes after the end of the record"))
        }
    }
}
