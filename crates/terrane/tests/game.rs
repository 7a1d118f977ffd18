//! Player and container records (`terrane::game`, `docs/format/game-records.md`): any
//! record, item data included, round-trips byte for byte; version 1 records still read; each
//! damage the format rules out is refused with its offset; records saved in a tick come back
//! from a reopened world and add up to the item totals.

use proptest::prelude::*;
use terrane::game::{self, ContainerRecord, ItemSlot, PlayerRecord};
use terrane::{Backend, TickSave, World};

fn item_name() -> impl Strategy<Value = String> {
    "[a-z0-9_]{1,8}:[a-z0-9_./-]{1,20}"
}

/// An item's data: none, or a compound as a server writes one (a name, damage, a list).
fn item_data() -> impl Strategy<Value = Vec<u8>> {
    use terrane::nbt::{Compound, Tag, Writer};
    proptest::option::of((
        "[ -~]{0,12}",
        any::<i32>(),
        proptest::collection::vec(any::<i16>(), 0..4),
    ))
    .prop_map(|d| {
        let Some((name, damage, levels)) = d else { return Vec::new() };
        let mut c = Compound::new();
        c.insert("Name", Tag::String(name));
        c.insert("Damage", Tag::Int(damage));
        c.insert("Levels", Tag::list(levels.into_iter().map(Tag::Short).collect()));
        let mut w = Writer::new();
        w.named("", &Tag::Compound(c)).unwrap();
        w.out
    })
}

fn item(slot: u16) -> impl Strategy<Value = ItemSlot> {
    (item_name(), 1u8.., item_data()).prop_map(move |(item, count, data)| ItemSlot {
        slot,
        item,
        count,
        data,
    })
}

fn slots() -> impl Strategy<Value = Vec<ItemSlot>> {
    proptest::collection::btree_set(any::<u16>(), 0..40)
        .prop_flat_map(|slots| slots.into_iter().map(item).collect::<Vec<_>>())
}

