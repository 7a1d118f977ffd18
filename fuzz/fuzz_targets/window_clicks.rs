//! A window's clicks (`terrane::window`) against the model every click must keep: any
//! starting slots and any sequence of any clicks (modes, buttons and slots a client may
//! send, drags cut short, clicks past the window) make no item and lose none but what was
//! thrown (a creative player's clones aside), and leave no stack empty, past its item's
//! limit, or on a body slot it does not fit.
//!
//! Bytes: a header (bit 0 a container window, bit 1 a shulker box, bit 2 a creative player),
//! one byte per starting slot (the container's 27, the player's 46, the cursor: 0 empty,
//! else a kind and a count), then three bytes per click (mode, button, slot; 255 is outside).
#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use terrane::window::{
    Brewing, Click, ClickMode, ContainerKind, Equipment, OUTSIDE, PLAYER_SLOTS, Stack, Window,
    WindowItem,
};

/// Kinds: 0 planks, 1 diamond, 2 ender pearl (16), 3 sword (1), 4 helmet (1), 5 shield (1),
/// 6 shulker box (1), 7 boots (1); the second field is data that keeps stacks apart. To a
/// brewing stand, the ender pearl is a bottle and the diamond blaze powder.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct It(u8, u8);

impl WindowItem for It {
    fn max_stack(&self) -> u8 {
        match self.0 {
            2 => 16,
            3..=7 => 1,
            _ => 64,
        }
    }
    fn equipment(&self) -> Option<Equipment> {
        match self.0 {
            4 => Some(Equipment::Head),
            5 => Some(Equipment::Offhand),
            7 => Some(Equipment::Feet),
            _ => None,
        }
    }
    fn is_shulker_box(&self) -> bool {
        self.0 == 6
    }
    fn brewing(&self) -> Option<Brewing> {
        match self.0 {
            2 => Some(Brewing::Bottle),
            1 => Some(Brewing::BlazePowder),
            _ => None,
        }
    }
}

/// Whether `kind`'s slot `i` may hold `s` (as the game keeps them: a furnace's result is
/// only ever filled by smelting, which this window does not do).
fn may_hold(kind: ContainerKind, i: usize, s: &Stack<It>) -> bool {
    match (kind, i) {
        (ContainerKind::ShulkerBox, _) => !s.item.is_shulker_box(),
        (ContainerKind::BrewingStand, 0..=2) => s.item.brewing() == Some(Brewing::Bottle),
        (ContainerKind::BrewingStand, 4) => s.item.brewing() == Some(Brewing::BlazePowder),
        _ => true,
    }
}

fn stack(b: u8) -> Option<Stack<It>> {
    (b != 0).then(|| {
        let item = It(b % 8, (b >> 7) & 1);
        let count = 1 + (b / 8) % item.max_stack();
        Stack { item, count }
    })
}

fn totals(w: &Window<It>) -> BTreeMap<It, u64> {
    let mut out = BTreeMap::new();
    let cursor = w.cursor().cloned();
    let all = w.container_slots().iter().chain(w.player_slots()).chain([&cursor]);
    for s in all.flatten() {
        *out.entry(s.item.clone()).or_default() += u64::from(s.count);
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&header, rest)) = data.split_first() else { return };
    let start = rest.len().min(27 + PLAYER_SLOTS + 1);
    let (slots, clicks) = rest.split_at(start);
    let mut slots: Vec<Option<Stack<It>>> = slots.iter().map(|&b| stack(b)).collect();
    slots.resize(27 + PLAYER_SLOTS + 1, None);
    let cursor = slots.pop().flatten();
    let mut player = slots.split_off(27);
    // The crafting result is empty and the body slots hold what fits them, as the game keeps.
    for (i, s) in player.iter_mut().enumerate().take(9) {
        let fits = s.as_ref().and_then(|s| s.item.equipment()).is_some_and(|e| match e {
            Equipment::Head => i == 5,
            Equipment::Chest => i == 6,
            Equipment::Legs => i == 7,
            Equipment::Feet => i == 8,
            Equipment::Offhand => false,
        });
        if !fits {
            *s = None;
        }
    }
    let kind = match ((header >> 1) & 1) | ((header >> 2) & 2) {
        0 => ContainerKind::Plain,
        1 => ContainerKind::ShulkerBox,
        2 => ContainerKind::Furnace,
        _ => ContainerKind::BrewingStand,
    };
    slots.truncate(match kind {
        ContainerKind::Furnace => 3,
        ContainerKind::BrewingStand => 5,
        _ => 27,
    });
    for (i, s) in slots.iter_mut().enumerate() {
        if s.as_ref().is_some_and(|s| !may_hold(kind, i, s)) {
            *s = None;
        }
    }
    let mut result = slots.get(2).cloned().flatten().filter(|_| kind == ContainerKind::Furnace);
    let creative = header & 4 != 0;
    let mut w = if header & 1 != 0 {
        Window::container(kind, slots, player, cursor)
    } else {
        Window::player(player, cursor)
    }
    .creative(creative);
    let mut expect = totals(&w);
    for c in clicks.chunks_exact(3).take(512) {
        let Some(mode) = ClickMode::from_protocol(i32::from(c[0] % 8)) else { continue };
        let slot = if c[2] == 255 { OUTSIDE } else { i16::from(c[2]) - 2 };
        let click = Click { mode, button: c[1] as i8, slot };
        for t in w.click(click) {
            let left = expect.get_mut(&t.item).expect("threw an item it did not hold");
            *left = left.checked_sub(u64::from(t.count)).expect("threw more than it held");
        }
        expect.retain(|_, n| *n > 0);
        if creative {
            expect = totals(&w);
        }
        assert_eq!(totals(&w), expect, "items made or lost by {click:?}");
        let cursor = w.cursor().cloned();
        let all = w.container_slots().iter().chain(w.player_slots()).chain([&cursor]);
        for s in all.flatten() {
            assert!(s.count >= 1 && s.count <= s.item.max_stack(), "{s:?} after {click:?}");
        }
        for (i, s) in w.player_slots()[5..9].iter().enumerate() {
            if let Some(s) = s {
                let e = s.item.equipment();
                assert!(
                    e.is_some() && e != Some(Equipment::Offhand),
                    "{s:?} worn in slot {} after {click:?}",
                    5 + i
                );
                assert_eq!(s.count, 1);
            }
        }
        assert!(w.player_slots()[0].is_none(), "the crafting result holds an item");
        for (i, s) in w.container_slots().iter().enumerate() {
            if let Some(s) = s {
                assert!(may_hold(kind, i, s), "{s:?} in slot {i} of a {kind:?} after {click:?}");
                if kind == ContainerKind::BrewingStand && i < 3 {
                    assert_eq!(s.count, 1, "a bottle slot holds one");
                }
            }
        }
        if kind == ContainerKind::Furnace && header & 1 != 0 {
            // The result only ever gives: what it holds is what it held, or less of it.
            let now = w.container_slots()[2].clone();
            let fine = match (&now, &result) {
                (None, _) => true,
                (Some(n), Some(r)) => n.item == r.item && n.count <= r.count,
                (Some(_), None) => false,
            };
            assert!(fine, "the furnace's result became {now:?} after {click:?}");
            result = now;
        }
    }
});
