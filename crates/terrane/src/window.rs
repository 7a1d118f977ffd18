//! A player's open window as the game computes its clicks: the server's own view of the
//! slots and the cursor, changed by what a click *is* (its mode, button and slot), never by
//! the contents a client claims for it.
//!
//! [`Window`] holds a container's slots (none for the player's own inventory screen), the
//! player's 46 inventory slots in the order of that screen (0 the crafting result, 1–4 the
//! crafting grid, 5–8 armour head to feet, 9–35 the main inventory, 36–44 the hotbar, 45 the
//! off hand) and the cursor. [`Window::click`] applies one click of Minecraft Java's window
//! protocol (1.17 and later: pick up, quick move, hotbar swap, clone, throw, drag, pick up
//! all) as the game's own menus do for a container (chest, barrel, shulker box, furnace,
//! brewing stand, …: [`ContainerKind`]) or the player's inventory, and returns what left
//! the window (thrown items). A server compares the result with the slots the client reported: where they differ, the client's
//! view was stale or forged, and the server keeps its own and corrects the client.
//!
//! Every click conserves items: what a window, its player's inventory and the cursor hold
//! afterwards is what they held, less what was thrown, except a creative player's clone
//! (tested by a proptest against a model and a fuzz target over click sequences).
//!
//! # Not modelled
//!
//! - Menus with rules of their own beyond keeping items (crafting tables, anvils,
//!   villagers' trades). Furnaces and brewing stands are modelled as the game's menus keep
//!   items ([`ContainerKind::Furnace`], [`ContainerKind::BrewingStand`]), not as they
//!   smelt or brew: which items burn and which brew is the game's code, and what smelts
//!   its recipes, which ship inside the game, so a furnace's input and fuel slots and a
//!   brewing stand's ingredient slot take any item, and a quick move from the player's
//!   inventory into either (which the game decides by those lists) moves nothing.
//! - Crafting: the player screen's result slot never holds anything here, and items in its
//!   grid stay items.
//! - A hotbar swap into a slot holding fewer than the moved stack (a stack of carved pumpkins
//!   onto the head), which the game splits and gives back through the inventory: refused.
//! - Bundles, and curses that keep armour on.

/// One stack: an item of a kind and its data (`I`), and how many.
#[derive(Clone, Debug, PartialEq)]
pub struct Stack<I> {
    /// The item, with its data: two stacks merge only when these are equal.
    pub item: I,
    /// How many, 1 to the item's [`WindowItem::max_stack`].
    pub count: u8,
}

/// The equipment slot an item is worn in, which decides where a quick move puts it and
/// which armour slot may hold it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Equipment {
    /// Helmets, carved pumpkins, heads and skulls.
    Head,
    /// Chestplates and elytra.
    Chest,
    /// Leggings.
    Legs,
    /// Boots.
    Feet,
    /// Shields.
    Offhand,
}

impl Equipment {
    /// The equipment slot of a Minecraft Java item by name (`minecraft:` optional), for items
    /// the game wears: `None` for every other item.
    pub fn of_item_name(name: &str) -> Option<Equipment> {
        let n = name.strip_prefix("minecraft:").unwrap_or(name);
        Some(match n {
            "carved_pumpkin" | "turtle_helmet" => Equipment::Head,
            "elytra" => Equipment::Chest,
            "shield" => Equipment::Offhand,
            _ if n.ends_with("_helmet") || n.ends_with("_head") || n.ends_with("_skull") => {
                Equipment::Head
            }
            _ if n.ends_with("_chestplate") => Equipment::Chest,
            _ if n.ends_with("_leggings") => Equipment::Legs,
            _ if n.ends_with("_boots") => Equipment::Feet,
            _ => return None,
        })
    }

    /// The player screen's slot of this armour piece (5 head … 8 feet; 45 the off hand).
    fn player_slot(self) -> usize {
        match self {
            Equipment::Head => 5,
            Equipment::Chest => 6,
            Equipment::Legs => 7,
            Equipment::Feet => 8,
            Equipment::Offhand => OFFHAND,
        }
    }
}

