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

use terrane::window::{
    Brewing, Click, ClickMode, ContainerKind, Drag, Equipment, Stack, Window, WindowItem,
};
use valence::event_loop::{EventLoopPostUpdate, PacketEvent};
use valence::inventory::{ClientInventoryState, CursorItem, OpenInventory};
use valence::prelude::*;
use valence::protocol::VarInt;
use valence::protocol::packets::play::{
    ClickSlotC2s, CreativeInventoryActionC2s, InventoryS2c, PlayerActionC2s,
};
use valence::protocol::{ItemKind, ItemStack, Packet, WritePacket};

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
    fn brewing(&self) -> Option<Brewing> {
        Brewing::of_item_name(self.kind.to_str())
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
/// own (crafting tables, anvils, …), whose clicks are refused.
fn container_kind(kind: InventoryKind) -> Option<ContainerKind> {
    use InventoryKind::*;
    match kind {
        Generic9x1 | Generic9x2 | Generic9x3 | Generic9x4 | Generic9x5 | Generic9x6
        | Generic3x3 | Hopper => Some(ContainerKind::Plain),
        ShulkerBox => Some(ContainerKind::ShulkerBox),
        Furnace | Smoker | BlastFurnace => Some(ContainerKind::Furnace),
        BrewingStand => Some(ContainerKind::BrewingStand),
        _ => None,
    }
}

/// The server's view: every inventory's slots and every player's cursor and drag as the
/// server last decided them.
#[derive(Resource, Default)]
struct View {
    slots: HashMap<Entity, Vec<Option<ItemStack>>>,
    cursors: HashMap<Entity, Option<ItemStack>>,
    drags: HashMap<Entity, Drag>,
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

/// Valence's stacks as the window's.
fn stacks(slots: &[Option<ItemStack>]) -> Vec<Option<Stack<Item>>> {
    slots.iter().map(to_stack).collect()
}

/// Writes `slots` over `inventory` where they differ (a slot written is sent to its viewers).
fn write_slots(inventory: &mut Inventory, slots: &[Option<ItemStack>]) {
    for (i, s) in slots.iter().enumerate().take(usize::from(inventory.slot_count())) {
        if inventory.slot(i as u16) != s.as_ref() {
            inventory.set_slot(i as u16, s.clone());
        }
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
            // The other packets Valence changes a player's items for (a creative player's
            // slot, an item dropped from the hand): the view takes them as Valence left them.
            if (packet.id == CreativeInventoryActionC2s::ID || packet.id == PlayerActionC2s::ID)
                && let Ok((_, inv, _, _, cursor, _)) = clients.get(packet.client)
            {
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
        // The window as the server last decided it; nothing is known of a player before the
        // end of their first tick.
        let Some(player) = view.slots.get(&packet.client).map(|p| stacks(p)) else { continue };
        let before_cursor = view.cursors.get(&packet.client).cloned().flatten();
        let open = open.map(|o| o.entity);
        let kind = open.and_then(|e| containers.get(e).ok()).and_then(|c| container_kind(c.kind()));
        let container = open.and_then(|e| view.slots.get(&e)).map(|c| stacks(c));
        let expected_window = if open.is_some() { state.window_id() } else { 0 };
        // A window the rules model: the player's screen, or a container the view knows.
        let modelled = match (open, container, kind) {
            (None, _, _) => Some(Window::player(player.clone(), to_stack(&before_cursor))),
            (Some(_), Some(c), Some(k)) => {
                Some(Window::container(k, c, player.clone(), to_stack(&before_cursor)))
            }
            _ => None,
        };
        let click = ClickMode::from_protocol(pkt.mode as i32)
            .map(|mode| Click { mode, button: pkt.button, slot: pkt.slot_idx })
            .filter(|_| pkt.window_id == expected_window);
        // Decided from the view, or refused: the view stays (only the player's part of a
        // window the rules do not model).
        let (w, agrees) = match (modelled, click) {
            (Some(w), Some(click)) => {
                // A drag in progress goes on from its last packet.
                let mut w = w
                    .with_drag(view.drags.remove(&packet.client))
                    .creative(*mode == GameMode::Creative);
                w.click(click);
                if let Some(d) = w.take_drag() {
                    view.drags.insert(packet.client, d);
                }
                // The client's claim against the decision: every slot it names, its cursor.
                let slots = window_slots(&w);
                let agrees = pkt.slot_changes.iter().all(|c| {
                    usize::try_from(c.idx).ok().and_then(|i| slots.get(i)) == Some(&c.item)
                }) && to_item_stack(&w.cursor().cloned()) == pkt.carried_item;
                (w, agrees)
            }
            (Some(w), None) => (w, false),
            (None, _) => (Window::player(player, to_stack(&before_cursor)), false),
        };
        // The decision (or the view) over what Valence applied.
        let player: Vec<Option<ItemStack>> = w.player_slots().iter().map(to_item_stack).collect();
        write_slots(&mut inv, &player);
        view.slots.insert(packet.client, player);
        if let Some(e) = open
            && !w.container_slots().is_empty()
            && let Ok(mut c) = containers.get_mut(e)
        {
            let slots: Vec<Option<ItemStack>> =
                w.container_slots().iter().map(to_item_stack).collect();
            write_slots(&mut c, &slots);
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
