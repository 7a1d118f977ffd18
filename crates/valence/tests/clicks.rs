//! Windows the server decides: a client that forges clicks (another item than the one it
//! holds, counts past a stack, slots that do not exist, a window it has not opened, a stale
//! state id, items into a furnace's result or a stack into a brewing stand's bottle slot)
//! ends with exactly the items it had; two players clicking one chest in one tick
//! move its items without changing their kind; a chest opens with the player's inventory in
//! its window; the hotbar slot a client chooses is the one it holds. Valence's mock clients
//! (its `testing` feature) send the packets.

use std::collections::BTreeMap;

use terrane_valence::ServerClicks;
use valence::inventory::{ClientInventoryState, CursorItem, OpenInventory};
use valence::prelude::*;
use valence::protocol::VarInt;
use valence::protocol::packets::play::click_slot_c2s::{ClickMode, SlotChange};
use valence::protocol::packets::play::{
    ClickSlotC2s, CreativeInventoryActionC2s, InventoryS2c, UpdateSelectedSlotC2s,
};
use valence::testing::{ScenarioSingleClient, create_mock_client};

fn stack(kind: ItemKind, n: u8) -> Option<ItemStack> {
    Some(ItemStack::new(kind, n, None))
}

/// Every item the player holds, its cursor included, and a container's, by kind.
fn items(app: &App, entities: &[Entity]) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    for &e in entities {
        let inv = app.world.get::<Inventory>(e).unwrap();
        let cursor = app.world.get::<CursorItem>(e).and_then(|c| c.0.clone());
        for s in inv.slots().flatten().cloned().chain(cursor) {
            *out.entry(format!("{:?}{:?}", s.item, s.nbt)).or_default() += u32::from(s.count());
        }
    }
    out
}

fn state_id(app: &App, client: Entity) -> i32 {
    app.world.get::<ClientInventoryState>(client).unwrap().state_id().0
}

fn window_id(app: &App, client: Entity) -> u8 {
    app.world.get::<ClientInventoryState>(client).unwrap().window_id()
}

fn scenario() -> ScenarioSingleClient {
    let mut s = ScenarioSingleClient::new();
    s.app.add_plugins(ServerClicks);
    s.app.update();
    let mut inv = s.app.world.get_mut::<Inventory>(s.client).unwrap();
    inv.set_slot(36, stack(ItemKind::OakPlanks, 19));
    inv.set_slot(10, stack(ItemKind::Cobblestone, 64));
    s.app.update();
    s.helper.clear_received();
    s
}