/// What a window needs to know of an item.
pub trait WindowItem: Clone + PartialEq {
    /// The most one stack of it holds (64, 16 or 1).
    fn max_stack(&self) -> u8;
    /// Where it is worn, if anywhere ([`Equipment::of_item_name`] for Java items).
    fn equipment(&self) -> Option<Equipment>;
    /// Whether it is a shulker box (which no shulker box may hold).
    fn is_shulker_box(&self) -> bool {
        false
    }
    /// What it is to a brewing stand ([`Brewing::of_item_name`] for Java items).
    fn brewing(&self) -> Option<Brewing> {
        None
    }
}

/// The kind of container a window shows above the player's inventory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContainerKind {
    /// Slots that take any item: chests (27, or 54 for a double chest), barrels, hoppers
    /// (5), dispensers and droppers (9).
    Plain,
    /// A shulker box's 27 slots, which take anything but shulker boxes.
    ShulkerBox,
    /// A furnace, smoker or blast furnace: 0 the input, 1 the fuel, 2 the result, which
    /// takes nothing put in.
    Furnace,
    /// A brewing stand: 0–2 the bottles (one each: [`Brewing::Bottle`]), 3 the ingredient,
    /// 4 the fuel ([`Brewing::BlazePowder`]). The bottle and fuel slots take only what
    /// [`WindowItem::brewing`] names, nothing for an item type that keeps its default.
    BrewingStand,
}

/// What a brewing stand's own slots take, by item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Brewing {
    /// A potion (drunk, splash or lingering) or a glass bottle: the bottle slots.
    Bottle,
    /// Blaze powder: the fuel slot.
    BlazePowder,
}

impl Brewing {
    /// What a Minecraft Java item (by name, `minecraft:` optional) is to a brewing stand.
    pub fn of_item_name(name: &str) -> Option<Brewing> {
        Some(match name.strip_prefix("minecraft:").unwrap_or(name) {
            "potion" | "splash_potion" | "lingering_potion" | "glass_bottle" => Brewing::Bottle,
            "blaze_powder" => Brewing::BlazePowder,
            _ => return None,
        })
    }
}

/// A click's mode, the protocol's number for what the player did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClickMode {
    /// 0: a left (button 0) or right (1) click; at slot −999, outside the window.
    Pickup,
    /// 1: a click with shift held: the stack moves to the other part of the window.
    QuickMove,
    /// 2: a number key (button 0–8) or the off-hand key (40) over a slot: swap.
    Swap,
    /// 3: a middle click: a creative player takes a full stack of the slot's item.
    Clone,
    /// 4: the drop key over a slot: one item (button 0), or the stack (1), thrown.
    Throw,
    /// 5: a drag across slots, sent as start, one packet per slot, end.
    Drag,
    /// 6: a double click: like stacks gathered onto the cursor.
    PickupAll,
}

impl ClickMode {
    /// The mode of the protocol's number, `None` for a number the protocol does not have.
    pub fn from_protocol(n: i32) -> Option<ClickMode> {
        Some(match n {
            0 => ClickMode::Pickup,
            1 => ClickMode::QuickMove,
            2 => ClickMode::Swap,
            3 => ClickMode::Clone,
            4 => ClickMode::Throw,
            5 => ClickMode::Drag,
            6 => ClickMode::PickupAll,
            _ => return None,
        })
    }
}

/// One click as the client sent it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Click {
    /// What was done.
    pub mode: ClickMode,
    /// The mouse button or key, by the mode's rules.
    pub button: i8,
    /// The window's slot (−999 outside the window).
    pub slot: i16,
}

/// The slot index outside the window.
pub const OUTSIDE: i16 = -999;

/// Slots of the player's inventory, in the order of its own screen.
pub const PLAYER_SLOTS: usize = 46;

const OFFHAND: usize = 45;

/// A drag in progress: its type (0 split evenly, 1 one each, 2 full stacks), its slots, and
/// the length of the window it started in. A server keeps it between the drag's packets
/// ([`Window::take_drag`], [`Window::with_drag`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Drag {
    kind: u8,
    slots: Vec<usize>,
    window_len: usize,
}

/// The slots of one open window, the player's inventory and the cursor.
#[derive(Clone, Debug, PartialEq)]
pub struct Window<I> {
    container: Option<(ContainerKind, Vec<Option<Stack<I>>>)>,
    player: Vec<Option<Stack<I>>>,
    cursor: Option<Stack<I>>,
    creative: bool,
    drag: Option<Drag>,
}

