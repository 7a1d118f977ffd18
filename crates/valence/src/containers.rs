//! Container blocks ([`container_window`]): a player's use of one opens its
//! inventory, read from the world the first time ([`terrane::game::ContainerRecord`]); its
//! contents are staged for the tick's save whenever they changed, in the same save as the
//! inventories of the players who moved items in or out.

use std::collections::HashMap;

use terrane::game::{self, ContainerRecord};
use valence::interact_block::InteractBlockEvent;
use valence::inventory::OpenInventory;
use valence::prelude::*;

use crate::Dimension;
use crate::players::{item_stack, slots_of};
use crate::plugin::TerraneLayer;
use crate::world::TerraneWorld;

/// Where a container block is: its dimension and block position.
pub type ContainerAt = (Dimension, BlockPos);

/// The container inventories opened since the server started, by dimension and block
/// position.
#[derive(Resource, Debug, Default)]
pub struct Containers {
    by_position: HashMap<ContainerAt, Entity>,
    by_entity: HashMap<Entity, ContainerAt>,
}

impl Containers {
    /// The dimension and block position of container inventory `entity`.
    pub fn position_of(&self, entity: Entity) -> Option<ContainerAt> {
        self.by_entity.get(&entity).copied()
    }

    /// Spawns `inventory` as the inventory of the container at `at`.
    fn spawn(&mut self, commands: &mut Commands, at: ContainerAt, inventory: Inventory) -> Entity {
        let entity = commands.spawn(inventory).id();
        self.by_position.insert(at, entity);
        self.by_entity.insert(entity, at);
        entity
    }

    /// The inventory entity of the container at `pos` of `dim`, once a player opened it.
    pub fn entity_at(&self, dim: Dimension, pos: BlockPos) -> Option<Entity> {
        self.by_position.get(&(dim, pos)).copied()
    }
}

/// The key of the record of the container at `at` ([`game::container_key`]).
fn record_key((dim, pos): ContainerAt) -> Vec<u8> {
    game::container_key(dim.id(), [pos.x, pos.y, pos.z].map(i64::from))
}

/// The window a container block opens, and its title: chests, trapped chests and barrels
/// (27 slots; a double chest opens as its half), shulker boxes of every colour (27, holding
/// no shulker box), dispensers and droppers (9), hoppers (5), furnaces, smokers and blast
/// furnaces (3: input, fuel, result) and brewing stands (5: three bottles, the ingredient,
/// blaze powder). Valence runs none of their logic: a hopper moves nothing, a dispenser
/// dispenses nothing, a furnace smelts nothing and a brewing stand brews nothing; they keep
/// items.
pub fn container_window(state: BlockState) -> Option<(InventoryKind, &'static str)> {
    let kind = state.to_kind();
    Some(match kind {
        BlockKind::Chest | BlockKind::TrappedChest => (InventoryKind::Generic9x3, "Chest"),
        BlockKind::Barrel => (InventoryKind::Generic9x3, "Barrel"),
        BlockKind::Dispenser => (InventoryKind::Generic3x3, "Dispenser"),
        BlockKind::Dropper => (InventoryKind::Generic3x3, "Dropper"),
        BlockKind::Hopper => (InventoryKind::Hopper, "Hopper"),
        BlockKind::Furnace => (InventoryKind::Furnace, "Furnace"),
        BlockKind::Smoker => (InventoryKind::Smoker, "Smoker"),
        BlockKind::BlastFurnace => (InventoryKind::BlastFurnace, "Blast Furnace"),
        BlockKind::BrewingStand => (InventoryKind::BrewingStand, "Brewing Stand"),
        _ if is_shulker_box(kind) => (InventoryKind::ShulkerBox, "Shulker Box"),
        _ => return None,
    })
}

/// Whether `kind` is a shulker box (of any colour).
pub fn is_shulker_box(kind: BlockKind) -> bool {
    kind.to_str().ends_with("shulker_box")
}

/// Whether `state` is a container block the plugin opens ([`container_window`]).
pub fn is_container(state: BlockState) -> bool {
    container_window(state).is_some()
}

