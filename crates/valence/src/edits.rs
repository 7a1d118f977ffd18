//! Block edits: [`SetBlock`], the event every change to the world goes through, and the
//! players' digging and placing that send it.

use valence::interact_block::InteractBlockEvent;
use valence::prelude::*;

use crate::Dimension;
use crate::containers::is_container;
use crate::hotbar::SelectedSlot;
use crate::plugin::{DimensionLayers, TerraneLayer};

/// Sets one block of the served world: applied to Valence's chunk layer and recorded for
/// terrane's next tick save. Send it (an `EventWriter<SetBlock>`) instead of calling
/// `ChunkLayer::set_block` directly, or the change is shown but never saved.
#[derive(Event, Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetBlock {
    /// The dimension.
    pub dimension: Dimension,
    /// Where.
    pub position: BlockPos,
    /// The new state.
    pub state: BlockState,
}

impl SetBlock {
    /// `position` of the Overworld becomes `state`.
    pub fn overworld(position: BlockPos, state: BlockState) -> Self {
        Self { dimension: Dimension::Overworld, position, state }
    }
}

/// A block placed from an item whose data its block entity keeps (a banner's patterns, a
/// head's owner): applied by [`keep_placed_block_entities`] once the block is.
#[derive(Event, Clone, Debug)]
pub(crate) struct BlockEntityPlaced {
    dimension: Dimension,
    position: BlockPos,
    kind: BlockKind,
    nbt: valence::nbt::Compound,
}

/// The block entity a block `kind` placed from an item with data `item` keeps, as the game
/// makes it: a banner's `BlockEntityTag` (its patterns) and custom name, a head's
/// `SkullOwner`. `None` for other blocks, and for items without such data.
fn placed_block_entity(
    kind: BlockKind,
    item: &valence::nbt::Compound,
) -> Option<valence::nbt::Compound> {
    use valence::nbt::Value;
    let name = kind.to_str();
    let mut be = valence::nbt::Compound::new();
    if name.ends_with("banner") {
        if let Some(Value::Compound(tag)) = item.get("BlockEntityTag") {
            be = tag.clone();
        }
        if let Some(Value::Compound(display)) = item.get("display")
            && let Some(custom) = display.get("Name")
        {
            be.insert("CustomName", custom.clone());
        }
    } else if (name.ends_with("_head") || name.ends_with("_skull"))
        && let Some(owner) = item.get("SkullOwner")
    {
        be.insert("SkullOwner", owner.clone());
    }
    (!be.is_empty()).then_some(be)
}

/// Keeps the block entities of [`BlockEntityPlaced`] blocks, once placed: saved with the
/// block, and shown to every client.
pub(crate) fn keep_placed_block_entities(
    mut placed: EventReader<BlockEntityPlaced>,
    mut layers: Query<&mut ChunkLayer, With<TerraneLayer>>,
    dimension_layers: Res<DimensionLayers>,
    mut tw: ResMut<crate::TerraneWorld>,
) {
    for e in placed.iter() {
        let Ok(mut layer) = layers.get_mut(dimension_layers.of(e.dimension)) else { continue };
        let Some(state) = layer.block(e.position).map(|b| b.state) else { continue };
        if state.to_kind() != e.kind {
            continue; // not placed after all (a column not loaded), or replaced since
        }
        let p = e.position;
        if tw.set_block_entity(e.dimension, p.x, p.y, p.z, &e.nbt) {
            layer.set_block(p, Block { state, nbt: Some(e.nbt.clone()) });
        }
    }
}