/// Which slot a window index is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    Container(usize),
    Player(usize),
}

impl<I: WindowItem> Window<I> {
    /// The player's own inventory screen. `player` is its 46 slots in that screen's order
    /// (fewer are padded with empty slots, more are cut).
    pub fn player(player: Vec<Option<Stack<I>>>, cursor: Option<Stack<I>>) -> Window<I> {
        let mut player = player;
        player.resize(PLAYER_SLOTS, None);
        Window { container: None, player, cursor, creative: false, drag: None }
    }

    /// A container's window above the player's inventory.
    pub fn container(
        kind: ContainerKind,
        slots: Vec<Option<Stack<I>>>,
        player: Vec<Option<Stack<I>>>,
        cursor: Option<Stack<I>>,
    ) -> Window<I> {
        let mut w = Window::player(player, cursor);
        w.container = Some((kind, slots));
        w
    }

    /// The same window for a creative player (who may clone stacks), or not.
    pub fn creative(mut self, creative: bool) -> Window<I> {
        self.creative = creative;
        self
    }

    /// The container's slots (empty for the player's screen).
    pub fn container_slots(&self) -> &[Option<Stack<I>>] {
        self.container.as_ref().map_or(&[], |(_, s)| s)
    }

    /// The player's 46 inventory slots, in the order of its own screen.
    pub fn player_slots(&self) -> &[Option<Stack<I>>] {
        &self.player
    }

    /// The stack on the cursor.
    pub fn cursor(&self) -> Option<&Stack<I>> {
        self.cursor.as_ref()
    }

    /// Slots in the window as the client numbers them: the container's and the player's
    /// 36, or the player screen's 46.
    pub fn len(&self) -> usize {
        match &self.container {
            Some((_, s)) => s.len() + 36,
            None => PLAYER_SLOTS,
        }
    }

    /// Whether the window has no slots (never: a window always shows the player's).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The stack in window slot `index`, or `None` for an empty slot or an index past the
    /// window.
    pub fn slot(&self, index: usize) -> Option<&Stack<I>> {
        self.at(index).and_then(|a| self.get(a).as_ref())
    }

    /// Whether a drag is in progress (its start received, its end not yet).
    pub fn dragging(&self) -> bool {
        self.drag.is_some()
    }

    /// The drag in progress, taken out of the window (for the window of the drag's next
    /// packet, [`with_drag`](Self::with_drag)).
    pub fn take_drag(&mut self) -> Option<Drag> {
        self.drag.take()
    }

    /// This window with `drag` in progress; a drag that started in a window of another length
    /// (another window opened since) is dropped, as the game ends it.
    pub fn with_drag(mut self, drag: Option<Drag>) -> Window<I> {
        self.drag = drag.filter(|d| d.window_len == self.len());
        self
    }

    fn at(&self, index: usize) -> Option<At> {
        match &self.container {
            Some((_, s)) if index < s.len() => Some(At::Container(index)),
            Some((_, s)) if index < s.len() + 36 => Some(At::Player(index - s.len() + 9)),
            Some(_) => None,
            None if index < PLAYER_SLOTS => Some(At::Player(index)),
            None => None,
        }
    }

    fn get(&self, a: At) -> &Option<Stack<I>> {
        match a {
            At::Container(i) => &self.container.as_ref().expect("a container").1[i],
            At::Player(i) => &self.player[i],
        }
    }

    fn get_mut(&mut self, a: At) -> &mut Option<Stack<I>> {
        match a {
            At::Container(i) => &mut self.container.as_mut().expect("a container").1[i],
            At::Player(i) => &mut self.player[i],
        }
    }

    /// The kind of the container shown, `None` for the player's own screen.
    fn kind(&self) -> Option<ContainerKind> {
        self.container.as_ref().map(|c| c.0)
    }

    /// Whether `item` may be put in slot `a`.
    fn may_place(&self, a: At, item: &I) -> bool {
        match a {
            At::Container(i) => match self.kind() {
                Some(ContainerKind::ShulkerBox) => !item.is_shulker_box(),
                Some(ContainerKind::Furnace) => i != 2,
                Some(ContainerKind::BrewingStand) => match i {
                    0..=2 => item.brewing() == Some(Brewing::Bottle),
                    4 => item.brewing() == Some(Brewing::BlazePowder),
                    _ => true,
                },
                _ => true,
            },
            At::Player(0) => false,
            At::Player(i @ 5..=8) => item.equipment().is_some_and(|e| e.player_slot() == i),
            At::Player(_) => true,
        }
    }