/// A player uses a container block: its inventory opens for them.
pub(crate) fn open(
    mut commands: Commands,
    mut uses: EventReader<InteractBlockEvent>,
    seen: Query<&VisibleChunkLayer>,
    layers: Query<(&ChunkLayer, &Dimension), With<TerraneLayer>>,
    mut containers: ResMut<Containers>,
    mut tw: ResMut<TerraneWorld>,
    enders: Query<&crate::ender_chests::EnderChest>,
) {
    for e in uses.iter() {
        let Ok((layer, &dim)) = seen.get(e.client).and_then(|s| layers.get(s.0)) else {
            continue;
        };
        let state = layer.block(e.position).map(|b| b.state);
        if e.hand == Hand::Main
            && state.is_some_and(crate::ender_chests::is_ender_chest)
            && let Ok(ender) = enders.get(e.client)
        {
            // The player's own ender chest, whichever ender chest block they use.
            commands.entity(e.client).insert(OpenInventory::new(ender.0));
            continue;
        }
        let Some((kind, title)) = state.and_then(container_window) else { continue };
        if e.hand != Hand::Main {
            continue;
        }
        let entity = match containers.entity_at(dim, e.position) {
            Some(entity) => entity,
            None => {
                let p = [e.position.x, e.position.y, e.position.z].map(i64::from);
                let record = match game::container(tw.world(), dim.id(), p) {
                    Ok(r) => r,
                    Err(err) => {
                        tw.fail(err.into());
                        continue;
                    }
                };
                let mut inventory = Inventory::with_title(kind, title);
                if record.is_none()
                    && let Some(be) =
                        tw.imported_block_entity(dim, e.position.x, e.position.y, e.position.z)
                {
                    // Never opened in this world: what its import kept.
                    let (items, data_lost, left_out) =
                        crate::block_entities::items(&be, inventory.slot_count());
                    for (slot, stack) in items {
                        inventory.set_slot(slot, stack);
                    }
                    if data_lost + left_out > 0 {
                        tracing::warn!(
                            "the container at {:?}: {data_lost} stacks lost their data (a \
                             format newer than Minecraft 1.20.1), {left_out} left out",
                            e.position
                        );
                    }
                }
                if let Some(record) = record {
                    tw.note_record(record_key((dim, e.position)), game::encode_container(&record));
                    for s in &record.items {
                        if s.slot < inventory.slot_count()
                            && let Some(stack) = item_stack(s)
                        {
                            inventory.set_slot(s.slot, stack);
                        }
                    }
                }
                containers.spawn(&mut commands, (dim, e.position), inventory)
            }
        };
        commands.entity(e.client).insert(OpenInventory::new(entity));
    }
}

/// A container block `kind` placed at `at` holding `items` (a shulker box and what its item
/// held): its inventory, staged by [`stage`] with the tick's save like an opened one's.
pub(crate) fn placed(
    commands: &mut Commands,
    containers: &mut Containers,
    at: ContainerAt,
    kind: BlockKind,
    items: Vec<(u16, ItemStack)>,
) {
    let Some((window, title)) = container_window(kind.to_state()) else { return };
    let mut inventory = Inventory::with_title(window, title);
    for (slot, stack) in items {
        if slot < inventory.slot_count() {
            inventory.set_slot(slot, stack);
        }
    }
    containers.spawn(commands, at, inventory);
}

/// Stages the record of every opened container whose contents differ from the world's.
pub(crate) fn stage(
    inventories: Query<&Inventory, Without<Client>>,
    containers: Res<Containers>,
    mut tw: ResMut<TerraneWorld>,
) {
    for (&at, &entity) in &containers.by_position {
        let Ok(inventory) = inventories.get(entity) else { continue };
        let record = ContainerRecord { items: slots_of(inventory) };
        tw.stage_record(record_key(at), Some(game::encode_container(&record)));
    }
}

/// A container block was replaced: its inventory closes for everyone and its record is
/// deleted in the tick's save (its items are gone: Valence has no dropped items).
pub(crate) fn remove(
    commands: &mut Commands,
    containers: &mut Containers,
    viewers: &Query<(Entity, &OpenInventory)>,
    tw: &mut TerraneWorld,
    dim: Dimension,
    pos: BlockPos,
) {
    forget(commands, containers, viewers, |at| at == (dim, pos));
    tw.stage_record(record_key((dim, pos)), None);
}

/// Closes the inventories of the containers at the places `gone` matches, for everyone,
/// and forgets them: their next use reads their record from the world again.
pub(crate) fn forget(
    commands: &mut Commands,
    containers: &mut Containers,
    viewers: &Query<(Entity, &OpenInventory)>,
    gone: impl Fn(ContainerAt) -> bool,
) {
    let positions: Vec<ContainerAt> =
        containers.by_position.keys().copied().filter(|p| gone(*p)).collect();
    for pos in positions {
        let Some(entity) = containers.by_position.remove(&pos) else { continue };
        containers.by_entity.remove(&entity);
        for (client, open) in viewers {
            if open.entity == entity {
                commands.entity(client).remove::<OpenInventory>();
            }
        }
        commands.entity(entity).despawn();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_container_block_opens_its_own_window() {
        let window = |k: BlockKind| container_window(k.to_state()).map(|(w, _)| w);
        assert_eq!(window(BlockKind::Chest), Some(InventoryKind::Generic9x3));
        assert_eq!(window(BlockKind::Barrel), Some(InventoryKind::Generic9x3));
        assert_eq!(window(BlockKind::Dispenser), Some(InventoryKind::Generic3x3));
        assert_eq!(window(BlockKind::Dropper), Some(InventoryKind::Generic3x3));
        assert_eq!(window(BlockKind::Hopper), Some(InventoryKind::Hopper));
        for box_ in [BlockKind::ShulkerBox, BlockKind::RedShulkerBox, BlockKind::BlackShulkerBox] {
            assert_eq!(window(box_), Some(InventoryKind::ShulkerBox), "{box_:?}");
        }
        assert_eq!(window(BlockKind::Furnace), Some(InventoryKind::Furnace));
        assert_eq!(window(BlockKind::Smoker), Some(InventoryKind::Smoker));
        assert_eq!(window(BlockKind::BlastFurnace), Some(InventoryKind::BlastFurnace));
        assert_eq!(window(BlockKind::BrewingStand), Some(InventoryKind::BrewingStand));
        // Every player's own ender chest opens instead (`ender_chests`).
        for not in [BlockKind::EnderChest, BlockKind::Stone, BlockKind::CraftingTable] {
            assert_eq!(window(not), None, "{not:?}");
        }
    }
}