/// A player breaks a block: at once in creative mode, when digging finishes otherwise.
pub(crate) fn dig(
    clients: Query<(&GameMode, &VisibleChunkLayer)>,
    layers: Query<&Dimension, With<TerraneLayer>>,
    mut digs: EventReader<DiggingEvent>,
    mut out: EventWriter<SetBlock>,
) {
    for e in digs.iter() {
        let Ok((mode, seen)) = clients.get(e.client) else { continue };
        let Ok(&dimension) = layers.get(seen.0) else { continue };
        let done = match *mode {
            GameMode::Creative => e.state == DiggingState::Start,
            GameMode::Survival => e.state == DiggingState::Stop,
            _ => false,
        };
        if done {
            out.send(SetBlock { dimension, position: e.position, state: BlockState::AIR });
        }
    }
}

/// A player places the block of the item in hand against the face it clicked (the
/// block's default state; survival players use up the item). A shulker box placed holds the
/// items its item held (`BlockEntityTag.Items`), saved with the block in the same tick
/// save; it is placed only where nothing stands (air or a replaceable block). A banner or a
/// head placed keeps its item's patterns or owner ([`BlockEntityPlaced`]).
pub(crate) fn place(
    mut clients: Query<(&mut Inventory, &GameMode, &SelectedSlot, &VisibleChunkLayer)>,
    mut uses: EventReader<InteractBlockEvent>,
    layers: Query<(&ChunkLayer, &Dimension), With<TerraneLayer>>,
    (mut out, mut signs, mut drawn): (
        EventWriter<SetBlock>,
        EventWriter<crate::signs::SignPlaced>,
        EventWriter<BlockEntityPlaced>,
    ),
    mut commands: Commands,
    mut containers: ResMut<crate::containers::Containers>,
) {
    for e in uses.iter() {
        let Ok((mut inventory, mode, held, seen)) = clients.get_mut(e.client) else { continue };
        let Ok((layer, &dimension)) = layers.get(seen.0) else { continue };
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
            if !free || containers.entity_at(dimension, position).is_some() {
                continue;
            }
            let items = match stack.nbt.as_ref().and_then(|n| n.get("BlockEntityTag")) {
                Some(valence::nbt::Value::Compound(be)) => crate::block_entities::items(be, 27).0,
                _ => Vec::new(),
            };
            let at = (dimension, position);
            crate::containers::placed(&mut commands, &mut containers, at, kind, items);
        }
        let mut kept = stack.nbt.as_ref().and_then(|n| placed_block_entity(kind, n));
        if *mode == GameMode::Survival {
            let count = stack.count();
            if count > 1 {
                inventory.set_slot_amount(slot, count - 1);
            } else {
                inventory.set_slot(slot, None);
            }
        }
        out.send(SetBlock { dimension, position, state: kind.to_state() });
        if let Some(nbt) = kept.take() {
            drawn.send(BlockEntityPlaced { dimension, position, kind, nbt });
        }
        if kind.to_str().ends_with("sign") {
            signs.send(crate::signs::SignPlaced { client: e.client, dimension, position });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use valence::nbt::{Value, compound};

    #[test]
    fn a_placed_banner_keeps_its_patterns_and_name_and_a_head_its_owner() {
        let patterns = Value::List(valence::nbt::List::Compound(vec![
            compound! { "Pattern" => "bs", "Color" => 14 },
        ]));
        let banner = compound! {
            "BlockEntityTag" => compound! { "Patterns" => patterns.clone() },
            "display" => compound! { "Name" => r#"{"text":"Flag"}"# },
        };
        let be = placed_block_entity(BlockKind::RedBanner, &banner).expect("kept");
        assert_eq!(be.get("Patterns"), Some(&patterns));
        assert_eq!(be.get("CustomName"), Some(&Value::String(r#"{"text":"Flag"}"#.into())));
        let head = compound! { "SkullOwner" => "Notch" };
        let be = placed_block_entity(BlockKind::PlayerHead, &head).expect("kept");
        assert_eq!(be.get("SkullOwner"), Some(&Value::String("Notch".into())));
        // Data no block entity keeps: nothing to keep.
        assert_eq!(placed_block_entity(BlockKind::Stone, &banner), None);
        assert_eq!(placed_block_entity(BlockKind::WhiteBanner, &head), None);
    }
}