    /// Whether items may be taken from slot `a` (the crafting result holds none here).
    fn may_pick_up(&self, a: At) -> bool {
        a != At::Player(0)
    }

    /// The most slot `a` holds of `item`.
    fn cap(&self, a: At, item: &I) -> u8 {
        let slot_max = match a {
            At::Player(5..=8) => 1,
            At::Container(0..=2) if self.kind() == Some(ContainerKind::BrewingStand) => 1,
            _ => 64,
        };
        item.max_stack().min(slot_max)
    }

    /// Puts up to `n` of `stack` into slot `a` (as the game's `safeInsert`): what is left.
    fn insert(&mut self, a: At, mut stack: Stack<I>, n: u8) -> Option<Stack<I>> {
        if !self.may_place(a, &stack.item) {
            return Some(stack);
        }
        let cap = self.cap(a, &stack.item);
        let slot = self.get_mut(a);
        let have = match slot {
            None => 0,
            Some(s) if s.item == stack.item => s.count,
            Some(_) => return Some(stack),
        };
        let moved = n.min(stack.count).min(cap.saturating_sub(have));
        if moved == 0 {
            return Some(stack);
        }
        match slot {
            None => *slot = Some(Stack { item: stack.item.clone(), count: moved }),
            Some(s) => s.count += moved,
        }
        stack.count -= moved;
        (stack.count > 0).then_some(stack)
    }

    /// Takes up to `n` from slot `a`.
    fn take(&mut self, a: At, n: u8) -> Option<Stack<I>> {
        if !self.may_pick_up(a) || n == 0 {
            return None;
        }
        let slot = self.get_mut(a);
        let s = slot.as_mut()?;
        let n = n.min(s.count);
        let taken = Stack { item: s.item.clone(), count: n };
        s.count -= n;
        if s.count == 0 {
            *slot = None;
        }
        Some(taken)
    }

    /// Applies one click and returns the stacks it threw out of the window. A click the
    /// game would ignore (a slot past the window, a button its mode does not have, a clone
    /// by a survival player) changes nothing.
    pub fn click(&mut self, c: Click) -> Vec<Stack<I>> {
        let mut thrown = Vec::new();
        if c.mode == ClickMode::Drag {
            self.drag_step(c);
            return thrown;
        }
        if self.drag.take().is_some() {
            // Any other click ends a drag unfinished, and does nothing else.
            return thrown;
        }
        if c.slot == OUTSIDE {
            if matches!(c.mode, ClickMode::Pickup | ClickMode::QuickMove)
                && (c.button == 0 || c.button == 1)
                && let Some(mut cursor) = self.cursor.take()
            {
                if c.button == 0 || cursor.count == 1 {
                    thrown.push(cursor);
                } else {
                    cursor.count -= 1;
                    thrown.push(Stack { item: cursor.item.clone(), count: 1 });
                    self.cursor = Some(cursor);
                }
            }
            return thrown;
        }
        let Some(a) = usize::try_from(c.slot).ok().and_then(|i| self.at(i)) else {
            return thrown;
        };
        match (c.mode, c.button) {
            (ClickMode::Pickup, 0 | 1) => self.pickup(a, c.button == 0),
            (ClickMode::QuickMove, 0 | 1) => self.quick_move(a),
            (ClickMode::Swap, b @ (0..=8 | 40)) => self.swap(a, b),
            (ClickMode::Clone, _) => {
                if self.creative
                    && self.cursor.is_none()
                    && let Some(s) = self.get(a)
                {
                    let item = s.item.clone();
                    self.cursor = Some(Stack { count: item.max_stack(), item });
                }
            }
            (ClickMode::Throw, b @ (0 | 1)) if self.cursor.is_none() => {
                let n = if b == 0 { 1 } else { u8::MAX };
                thrown.extend(self.take(a, n));
            }
            (ClickMode::PickupAll, b) => self.pickup_all(a, b != 0),
            _ => {}
        }
        thrown
    }

