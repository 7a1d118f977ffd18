//! What a game changed in a Java world's containers goes back out with `export anvil`: a
//! container record replaces the `Items` of the block entity the import kept (or becomes a
//! new one, for a container placed in the game), in the item format of the column's release
//! (`Count` and `tag` before 1.20.5, `count` and the imported `components` after), the block
//! entity's other fields kept.

use std::path::Path;

use terrane::game::{self, ContainerRecord, ItemSlot};
use terrane::nbt::{Compound, Tag, Writer};
use terrane::{Backend, TickSave, World};

/// Every block entity of the exported world's Overworld regions.
fn block_entities(java: &Path) -> Vec<Compound> {
    let mut out = Vec::new();
    for (_, _, path) in terrane::anvil::region::list_regions(&java.join("region")).unwrap() {
        let file = terrane::anvil::region::RegionFile::new(std::fs::read(&path).unwrap()).unwrap();
        for e in file.entries() {
            let raw = file.read(&e).unwrap();
            out.extend(terrane::anvil::Column::from_nbt(&raw.nbt, (0, 0)).unwrap().block_entities);
        }
    }
    out
}

/// Every block entity of `world` exported as a Java world folder under `dir`.
fn exported_block_entities(world: &World, dir: &Path) -> Vec<Compound> {
    let out = dir.join("out");
    terrane::java::export_java_world(
        world,
        &out,
        terrane::export::Overwrite::Refuse,
        &mut |_, _| {},
    )
    .unwrap();
    block_entities(&out)
}

/// The block entity at `pos` of `world` exported as a Java world folder under `dir`.
fn exported_block_entity(world: &World, dir: &Path, pos: [i64; 3]) -> Compound {
    let all = exported_block_entities(world, dir);
    all.into_iter().find(|b| at(b) == pos).expect("the block entity")
}

fn at(be: &Compound) -> [i64; 3] {
    ["x", "y", "z"].map(|k| match be.get(k) {
        Some(Tag::Int(v)) => i64::from(*v),
        _ => i64::MIN,
    })
}

