//! Signs players write: a sign a player places opens its editor on their client, and the
//! text the client sends back (either side) becomes the sign's block entity, shown to every
//! client and kept in the same tick save as the block (the component an import keeps block
//! entities in: `export anvil` writes it back out).
//!
//! Valence 0.2's "open sign editor" packet lacks 1.20's second field (which side to edit):
//! the packet is written here as the protocol has it.

use valence::event_loop::PacketEvent;
use valence::nbt::{Compound, List, Value};
use valence::prelude::*;
use valence::protocol::packets::play::UpdateSignC2s;
use valence::protocol::{Encode, Packet, PacketSide, PacketState, WritePacket};

use crate::Dimension;
use crate::plugin::{DimensionLayers, TerraneLayer};
use crate::world::TerraneWorld;

/// The most characters a line keeps (the game's own limit).
const MAX_LINE: usize = 384;

/// How far (blocks, from the player's feet to the sign's centre) a player may edit a sign.
const REACH: f64 = 8.0;

/// A sign a player placed this tick, whose editor opens on their client.
#[derive(Event, Clone, Copy, Debug)]
pub(crate) struct SignPlaced {
    pub(crate) client: Entity,
    pub(crate) dimension: Dimension,
    pub(crate) position: BlockPos,
}

/// Minecraft 1.20.1's "open sign editor" packet: the sign and the side to edit.
#[derive(Debug)]
struct OpenSignEditor {
    position: BlockPos,
    front: bool,
}

impl Encode for OpenSignEditor {
    fn encode(&self, mut w: impl std::io::Write) -> valence::protocol::anyhow::Result<()> {
        self.position.encode(&mut w)?;
        self.front.encode(w)
    }
}

impl Packet for OpenSignEditor {
    const ID: i32 = <valence::protocol::packets::play::SignEditorOpenS2c as Packet>::ID;
    const NAME: &'static str = "OpenSignEditor";
    const SIDE: PacketSide = PacketSide::Clientbound;
    const STATE: PacketState = PacketState::Play;
}

/// Whether `state` is a sign of any kind (standing, wall, hanging).
fn is_sign(state: BlockState) -> bool {
    state.to_kind().to_str().ends_with("sign")
}

/// Opens the editor of each sign placed this tick on the placing player's client, once the
/// sign stands in the layer.
pub(crate) fn open_editors(
    mut placed: EventReader<SignPlaced>,
    mut clients: Query<&mut Client>,
    layers: Query<&ChunkLayer, With<TerraneLayer>>,
    dimension_layers: Res<DimensionLayers>,
) {
    for p in placed.iter() {
        let Ok(layer) = layers.get(dimension_layers.of(p.dimension)) else { continue };
        if layer.block(p.position).is_some_and(|b| is_sign(b.state))
            && let Ok(mut client) = clients.get_mut(p.client)
        {
            client.write_packet(&OpenSignEditor { position: p.position, front: true });
        }
    }
}

/// One side of a sign: four lines of plain text as JSON text components, black, not glowing.
fn side(lines: &[&str]) -> Compound {
    let messages = lines
        .iter()
        .map(|l| {
            let l: String = l.chars().take(MAX_LINE).collect();
            serde_json::json!({ "text": l }).to_string()
        })
        .collect();
    let mut c = Compound::new();
    c.insert("messages", List::String(messages));
    c.insert("color", "black");
    c.insert("has_glowing_text", Value::Byte(0));
    c
}

/// Applies the text clients send for signs within their reach: the side written, the other
/// side as it was.
pub(crate) fn update(
    mut packets: EventReader<PacketEvent>,
    clients: Query<(&Position, &VisibleChunkLayer)>,
    mut layers: Query<(&mut ChunkLayer, &Dimension), With<TerraneLayer>>,
    mut tw: ResMut<TerraneWorld>,
) {
    for p in packets.iter() {
        let Some(pkt) = p.decode::<UpdateSignC2s<'_>>() else { continue };
        let Ok((pos, seen)) = clients.get(p.client) else { continue };
        // The sign in the layer the player is in (their dimension's).
        let Ok((mut layer, &dim)) = layers.get_mut(seen.0) else { continue };
        let at = pkt.position;
        let centre = DVec3::new(at.x as f64 + 0.5, at.y as f64 + 0.5, at.z as f64 + 0.5);
        let Some(block) = layer.block(at) else { continue };
        if !is_sign(block.state) || pos.0.distance(centre) > REACH {
            continue;
        }
        let state = block.state;
        let mut nbt = block.nbt.cloned().unwrap_or_default();
        let empty = ["", "", "", ""];
        if !nbt.contains_key("front_text") {
            nbt.insert("front_text", side(&empty));
        }
        if !nbt.contains_key("back_text") {
            nbt.insert("back_text", side(&empty));
        }
        nbt.insert(if pkt.is_front_text { "front_text" } else { "back_text" }, side(&pkt.lines));
        nbt.insert("is_waxed", Value::Byte(0));
        if tw.set_block_entity(dim, at.x, at.y, at.z, &nbt) {
            layer.set_block(at, Block { state, nbt: Some(nbt) });
        }
    }
}