    fn pickup(&mut self, a: At, left: bool) {
        let Some(cursor) = self.cursor.take() else {
            if let Some(s) = self.get(a) {
                let n = if left { s.count } else { s.count.div_ceil(2) };
                self.cursor = self.take(a, n);
            }
            return;
        };
        let n = if left { cursor.count } else { 1 };
        match self.get(a).clone() {
            None => self.cursor = self.insert(a, cursor, n),
            Some(_) if !self.may_pick_up(a) => self.cursor = Some(cursor),
            Some(s) if self.may_place(a, &cursor.item) => {
                if s.item == cursor.item {
                    self.cursor = self.insert(a, cursor, n);
                } else if cursor.count <= self.cap(a, &cursor.item) {
                    *self.get_mut(a) = Some(cursor);
                    self.cursor = Some(s);
                } else {
                    self.cursor = Some(cursor);
                }
            }
            Some(s) if s.item == cursor.item => {
                let room = cursor.item.max_stack().saturating_sub(cursor.count);
                let mut cursor = cursor;
                if let Some(t) = self.take(a, room) {
                    cursor.count += t.count;
                }
                self.cursor = Some(cursor);
            }
            Some(_) => self.cursor = Some(cursor),
        }
    }

    /// The slots a quick move from `a` tries, in order.
    fn quick_move_targets(&self, a: At, item: &I) -> Vec<At> {
        let player = |r: std::ops::Range<usize>| r.map(At::Player).collect::<Vec<_>>();
        if let Some((kind, slots)) = &self.container {
            return match (kind, a) {
                // A furnace's input and fuel: to the player's inventory, in its order.
                (ContainerKind::Furnace, At::Container(0 | 1)) => player(9..45),
                // To the player's inventory, from the hotbar's last slot backwards.
                (_, At::Container(_)) => {
                    let mut v = player(9..45);
                    v.reverse();
                    v
                }
                // The game chooses by its recipes, fuels and ingredients: not modelled.
                (ContainerKind::Furnace | ContainerKind::BrewingStand, At::Player(_)) => Vec::new(),
                (_, At::Player(_)) => (0..slots.len()).map(At::Container).collect(),
            };
        }
        let At::Player(i) = a else { return Vec::new() };
        let whole_inventory = || player(9..45);
        match i {
            1..=8 => whole_inventory(),
            _ => match item.equipment() {
                Some(e) if e != Equipment::Offhand && self.player[e.player_slot()].is_none() => {
                    vec![At::Player(e.player_slot())]
                }
                Some(Equipment::Offhand) if self.player[OFFHAND].is_none() => {
                    vec![At::Player(OFFHAND)]
                }
                _ => match i {
                    9..=35 => player(36..45),
                    36..=44 => player(9..36),
                    _ => whole_inventory(),
                },
            },
        }
    }

    fn quick_move(&mut self, a: At) {
        let Some(s) = self.get(a).clone() else { return };
        if !self.may_pick_up(a) {
            return;
        }
        let targets = self.quick_move_targets(a, &s.item);
        let mut left = s.count;
        // First onto stacks of the same item, then into empty slots.
        for empty in [false, true] {
            for &t in &targets {
                if left == 0 {
                    break;
                }
                let fits = match self.get(t) {
                    Some(x) => !empty && x.item == s.item,
                    None => empty,
                };
                if fits && self.may_place(t, &s.item) {
                    let rest = self.insert(t, Stack { item: s.item.clone(), count: left }, left);
                    left = rest.map_or(0, |r| r.count);
                }
            }
        }
        let slot = self.get_mut(a);
        *slot = (left > 0).then_some(Stack { item: s.item, count: left });
    }

    fn swap(&mut self, a: At, button: i8) {
        let h = if button == 40 { At::Player(OFFHAND) } else { At::Player(36 + button as usize) };
        if h == a {
            return;
        }
        let (held, there) = (self.get(h).clone(), self.get(a).clone());
        match (held, there) {
            (None, None) => {}
            (None, Some(s)) => {
                if self.may_pick_up(a) {
                    *self.get_mut(h) = Some(s);
                    *self.get_mut(a) = None;
                }
            }
            (Some(x), None) => {
                if self.may_place(a, &x.item) {
                    let cap = self.cap(a, &x.item);
                    if x.count > cap {
                        *self.get_mut(a) = Some(Stack { item: x.item.clone(), count: cap });
                        *self.get_mut(h) = Some(Stack { item: x.item, count: x.count - cap });
                    } else {
                        *self.get_mut(a) = Some(x);
                        *self.get_mut(h) = None;
                    }
                }
            }
            (Some(x), Some(s)) => {
                if self.may_pick_up(a)
                    && self.may_place(a, &x.item)
                    && x.count <= self.cap(a, &x.item)
                {
                    *self.get_mut(a) = Some(x);
                    *self.get_mut(h) = Some(s);
                }
            }
        }
    }