#[test]
fn forged_clicks_leave_the_player_with_exactly_its_items() {
    let mut s = scenario();
    let before = items(&s.app, &[s.client]);
    let planks = |n| stack(ItemKind::OakPlanks, n);
    let diamonds = |n| stack(ItemKind::Diamond, n);
    let sid = state_id(&s.app, s.client);
    let forged = [
        // A right click that takes half the planks as diamonds, the count kept (what
        // Valence 0.2 accepts: it checks a right click's count only).
        (
            0,
            sid,
            36,
            1,
            ClickMode::Click,
            vec![SlotChange { idx: 36, item: diamonds(9) }],
            diamonds(10),
        ),
        // A quick move that claims to turn cobblestone into diamonds.
        (
            0,
            sid,
            10,
            0,
            ClickMode::ShiftClick,
            vec![SlotChange { idx: 10, item: None }, SlotChange { idx: 37, item: diamonds(64) }],
            None,
        ),
        // More than a stack of planks in one slot, made of the cobblestone.
        (
            0,
            sid,
            10,
            0,
            ClickMode::ShiftClick,
            vec![SlotChange { idx: 10, item: None }, SlotChange { idx: 36, item: planks(83) }],
            None,
        ),
        // Planks claimed as diamonds by a left click.
        (0, sid, 36, 0, ClickMode::Click, vec![SlotChange { idx: 36, item: None }], diamonds(19)),
        // A slot that does not exist.
        (0, sid, 99, 0, ClickMode::Click, vec![SlotChange { idx: 99, item: diamonds(1) }], None),
        // A window it has not opened.
        (7, sid, 3, 0, ClickMode::Click, vec![SlotChange { idx: 3, item: diamonds(19) }], None),
        // A stale state id.
        (
            0,
            sid - 5,
            10,
            0,
            ClickMode::ShiftClick,
            vec![SlotChange { idx: 10, item: None }, SlotChange { idx: 37, item: diamonds(64) }],
            None,
        ),
        // A drag that claims more than the cursor holds.
        (0, sid, -999, 0, ClickMode::Drag, vec![], None),
        (0, sid, 20, 1, ClickMode::Drag, vec![], None),
        (0, sid, -999, 2, ClickMode::Drag, vec![SlotChange { idx: 20, item: planks(64) }], None),
        // A creative clone by a survival player.
        (0, sid, 10, 2, ClickMode::CreativeMiddleClick, vec![], stack(ItemKind::Cobblestone, 64)),
    ];
    for (window_id, state_id, slot_idx, button, mode, slot_changes, carried_item) in forged {
        s.helper.send(&ClickSlotC2s {
            window_id,
            state_id: VarInt(state_id),
            slot_idx,
            button,
            mode,
            slot_changes,
            carried_item,
        });
        s.app.update();
        s.app.update();
        let now = items(&s.app, &[s.client]);
        assert_eq!(now, before, "after a forged {mode:?} on slot {slot_idx}");
    }
    // Nothing was thrown, so the planks are still somewhere: in a slot or on the cursor.
    assert!(before.keys().any(|k| k.contains("OakPlanks")));
}

#[test]
fn an_honest_click_is_applied_and_not_resent() {
    let mut s = scenario();
    let sid = state_id(&s.app, s.client);
    // Right click: half of the 19 planks (10) onto the cursor.
    s.helper.send(&ClickSlotC2s {
        window_id: 0,
        state_id: VarInt(sid),
        slot_idx: 36,
        button: 1,
        mode: ClickMode::Click,
        slot_changes: vec![SlotChange { idx: 36, item: stack(ItemKind::OakPlanks, 9) }],
        carried_item: stack(ItemKind::OakPlanks, 10),
    });
    s.app.update();
    let inv = s.app.world.get::<Inventory>(s.client).unwrap();
    assert_eq!(inv.slot(36), stack(ItemKind::OakPlanks, 9).as_ref());
    let cursor = s.app.world.get::<CursorItem>(s.client).unwrap();
    assert_eq!(cursor.0, stack(ItemKind::OakPlanks, 10));
    let sent = s.helper.collect_received();
    sent.assert_count::<InventoryS2c<'_>>(0);
}

