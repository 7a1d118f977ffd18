//! The window's clicks beside the game's rules, case by case, and a proptest over click
//! sequences against the model every click must keep: items are neither made (but by a
//! creative clone) nor lost (but those thrown), and no stack passes its item's limit.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

/// A test item: a kind (0 planks, 1 diamond, 2 ender pearl (16), 3 sword (1), 4 helmet (1),
/// 5 shield (1), 6 shulker box (1), 7 glass bottle, 8 blaze powder) and data (a name, say).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct It(u8, u8);

impl WindowItem for It {
    fn max_stack(&self) -> u8 {
        match self.0 {
            2 => 16,
            3..=6 => 1,
            _ => 64,
        }
    }
    fn equipment(&self) -> Option<Equipment> {
        match self.0 {
            4 => Some(Equipment::Head),
            5 => Some(Equipment::Offhand),
            _ => None,
        }
    }
    fn is_shulker_box(&self) -> bool {
        self.0 == 6
    }
    fn brewing(&self) -> Option<Brewing> {
        match self.0 {
            7 => Some(Brewing::Bottle),
            8 => Some(Brewing::BlazePowder),
            _ => None,
        }
    }
}

fn st(kind: u8, count: u8) -> Option<Stack<It>> {
    Some(Stack { item: It(kind, 0), count })
}

fn click(mode: ClickMode, button: i8, slot: i16) -> Click {
    Click { mode, button, slot }
}

fn chest() -> Window<It> {
    let mut slots = vec![None; 27];
    slots[0] = st(0, 40);
    slots[1] = st(1, 10);
    let mut player = vec![None; PLAYER_SLOTS];
    player[36] = st(0, 30);
    player[9] = st(1, 60);
    Window::container(ContainerKind::Plain, slots, player, None)
}

#[test]
fn left_takes_a_stack_right_takes_half_and_puts_one() {
    let mut w = chest();
    w.click(click(ClickMode::Pickup, 1, 0));
    assert_eq!((w.cursor().cloned(), w.slot(0).cloned()), (st(0, 20), st(0, 20)));
    // Right click on an empty slot puts one.
    w.click(click(ClickMode::Pickup, 1, 5));
    assert_eq!((w.cursor().map(|s| s.count), w.slot(5).map(|s| s.count)), (Some(19), Some(1)));
    // Left click on a different item swaps.
    w.click(click(ClickMode::Pickup, 0, 1));
    assert_eq!((w.cursor().cloned(), w.slot(1).cloned()), (st(1, 10), st(0, 19)));
    // Left on the same item merges up to 64.
    w.click(click(ClickMode::Pickup, 0, 27)); // the player's slot 9: 60 diamonds
    assert_eq!((w.cursor().cloned(), w.slot(27).cloned()), (st(1, 6), st(1, 64)));
    // Outside: right throws one, left the rest.
    assert_eq!(
        w.click(click(ClickMode::Pickup, 1, OUTSIDE)),
        vec![Stack { item: It(1, 0), count: 1 }]
    );
    assert_eq!(
        w.click(click(ClickMode::Pickup, 0, OUTSIDE)),
        vec![Stack { item: It(1, 0), count: 5 }]
    );
    assert!(w.cursor().is_none());
}

#[test]
fn items_of_different_data_do_not_merge() {
    let mut w = chest();
    *w.get_mut(At::Container(3)) = Some(Stack { item: It(1, 7), count: 1 });
    w.click(click(ClickMode::Pickup, 0, 3));
    w.click(click(ClickMode::Pickup, 0, 1)); // onto 10 plain diamonds: a swap
    assert_eq!(w.cursor().cloned(), st(1, 10));
    assert_eq!(w.slot(1).cloned(), Some(Stack { item: It(1, 7), count: 1 }));
}

#[test]
fn a_quick_move_from_a_chest_fills_the_hotbar_from_its_end() {
    let mut w = chest();
    w.click(click(ClickMode::QuickMove, 0, 0)); // 40 planks: 34 onto the 30, 6 to the last slot
    assert_eq!(w.player_slots()[36], st(0, 64));
    assert_eq!(w.player_slots()[44], st(0, 6));
    assert!(w.slot(0).is_none());
    // From the player to the chest: merges first, then the first empty slot.
    w.click(click(ClickMode::QuickMove, 0, 27)); // 60 diamonds
    assert_eq!((w.slot(1).cloned(), w.slot(0).cloned()), (st(1, 64), st(1, 6)));
}

