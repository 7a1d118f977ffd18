//! What a game changed in a Java world's containers goes back out with it: on a Java export,
//! each container record ([`crate::game`]) replaces the `Items` of the block entity its
//! import kept at that cell, in the item format of the column's `DataVersion`.
//!
//! Items are written as the column's release reads them: before 1.20.5 (`DataVersion`
//! 3837) `Count` (a byte) and the item's data as its `tag`; from 1.20.5 `count` (an int) and
//! `components`, translated from the record's `tag` form
//! (`terrane_anvil::item_data::item_to_components_form`). An item whose data did not change
//! (the same item in the same slot, its data as imported) keeps its imported entry, the
//! components with no 1.20.1 form included. A record of a cell without an imported block entity (a chest placed in the
//! game) gets a new block entity when the cell holds a container block ([`container_id`]);
//! a record of a cell that holds none (the container was broken) is not written.

use std::collections::HashMap;

use terrane_anvil::item_data;
use terrane_anvil::mapping::BLOCK_ENTITY_COMPONENT;
use terrane_chunk::{Chunk, ComponentId, Schema};
use terrane_nbt::{Compound, Tag};
use terrane_section::{ColumnPos, cell_index};

use crate::game::{self, ContainerRecord, ItemSlot};
use crate::{Result, World};

/// The container records of one dimension, by column.
pub(crate) struct ContainerRecords {
    by_column: HashMap<ColumnPos, Vec<([i64; 3], ContainerRecord)>>,
}

impl ContainerRecords {
    /// Every container record of dimension `dim` (records are few: the containers a game
    /// opened).
    pub(crate) fn of(world: &World, dim: u64) -> Result<Self> {
        let mut by_column: HashMap<ColumnPos, Vec<_>> = HashMap::new();
        for ((d, p), r) in game::containers(world)? {
            if d == dim {
                let col = ColumnPos::new((p[0] >> 4) as i32, (p[2] >> 4) as i32);
                by_column.entry(col).or_default().push((p, r));
            }
        }
        Ok(Self { by_column })
    }

    /// Writes the records of column `pos` into its chunks' block entities (`chunks`: chunk
    /// y and bytes, as the export reads them).
    pub(crate) fn apply(
        &self,
        schema: &Schema,
        pos: ColumnPos,
        data_version: Option<i32>,
        chunks: &mut [(i64, Vec<u8>)],
    ) -> Result<()> {
        let Some(records) = self.by_column.get(&pos) else { return Ok(()) };
        let Some(be) = schema.components().find(BLOCK_ENTITY_COMPONENT).map(ComponentId::variable)
        else {
            return Ok(());
        };
        for (p, record) in records {
            let Some((_, bytes)) = chunks.iter_mut().find(|(y, _)| *y == p[1] >> 4) else {
                continue;
            };
            let mut chunk = Chunk::decode(bytes, schema)?;
            let cell = cell_index((p[0] & 15) as u32, (p[1] & 15) as u32, (p[2] & 15) as u32);
            let mut nbt = match chunk.component(cell, 0, be) {
                Some(old) => Compound::from_bytes(old)?,
                None => {
                    let block =
                        chunk.get((p[0] & 15) as u32, (p[1] & 15) as u32, (p[2] & 15) as u32);
                    let Some(id) = schema.blocks().get(block.0).and_then(container_id) else {
                        continue;
                    };
                    let mut placed = Compound::new();
                    placed.insert("id", Tag::String(id.into()));
                    placed
                }
            };
            let before = match nbt.get("Items") {
                Some(Tag::List(_, items)) => items.clone(),
                _ => Vec::new(),
            };
            let items: Vec<Compound> = record
                .items
                .iter()
                .map(|s| item_tag(s, s.slot as i8, data_version, &before))
                .collect();
            nbt.insert("Items", Tag::compound_list(items));
            let new = terrane_anvil::nbt::write_root(&nbt).map_err(terrane_anvil::Error::from)?;
            chunk.set_component(schema, cell, 0, be, &new)?;
            *bytes = chunk.encode(schema);
        }
        Ok(())
    }
}

/// The block entity id of a container block's state (`minecraft:red_shulker_box[...]` →
/// `minecraft:shulker_box`), `None` for a block that holds no items.
pub(crate) fn container_id(state: &str) -> Option<&'static str> {
    let block = state.split('[').next().unwrap_or(state);
    let name = block.strip_prefix("minecraft:")?;
    Some(match name {
        "chest" => "minecraft:chest",
        "trapped_chest" => "minecraft:trapped_chest",
        "barrel" => "minecraft:barrel",
        "hopper" => "minecraft:hopper",
        "dispenser" => "minecraft:dispenser",
        "dropper" => "minecraft:dropper",
        "furnace" => "minecraft:furnace",
        "smoker" => "minecraft:smoker",
        "blast_furnace" => "minecraft:blast_furnace",
        "brewing_stand" => "minecraft:brewing_stand",
        _ if name.ends_with("shulker_box") => "minecraft:shulker_box",
        _ => return None,
    })
}

/// One stack as a Java item compound in Java slot `slot` (an `Items` or `Inventory` entry)
/// in the item format of `data_version`; `before`, the entries it replaces: the same item
/// in the same slot with the same data keeps its entry (its count the record's).
pub(crate) fn item_tag(
    s: &ItemSlot,
    slot: i8,
    data_version: Option<i32>,
    before: &[Tag],
) -> Compound {
    let mut c = Compound::new();
    c.insert("Slot", Tag::Byte(slot));
    c.insert("id", Tag::String(s.item.clone()));
    c.insert("Count", Tag::Byte(s.count as i8));
    if let Ok(tag) = Compound::from_bytes(&s.data) {
        c.insert("tag", Tag::Compound(tag));
    }
    let Some(v) = data_version.filter(|v| item_data::has_components(*v)) else { return c };
    let unchanged = before.iter().find_map(|t| match t {
        Tag::Compound(o)
            if o.get("Slot") == Some(&Tag::Byte(slot))
                && o.get("id") == Some(&Tag::String(s.item.clone()))
                && item_data::item_to_tag_form(o).item.get("tag") == c.get("tag") =>
        {
            Some(o.clone())
        }
        _ => None,
    });
    match unchanged {
        Some(mut o) => {
            o.insert("count", Tag::Int(i32::from(s.count)));
            o
        }
        None => item_data::item_to_components_form(&c, v).item,
    }
}
