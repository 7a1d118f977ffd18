//! Window clicks decided by the server: every click's result is computed from the server's
//! own view of the window ([`terrane::window`]), never from the slots the client claims.
//!
//! Valence 0.2 applies a click's claimed slots when their item *count* adds up, whatever
//! their kind, and checks a click against the state the client last saw, not the one other
//! players left. [`ServerClicks`] runs after Valence's own handling in the same event-loop
//! step: it recomputes each click from the view it kept (the slots as they were before the
//! step), writes its result over whatever Valence applied, and, where the client's claim
//! differs from it (a forged click, or a view another player's click made stale), sends the
//! client the whole window again. A window that opens is sent whole too: Valence sends a
//! container's own slots only, and a vanilla client then shows an empty inventory under
//! them. The view follows every other change: the step's other
//! packets (a creative player's slot, a dropped item) and, at the end of each tick, every
//! inventory and cursor that changed.

use std::borrow::Cow;
use std::collections::HashMap;

use terrane::window::{Click, ClickMode, ContainerKind, Equipment, Stack, Window, WindowItem};
use valence::event_loop::{EventLoopPostUpdate, PacketEvent};
use valence::inventory::{ClientInventoryState, CursorItem, OpenInventory};
use valence::prelude::*;
use valence::protocol::VarInt;
use valence::protocol::packets::play::{ClickSlotC2s, InventoryS2c};
use valence::protocol::{ItemKind, ItemStack, WritePacket};

/// A Valence item with its data, as the window compares them.
#[derive(Clone, Debug, PartialEq)]
struct Item {
    kind: ItemKind,
    nbt: Option<Compound>,
}

impl WindowItem for Item {
    fn max_stack(&self) -> u8 {
        self.kind.max_stack()
    }
    fn equipment(&self) -> Option<Equipment> {
        Equipment::of_item_name(self.kind.to_str())
    }
    fn is_shulker_box(&self) -> bool {
        self.kind.to_str().ends_with("shulker_box")
    }
}

fn to_stack(s: &Option<ItemStack>) -> Option<Stack<Item>> {
    let s = s.as_ref()?;
    (s.count() > 0)
        .then(|| Stack { item: Item { kind: s.item, nbt: s.nbt.clone() }, count: s.count() })
}

fn to_item_stack(s: &Option<Stack<Item>>) -> Option<ItemStack> {
    s.as_ref().map(|s| ItemStack::new(s.item.kind, s.count, s.item.nbt.clone()))
}

/// The kind of a container window the rules model, `None` for menus with rules of their
/// own (furnaces, crafting tables, …), whose clicks are refused.
fn container_kind(kind: InventoryKind) -> Option<ContainerKind> {
    use InventoryKind::*;
    match kind {
        Generic9x1 | Generic9x2 | Generic9x3 | Generic9x4 | Generic9x5 | Generic9x6
        | Generic3x3 | Hopper => Some(ContainerKind::Plain),
        ShulkerBox => Some(ContainerKind::ShulkerBox),
        _ => None,
    }
}

/// The server's view: every inventory's slots and every player's cursor and drag as the
/// server last decided them.
#[derive(Resource, Default)]
struct View {
    slots: HashMap<Entity, Vec<Option<ItemStack>>>,
    cursors: HashMap<Entity, Option<ItemStack>>,
    drags: HashMap<Entity, Window<Item>>,
}

/// The plugin: add it to a Valence app with the inventory plugin (`TerranePlugin` does).
pub struct ServerClicks;

impl Plugin for ServerClicks {
    fn build(&self, app: &mut App) {
        app.init_resource::<View>()
            .add_systems(EventLoopPostUpdate, decide_clicks)
            .add_systems(Last, (show_whole_windows, follow_changes));
    }
}

/// The whole window as the client numbers it: the container's slots then the player's 36,
/// or the player's 46.
fn window_slots(w: &Window<Item>) -> Vec<Option<ItemStack>> {
    let c = w.container_slots();
    if c.is_empty() {
        w.player_slots().iter().map(to_item_stack).collect()
    } else {
        c.iter().chain(&w.player_slots()[9..45]).map(to_item_stack).collect()
    }
}

