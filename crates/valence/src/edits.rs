//! Block edits: [`SetBlock`], the event every change to the world goes through, and the
//! players' digging and placing that send it.

use valence::interact_block::InteractBlockEvent;
use valence::prelude::*;

use crate::containers::is_container;
use crate::hotbar::SelectedSlot;
use crate::plugin::TerraneLayer;

/// Sets one block of the served world: applied to Valence's chunk layer and recorded for
/// terrane's next tick save. Send it (an `EventWriter<SetBlock>`) instead of calling
/// `ChunkLayer::set_block` directly, or the change is shown but never saved.
#[derive(Event, Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetBlock {
    /// Where.
    pub position: BlockPos,
    /// The new state.
    pub state: BlockState,
}

/// A player breaks a block: at once in creative mode, when digging finishes otherwise.
pub(crate) fn dig(
    clients: Query<&GameMode>,
    mut digs: EventReader<DiggingEvent>,
    mut out: EventWriter<SetBlock>,
) {
    for e in digs.iter() {
        let Ok(mode) = clients.get(e.client) else { continue };
        let done = match *mode {
            GameMode::Creative => e.state == DiggingState::Start,
            GameMode::Survival => e.state == DiggingState::Stop,
            _ => false,
        };
        if done {
            out.send(SetBlock { position: e.position, state: BlockState::AIR });
        }
    }
}

/// A player places the block of the item in hand against the face it clicked (the
/// block's default state; survival players use up the item). A shulker box placed holds the
/// items its item held (`BlockEntityTag.Items`), saved with the block in the same tick
/// save; it is placed only where nothing stands (air or a replaceable block).
pub(crate) fn place(
    mut clients: Query<(&mut Inventory, &GameMode, &SelectedSlot)>,
    mut uses: EventReader<InteractBlockEvent>,
    layers: Query<&ChunkLayer, With<TerraneLayer>>,
    mut out: EventWriter<SetBlock>,
    mut signs: EventWriter<crate::signs::SignPlaced>,
    mut commands: Commands,
    mut containers: ResMut<crate::containers::Containers>,
) {
    let Ok(layer) = layers.get_single() else { return };
    for e in uses.iter() {
        let Ok((mut inventory, mode, held)) = clients.get_mut(e.client) else { continue };
        // Using a container opens it (`containers::open`) instead of placing against it.
        let opens = |s: BlockState| is_container(s) || crate::ender_chests::is_ender_chest(s);
        if e.hand != Hand::Main || layer.block(e.position).is_some_and(|b| opens(b.state)) {
            continue;
        }
        let slot = held.inventory_slot();
        let Some(stack) = inventory.slot(slot) else { continue };
        let Some(kind) = BlockKind::from_item_kind(stack.item) else { continue };
        let position = e.position.get_in_direction(e.face);
        if crate::containers::is_shulker_box(kind) {
            let free = layer.block(position).is_some_and(|b| b.state.is_replaceable());
            if !free || containers.entity_at(position).is_some() {
                continue;
            }
            let items = match stack.nbt.as_ref().and_then(|n| n.get("BlockEntityTag")) {
                Some(valence::nbt::Value::Compound(be)) => crate::block_entities::items(be, 27).0,
                _ => Vec::new(),
            };
            crate::containers::placed(&mut commands, &mut containers, position, kind, items);
        }
        if *mode == GameMode::Survival {
            let count = stack.count();
            if count > 1 {
                inventory.set_slot_amount(slot, count - 1);
            } else {
                inventory.set_slot(slot, None);
            }
        }
        out.send(SetBlock { position, state: kind.to_state() });
        if kind.to_str().ends_with("sign") {
            signs.send(crate::signs::SignPlaced { client: e.client, position });
        }
    }
}