    fn pickup_all(&mut self, a: At, backwards: bool) {
        let Some(mut cursor) = self.cursor.take() else { return };
        if self.get(a).is_some() && self.may_pick_up(a) {
            self.cursor = Some(cursor);
            return;
        }
        let max = cursor.item.max_stack();
        let mut order: Vec<usize> = (0..self.len()).collect();
        if backwards {
            order.reverse();
        }
        for pass in 0..2 {
            for &i in &order {
                if cursor.count >= max {
                    break;
                }
                let Some(t) = self.at(i) else { continue };
                let Some(s) = self.get(t) else { continue };
                if s.item != cursor.item || !self.may_pick_up(t) {
                    continue;
                }
                if pass == 0 && s.count == s.item.max_stack() {
                    continue;
                }
                if let Some(taken) = self.take(t, max - cursor.count) {
                    cursor.count += taken.count;
                }
            }
        }
        self.cursor = Some(cursor);
    }

    fn drag_step(&mut self, c: Click) {
        let stage = c.button & 3;
        let kind = ((c.button >> 2) & 3) as u8;
        match (stage, self.drag.take()) {
            (0, None) => {
                let valid = kind < 2 || (kind == 2 && self.creative);
                if valid && self.cursor.is_some() {
                    self.drag = Some(Drag { kind, slots: Vec::new(), window_len: self.len() });
                }
            }
            (1, Some(mut d)) => {
                let Some(cursor) = self.cursor.clone() else { return };
                let Some(i) = usize::try_from(c.slot).ok().filter(|&i| i < self.len()) else {
                    return;
                };
                if let Some(a) = self.at(i)
                    && self.quick_replace(a, &cursor)
                    && self.may_place(a, &cursor.item)
                    && (d.kind == 2 || usize::from(cursor.count) > d.slots.len())
                    && !d.slots.contains(&i)
                {
                    d.slots.push(i);
                }
                self.drag = Some(d);
            }
            (2, Some(d)) => self.drag_end(d),
            _ => {}
        }
    }

    /// Whether a drag may add `stack` to slot `a`: empty, or the same item with room.
    fn quick_replace(&self, a: At, stack: &Stack<I>) -> bool {
        match self.get(a) {
            None => true,
            Some(s) => s.item == stack.item && s.count <= stack.item.max_stack(),
        }
    }

    fn drag_end(&mut self, d: Drag) {
        let Some(cursor) = self.cursor.clone() else { return };
        match d.slots.as_slice() {
            [] => {}
            &[one] => {
                // A drag over one slot is a click on it.
                if let Some(a) = self.at(one) {
                    self.pickup(a, d.kind == 0);
                }
            }
            slots => {
                let each = match d.kind {
                    0 => cursor.count / slots.len() as u8,
                    1 => 1,
                    _ => cursor.item.max_stack(),
                };
                let mut left = i32::from(cursor.count);
                for &i in slots {
                    let Some(a) = self.at(i) else { continue };
                    if !(self.quick_replace(a, &cursor)
                        && self.may_place(a, &cursor.item)
                        && (d.kind == 2 || usize::from(cursor.count) >= slots.len()))
                    {
                        continue;
                    }
                    let have = self.get(a).as_ref().map_or(0, |s| s.count);
                    let cap = self.cap(a, &cursor.item);
                    let now = have.saturating_add(each).min(cap).max(have);
                    left -= i32::from(now - have);
                    *self.get_mut(a) = Some(Stack { item: cursor.item.clone(), count: now });
                }
                self.cursor =
                    (left > 0).then(|| Stack { item: cursor.item.clone(), count: left as u8 });
            }
        }
    }
}

#[cfg(test)]
mod tests;