#[test]
fn the_player_screen_moves_between_hotbar_and_inventory_and_wears_armour() {
    let mut p = vec![None; PLAYER_SLOTS];
    p[9] = st(0, 10);
    p[10] = st(4, 1);
    p[11] = st(5, 1);
    p[36] = st(1, 3);
    let mut w = Window::player(p, None);
    w.click(click(ClickMode::QuickMove, 0, 9));
    assert_eq!(w.player_slots()[37], st(0, 10)); // 36 holds diamonds: the next slot
    w.click(click(ClickMode::QuickMove, 0, 36));
    assert_eq!(w.player_slots()[9], st(1, 3));
    w.click(click(ClickMode::QuickMove, 0, 10));
    assert_eq!(w.player_slots()[5], st(4, 1)); // the helmet on the head
    w.click(click(ClickMode::QuickMove, 0, 11));
    assert_eq!(w.player_slots()[45], st(5, 1)); // the shield in the off hand
    // A non-armour item may not be put on the head, nor anything in the crafting result.
    w.click(click(ClickMode::Pickup, 0, 37));
    w.click(click(ClickMode::Pickup, 0, 8));
    w.click(click(ClickMode::Pickup, 0, 0));
    assert_eq!((w.player_slots()[8].clone(), w.player_slots()[0].clone()), (None, None));
    assert_eq!(w.cursor().cloned(), st(0, 10));
}

#[test]
fn a_number_key_swaps_with_the_hotbar_and_40_with_the_off_hand() {
    let mut w = chest();
    w.click(click(ClickMode::Swap, 0, 1)); // chest slot 1 (diamonds) with hotbar 0 (planks)
    assert_eq!((w.slot(1).cloned(), w.player_slots()[36].clone()), (st(0, 30), st(1, 10)));
    w.click(click(ClickMode::Swap, 40, 0));
    assert_eq!((w.slot(0).cloned(), w.player_slots()[45].clone()), (None, st(0, 40)));
    // No such key: nothing.
    let before = w.clone();
    w.click(click(ClickMode::Swap, 9, 1));
    assert_eq!(w, before);
}

#[test]
fn drags_split_evenly_or_one_each_and_leave_the_rest() {
    let mut w = chest();
    w.click(click(ClickMode::Pickup, 0, 0)); // 40 planks on the cursor
    w.click(click(ClickMode::Drag, 0, OUTSIDE));
    for s in [2, 3, 4] {
        w.click(click(ClickMode::Drag, 1, s));
    }
    w.click(click(ClickMode::Drag, 2, OUTSIDE));
    assert_eq!([2, 3, 4].map(|s| w.slot(s).map(|x| x.count)), [Some(13); 3]);
    assert_eq!(w.cursor().cloned(), st(0, 1));
    // A right drag: one each, and never more slots than the cursor holds.
    w.click(click(ClickMode::Pickup, 0, 2)); // the cursor's one onto the 13
    w.click(click(ClickMode::Pickup, 0, 2)); // 14 on the cursor
    assert_eq!(w.cursor().cloned(), st(0, 14));
    w.click(click(ClickMode::Drag, 4, OUTSIDE));
    for s in 5..26 {
        w.click(click(ClickMode::Drag, 5, s));
    }
    w.click(click(ClickMode::Drag, 6, OUTSIDE));
    assert_eq!((5..26).filter(|&s| w.slot(s).is_some()).count(), 14);
    assert!(w.cursor().is_none());
    // A clone drag is a creative player's only.
    let mut s = chest();
    s.click(click(ClickMode::Pickup, 0, 0));
    s.click(click(ClickMode::Drag, 8, OUTSIDE));
    assert!(!s.dragging());
}

#[test]
fn a_drag_goes_on_in_the_window_it_started_in_only() {
    let mut w = chest();
    w.click(click(ClickMode::Pickup, 0, 0));
    w.click(click(ClickMode::Drag, 0, OUTSIDE));
    let drag = w.take_drag();
    assert!(drag.is_some() && !w.dragging());
    assert!(chest().with_drag(drag.clone()).dragging(), "the same window");
    let player: Window<It> = Window::player(vec![None; PLAYER_SLOTS], None);
    assert!(!player.with_drag(drag).dragging(), "another window: the drag ends");
}

#[test]
fn a_double_click_gathers_like_stacks_but_full_ones_last() {
    // The chest's 40 planks (not full) are taken before the full 64.
    let mut w = chest();
    *w.get_mut(At::Container(5)) = st(0, 64);
    w.click(click(ClickMode::Pickup, 1, 0)); // 20 of the 40 on the cursor
    w.click(click(ClickMode::PickupAll, 0, 26));
    // 20 + the other 20 + the hotbar's 30 would pass 64: the first slots' first.
    assert_eq!(w.cursor().cloned(), st(0, 64));
    assert_eq!(w.slot(0).cloned(), None);
    assert_eq!(w.slot(27 + 27).cloned(), st(0, 6), "the hotbar keeps what did not fit");
    assert_eq!(w.slot(5).cloned(), st(0, 64), "the full stack stays");
}

