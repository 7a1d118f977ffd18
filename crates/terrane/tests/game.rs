//! Player and container records (`terrane::game`, `docs/format/game-records-v1.md`): any
//! record round-trips byte for byte; each damage the format rules out is refused with its
//! offset; records saved in a tick come back from a reopened world and add up to the item
//! totals.

use proptest::prelude::*;
use terrane::game::{self, ContainerRecord, ItemSlot, PlayerRecord};
use terrane::{Backend, TickSave, World};

fn item_name() -> impl Strategy<Value = String> {
    "[a-z0-9_]{1,8}:[a-z0-9_./-]{1,20}"
}

fn slots() -> impl Strategy<Value = Vec<ItemSlot>> {
    proptest::collection::btree_map(any::<u16>(), (item_name(), 1u8..), 0..40).prop_map(|m| {
        m.into_iter().map(|(slot, (item, count))| ItemSlot { slot, item, count }).collect()
    })
}

fn player() -> impl Strategy<Value = PlayerRecord> {
    (
        proptest::array::uniform3(-3.0e7f64..3.0e7),
        (-360.0f32..360.0, -90.0f32..90.0, 0u8..4),
        proptest::option::of((item_name(), 1u8..)),
        proptest::option::of((any::<u64>(), proptest::array::uniform3(any::<i64>()))),
        slots(),
    )
        .prop_map(|(position, (yaw, pitch, game_mode), cursor, open_container, items)| {
            PlayerRecord { position, yaw, pitch, game_mode, items, cursor, open_container }
        })
}

proptest! {
    #[test]
    fn players_round_trip(p in player()) {
        let bytes = game::encode_player(&p);
        prop_assert_eq!(game::decode_player(&bytes).unwrap(), p);
    }

    #[test]
    fn containers_round_trip(items in slots()) {
        let c = ContainerRecord { items };
        prop_assert_eq!(game::decode_container(&game::encode_container(&c)).unwrap(), c);
    }

    /// Every strict prefix of a record is refused, never read as a shorter record.
    #[test]
    fn truncated_records_are_refused(p in player()) {
        let bytes = game::encode_player(&p);
        for n in 0..bytes.len() {
            prop_assert!(game::decode_player(&bytes[..n]).is_err(), "prefix {n} decoded");
        }
    }
}

#[test]
fn each_damage_is_refused_with_its_offset() {
    let p = PlayerRecord {
        position: [1.5, 65.0, -3.25],
        items: vec![
            ItemSlot::new(9, "minecraft:diamond", 3),
            ItemSlot::new(36, "minecraft:stone", 64),
        ],
        cursor: Some(("minecraft:emerald".into(), 2)),
        ..PlayerRecord::default()
    };
    let good = game::encode_player(&p);
    let refused = |bytes: &[u8], offset: usize, what: &str| {
        let e = game::decode_player(bytes).expect_err(what);
        assert_eq!(e.offset, offset, "{what}: {e}");
    };
    let mut b = good.clone();
    b[0] = b'X';
    refused(&b, 0, "magic");
    let mut b = good.clone();
    b[4..12].copy_from_slice(&f64::NAN.to_le_bytes());
    refused(&b, 4, "a NaN position");
    let mut b = good.clone();
    b[36] = 4;
    refused(&b, 36, "game mode 4");
    let mut b = good.clone();
    b[37] = 2;
    refused(&b, 37, "open-container flag 2");
    // The cursor stack: flag at 38, name length at 39, name from 40.
    let mut b = good.clone();
    b[40] = b'M';
    refused(&b, 40, "an upper-case item name");
    let name_len = usize::from(good[39]);
    let mut b = good.clone();
    b[40 + name_len] = 0;
    refused(&b, 40 + name_len, "a cursor count of 0");
    let mut b = good.clone();
    b.push(0);
    refused(&b, good.len(), "a byte after the end");
    // Slots out of order: swap the two slot numbers.
    let slots_at = 40 + name_len + 1 + 2;
    let second = slots_at + 2 + 1 + "minecraft:diamond".len() + 1;
    let mut b = good.clone();
    b[second..second + 2].copy_from_slice(&9u16.to_le_bytes());
    refused(&b, second, "a repeated slot");
    assert!(game::decode_container(&good).is_err(), "a player record is not a container");
}

#[test]
fn records_saved_in_a_tick_come_back_and_add_up() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("w");
    let mut world = World::builder().backend(Backend::BlockFile).create(&dir).unwrap();
    let alice = PlayerRecord {
        position: [8.5, 65.0, 8.5],
        game_mode: 0,
        items: vec![ItemSlot::new(36, "minecraft:diamond", 5)],
        cursor: Some(("minecraft:diamond".into(), 2)),
        ..PlayerRecord::default()
    };
    let chest = ContainerRecord {
        items: vec![
            ItemSlot::new(0, "minecraft:diamond", 57),
            ItemSlot::new(1, "minecraft:emerald", 9),
        ],
    };
    let mut save = TickSave::new();
    game::put_player(&mut save, 7, &alice);
    game::put_container(&mut save, 0, [0, 65, -2], &chest);
    game::put_container(&mut save, 0, [-5, -60, 3], &ContainerRecord::default());
    world.save_tick(1, save).unwrap();
    world.close().unwrap();

    let mut world = World::open(&dir).unwrap();
    assert_eq!(game::player(&world, 7).unwrap(), Some(alice.clone()));
    assert_eq!(game::player(&world, 8).unwrap(), None);
    assert_eq!(game::players(&world).unwrap().into_iter().collect::<Vec<_>>(), vec![(7, alice)]);
    assert_eq!(game::container(&world, 0, [0, 65, -2]).unwrap(), Some(chest));
    assert_eq!(game::containers(&world).unwrap().len(), 2);
    let totals = game::item_totals(&world).unwrap();
    assert_eq!(totals.get("minecraft:diamond"), Some(&64));
    assert_eq!(totals.get("minecraft:emerald"), Some(&9));

    // A damaged record names its key.
    let mut save = TickSave::new();
    save.put_object(terrane::tables::WORLD_PROPERTIES, game::player_key(9), b"TGP1 short".to_vec());
    game::delete_container(&mut save, 0, [-5, -60, 3]);
    world.save_tick(2, save).unwrap();
    assert_eq!(game::containers(&world).unwrap().len(), 1);
    let e = game::players(&world).unwrap_err();
    assert!(matches!(e, terrane::Error::DamagedRecord { .. }), "{e}");
    assert!(e.to_string().contains("game:player:"), "{e}");
}
