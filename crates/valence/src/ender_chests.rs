//! Each player's ender chest: one 27-slot inventory per player, filled from their record
//! when they join ([`terrane::game::PlayerRecord::ender_items`]), opened by any ender chest
//! block they use, and saved with their record.

use valence::prelude::*;

use crate::players::item_stack;

/// The inventory entity of a player's ender chest, on the player's entity.
#[derive(Component, Clone, Copy, Debug)]
pub(crate) struct EnderChest(pub(crate) Entity);

/// On an ender chest's inventory entity: the player whose it is.
#[derive(Component, Clone, Copy, Debug)]
pub(crate) struct EnderOf(Entity);

/// Gives `player` their ender chest holding `items`.
pub(crate) fn give(commands: &mut Commands, player: Entity, items: &[terrane::game::ItemSlot]) {
    let mut inventory = Inventory::with_title(InventoryKind::Generic9x3, "Ender Chest");
    for s in items {
        if s.slot < inventory.slot_count()
            && let Some(stack) = item_stack(s)
        {
            inventory.set_slot(s.slot, stack);
        }
    }
    let chest = commands.spawn((inventory, EnderOf(player))).id();
    commands.entity(player).insert(EnderChest(chest));
}

/// Whether `state` is an ender chest.
pub(crate) fn is_ender_chest(state: BlockState) -> bool {
    state.to_kind() == BlockKind::EnderChest
}

/// Ender chests whose players are gone go with them.
pub(crate) fn forget_gone(
    mut commands: Commands,
    chests: Query<(Entity, &EnderOf)>,
    players: Query<(), With<EnderChest>>,
) {
    for (e, of) in &chests {
        if players.get(of.0).is_err() {
            commands.entity(e).despawn();
        }
    }
}