#[test]
fn two_players_clicking_one_chest_in_one_tick_change_no_item_kind() {
    let mut s = scenario();
    let (mut bundle, mut other) = create_mock_client("other");
    bundle.player.layer.0 = s.layer;
    bundle.visible_chunk_layer.0 = s.layer;
    let b = s.app.world.spawn(bundle).id();
    s.app.update();
    let mut chest = Inventory::new(InventoryKind::Generic9x3);
    chest.set_slot(1, stack(ItemKind::Emerald, 3));
    let chest = s.app.world.spawn(chest).id();
    s.app.world.entity_mut(s.client).insert(OpenInventory::new(chest));
    s.app.world.entity_mut(b).insert(OpenInventory::new(chest));
    s.app.world.get_mut::<CursorItem>(s.client).unwrap().0 = stack(ItemKind::Diamond, 3);
    s.app.world.get_mut::<CursorItem>(b).unwrap().0 = stack(ItemKind::Emerald, 5);
    s.app.update();
    s.app.update();
    let before = items(&s.app, &[s.client, b, chest]);
    let (wa, wb) = (window_id(&s.app, s.client), window_id(&s.app, b));
    let (sa, sb) = (state_id(&s.app, s.client), state_id(&s.app, b));
    // In one tick: A swaps its diamonds for the chest's emeralds; B, a step later and from
    // its view before A's click, right-clicks one of its emeralds onto what it takes for
    // the chest's three (Valence 0.2 accepts it: the count adds up).
    s.helper.send(&ClickSlotC2s {
        window_id: wa,
        state_id: VarInt(sa),
        slot_idx: 1,
        button: 0,
        mode: ClickMode::Click,
        slot_changes: vec![SlotChange { idx: 1, item: stack(ItemKind::Diamond, 3) }],
        carried_item: stack(ItemKind::Emerald, 3),
    });
    other.send(&UpdateSelectedSlotC2s { slot: 0 });
    other.send(&ClickSlotC2s {
        window_id: wb,
        state_id: VarInt(sb),
        slot_idx: 1,
        button: 1,
        mode: ClickMode::Click,
        slot_changes: vec![SlotChange { idx: 1, item: stack(ItemKind::Emerald, 4) }],
        carried_item: stack(ItemKind::Emerald, 4),
    });
    s.app.update();
    s.app.update();
    assert_eq!(items(&s.app, &[s.client, b, chest]), before);
}

#[test]
fn a_forged_click_puts_nothing_into_a_furnace_result_nor_a_stack_into_a_bottle_slot() {
    let mut s = scenario();
    let mut furnace = Inventory::new(InventoryKind::Furnace);
    furnace.set_slot(2, stack(ItemKind::IronIngot, 2));
    let furnace = s.app.world.spawn(furnace).id();
    s.app.world.entity_mut(s.client).insert(OpenInventory::new(furnace));
    s.app.world.get_mut::<CursorItem>(s.client).unwrap().0 = stack(ItemKind::OakPlanks, 5);
    s.app.update();
    s.app.update();
    let before = items(&s.app, &[s.client, furnace]);
    // A left click that claims to put the cursor's planks into the result, as a chest's
    // slot would take them (Valence 0.2 accepts it: the count adds up).
    s.helper.send(&ClickSlotC2s {
        window_id: window_id(&s.app, s.client),
        state_id: VarInt(state_id(&s.app, s.client)),
        slot_idx: 2,
        button: 0,
        mode: ClickMode::Click,
        slot_changes: vec![SlotChange { idx: 2, item: stack(ItemKind::OakPlanks, 5) }],
        carried_item: stack(ItemKind::IronIngot, 2),
    });
    s.app.update();
    s.app.update();
    assert_eq!(items(&s.app, &[s.client, furnace]), before);
    let slots = s.app.world.get::<Inventory>(furnace).unwrap();
    assert_eq!(slots.slot(2), stack(ItemKind::IronIngot, 2).as_ref());

    // A brewing stand's bottle slot holds one bottle: a claim of three is refused.
    let stand = s.app.world.spawn(Inventory::new(InventoryKind::BrewingStand)).id();
    s.app.world.entity_mut(s.client).insert(OpenInventory::new(stand));
    s.app.world.get_mut::<CursorItem>(s.client).unwrap().0 = stack(ItemKind::GlassBottle, 3);
    s.app.update();
    s.app.update();
    s.helper.send(&ClickSlotC2s {
        window_id: window_id(&s.app, s.client),
        state_id: VarInt(state_id(&s.app, s.client)),
        slot_idx: 0,
        button: 0,
        mode: ClickMode::Click,
        slot_changes: vec![SlotChange { idx: 0, item: stack(ItemKind::GlassBottle, 3) }],
        carried_item: None,
    });
    s.app.update();
    s.app.update();
    let slots = s.app.world.get::<Inventory>(stand).unwrap();
    assert_eq!(slots.slot(0), stack(ItemKind::GlassBottle, 1).as_ref());
    let cursor = s.app.world.get::<CursorItem>(s.client).unwrap();
    assert_eq!(cursor.0, stack(ItemKind::GlassBottle, 2));
}

