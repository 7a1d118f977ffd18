//! Players' state in the world: read back when a player joins (position, look, game mode,
//! inventory, the item left on the cursor), and staged for the tick's save whenever it
//! changed, as a [`terrane::game::PlayerRecord`].

use terrane::game::{self, ItemSlot, PlayerRecord};
use valence::inventory::{CursorItem, OpenInventory};
use valence::prelude::*;
use valence::protocol::WritePacket;

use crate::Dimension;
use crate::containers::Containers;
use crate::ender_chests::EnderChest;
use crate::plugin::{Settings, enter_layer};
use crate::world::TerraneWorld;

/// A player's id in the world: the id the game gives their name in offline mode (the mode
/// the server runs in), so that the players of an imported Java world find their records.
fn player_id(name: &Username) -> u128 {
    game::offline_player_id(&name.0)
}

/// The item name terrane stores for `kind`.
pub(crate) fn item_name(kind: ItemKind) -> String {
    format!("minecraft:{}", kind.to_str())
}

/// The Valence stack for a stored one, its data (names, enchantments, a shulker box's items)
/// included; `None` (reported) for an item 1.20.1 does not know.
pub(crate) fn item_stack(s: &ItemSlot) -> Option<ItemStack> {
    let item = &s.item;
    let kind = item.strip_prefix("minecraft:").and_then(ItemKind::from_str);
    if kind.is_none() {
        tracing::warn!("item {item:?} is not a Minecraft 1.20.1 item: left out of the inventory");
    }
    let nbt = match s.data.as_slice() {
        [] => None,
        mut data => match Compound::from_binary(&mut data) {
            Ok((c, _)) => Some(c),
            Err(e) => {
                // The record's decoder checked it is NBT: this is Valence's reader refusing.
                tracing::warn!("the data of an item {item:?} did not read ({e}): left out");
                None
            }
        },
    };
    Some(ItemStack::new(kind?, s.count, nbt))
}

/// The record of `stack` in `slot`, its data included.
pub(crate) fn item_slot(slot: u16, stack: &ItemStack) -> ItemSlot {
    let mut data = Vec::new();
    if let Some(nbt) = &stack.nbt
        && nbt.to_binary(&mut data, "").is_err()
    {
        data.clear();
    }
    ItemSlot::new(slot, item_name(stack.item), stack.count()).with_data(data)
}

/// The stacks of `inventory` as records.
pub(crate) fn slots_of(inventory: &Inventory) -> Vec<ItemSlot> {
    inventory
        .slots()
        .enumerate()
        .filter_map(|(i, s)| Some(item_slot(u16::try_from(i).ok()?, s?)))
        .collect()
}

/// Puts `stack` where it fits in the main inventory and hotbar (slots 9–44): onto stacks of
/// the same item first, then into empty slots. Returns what did not fit.
fn stow(inventory: &mut Inventory, mut stack: ItemStack) -> Option<ItemStack> {
    let max = stack.item.max_stack();
    for slot in 9..45 {
        let Some(s) = inventory.slot(slot) else { continue };
        if s.item == stack.item && s.nbt == stack.nbt && s.count() < max {
            let moved = (max - s.count()).min(stack.count());
            inventory.set_slot_amount(slot, s.count() + moved);
            // `set_count` keeps at least 1: an emptied stack must not be kept.
            let left = stack.count() - moved;
            if left == 0 {
                return None;
            }
            stack.set_count(left);
        }
    }
    match inventory.first_empty_slot_in(9..45) {
        Some(slot) => {
            inventory.set_slot(slot, stack);
            None
        }
        None => Some(stack),
    }
}

/// The record player `id` joins with, and whether the world holds it under `id`: their
/// record; else one a world served before kept under Valence's own offline id (`legacy`, a
/// hash of the name), which moves to `id` in the next save; else their file in the Java world
/// the world was imported from (in the Overworld, the Nether or the End where it says; a
/// player in a datapack's dimension at the Overworld's `spawn`, with their items).
fn joining_record(
    tw: &mut TerraneWorld,
    id: u128,
    legacy: u128,
    spawn: [f64; 3],
) -> terrane::Result<Option<(PlayerRecord, bool)>> {
    if let Some(r) = game::player(tw.world(), id)? {
        return Ok(Some((r, true)));
    }
    if legacy != id
        && let Some(r) = game::player(tw.world(), legacy)?
    {
        tw.stage_record(game::player_key(legacy), None);
        return Ok(Some((r, false)));
    }
    Ok(terrane::java::imported_player(tw.world(), id)?.map(|p| {
        let mut r = p.record;
        if terrane::java::vanilla_dimension(&p.dimension).is_none() {
            r.position = spawn;
            r.dimension = 0;
        }
        (r, false)
    }))
}

