//! The hotbar slot each player holds, read from the packet as the protocol has it.
//!
//! Minecraft 1.20.1's "set carried item" packet carries the slot as a 16-bit integer;
//! Valence 0.2 decodes it as one byte, so its `HeldItem` stays on the first slot (and it
//! warns of a packet not fully read at every change). [`SelectedSlot`] is the slot the
//! client last chose, read from the packet's two bytes; placing blocks uses it.

use valence::event_loop::{EventLoopPreUpdate, PacketEvent};
use valence::prelude::*;
use valence::protocol::Packet;
use valence::protocol::packets::play::UpdateSelectedSlotC2s;

/// The hotbar slot a player holds: 0–8, left to right (the player inventory's slot 36 + n).
#[derive(Component, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SelectedSlot(pub u8);

impl SelectedSlot {
    /// The slot of the player's `Inventory` this hotbar slot is.
    pub fn inventory_slot(self) -> u16 {
        36 + u16::from(self.0)
    }
}

/// The plugin: adds [`SelectedSlot`] to players and keeps it as their clients choose
/// (`TerranePlugin` adds it).
pub struct HotbarSlots;

impl Plugin for HotbarSlots {
    fn build(&self, app: &mut App) {
        app.add_systems(EventLoopPreUpdate, read_selected_slot)
            .add_systems(PreUpdate, add_selected_slot);
    }
}

fn add_selected_slot(
    mut commands: Commands,
    new: Query<Entity, (Added<Client>, Without<SelectedSlot>)>,
) {
    for e in &new {
        commands.entity(e).insert(SelectedSlot::default());
    }
}

fn read_selected_slot(
    mut packets: EventReader<PacketEvent>,
    mut players: Query<&mut SelectedSlot>,
) {
    for p in packets.iter() {
        if p.id != UpdateSelectedSlotC2s::ID {
            continue;
        }
        let slot = match p.data[..] {
            [a, b] => i16::from_be_bytes([a, b]),
            _ => continue,
        };
        if let (Ok(slot @ 0..=8), Ok(mut held)) = (u8::try_from(slot), players.get_mut(p.client))
            && held.0 != slot
        {
            held.0 = slot;
        }
    }
}