/// The "set carried item" packet as a vanilla client writes it: the slot as a 16-bit
/// integer (Valence 0.2's own type reads one byte of it).
#[derive(Debug)]
struct SetCarriedItem(i16);

impl valence::protocol::Encode for SetCarriedItem {
    fn encode(&self, mut w: impl std::io::Write) -> valence::protocol::anyhow::Result<()> {
        Ok(w.write_all(&self.0.to_be_bytes())?)
    }
}

impl valence::protocol::Packet for SetCarriedItem {
    const ID: i32 = <UpdateSelectedSlotC2s as valence::protocol::Packet>::ID;
    const NAME: &'static str = "SetCarriedItem";
    const SIDE: valence::protocol::PacketSide = valence::protocol::PacketSide::Serverbound;
    const STATE: valence::protocol::PacketState = valence::protocol::PacketState::Play;
}

#[test]
fn the_hotbar_slot_a_client_chooses_is_the_one_it_holds() {
    let mut s = ScenarioSingleClient::new();
    s.app.add_plugins(terrane_valence::HotbarSlots);
    s.app.update();
    for slot in [3i16, 8, 0, 5] {
        s.helper.send(&SetCarriedItem(slot));
        s.app.update();
        let held = s.app.world.get::<terrane_valence::SelectedSlot>(s.client).copied();
        assert_eq!(held, Some(terrane_valence::SelectedSlot(slot as u8)));
    }
    // A slot past the hotbar is ignored.
    s.helper.send(&SetCarriedItem(9));
    s.app.update();
    let held = s.app.world.get::<terrane_valence::SelectedSlot>(s.client).copied();
    assert_eq!(held, Some(terrane_valence::SelectedSlot(5)));
}

#[test]
fn a_chest_opens_with_the_players_inventory_in_its_window() {
    let mut s = scenario();
    let mut chest = Inventory::new(InventoryKind::Generic9x3);
    chest.set_slot(0, stack(ItemKind::Diamond, 10));
    let chest = s.app.world.spawn(chest).id();
    s.app.world.entity_mut(s.client).insert(OpenInventory::new(chest));
    s.app.update();
    s.app.update();
    let sent = s.helper.collect_received();
    let whole = sent.0.iter().rev().find_map(|f| f.decode::<InventoryS2c<'_>>().ok());
    let whole = whole.expect("the window sent");
    assert_eq!(whole.slots.len(), 27 + 36);
    assert_eq!(whole.slots[0], stack(ItemKind::Diamond, 10));
    // The player's hotbar slot 36 (planks) is the window's 27 + 27.
    assert_eq!(whole.slots[54], stack(ItemKind::OakPlanks, 19));
    assert_eq!(whole.window_id, window_id(&s.app, s.client));
}

/// A creative player's slot set and a click on it in the same tick: the click is decided
/// from the slot as the creative packet left it.
#[test]
fn a_click_after_a_creative_slot_in_the_same_tick_sees_that_slot() {
    let mut s = scenario();
    *s.app.world.get_mut::<GameMode>(s.client).unwrap() = GameMode::Creative;
    s.app.update();
    let diamonds = stack(ItemKind::Diamond, 9);
    s.helper.send(&CreativeInventoryActionC2s { slot: 20, clicked_item: diamonds.clone() });
    let sid = state_id(&s.app, s.client);
    s.helper.send(&ClickSlotC2s {
        window_id: 0,
        state_id: VarInt(sid),
        slot_idx: 20,
        button: 0,
        mode: ClickMode::Click,
        slot_changes: vec![SlotChange { idx: 20, item: None }],
        carried_item: diamonds.clone(),
    });
    s.app.update();
    assert_eq!(s.app.world.get::<CursorItem>(s.client).unwrap().0, diamonds);
    assert_eq!(s.app.world.get::<Inventory>(s.client).unwrap().slot(20), None);
}