/// Where players join for the first time (and come back from the End): the Overworld's
/// [`Settings::spawn`], raised onto the world's blocks where it holds the spawn's column (an
/// imported world's hills are not the generator's), else onto the generator's ground.
pub(crate) fn spawn_point(tw: &mut TerraneWorld, settings: &Settings) -> [f64; 3] {
    let [x, y, z] = settings.spawn;
    let generated = tw.terrain().surface(x.floor() as i64, z.floor() as i64) as f64 + 1.0;
    let ground = match tw.top_of(Dimension::Overworld, x.floor() as i32, z.floor() as i32) {
        Ok(Some(top)) => f64::from(top),
        Ok(None) => generated,
        Err(e) => {
            tw.fail(e);
            generated
        }
    };
    [x, y.max(ground), z]
}

/// Places each joining player as the world's record of them says, in the dimension it names
/// (or at the spawn, in the settings' game mode, when the world has none); [`send_health`]
/// follows.
#[allow(clippy::type_complexity)]
pub(crate) fn restore(
    mut commands: Commands,
    mut clients: Query<
        (
            (Entity, &Username, &UniqueId),
            (&mut Position, &mut Look, &mut GameMode, &mut Inventory, &mut CursorItem),
            (&mut EntityLayerId, &mut VisibleChunkLayer, &mut VisibleEntityLayers),
        ),
        Added<Client>,
    >,
    mut tw: ResMut<TerraneWorld>,
    settings: Res<Settings>,
    layers: Res<crate::plugin::DimensionLayers>,
) {
    for ((entity, name, uid), (mut pos, mut look, mut mode, mut inventory, mut cursor), seen) in
        &mut clients
    {
        let spawn = spawn_point(&mut tw, &settings);
        pos.set(spawn);
        *mode = settings.game_mode;
        let id = player_id(name);
        match joining_record(&mut tw, id, uid.0.as_u128(), spawn) {
            Ok(Some((record, held_under_id))) => {
                if held_under_id {
                    tw.note_record(game::player_key(id), game::encode_player(&record));
                }
                pos.set(record.position);
                // A record of a dimension not served (a datapack's) joins at the spawn.
                match Dimension::from_id(record.dimension) {
                    Some(dim) => {
                        let (mut id, mut chunks, mut entities) = seen;
                        let layer = layers.of(dim);
                        enter_layer(&mut id, &mut chunks, &mut entities, layer);
                    }
                    None => pos.set(spawn),
                }
                look.yaw = record.yaw;
                look.pitch = record.pitch;
                *mode = match record.game_mode {
                    1 => GameMode::Creative,
                    2 => GameMode::Adventure,
                    3 => GameMode::Spectator,
                    _ => GameMode::Survival,
                };
                for s in &record.items {
                    if s.slot < inventory.slot_count()
                        && let Some(stack) = item_stack(s)
                    {
                        inventory.set_slot(s.slot, stack);
                    }
                }
                // The window the stack was held in is gone: it goes back into the inventory
                // (what does not fit stays on the cursor, still the player's).
                if let Some(c) = &record.cursor
                    && let Some(stack) = item_stack(c)
                {
                    cursor.0 = stow(&mut inventory, stack);
                }
                crate::ender_chests::give(&mut commands, entity, &record.ender_items);
            }
            Ok(None) => crate::ender_chests::give(&mut commands, entity, &[]),
            Err(e) => tw.fail(e.into()),
        }
        commands.entity(entity).insert(HealthDue);
    }
}

/// A player who joined this tick, whose health update is not sent yet.
#[derive(Component)]
pub(crate) struct HealthDue;