fn items(be: &Compound) -> Vec<Compound> {
    match be.get("Items") {
        Some(Tag::List(_, items)) => items
            .iter()
            .filter_map(|t| match t {
                Tag::Compound(c) => Some(c.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn nbt_bytes(c: Compound) -> Vec<u8> {
    let mut w = Writer::new();
    w.named("", &Tag::Compound(c)).unwrap();
    w.out
}

/// A real 1.17.1 region's chest (a fortress's, with its loot table): the game's record of it
/// goes out as 1.17.1 items, `Count` bytes and the sword's data as its `tag`.
#[test]
fn a_changed_chest_of_an_old_world_goes_out_with_count_and_tag() {
    let tmp = tempfile::tempdir().unwrap();
    let src = terrane_section::testdata::java_world(tmp.path(), "anvil/1.17.1/r.-3.-2.mca");
    let mut world = World::builder().backend(Backend::Memory).create(tmp.path().join("w")).unwrap();
    terrane::java::import_java_world(&mut world, &src, &mut |_, _| {}).unwrap();
    let chest = block_entities(&src)
        .into_iter()
        .find(|b| b.get("id") == Some(&Tag::String("minecraft:chest".into())))
        .expect("the region's chest");
    let pos = at(&chest);
    let mut damage = Compound::new();
    damage.insert("Damage", Tag::Int(3));
    let record = ContainerRecord {
        items: vec![
            ItemSlot::new(0, "minecraft:emerald", 5),
            ItemSlot::new(1, "minecraft:diamond_sword", 1).with_data(nbt_bytes(damage.clone())),
        ],
    };
    let mut save = TickSave::new();
    game::put_container(&mut save, 0, pos, &record);
    world.save_tick(world.tick() + 1, save).unwrap();

    let exported = exported_block_entity(&world, tmp.path(), pos);
    let got = items(&exported);
    assert_eq!(got.len(), 2, "{exported:?}");
    assert_eq!(got[0].get("id"), Some(&Tag::String("minecraft:emerald".into())));
    assert_eq!(got[0].get("Count"), Some(&Tag::Byte(5)));
    assert_eq!(got[1].get("tag"), Some(&Tag::Compound(damage)));
    assert!(got.iter().all(|i| i.get("count").is_none()), "no 1.20.5 fields");
    // The block entity's other fields are the import's.
    assert_eq!(exported.get("LootTable"), chest.get("LootTable"));
}

/// A column of 1.20.5 or later (`count`, `components`): the record's items go out with
/// `count` and their data as components; an item the chest held in the same slot with the
/// same data keeps its imported components, those with no 1.20.1 form included (a trim),
/// while a sword renamed in the game goes out with its new name and without them.
#[test]
fn a_changed_chest_of_a_new_world_goes_out_with_its_items_data_as_components() {
    use terrane::anvil::mapping::block_entity_component;
    use terrane::{Chunk, ChunkPos, ColumnPos, Schema};
    let tmp = tempfile::tempdir().unwrap();
    let mut schema = Schema::new();
    let be = block_entity_component(&mut schema).unwrap();
    let air = schema.add_block("minecraft:air", &[]).unwrap();
    let chest = schema
        .add_block("minecraft:chest[facing=north,type=single,waterlogged=false]", &[be])
        .unwrap();
    let mut world = World::builder()
        .backend(Backend::Memory)
        .schema(schema)
        .create(tmp.path().join("w"))
        .unwrap();
    let mut chunk = Chunk::new(air);
    chunk.set(2, 3, 4, chest);
    let mut components = Compound::new();
    components.insert("minecraft:damage", Tag::Int(4));
    let mut trim = Compound::new();
    trim.insert("pattern", Tag::String("minecraft:coast".into()));
    components.insert("minecraft:trim", Tag::Compound(trim));
    let sword = |slot: i8| {
        let mut sword = Compound::new();
        sword.insert("Slot", Tag::Byte(slot));
        sword.insert("id", Tag::String("minecraft:diamond_sword".into()));
        sword.insert("count", Tag::Int(1));
        sword.insert("components", Tag::Compound(components.clone()));
        sword
    };
    let mut imported = Compound::new();
    imported.insert("id", Tag::String("minecraft:chest".into()));
    imported.insert("Items", Tag::compound_list([sword(0), sword(1)]));
    let bytes = terrane::anvil::nbt::write_root(&imported).unwrap();
    chunk
        .set_component(world.schema(), terrane::section::cell_index(2, 3, 4), 0, be, &bytes)
        .unwrap();
    world.mark_generated(ColumnPos::new(0, 0)).unwrap();
    let mut save = TickSave::new();
    save.put_chunk(0, ChunkPos::new(0, 4, 0), chunk.encode(world.schema()));
    // The game holds the data in 1.20.1's form: the first sword as imported (its damage),
    // the second renamed.
    let data = |tag: Compound| terrane::anvil::nbt::write_root(&tag).unwrap();
    let mut worn = Compound::new();
    worn.insert("Damage", Tag::Int(4));
    let mut renamed = worn.clone();
    let mut display = Compound::new();
    display.insert("Name", Tag::String(r#"{"text":"Renamed"}"#.into()));
    renamed.insert("display", Tag::Compound(display));
    let record = ContainerRecord {
        items: vec![
            ItemSlot::new(0, "minecraft:diamond_sword", 1).with_data(data(worn)),
            ItemSlot::new(1, "minecraft:diamond_sword", 1).with_data(data(renamed)),
            ItemSlot::new(2, "minecraft:emerald", 9),
        ],
    };
    game::put_container(&mut save, 0, [2, 67, 4], &record);
    world.save_tick(1, save).unwrap();

    let exported = exported_block_entity(&world, tmp.path(), [2, 67, 4]);
    let got = items(&exported);
    assert_eq!(got.len(), 3, "{exported:?}");
    assert_eq!(got[0].get("components"), Some(&Tag::Compound(components)), "kept");
    let Some(Tag::Compound(new)) = got[1].get("components") else { panic!("{:?}", got[1]) };
    assert_eq!(new.get("minecraft:damage"), Some(&Tag::Int(4)));
    assert!(new.get("minecraft:custom_name").is_some() && new.get("minecraft:trim").is_none());
    assert_eq!(got[2].get("count"), Some(&Tag::Int(9)));
    assert!(got.iter().all(|i| i.get("Count").is_none() && i.get("tag").is_none()));
}

/// A container placed in the game has no imported block entity: its record goes out as a
/// new one of the block's kind (every shulker box colour is `minecraft:shulker_box`; smokers
/// and brewing stands their own), in the
/// column's item format; a record whose cell holds no container (it was broken) does not.
#[test]
fn a_container_placed_in_the_game_goes_out_as_a_new_block_entity() {
    use terrane::anvil::mapping::block_entity_component;
    use terrane::{Chunk, ChunkPos, ColumnPos, Schema};
    let tmp = tempfile::tempdir().unwrap();
    let mut schema = Schema::new();
    let be = block_entity_component(&mut schema).unwrap();
    let air = schema.add_block("minecraft:air", &[]).unwrap();
    let stone = schema.add_block("minecraft:stone", &[]).unwrap();
    let shulker = schema.add_block("minecraft:red_shulker_box[facing=up]", &[be]).unwrap();
    let smoker = schema.add_block("minecraft:smoker[facing=north,lit=false]", &[be]).unwrap();
    let stand = schema.add_block("minecraft:brewing_stand", &[be]).unwrap();
    let mut world = World::builder()
        .backend(Backend::Memory)
        .schema(schema)
        .create(tmp.path().join("w"))
        .unwrap();
    let mut chunk = Chunk::new(air);
    chunk.set(2, 3, 4, shulker);
    chunk.set(5, 3, 4, stone);
    chunk.set(7, 3, 4, smoker);
    chunk.set(9, 3, 4, stand);
    world.mark_generated(ColumnPos::new(0, 0)).unwrap();
    let mut save = TickSave::new();
    save.put_chunk(0, ChunkPos::new(0, 4, 0), chunk.encode(world.schema()));
    let record = ContainerRecord { items: vec![ItemSlot::new(3, "minecraft:gold_ingot", 5)] };
    game::put_container(&mut save, 0, [2, 67, 4], &record);
    game::put_container(&mut save, 0, [5, 67, 4], &record);
    game::put_container(&mut save, 0, [7, 67, 4], &record);
    game::put_container(&mut save, 0, [9, 67, 4], &record);
    world.save_tick(1, save).unwrap();

    let all = exported_block_entities(&world, tmp.path());
    let placed = all.iter().find(|b| at(b) == [2, 67, 4]).expect("a new block entity");
    assert_eq!(placed.get("id"), Some(&Tag::String("minecraft:shulker_box".into())));
    let got = items(placed);
    assert_eq!(got.len(), 1, "{placed:?}");
    assert_eq!(got[0].get("id"), Some(&Tag::String("minecraft:gold_ingot".into())));
    assert_eq!(got[0].get("count"), Some(&Tag::Int(5)), "the 1.21 column's item format");
    assert!(all.iter().all(|b| at(b) != [5, 67, 4]), "stone holds no items: {all:?}");
    for (x, id) in [(7, "minecraft:smoker"), (9, "minecraft:brewing_stand")] {
        let placed = all.iter().find(|b| at(b) == [x, 67, 4]).expect("a new block entity");
        assert_eq!(placed.get("id"), Some(&Tag::String(id.into())));
        assert_eq!(items(placed).len(), 1, "{placed:?}");
    }
}