#[allow(clippy::type_complexity)]
fn decide_clicks(
    mut packets: EventReader<PacketEvent>,
    mut view: ResMut<View>,
    mut clients: Query<(
        &mut Client,
        &mut Inventory,
        &ClientInventoryState,
        Option<&OpenInventory>,
        &mut CursorItem,
        &GameMode,
    )>,
    mut containers: Query<&mut Inventory, Without<Client>>,
) {
    for packet in packets.iter() {
        let Some(pkt) = packet.decode::<ClickSlotC2s>() else {
            // Another packet (a creative player's slot, a dropped item, …) may have changed
            // the player's items: the view takes them as Valence left them.
            if let Ok((_, inv, _, _, cursor, _)) = clients.get(packet.client) {
                view.slots.insert(packet.client, inv.slots().map(|s| s.cloned()).collect());
                view.cursors.insert(packet.client, cursor.0.clone());
            }
            continue;
        };
        let Ok((mut client, mut inv, state, open, mut cursor, mode)) =
            clients.get_mut(packet.client)
        else {
            continue;
        };
        let open = open.map(|o| o.entity);
        let expected_window = if open.is_some() { state.window_id() } else { 0 };
        let before_player = view.slots.get(&packet.client).cloned();
        let before_container = open.and_then(|e| view.slots.get(&e).cloned());
        let before_cursor = view.cursors.get(&packet.client).cloned();
        let kind = open.and_then(|e| containers.get(e).ok()).map(|c| c.kind());
        // The window as the server last decided it, or nothing to decide from.
        let window = match (before_player, before_container, kind.map(container_kind)) {
            (Some(p), None, None) if open.is_none() => {
                let p = p.iter().map(to_stack).collect();
                Some(Window::player(p, to_stack(&before_cursor.flatten())))
            }
            (Some(p), Some(c), Some(Some(k))) => {
                let p = p.iter().map(to_stack).collect();
                let c = c.iter().map(to_stack).collect();
                Some(Window::container(k, c, p, to_stack(&before_cursor.flatten())))
            }
            _ => None,
        };
        let click = ClickMode::from_protocol(pkt.mode as i32).map(|mode| Click {
            mode,
            button: pkt.button,
            slot: pkt.slot_idx,
        });
        let mut decided = match (window, click) {
            (Some(w), Some(click)) if pkt.window_id == expected_window => {
                // A drag in progress goes on from the view's window.
                let mut w = match view.drags.remove(&packet.client) {
                    Some(d) if d.container_slots().len() == w.container_slots().len() => {
                        w.with_drag_of(&d)
                    }
                    _ => w,
                };
                w = w.creative(*mode == GameMode::Creative);
                w.click(click);
                if w.dragging() {
                    view.drags.insert(packet.client, w.clone());
                }
                Some(w)
            }
            _ => None,
        };
        // The client's claim against the decision: every slot it names and its cursor.
        let agrees = decided.as_ref().is_some_and(|w| {
            let slots = window_slots(w);
            let named_agree = pkt
                .slot_changes
                .iter()
                .all(|c| usize::try_from(c.idx).ok().and_then(|i| slots.get(i)) == Some(&c.item));
            named_agree && to_item_stack(&w.cursor().cloned()) == pkt.carried_item
        });
        // Write the decision (or the view, for a click refused) over what Valence applied.
        if decided.is_none() {
            let p = view.slots.get(&packet.client).cloned();
            let c = open.and_then(|e| view.slots.get(&e).cloned());
            let cur = view.cursors.get(&packet.client).cloned().flatten();
            if let Some(p) = p {
                let p = p.iter().map(to_stack).collect();
                decided = Some(match (c, kind.and_then(container_kind)) {
                    (Some(c), Some(k)) => {
                        Window::container(k, c.iter().map(to_stack).collect(), p, to_stack(&cur))
                    }
                    _ => Window::player(p, to_stack(&cur)),
                });
            }
        }
        let Some(w) = decided else { continue };
        let player: Vec<Option<ItemStack>> = w.player_slots().iter().map(to_item_stack).collect();
        for (i, s) in player.iter().enumerate().take(usize::from(inv.slot_count())) {
            if inv.slot(i as u16) != s.as_ref() {
                inv.set_slot(i as u16, s.clone());
            }
        }
        view.slots.insert(packet.client, player);
        if let Some(e) = open
            && !w.container_slots().is_empty()
            && let Ok(mut c) = containers.get_mut(e)
        {
            let slots: Vec<Option<ItemStack>> =
                w.container_slots().iter().map(to_item_stack).collect();
            for (i, s) in slots.iter().enumerate().take(usize::from(c.slot_count())) {
                if c.slot(i as u16) != s.as_ref() {
                    c.set_slot(i as u16, s.clone());
                }
            }
            view.slots.insert(e, slots);
        }
        let new_cursor = to_item_stack(&w.cursor().cloned());
        if cursor.0 != new_cursor {
            cursor.0 = new_cursor.clone();
        }
        view.cursors.insert(packet.client, new_cursor.clone());
        if !agrees {
            tracing::debug!("a click the server computes otherwise: the client's window resent");
            client.write_packet(&InventoryS2c {
                window_id: expected_window,
                state_id: VarInt(state.state_id().0),
                slots: Cow::Owned(window_slots(&w)),
                carried_item: Cow::Owned(new_cursor),
            });
        }
    }
}

/// At the end of each tick, the view takes every inventory and cursor that changed outside
/// the clicks (items placed, restored, loaded) and forgets the entities that are gone.
fn follow_changes(
    mut view: ResMut<View>,
    inventories: Query<(Entity, Ref<Inventory>)>,
    cursors: Query<(Entity, Ref<CursorItem>)>,
    mut gone: RemovedComponents<Inventory>,
) {
    for (e, inv) in &inventories {
        if inv.is_changed() || !view.slots.contains_key(&e) {
            view.slots.insert(e, inv.slots().map(|s| s.cloned()).collect());
        }
    }
    for (e, c) in &cursors {
        if c.is_changed() || !view.cursors.contains_key(&e) {
            view.cursors.insert(e, c.0.clone());
        }
    }
    for e in gone.iter() {
        view.slots.remove(&e);
        view.cursors.remove(&e);
        view.drags.remove(&e);
    }
}

#[allow(clippy::type_complexity)]
/// Sends each window opened this tick whole, the player's inventory under the container's
/// slots (after Valence's own packet, which holds the container's slots only).
fn show_whole_windows(
    mut clients: Query<
        (&mut Client, &Inventory, &ClientInventoryState, Ref<OpenInventory>, &CursorItem),
        Changed<OpenInventory>,
    >,
    containers: Query<&Inventory, Without<Client>>,
) {
    for (mut client, inv, state, open, cursor) in &mut clients {
        let Ok(c) = containers.get(open.entity) else { continue };
        if !open.is_added() {
            continue;
        }
        let slots: Vec<Option<ItemStack>> =
            c.slots().chain(inv.slots().skip(9).take(36)).map(|s| s.cloned()).collect();
        client.write_packet(&InventoryS2c {
            window_id: state.window_id(),
            state_id: VarInt(state.state_id().0),
            slots: Cow::Owned(slots),
            carried_item: Cow::Borrowed(&cursor.0),
        });
    }
}