/// Sends joined players the health update a vanilla server sends on joining, which clients
/// (mineflayer's `spawn`) wait for. It runs after the tick's packets are flushed, so it
/// reaches the client in the next flush, after the join's position and inventory: a client
/// that has its health has its place and items.
pub(crate) fn send_health(
    mut commands: Commands,
    mut clients: Query<(Entity, &mut Client), With<HealthDue>>,
) {
    for (entity, mut client) in &mut clients {
        client.write_packet(&valence::protocol::packets::play::HealthUpdateS2c {
            health: 20.0,
            food: valence::protocol::VarInt(20),
            food_saturation: 5.0,
        });
        commands.entity(entity).remove::<HealthDue>();
    }
}

/// Stages the record of every player whose state differs from what the world holds.
#[allow(clippy::type_complexity)]
pub(crate) fn stage(
    clients: Query<
        (
            (&Username, &Position, &Look, &GameMode, &VisibleChunkLayer),
            (&Inventory, &CursorItem, Option<&OpenInventory>, Option<&EnderChest>),
        ),
        With<Client>,
    >,
    layers: Query<&Dimension, With<crate::TerraneLayer>>,
    enders: Query<&Inventory, Without<Client>>,
    containers: Res<Containers>,
    mut tw: ResMut<TerraneWorld>,
) {
    for ((id, pos, look, mode, seen), (inventory, cursor, open, ender)) in &clients {
        // Not in a dimension's layer yet (joining this tick): nothing to stage.
        let Ok(&dimension) = layers.get(seen.0) else { continue };
        let ender_items =
            ender.and_then(|e| enders.get(e.0).ok()).map(slots_of).unwrap_or_default();
        let record = PlayerRecord {
            position: [pos.0.x, pos.0.y, pos.0.z],
            yaw: look.yaw,
            pitch: look.pitch,
            game_mode: match mode {
                GameMode::Survival => 0,
                GameMode::Creative => 1,
                GameMode::Adventure => 2,
                GameMode::Spectator => 3,
            },
            items: slots_of(inventory),
            cursor: cursor.0.as_ref().map(|s| item_slot(0, s)),
            open_container: open
                .and_then(|o| containers.position_of(o.entity))
                .map(|(d, p)| (d.id(), [p.x, p.y, p.z].map(i64::from))),
            ender_items,
            dimension: dimension.id(),
        };
        tw.stage_record(game::player_key(player_id(id)), Some(game::encode_player(&record)));
    }
}

#[cfg(test)]
mod tests {
    use valence::nbt::{List, Value, compound};

    use super::*;

    /// A named sword with sharpness V, and a shulker box holding it, go through the records'
    /// bytes and come back as the same Valence stacks.
    #[test]
    fn items_keep_their_data_through_the_records() {
        let sword_tag = compound! {
            "display" => compound! { "Name" => r#"{"text":"Excalibur"}"# },
            "Enchantments" => List::Compound(vec![compound! {
                "id" => "minecraft:sharpness",
                "lvl" => Value::Short(5),
            }]),
            "Damage" => 7,
        };
        let sword = ItemStack::new(ItemKind::DiamondSword, 1, Some(sword_tag.clone()));
        let mut sword_in_box = sword_tag;
        sword_in_box.insert("Slot", Value::Byte(0));
        sword_in_box.insert("id", "minecraft:diamond_sword");
        sword_in_box.insert("Count", Value::Byte(1));
        let shulker_tag = compound! {
            "BlockEntityTag" => compound! { "Items" => List::Compound(vec![sword_in_box]) },
        };
        let shulker = ItemStack::new(ItemKind::ShulkerBox, 1, Some(shulker_tag));
        let plain = ItemStack::new(ItemKind::OakPlanks, 19, None);
        let record = PlayerRecord {
            items: vec![item_slot(36, &sword), item_slot(37, &shulker), item_slot(38, &plain)],
            cursor: Some(item_slot(0, &sword)),
            ..PlayerRecord::default()
        };
        let read = game::decode_player(&game::encode_player(&record)).unwrap();
        let back: Vec<_> = read.items.iter().map(|s| item_stack(s).unwrap()).collect();
        assert_eq!(back, vec![sword.clone(), shulker, plain]);
        assert_eq!(item_stack(read.cursor.as_ref().unwrap()), Some(sword));
    }
}