#[test]
fn a_shulker_box_takes_no_shulker_box() {
    let mut player = vec![None; PLAYER_SLOTS];
    player[36] = st(6, 1);
    let mut w = Window::container(ContainerKind::ShulkerBox, vec![None; 27], player, None);
    w.click(click(ClickMode::QuickMove, 0, 27 + 27));
    w.click(click(ClickMode::Swap, 0, 0));
    assert!(w.container_slots().iter().all(Option::is_none));
}

#[test]
fn a_furnace_result_takes_nothing_put_in_and_gives_what_it_holds() {
    let mut player = vec![None; PLAYER_SLOTS];
    player[36] = st(0, 10);
    let slots = vec![st(1, 5), None, st(2, 3)];
    let mut w = Window::container(ContainerKind::Furnace, slots, player, None);
    let hotbar = 3 + 27; // the window's index of the player's first hotbar slot
    // Put in: a click, a hotbar swap, a drag.
    w.click(click(ClickMode::Swap, 0, 2));
    w.click(click(ClickMode::Pickup, 0, hotbar as i16));
    w.click(click(ClickMode::Pickup, 0, 2));
    for (button, slot) in [(0, -999), (1, 2), (2, -999)] {
        w.click(click(ClickMode::Drag, button, slot));
    }
    assert_eq!(w.container_slots()[2], st(2, 3));
    assert_eq!(w.cursor().cloned(), st(0, 10));
    w.click(click(ClickMode::Pickup, 0, hotbar as i16));
    // A quick move from the result: to the hotbar's last slot first.
    w.click(click(ClickMode::QuickMove, 0, 2));
    assert_eq!((w.container_slots()[2].clone(), w.slot(3 + 35).cloned()), (None, st(2, 3)));
    // From the input: to the inventory, in its order.
    w.click(click(ClickMode::QuickMove, 0, 0));
    assert_eq!((w.container_slots()[0].clone(), w.slot(3).cloned()), (None, st(1, 5)));
    // From the player's inventory: the game chooses by recipes and fuels; nothing moves.
    w.click(click(ClickMode::QuickMove, 0, hotbar as i16));
    assert_eq!(w.slot(hotbar).cloned(), st(0, 10));
    assert_eq!(w.container_slots(), &[None, None, None][..]);
    // The input and the fuel take any item.
    w.click(click(ClickMode::Pickup, 0, hotbar as i16));
    w.click(click(ClickMode::Pickup, 1, 0));
    w.click(click(ClickMode::Pickup, 1, 1));
    assert_eq!(w.container_slots(), &[st(0, 1), st(0, 1), None][..]);
}

#[test]
fn a_brewing_stand_takes_one_bottle_a_slot_and_blaze_powder_as_fuel() {
    let mut player = vec![None; PLAYER_SLOTS];
    player[36] = st(7, 5);
    player[37] = st(8, 20);
    player[38] = st(1, 3);
    let mut w = Window::container(ContainerKind::BrewingStand, vec![None; 5], player, None);
    let hotbar = |i: i16| 5 + 27 + i;
    w.click(click(ClickMode::Pickup, 0, hotbar(0)));
    for bottle in 0..3 {
        w.click(click(ClickMode::Pickup, 0, bottle));
    }
    w.click(click(ClickMode::Pickup, 0, 4)); // not fuel
    w.click(click(ClickMode::Pickup, 0, hotbar(0)));
    assert_eq!(&w.container_slots()[..3], &[st(7, 1), st(7, 1), st(7, 1)][..]);
    assert_eq!(w.slot(hotbar(0) as usize).cloned(), st(7, 2));
    // Diamonds: not in a bottle slot, nor as fuel; as the ingredient, yes.
    w.click(click(ClickMode::Swap, 2, 4));
    w.click(click(ClickMode::Pickup, 0, hotbar(2)));
    w.click(click(ClickMode::Pickup, 0, 0));
    w.click(click(ClickMode::Pickup, 0, 4));
    assert_eq!(w.cursor().cloned(), st(1, 3));
    w.click(click(ClickMode::Pickup, 0, hotbar(2)));
    assert_eq!((w.slot(0).cloned(), w.slot(4).cloned()), (st(7, 1), None));
    w.click(click(ClickMode::Swap, 2, 3));
    assert_eq!(w.slot(3).cloned(), st(1, 3));
    w.click(click(ClickMode::Swap, 1, 4));
    assert_eq!(w.slot(4).cloned(), st(8, 20));
    // Quick moves from the player's inventory move nothing; from the stand, to the hotbar's end.
    w.click(click(ClickMode::QuickMove, 0, hotbar(0)));
    assert_eq!(w.slot(hotbar(0) as usize).cloned(), st(7, 2));
    w.click(click(ClickMode::QuickMove, 0, 4));
    assert_eq!((w.slot(4).cloned(), w.slot(hotbar(8) as usize).cloned()), (None, st(8, 20)));
}