fn player() -> impl Strategy<Value = PlayerRecord> {
    (
        proptest::array::uniform3(-3.0e7f64..3.0e7),
        (-360.0f32..360.0, -90.0f32..90.0, 0u8..4),
        proptest::option::of(item(0)),
        proptest::option::of((any::<u64>(), proptest::array::uniform3(any::<i64>()))),
        (slots(), slots(), 0u64..4),
    )
        .prop_map(
            |(
                position,
                (yaw, pitch, game_mode),
                cursor,
                open_container,
                (items, ender_items, dimension),
            )| {
                PlayerRecord {
                    position,
                    yaw,
                    pitch,
                    game_mode,
                    items,
                    cursor,
                    open_container,
                    ender_items,
                    dimension,
                }
            },
        )
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
        cursor: Some(ItemSlot::new(0, "minecraft:emerald", 2)),
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
    // The cursor's data: its length (4 bytes after the count), then the bytes.
    let data_at = 40 + name_len + 1;
    let mut b = good.clone();
    b[data_at..data_at + 4].copy_from_slice(&(2u32 << 20).to_le_bytes());
    refused(&b, data_at, "item data past 1 MiB");
    let mut b = good[..data_at].to_vec();
    b.extend_from_slice(&3u32.to_le_bytes());
    b.extend_from_slice(&[8, 0, 0]); // a string tag with no value: not a compound
    b.extend_from_slice(&good[data_at + 4..]);
    refused(&b, data_at + 4, "item data that is not one NBT compound");
    // Slots out of order: swap the two slot numbers.
    let slots_at = data_at + 4 + 2;
    let second = slots_at + 2 + 1 + "minecraft:diamond".len() + 1 + 4;
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
        cursor: Some(ItemSlot::new(0, "minecraft:diamond", 2)),
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

/// Version 1 records (written before items had data) still read, as items without data.
#[test]
fn version_1_records_still_read() {
    // A player at (1, 2, 3), survival, nothing open, 2 emeralds on the cursor, 64 stone in
    // slot 36; then a chest with 3 diamonds in slot 0.
    let mut p = b"TGP1".to_vec();
    for v in [1.0f64, 2.0, 3.0] {
        p.extend_from_slice(&v.to_le_bytes());
    }
    p.extend_from_slice(&[0; 8]);
    p.extend_from_slice(&[0, 0, 1]);
    p.push(17);
    p.extend_from_slice(b"minecraft:emerald");
    p.push(2);
    p.extend_from_slice(&1u16.to_le_bytes());
    p.extend_from_slice(&36u16.to_le_bytes());
    p.push(15);
    p.extend_from_slice(b"minecraft:stone");
    p.push(64);
    let read = game::decode_player(&p).unwrap();
    assert_eq!(read.position, [1.0, 2.0, 3.0]);
    assert_eq!(read.cursor, Some(ItemSlot::new(0, "minecraft:emerald", 2)));
    assert_eq!(read.items, vec![ItemSlot::new(36, "minecraft:stone", 64)]);
    let mut c = b"TGC1".to_vec();
    c.extend_from_slice(&1u16.to_le_bytes());
    c.extend_from_slice(&0u16.to_le_bytes());
    c.push(17);
    c.extend_from_slice(b"minecraft:diamond");
    c.push(3);
    let read = game::decode_container(&c).unwrap();
    assert_eq!(read.items, vec![ItemSlot::new(0, "minecraft:diamond", 3)]);
    // Written again, they are version 2.
    assert_eq!(&game::encode_container(&read)[..4], b"TGC2");
}

/// Version 2 player records (written before players had a dimension) still read, as
/// players in the Overworld; written again, they are version 3.
#[test]
fn version_2_player_records_still_read_in_the_overworld() {
    let p = PlayerRecord {
        position: [1.5, 70.0, -8.0],
        items: vec![ItemSlot::new(36, "minecraft:stone", 64)],
        ender_items: vec![ItemSlot::new(0, "minecraft:diamond", 3)],
        dimension: 1,
        ..PlayerRecord::default()
    };
    let v3 = game::encode_player(&p);
    assert_eq!(&v3[..4], b"TGP3");
    assert_eq!(v3[v3.len() - 8..], 1u64.to_le_bytes(), "the dimension ends the record");
    // Version 2: the same bytes without the dimension.
    let mut v2 = v3[..v3.len() - 8].to_vec();
    v2[..4].copy_from_slice(b"TGP2");
    let read = game::decode_player(&v2).unwrap();
    assert_eq!(read, PlayerRecord { dimension: 0, ..p.clone() });
    // A version 2 record with eight more bytes is refused, not read as a dimension.
    assert!(game::decode_player(&[v2.as_slice(), &[0; 8]].concat()).is_err());
}

/// Offline ids as the game makes them (checked against Python's `uuid.UUID(bytes=md5(…),
/// version=3)`, which is Java's `UUID.nameUUIDFromBytes`).
#[test]
fn offline_player_ids_are_the_games() {
    for (name, id) in [
        ("Notch", 0xb50ad385_829d_3141_a216_7e7d7539ba7fu128),
        ("p0", 0x80de1807_ba13_33e9_8cde_32b8cafc8a47),
        ("Steve", 0x5627dd98_e6be_3c21_b8a8_e92344183641),
    ] {
        assert_eq!(game::offline_player_id(name), id, "{name}");
    }
    assert_eq!(
        game::uuid_text(0xb50ad385_829d_3141_a216_7e7d7539ba7f),
        "b50ad385-829d-3141-a216-7e7d7539ba7f"
    );
}

/// Stacks given out of order (or two in one slot) are written in the order the decoder reads:
/// the record reads back.
#[test]
fn stacks_out_of_order_are_written_in_order() {
    let p = PlayerRecord {
        items: vec![
            ItemSlot::new(36, "minecraft:emerald", 7),
            ItemSlot::new(5, "minecraft:iron_helmet", 1),
            ItemSlot::new(36, "minecraft:stone", 1),
        ],
        ..PlayerRecord::default()
    };
    let read = game::decode_player(&game::encode_player(&p)).unwrap();
    assert_eq!(
        read.items,
        vec![
            ItemSlot::new(5, "minecraft:iron_helmet", 1),
            ItemSlot::new(36, "minecraft:emerald", 7)
        ]
    );
}