#[test]
fn the_drop_key_throws_one_or_the_stack_but_not_while_the_cursor_holds_one() {
    let mut w = chest();
    assert_eq!(w.click(click(ClickMode::Throw, 0, 0)), vec![Stack { item: It(0, 0), count: 1 }]);
    assert_eq!(w.click(click(ClickMode::Throw, 1, 0)), vec![Stack { item: It(0, 0), count: 39 }]);
    assert!(w.slot(0).is_none());
    w.click(click(ClickMode::Pickup, 0, 1)); // diamonds on the cursor
    assert!(w.click(click(ClickMode::Throw, 1, 27)).is_empty());
    assert_eq!(w.slot(27).cloned(), st(1, 60));
}

#[test]
fn only_a_creative_player_clones() {
    let mut w = chest();
    w.click(click(ClickMode::Clone, 2, 1));
    assert!(w.cursor().is_none());
    let mut w = chest().creative(true);
    w.click(click(ClickMode::Clone, 2, 1));
    assert_eq!(w.cursor().cloned(), st(1, 64));
    // Not onto a cursor that holds something.
    w.click(click(ClickMode::Clone, 2, 0));
    assert_eq!(w.cursor().cloned(), st(1, 64));
}

/// Every item the window, the player and the cursor hold, by item.
fn totals(w: &Window<It>) -> BTreeMap<It, u64> {
    let mut out = BTreeMap::new();
    let all = w.container_slots().iter().chain(w.player_slots()).chain([&w.cursor]);
    for s in all.flatten() {
        *out.entry(s.item.clone()).or_default() += u64::from(s.count);
    }
    out
}

fn any_stack() -> impl Strategy<Value = Option<Stack<It>>> {
    prop_oneof![
        2 => Just(None),
        3 => (0u8..9, 0u8..2, 1u8..=64).prop_map(|(k, d, n)| {
            let item = It(k, d);
            let count = n.min(item.max_stack());
            Some(Stack { item, count })
        }),
    ]
}

fn any_click() -> impl Strategy<Value = Click> {
    let mode = (0i32..7).prop_map(|m| ClickMode::from_protocol(m).unwrap());
    let slot = prop_oneof![8 => -2i16..70, 1 => Just(OUTSIDE)];
    (mode, prop_oneof![-1i8..12, Just(40)], slot).prop_map(|(mode, button, slot)| Click {
        mode,
        button,
        slot,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any sequence of any clicks: nothing made, nothing lost but what was thrown, no stack
    /// empty or past its item's limit.
    #[test]
    fn clicks_conserve_items(
        container in proptest::option::of((0usize..4, proptest::collection::vec(any_stack(), 27))),
        player in proptest::collection::vec(any_stack(), PLAYER_SLOTS),
        cursor in any_stack(),
        clicks in proptest::collection::vec(any_click(), 0..60),
    ) {
        // The crafting result and the armour slots start as the game keeps them.
        let mut player = player;
        for (i, s) in player.iter_mut().enumerate().take(9) {
            let worn = s.as_ref().and_then(|s| s.item.equipment()).map(|e| e.player_slot());
            if i == 0 || worn != Some(i) {
                *s = None;
            }
        }
        let mut w = match container {
            Some((k, mut c)) => {
                let kind = [
                    ContainerKind::Plain,
                    ContainerKind::ShulkerBox,
                    ContainerKind::Furnace,
                    ContainerKind::BrewingStand,
                ][k];
                c.truncate([27, 27, 3, 5][k]);
                Window::container(kind, c, player, cursor)
            }
            None => Window::player(player, cursor),
        };
        let mut expect = totals(&w);
        for c in clicks {
            for t in w.click(c) {
                let left = expect.get_mut(&t.item).expect("thrown what it held");
                *left -= u64::from(t.count);
            }
            expect.retain(|_, n| *n > 0);
            prop_assert_eq!(&totals(&w), &expect, "after {:?}", c);
            let all = w.container_slots().iter().chain(w.player_slots()).chain([&w.cursor]);
            for s in all.flatten() {
                prop_assert!(s.count >= 1 && s.count <= s.item.max_stack(), "{:?}", s);
            }
            for (i, s) in w.player_slots()[5..9].iter().enumerate() {
                if let Some(s) = s {
                    prop_assert_eq!(s.item.equipment().map(|e| e.player_slot()), Some(5 + i));
                }
            }
        }
    }
}
