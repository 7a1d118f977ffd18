//! `terrane::convert`: Java → Bedrock → Java and Bedrock → Java → Bedrock over the test
//! worlds give the same blocks wherever the table maps a state one to one, the report counts
//! exactly the cells it approximated (the refusals: `crates/convert/tests/refusals.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use terrane::bedrock::format::translate::{Fidelity, table};
use terrane::{Backend, ChunkView, World, convert};

mod amulet;

fn bedrock_world() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bedrock/tests/data/world")
}

/// The 1.21.1 region of the test data as a Java world folder, every chunk finished.
fn java_world(dir: &Path) -> PathBuf {
    terrane_anvil::testdata::java_world_finished(dir, "anvil/1.21.1/r.0.0.mca")
}

/// Every cell of every chunk as names, layer 0 then the extra layers.
type Named = BTreeMap<(u64, terrane::ChunkPos), Vec<Vec<String>>>;

fn named(w: &World) -> Named {
    let names: Vec<&str> = w.schema().blocks().names().collect();
    let mut out = Named::new();
    for ((dim, pos), (_, bytes)) in w.tiered().all_chunks().unwrap() {
        let v = ChunkView::parse(&bytes).unwrap();
        let cells = (0..4096u16)
            .map(|i| {
                let mut l = vec![names[v.block(i).0 as usize].to_string()];
                l.extend(v.layers(i).map(|b| names[b.0 as usize].to_string()));
                l
            })
            .collect();
        out.insert((dim, pos), cells);
    }
    out
}

fn import_bedrock(dir: &Path, bedrock: &Path) -> Named {
    let mut w = World::builder().backend(Backend::Memory).create(dir).unwrap();
    terrane::bedrock::import_bedrock_world(&mut w, bedrock, &mut |_| {}).unwrap();
    named(&w)
}

#[test]
fn java_to_bedrock_and_back_keeps_every_block_the_table_maps_one_to_one() {
    let dir = tempfile::tempdir().unwrap();
    let java = java_world(dir.path());
    let bedrock = dir.path().join("bedrock");
    let there = convert::java_to_bedrock(&java, &bedrock, &mut |_| {}).unwrap();
    assert_eq!(there.columns, 225);
    assert!(bedrock.join("db/CURRENT").is_file() && bedrock.join("level.dat").is_file());
    let back_dir = dir.path().join("back");
    let back = convert::bedrock_to_java(&bedrock, &back_dir, &mut |_| {}).unwrap();
    assert_eq!(back.columns, 225);

    let open = |name: &str, java: &Path| {
        let mut w =
            World::builder().backend(Backend::Memory).create(dir.path().join(name)).unwrap();
        terrane::java::import_java_world(&mut w, java, &mut |_, _| {}).unwrap();
        w
    };
    let (a, b) = (open("a", &java), open("b", &back_dir));
    let (na, nb): (Vec<&str>, Vec<&str>) =
        (a.schema().blocks().names().collect(), b.schema().blocks().names().collect());
    let t = table();
    let one_to_one: Vec<bool> =
        na.iter().map(|n| t.java_to_bedrock(n).fidelity == Fidelity::Exact).collect();
    let (mut exact, mut approximated) = (0u64, BTreeMap::<String, u64>::new());
    for ((dim, pos), (_, bytes)) in a.tiered().all_chunks().unwrap() {
        let va = ChunkView::parse(&bytes).unwrap();
        // A conversion writes no all-air sub-chunk: a chunk missing on the way back must have
        // been all air.
        let Some(other) = b.tiered().get_chunk(dim, pos).unwrap() else {
            for i in 0..4096u16 {
                assert_eq!(na[va.block(i).0 as usize], "minecraft:air", "chunk {pos} lost");
                exact += 1;
            }
            continue;
        };
        let vb = ChunkView::parse(&other).unwrap();
        for i in 0..4096u16 {
            let (x, y) = (va.block(i).0 as usize, vb.block(i).0 as usize);
            if one_to_one[x] {
                assert_eq!(na[x], nb[y], "chunk {pos} cell {i}");
                exact += 1;
            } else {
                *approximated.entry(na[x].to_string()).or_default() += 1;
            }
        }
    }
    assert!(exact > 20_000_000, "{exact} cells compared");
    // The report names exactly the cells that were not one to one, by state.
    assert_eq!(there.blocks.approximated, approximated);
    assert!(there.blocks.dropped.is_empty(), "{:?}", there.blocks.dropped);
}

#[test]
fn bedrock_to_java_and_back_keeps_every_block_with_its_water_layer() {
    let dir = tempfile::tempdir().unwrap();
    let java = dir.path().join("java");
    let s = convert::bedrock_to_java(&bedrock_world(), &java, &mut |_| {}).unwrap();
    assert_eq!(s.columns, 27);
    assert!(s.entities.converted_count() > 0, "the test world's mobs are translated");
    let bedrock = dir.path().join("bedrock");
    convert::java_to_bedrock(&java, &bedrock, &mut |_| {}).unwrap();
    let a = import_bedrock(&dir.path().join("a"), &bedrock_world());
    let b = import_bedrock(&dir.path().join("b"), &bedrock);
    let t = table();
    let strip = |s: &str| s.rsplit_once('@').map_or(s.to_string(), |(n, _)| n.to_string());
    let mut compared = 0;
    for (key, cells) in &a {
        let Some(other) = b.get(key) else {
            assert!(cells.iter().all(|c| c[0].starts_with("minecraft:air")), "chunk {key:?} lost");
            continue;
        };
        for (i, (x, y)) in cells.iter().zip(other).enumerate() {
            let wet = x.get(1).is_some_and(|l| l.starts_with("minecraft:water"));
            if t.bedrock_to_java(&x[0], wet).fidelity != Fidelity::Exact {
                continue;
            }
            assert_eq!(strip(&x[0]), strip(&y[0]), "chunk {key:?} cell {i}");
            assert_eq!(wet, y.get(1).is_some(), "chunk {key:?} cell {i}: the water layer");
            compared += 1;
        }
    }
    assert!(compared > 100_000, "{compared} cells compared");
}

/// Every section's biomes of a Java world folder: (dimension, column, section y) → the 64
/// biome names.
fn java_biomes(dir: &Path, java: &Path) -> BTreeMap<(u64, terrane::ColumnPos, i64), Vec<String>> {
    use terrane::anvil::biomes::SectionBiomes;
    use terrane::anvil::mapping::ColumnRecord;
    use terrane::nbt::Tag;
    let mut w = World::builder().backend(Backend::Memory).create(dir).unwrap();
    terrane::java::import_java_world(&mut w, java, &mut |_, _| {}).unwrap();
    let mut out = BTreeMap::new();
    let prefix = terrane::java::RECORD_PREFIX;
    for e in w.store().scan_prefix(terrane::tables::WORLD_PROPERTIES, prefix).unwrap() {
        let (k, o) = e.unwrap();
        let Some((dim, pos)) = terrane::java::parse_record_key(&k) else { continue };
        let r = ColumnRecord::decode(&o.data).unwrap();
        let Some(Tag::List(_, sections)) = r.rest.get("sections") else { continue };
        for s in sections.iter().filter_map(Tag::as_compound) {
            let y = s.get("Y").and_then(Tag::as_i64).unwrap();
            if let Some(b) = SectionBiomes::from_section(s).unwrap() {
                let cells =
                    (0..64).map(|i| b.get(i % 4, i / 16, (i / 4) % 4).to_string()).collect();
                out.insert((dim, pos, y), cells);
            }
        }
    }
    out
}

#[test]
fn biomes_go_to_bedrock_and_back_where_both_editions_have_them() {
    let dir = tempfile::tempdir().unwrap();
    let java = java_world(dir.path());
    let bedrock = dir.path().join("bedrock");
    let there = convert::java_to_bedrock(&java, &bedrock, &mut |_| {}).unwrap();
    assert_eq!(there.columns_without_biomes, 0);
    let back_dir = dir.path().join("back");
    let back = convert::bedrock_to_java(&bedrock, &back_dir, &mut |_| {}).unwrap();
    assert_eq!(back.columns_without_biomes, 0);
    let (a, b) =
        (java_biomes(&dir.path().join("a"), &java), java_biomes(&dir.path().join("b"), &back_dir));
    let t = table();
    let mut kinds = std::collections::BTreeSet::new();
    let mut compared = 0;
    for (key, cells) in &a {
        let other = b.get(key).unwrap_or_else(|| panic!("section {key:?} lost its biomes"));
        for (x, y) in cells.iter().zip(other) {
            if t.java_biome_to_bedrock(x).1 == Fidelity::Exact {
                assert_eq!(x, y, "section {key:?}");
                kinds.insert(x.clone());
                compared += 1;
            }
        }
    }
    assert!(compared > 10_000 && kinds.len() > 2, "{compared} cells of {kinds:?}");
}

/// Every block entity of a Java world's three dimensions, as stored.
fn region_block_entities(world: &Path) -> Vec<terrane::nbt::Compound> {
    let mut out = Vec::new();
    let regions = ["region", "DIM-1/region", "DIM1/region"].map(|r| world.join(r));
    let files = regions.iter().filter(|r| r.is_dir()).flat_map(|r| {
        terrane::anvil::region::list_regions(r).unwrap().into_iter().map(|(_, _, p)| p)
    });
    for path in files {
        let file = terrane::anvil::region::RegionFile::new(std::fs::read(&path).unwrap()).unwrap();
        for e in file.entries() {
            let raw = file.read(&e).unwrap();
            let c = terrane::anvil::Column::from_nbt(&raw.nbt, (0, 0)).unwrap();
            out.extend(c.block_entities);
        }
    }
    out.sort_by_key(at);
    out
}

/// Every compound of every `BlockEntity` record of a Bedrock world.
fn bedrock_block_entities(world: &Path) -> Vec<terrane::nbt::Compound> {
    let mut out = bedrock_compounds(world, terrane::bedrock::format::key::tag::BLOCK_ENTITY, false);
    out.sort_by_key(at);
    out
}

/// The compounds of every column record `tag` of a Bedrock world (compounds back to back),
/// and with `actors` the entity records its columns' `digp` lists name.
fn bedrock_compounds(world: &Path, tag: u8, actors: bool) -> Vec<terrane::nbt::Compound> {
    use terrane::bedrock::format::{db, read};
    let mut out = Vec::new();
    let mut d = db::ReadDb::open(&read::db_dir(world).unwrap()).unwrap();
    read::read_db(
        &mut d,
        |raw| {
            for (_, v) in raw.actors.iter().filter(|_| actors) {
                out.push(terrane::nbt::Reader::little_endian(v).root_compound().unwrap());
            }
            for (_, v) in raw.records.iter().filter(|(t, _)| *t == tag) {
                let mut r = terrane::nbt::Reader::little_endian(v);
                while r.remaining() > 0 {
                    out.push(r.root_compound().unwrap());
                }
            }
            Ok(())
        },
        |_, _| Ok(()),
    )
    .unwrap();
    out
}

/// The state at world `(x, y, z)` of the Overworld in `blocks`.
fn state_at(blocks: &Named, (x, y, z): (i32, i32, i32)) -> String {
    let pos = terrane::ChunkPos::new(i64::from(x >> 4), i64::from(y >> 4), i64::from(z >> 4));
    let i = (((x & 15) << 8) | ((y & 15) << 4) | (z & 15)) as usize;
    blocks[&(0, pos)][i][0].clone()
}

fn at(c: &terrane::nbt::Compound) -> (i32, i32, i32) {
    let n = |k: &str| c.get(k).and_then(terrane::nbt::Tag::as_int).unwrap();
    (n("x"), n("y"), n("z"))
}

/// A container's items as (slot, item, count), whichever edition's form.
fn items(c: &terrane::nbt::Compound) -> Vec<(i32, String, i32)> {
    use terrane::nbt::Tag;
    let list = c.get("Items").and_then(Tag::as_list).unwrap_or(&[]);
    list.iter()
        .filter_map(Tag::as_compound)
        .map(|i| {
            let name = i.get("id").or_else(|| i.get("Name")).and_then(Tag::as_str).unwrap();
            let count = i.get("count").or_else(|| i.get("Count")).and_then(Tag::as_int).unwrap();
            (i.get("Slot").and_then(Tag::as_int).unwrap(), name.to_string(), count)
        })
        .collect()
}

#[test]
fn a_java_chest_and_beds_go_to_bedrock_and_back_with_their_items_and_colours() {
    let dir = tempfile::tempdir().unwrap();
    let java = terrane_section::testdata::java_world(dir.path(), "anvil/1.17.1/r.-3.-2.mca");
    let source = region_block_entities(&java);
    let mut w = World::builder().backend(Backend::Memory).create(dir.path().join("w")).unwrap();
    terrane::java::import_java_world(&mut w, &java, &mut |_, _| {}).unwrap();
    let blocks = named(&w);
    let bedrock = dir.path().join("bedrock");
    let there = convert::java_to_bedrock(&java, &bedrock, &mut |_| {}).unwrap();
    let counts = |m: &BTreeMap<String, u64>| m.iter().map(|(k, v)| (k.clone(), *v)).collect();
    let want: BTreeMap<String, u64> =
        counts(&[("minecraft:bed".to_string(), 2), ("minecraft:chest".to_string(), 1)].into());
    assert_eq!(there.block_entities.converted, want);
    assert!(there.block_entities.left.is_empty(), "{:?}", there.block_entities);
    let written = bedrock_block_entities(&bedrock);
    assert_eq!(written.len(), 3);
    for (j, b) in source.iter().zip(&written) {
        assert_eq!(at(j), at(b));
        let id = b.get("id").and_then(terrane::nbt::Tag::as_str).unwrap();
        match j.get("id").and_then(terrane::nbt::Tag::as_str).unwrap() {
            "minecraft:chest" => {
                assert_eq!(id, "Chest");
                assert_eq!(items(j), items(b));
                // The fixture's chest is a village chest not yet opened: its loot table.
                let loot = |c: &terrane::nbt::Compound| {
                    c.get("LootTable").and_then(terrane::nbt::Tag::as_str).map(str::to_string)
                };
                assert_eq!(
                    loot(j).as_deref(),
                    Some("minecraft:chests/village/village_cartographer")
                );
                let b_loot = "loot_tables/chests/village/village_cartographer.json";
                assert_eq!(loot(b).as_deref(), Some(b_loot));
            }
            "minecraft:bed" => {
                assert_eq!(id, "Bed");
                // The colour of the Java block, by Bedrock's index (white 0 ... black 15).
                let block = state_at(&blocks, at(j));
                let colours = ["white", "orange", "magenta", "light_blue", "yellow", "lime"];
                let i =
                    colours.iter().position(|c| block.starts_with(&format!("minecraft:{c}_bed")));
                let want = i.unwrap_or_else(|| panic!("a bed of another colour: {block}"));
                assert_eq!(b.get("color"), Some(&terrane::nbt::Tag::Byte(want as i8)), "{block}");
            }
            other => panic!("unexpected block entity {other}"),
        }
    }
    let back_dir = dir.path().join("back");
    let back = convert::bedrock_to_java(&bedrock, &back_dir, &mut |_| {}).unwrap();
    assert_eq!(back.block_entities.converted_count(), 3);
    assert!(back.block_entities.approximated.is_empty(), "{:?}", back.block_entities);
    let mut w = World::builder().backend(Backend::Memory).create(dir.path().join("w2")).unwrap();
    terrane::java::import_java_world(&mut w, &back_dir, &mut |_, _| {}).unwrap();
    let blocks_back = named(&w);
    for j in &source {
        // A bed's colour comes back from its Bedrock block entity (Bedrock's block has none).
        assert_eq!(state_at(&blocks, at(j)), state_at(&blocks_back, at(j)));
    }
    let again = region_block_entities(&back_dir);
    assert_eq!(again.len(), 3);
    for (j, k) in source.iter().zip(&again) {
        assert_eq!((at(j), j.get("id")), (at(k), k.get("id")));
        assert_eq!(items(j), items(k));
        assert_eq!(j.get("LootTable"), k.get("LootTable"));
    }
    // The seed is 64 bits in Java, 32 in Bedrock: counted.
    let seed = "minecraft:chest: LootTableSeed (Bedrock keeps 32 bits)";
    assert_eq!(there.block_entities.approximated.keys().collect::<Vec<_>>(), [seed]);
}

#[test]
fn bedrock_chests_go_to_java_and_back_with_their_items() {
    let dir = tempfile::tempdir().unwrap();
    let source = bedrock_block_entities(&bedrock_world());
    assert_eq!(source.len(), 3);
    let java = dir.path().join("java");
    let s = convert::bedrock_to_java(&bedrock_world(), &java, &mut |_| {}).unwrap();
    assert_eq!(s.block_entities.converted.get("Chest"), Some(&3));
    let in_java = region_block_entities(&java);
    assert_eq!(in_java.len(), 3);
    let bedrock = dir.path().join("bedrock");
    let t = convert::java_to_bedrock(&java, &bedrock, &mut |_| {}).unwrap();
    assert_eq!(t.block_entities.converted.get("minecraft:chest"), Some(&3));
    let back = bedrock_block_entities(&bedrock);
    assert_eq!(back.len(), 3);
    assert!(source.iter().all(|c| !items(c).is_empty()), "the test world's chests hold items");
    for ((a, j), b) in source.iter().zip(&in_java).zip(&back) {
        assert_eq!((at(a), at(j)), (at(b), at(b)));
        assert_eq!(items(a), items(j));
        assert_eq!(items(a), items(b));
    }
}

/// Byte flips and truncations in each file of the Bedrock test world's database, converted
/// to Java: a typed error naming the database (with nothing left behind), or the world with
/// what the reader found damaged in the report; never a panic. (The reader's own sweep, with every variant, is terrane-bedrock's
/// `tests/damage.rs`.)
#[test]
fn a_damaged_bedrock_database_is_an_error_naming_it_or_converts_what_is_whole() {
    let dir = tempfile::tempdir().unwrap();
    let src = bedrock_world();
    let files: Vec<PathBuf> = std::fs::read_dir(src.join("db"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "LOCK"))
        .collect();
    let mut outcomes = BTreeMap::<&str, usize>::new();
    for f in &files {
        let good = std::fs::read(f).unwrap();
        let mut variants: Vec<Vec<u8>> = (1..=8)
            .map(|k| {
                let mut b = good.clone();
                if !b.is_empty() {
                    let i = (b.len() * k / 9).min(b.len() - 1);
                    b[i] ^= 0x5A;
                }
                b
            })
            .collect();
        variants.extend([good.len() / 3, good.len() * 2 / 3].map(|cut| good[..cut].to_vec()));
        for (v, bytes) in variants.iter().enumerate() {
            let world = dir.path().join(format!("w{v}"));
            let _ = std::fs::remove_dir_all(&world);
            std::fs::create_dir_all(world.join("db")).unwrap();
            std::fs::copy(src.join("level.dat"), world.join("level.dat")).unwrap();
            for g in &files {
                std::fs::copy(g, world.join("db").join(g.file_name().unwrap())).unwrap();
            }
            std::fs::write(world.join("db").join(f.file_name().unwrap()), bytes).unwrap();
            let out = dir.path().join(format!("out{v}"));
            let name = f.file_name().unwrap().to_string_lossy();
            let r =
                std::panic::catch_unwind(|| convert::bedrock_to_java(&world, &out, &mut |_| {}));
            match r {
                Err(_) => panic!("{name} variant {v}: the conversion panicked"),
                Ok(Ok(s)) => {
                    // Whole, or what the reader noted as damaged is in the report.
                    let whole = s.columns == 27;
                    let copy = s.damaged.iter().find(|d| d.contains("terrane-bedrock-"));
                    assert!(copy.is_none(), "{name} variant {v}: names the copy: {copy:?}");
                    assert!(whole || !s.damaged.is_empty(), "{name} variant {v}: {s:?}");
                    *outcomes
                        .entry(if whole { "whole" } else { "damage reported" })
                        .or_default() += 1;
                    std::fs::remove_dir_all(&out).unwrap();
                }
                Ok(Err(e)) => {
                    let m = e.to_string();
                    let user_db = world.join("db").display().to_string();
                    assert!(m.contains(&user_db), "{name} variant {v}: names {user_db}? {m}");
                    assert!(!m.contains("terrane-bedrock-"), "{name} variant {v}: {m}");
                    assert!(!out.exists(), "{name} variant {v}: a failed conversion left {out:?}");
                    *outcomes.entry("typed error").or_default() += 1;
                }
            }
            let left: Vec<_> = std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.'))
                .collect();
            assert!(left.is_empty(), "{name} variant {v}: left {left:?}");
        }
    }
    eprintln!("{outcomes:?}");
    assert!(outcomes.get("typed error").is_some_and(|&n| n > 0), "{outcomes:?}");
}

/// Every entity record of a Bedrock world (those its columns' `digp` lists name, and the
/// pre-1.18.30 entity lists).
fn bedrock_entities(world: &Path) -> Vec<terrane::nbt::Compound> {
    bedrock_compounds(world, terrane::bedrock::format::key::tag::ENTITY, true)
}

/// Every entity of a Java world's three dimensions: those of its chunks (before 1.17; of
/// the chunks Minecraft populated, the ones a conversion takes) and of its `entities/`
/// regions.
fn java_entities(world: &Path) -> Vec<terrane::nbt::Compound> {
    use terrane::anvil::region::{RegionFile, list_regions};
    let mut out = Vec::new();
    let dirs = ["", "DIM-1/", "DIM1/"]
        .iter()
        .flat_map(|d| ["region", "entities"].map(|f| world.join(format!("{d}{f}"))));
    for dir in dirs.filter(|d| d.is_dir()) {
        for (_, _, path) in list_regions(&dir).unwrap() {
            let file = RegionFile::new(std::fs::read(&path).unwrap()).unwrap();
            for e in file.entries() {
                let raw = file.read(&e).unwrap();
                if dir.file_name().is_some_and(|n| n == "entities") {
                    let (_, chunk) = terrane::nbt::from_bytes(&raw.nbt).unwrap();
                    let list = chunk.as_compound().and_then(|c| c.get("Entities")).unwrap();
                    let list = list.as_list().unwrap().iter();
                    out.extend(list.map(|t| t.as_compound().unwrap().clone()));
                } else {
                    // A chunk before 1.13 not yet populated is not converted, nor its mobs.
                    let (_, root) = terrane::nbt::from_bytes(&raw.nbt).unwrap();
                    let level = root.as_compound().and_then(|c| c.get("Level"));
                    let populated = level.and_then(|l| l.as_compound()?.get("TerrainPopulated"));
                    if populated == Some(&terrane::nbt::Tag::Byte(0)) {
                        continue;
                    }
                    let c = terrane::anvil::Column::from_nbt(&raw.nbt, (0, 0)).unwrap();
                    out.extend(c.entities);
                }
            }
        }
    }
    out
}

/// An entity as the test compares it: kind (by the Java name), position in single
/// precision (what Bedrock keeps), and whether it is a baby; `None` without a position.
fn entity_key(c: &terrane::nbt::Compound) -> Option<(String, [u32; 3], bool)> {
    use terrane::bedrock::format::entity::ENTITIES;
    use terrane::nbt::Tag;
    // Bedrock's oldest entities name their kind by number only.
    let id = c.get("id").or_else(|| c.get("identifier")).and_then(Tag::as_str).unwrap_or("");
    let bare = id.trim_start_matches("minecraft:");
    let java = ENTITIES.iter().find(|(j, b)| *j == bare || *b == bare).map_or(bare, |(j, _)| j);
    let pos: Vec<u32> = c
        .get("Pos")
        .and_then(Tag::as_list)?
        .iter()
        .filter_map(|t| match t {
            Tag::Double(d) => Some((*d as f32).to_bits()),
            Tag::Float(f) => Some(f.to_bits()),
            _ => None,
        })
        .collect();
    let baby = matches!(c.get("IsBaby"), Some(Tag::Byte(1)))
        || (c.get("Age").and_then(Tag::as_int).is_some_and(|a| a < 0) && java != "item");
    Some((java.to_string(), pos.try_into().ok()?, baby))
}

/// The entities of kinds the conversion translates, as [`entity_key`]s, sorted.
fn translated(entities: &[terrane::nbt::Compound]) -> Vec<(String, [u32; 3], bool)> {
    use terrane::bedrock::format::entity::ENTITIES;
    let mut v: Vec<_> = entities
        .iter()
        .filter_map(entity_key)
        .filter(|(id, _, _)| ENTITIES.iter().any(|(j, _)| j == id))
        .collect();
    v.sort();
    v
}

#[test]
fn java_mobs_go_to_bedrock_and_back_in_their_places() {
    let dir = tempfile::tempdir().unwrap();
    let java = terrane_section::testdata::java_world(dir.path(), "anvil/1.12.2/r.0.-1.mca");
    let source = java_entities(&java);
    let bedrock = dir.path().join("bedrock");
    let there = convert::java_to_bedrock(&java, &bedrock, &mut |_| {}).unwrap();
    let kinds = translated(&source);
    assert!(!kinds.is_empty(), "the fixture holds mobs");
    assert_eq!(there.entities.converted_count(), kinds.len() as u64);
    assert_eq!(
        there.entities.left_count(),
        (source.len() - kinds.len()) as u64,
        "{:?}",
        there.entities
    );
    assert_eq!(translated(&bedrock_entities(&bedrock)), kinds);
    let back_dir = dir.path().join("back");
    let back = convert::bedrock_to_java(&bedrock, &back_dir, &mut |_| {}).unwrap();
    assert_eq!(back.entities.converted_count(), kinds.len() as u64);
    assert!(back_dir.join("entities").is_dir(), "1.17+ worlds keep entities in entities/");
    assert_eq!(translated(&java_entities(&back_dir)), kinds);
}

#[test]
fn bedrock_mobs_go_to_java_and_back_with_their_ids() {
    use terrane::nbt::Tag;
    let dir = tempfile::tempdir().unwrap();
    let source = bedrock_entities(&bedrock_world());
    let java = dir.path().join("java");
    let s = convert::bedrock_to_java(&bedrock_world(), &java, &mut |_| {}).unwrap();
    let kinds = translated(&source);
    assert!(!kinds.is_empty(), "the test world holds mobs");
    assert_eq!(s.entities.converted_count(), kinds.len() as u64, "{:?} {kinds:?}", s.entities);
    assert_eq!(translated(&java_entities(&java)), kinds);
    let bedrock = dir.path().join("bedrock");
    let back = convert::java_to_bedrock(&java, &bedrock, &mut |_| {}).unwrap();
    assert_eq!(back.entities.converted_count(), kinds.len() as u64, "{:?}", back.entities);
    let again = bedrock_entities(&bedrock);
    assert_eq!(translated(&again), kinds);
    let ids = |v: &[terrane::nbt::Compound]| {
        let mut ids: Vec<i64> = v
            .iter()
            .filter(|c| translated(std::slice::from_ref(*c)).len() == 1)
            .map(|c| c.get("UniqueID").and_then(Tag::as_i64).unwrap())
            .collect();
        ids.sort_unstable();
        ids
    };
    assert_eq!(ids(&again), ids(&source), "Bedrock → Java → Bedrock keeps the unique ids");
}

/// The `~local_player` record of a Bedrock world.
fn local_player(world: &Path) -> terrane::nbt::Compound {
    use terrane::bedrock::format::{db, read};
    let mut d = db::ReadDb::open(&read::db_dir(world).unwrap()).unwrap();
    let mut out = None;
    read::read_db(
        &mut d,
        |_| Ok(()),
        |k, v| {
            if k == terrane::bedrock::format::player::LOCAL_PLAYER_KEY {
                out = Some(terrane::nbt::Reader::little_endian(v).root_compound().unwrap());
            }
            Ok(())
        },
    )
    .unwrap();
    out.expect("a ~local_player record")
}

/// A Bedrock player's items: (list, slot, name, count), empty places left out.
fn carried(p: &terrane::nbt::Compound) -> Vec<(String, i8, String, i8)> {
    use terrane::nbt::Tag;
    let mut out = Vec::new();
    for list in ["Inventory", "Armor", "Offhand", "EnderChestInventory"] {
        let items = p.get(list).and_then(Tag::as_list).unwrap_or(&[]);
        for (i, item) in items.iter().filter_map(Tag::as_compound).enumerate() {
            let name = item.get("Name").and_then(Tag::as_str).unwrap_or("").to_string();
            let Some(Tag::Byte(count)) = item.get("Count") else { continue };
            if name.is_empty() || *count == 0 {
                continue;
            }
            let slot = match item.get("Slot") {
                Some(Tag::Byte(s)) if list != "Armor" && list != "Offhand" => *s,
                _ => i as i8,
            };
            out.push((list.to_string(), slot, name, *count));
        }
    }
    out.sort();
    out
}

/// A Java `level.dat` (gzip NBT) of `data`.
fn java_level_dat(data: terrane::nbt::Compound) -> Vec<u8> {
    use terrane::nbt::Tag;
    let mut root = terrane::nbt::Compound::new();
    root.insert("Data", Tag::Compound(data));
    let raw = terrane::nbt::to_bytes("", &Tag::Compound(root)).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &raw).unwrap();
    gz.finish().unwrap()
}

/// `Data.Player` of a Java world's `level.dat`.
fn java_player(world: &Path) -> terrane::nbt::Compound {
    use terrane::nbt::Tag;
    let mut raw = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(&std::fs::read(world.join("level.dat")).unwrap()[..]),
        &mut raw,
    )
    .unwrap();
    let (_, root) = terrane::nbt::from_bytes(&raw).unwrap();
    let data = root.as_compound().and_then(|r| r.get("Data")).and_then(Tag::as_compound).unwrap();
    data.get("Player").and_then(Tag::as_compound).expect("Data.Player").clone()
}

/// A Java player's items: (where, slot, id, count).
fn java_carried(p: &terrane::nbt::Compound) -> Vec<(String, i8, String, i32)> {
    use terrane::nbt::Tag;
    let item = |c: &terrane::nbt::Compound| {
        let id = c.get("id").and_then(Tag::as_str).unwrap().to_string();
        (id, c.get("count").and_then(Tag::as_int).unwrap())
    };
    let mut out = Vec::new();
    for list in ["Inventory", "EnderItems"] {
        for c in p.get(list).and_then(Tag::as_list).unwrap_or(&[]).iter() {
            let c = c.as_compound().unwrap();
            let Some(Tag::Byte(slot)) = c.get("Slot") else { panic!("a slot") };
            let (id, n) = item(c);
            out.push((list.to_string(), *slot, id, n));
        }
    }
    if let Some(eq) = p.get("equipment").and_then(Tag::as_compound) {
        for (k, c) in eq.iter() {
            let (id, n) = item(c.as_compound().unwrap());
            out.push((format!("equipment.{k}"), 0, id, n));
        }
    }
    out.sort();
    out
}

#[test]
fn the_single_player_goes_to_bedrock_and_back_with_its_place_and_items() {
    use terrane::nbt::{Compound, Tag};
    let dir = tempfile::tempdir().unwrap();
    let java = java_world(dir.path());
    let item = |slot: Option<i8>, id: &str, count: i32| {
        let mut c = Compound::new();
        if let Some(s) = slot {
            c.insert("Slot", Tag::Byte(s));
        }
        c.insert("id", Tag::String(id.into()));
        c.insert("count", Tag::Int(count));
        c
    };
    let mut player = Compound::new();
    let pos = [3.5, 71.0, -8.25];
    player.insert("Pos", Tag::list(pos.iter().map(|d| Tag::Double(*d)).collect()));
    player.insert("Rotation", Tag::list(vec![Tag::Float(90.0), Tag::Float(0.0)]));
    player.insert("UUID", Tag::IntArray(vec![11, 22, 33, 44]));
    player.insert("Dimension", Tag::String("minecraft:overworld".into()));
    player.insert("playerGameType", Tag::Int(1));
    player.insert("XpLevel", Tag::Int(30));
    player.insert(
        "Inventory",
        Tag::compound_list([
            item(Some(0), "minecraft:diamond_pickaxe", 1),
            item(Some(8), "minecraft:oak_planks", 64),
            item(Some(30), "minecraft:cobblestone", 12),
        ]),
    );
    let mut eq = Compound::new();
    eq.insert("chest", Tag::Compound(item(None, "minecraft:iron_chestplate", 1)));
    eq.insert("offhand", Tag::Compound(item(None, "minecraft:shield", 1)));
    player.insert("equipment", Tag::Compound(eq));
    player.insert("EnderItems", Tag::compound_list([item(Some(0), "minecraft:emerald", 5)]));
    let mut data = Compound::new();
    data.insert("DataVersion", Tag::Int(4671));
    data.insert("LevelName", Tag::String("players".into()));
    data.insert("Player", Tag::Compound(player.clone()));
    std::fs::write(java.join("level.dat"), java_level_dat(data)).unwrap();
    // The single player's own file (Java writes both) and a damaged one.
    std::fs::create_dir_all(java.join("playerdata")).unwrap();
    std::fs::write(java.join("playerdata/0000000b-0000-0016-0000-00210000002c.dat"), b"").unwrap();
    std::fs::write(java.join("playerdata/12345678-0000-0000-0000-000000000000.dat"), b"").unwrap();

    let bedrock = dir.path().join("bedrock");
    let there = convert::java_to_bedrock(&java, &bedrock, &mut |_| {}).unwrap();
    assert_eq!(there.entities.converted.get("minecraft:player"), Some(&1));
    assert_eq!(there.entities.left.get("(damaged player)"), Some(&1), "{:?}", there.entities);
    assert_eq!(there.players, 0);
    let b = local_player(&bedrock);
    let y = |p: &Compound| match p.get("Pos").and_then(Tag::as_list) {
        Some([_, Tag::Double(y), _]) => *y,
        Some([_, Tag::Float(y), _]) => f64::from(*y),
        other => panic!("{other:?}"),
    };
    let eye = terrane::bedrock::format::player::BEDROCK_EYE_HEIGHT;
    assert!((y(&b) - (71.0 + eye)).abs() < 1e-3, "Bedrock keeps the eye: {}", y(&b));
    assert_eq!(b.get("PlayerGameMode"), Some(&Tag::Int(1)));
    assert_eq!(carried(&b).len(), 6, "{:?}", carried(&b));

    let back_dir = dir.path().join("back");
    let back = convert::bedrock_to_java(&bedrock, &back_dir, &mut |_| {}).unwrap();
    assert_eq!(back.entities.converted.get("minecraft:player"), Some(&1));
    let again = java_player(&back_dir);
    assert!((y(&again) - 71.0).abs() < 1e-3);
    assert_eq!(again.get("playerGameType"), Some(&Tag::Int(1)));
    assert_eq!(again.get("XpLevel"), Some(&Tag::Int(30)));
    assert_eq!(java_carried(&again), java_carried(&player));
}

/// A 1.15.2 region's biomes, per column by number, reach Bedrock by their 1.18+ names.
#[test]
fn biomes_of_worlds_before_1_18_are_read_by_number() {
    use terrane::anvil::legacy_biomes::legacy_sections;
    let dir = tempfile::tempdir().unwrap();
    let java = terrane_section::testdata::java_world(dir.path(), "anvil/1.15.2/r.0.0.mca");
    let bedrock = dir.path().join("bedrock");
    let there = convert::java_to_bedrock(&java, &bedrock, &mut |_| {}).unwrap();
    assert_eq!(there.columns_without_biomes, 0, "{:?}", there.damaged);
    let back_dir = dir.path().join("back");
    convert::bedrock_to_java(&bedrock, &back_dir, &mut |_| {}).unwrap();
    let back = java_biomes(&dir.path().join("b"), &back_dir);
    // What the source's numbers say, read directly from its region file.
    let path = java.join("region/r.0.0.mca");
    let file = terrane::anvil::region::RegionFile::new(std::fs::read(&path).unwrap()).unwrap();
    let t = table();
    let mut compared = 0;
    for e in file.entries() {
        let raw = file.read(&e).unwrap();
        let (_, root) = terrane::nbt::from_bytes(&raw.nbt).unwrap();
        let level = root.as_compound().and_then(|r| r.get("Level")).unwrap();
        let level = level.as_compound().unwrap();
        let pos = |k: &str| level.get(k).and_then(terrane::nbt::Tag::as_int).unwrap();
        let col = terrane::ColumnPos::new(pos("xPos"), pos("zPos"));
        let Some(b) = legacy_sections(level).unwrap() else { continue };
        for (y, s) in &b.sections {
            let Some(cells) = back.get(&(0, col, *y)) else { continue };
            for (i, got) in cells.iter().enumerate() {
                let want = s.get(i % 4, i / 16, (i / 4) % 4);
                if t.java_biome_to_bedrock(want).1 == Fidelity::Exact {
                    assert_eq!(got, want, "column {col:?} section {y} cell {i}");
                    compared += 1;
                }
            }
        }
    }
    assert!(compared >= 1024, "{compared} cells compared");
}

/// A Java column that holds entities and no chunk (a mob over the void) keeps them in the
/// Bedrock export: its column is written for them.
#[test]
fn a_java_column_with_entities_and_no_chunk_keeps_them_in_bedrock() {
    use terrane::anvil::mapping::ColumnRecord;
    use terrane::nbt::{Compound, Tag};
    let dir = tempfile::tempdir().unwrap();
    let mut w = World::builder().backend(Backend::Memory).create(dir.path().join("w")).unwrap();
    let doubles = |v: [f64; 3]| Tag::List(6, v.iter().map(|d| Tag::Double(*d)).collect());
    let mut pig = Compound::new();
    pig.insert("id", Tag::String("minecraft:pig".into()));
    pig.insert("Pos", doubles([40.5, 70.0, 40.5]));
    pig.insert("Motion", doubles([0.0, 0.0, 0.0]));
    pig.insert("Rotation", Tag::List(5, vec![Tag::Float(90.0), Tag::Float(0.0)]));
    pig.insert("UUID", Tag::IntArray(vec![1, 2, 3, 4]));
    let uuid = [7u8; 16];
    let mut record = ColumnRecord::fresh(terrane::java::NATIVE_DATA_VERSION);
    record.orphan_entities = vec![uuid];
    let mut save = terrane::TickSave::new();
    save.put_entity(uuid, terrane::nbt::to_bytes("", &Tag::Compound(pig)).unwrap());
    save.put_object(
        terrane::tables::WORLD_PROPERTIES,
        terrane::java::record_key(0, terrane::ColumnPos::new(2, 2)),
        record.encode().unwrap(),
    );
    w.save_tick(1, save).unwrap();

    let out = dir.path().join("bedrock");
    let s = terrane::bedrock::export_bedrock_world(
        &w,
        &out,
        terrane::export::Overwrite::Refuse,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(s.columns, 1, "{s:?}");
    let pigs: Vec<_> = bedrock_entities(&out)
        .into_iter()
        .filter(|c| c.get("identifier").and_then(Tag::as_str) == Some("minecraft:pig"))
        .collect();
    assert_eq!(pigs.len(), 1, "the pig of a column without chunks");
}

/// A column the game had not finished generating is left out in both directions and counted
/// by the stage it was saved at (Java's `Status`, Bedrock's `FinalizedState`), so that the
/// other edition's game generates it instead of showing it half-made.
#[test]
fn columns_the_game_had_not_finished_are_left_out_both_ways_and_counted_by_stage() {
    use terrane::bedrock::format::db::WriteDb;
    use terrane::bedrock::format::key::{BedrockColumnPos, tag};

    let dir = tempfile::tempdir().unwrap();
    // The region's first three chunks set back to earlier stages.
    let stages = ["minecraft:features", "minecraft:noise", "features"];
    let (java, columns) = terrane_anvil::testdata::java_world_with_status(
        dir.path(),
        "anvil/1.21.1/r.0.0.mca",
        |n| stages.get(n).copied().unwrap_or("minecraft:full"),
    );
    let finished = &columns[3..];

    let bedrock = dir.path().join("bedrock");
    let there = convert::java_to_bedrock(&java, &bedrock, &mut |_| {}).unwrap();
    assert_eq!(there.columns, 222);
    let want = BTreeMap::from([("features".to_string(), 2), ("noise".to_string(), 1)]);
    assert_eq!(there.unfinished, want);
    let back = convert::bedrock_to_java(&bedrock, &dir.path().join("back"), &mut |_| {}).unwrap();
    assert_eq!((back.columns, back.unfinished.len()), (222, 0), "{:?}", back.unfinished);

    // Two Bedrock columns set back, one to each unfinished state.
    let mut db = WriteDb::resume(&bedrock.join("db")).unwrap();
    for (&(x, z), state) in finished.iter().zip([0i32, 1]) {
        let key = BedrockColumnPos { dim: 0, x, z }.key(tag::FINALIZED_STATE);
        db.put(&key, &state.to_le_bytes()).unwrap();
        db.end_group().unwrap();
    }
    db.finish().unwrap();
    let back = convert::bedrock_to_java(&bedrock, &dir.path().join("back2"), &mut |_| {}).unwrap();
    assert_eq!(back.columns, 220);
    let want = BTreeMap::from([
        ("needs_instaticking".to_string(), 1),
        ("needs_population".to_string(), 1),
    ]);
    assert_eq!(back.unfinished, want);

    // The real region as Minecraft left it: most of its chunks unfinished, each counted.
    let real =
        terrane_section::testdata::java_world(&dir.path().join("real"), "anvil/1.21.1/r.0.0.mca");
    let s = convert::java_to_bedrock(&real, &dir.path().join("real-bedrock"), &mut |_| {}).unwrap();
    let unfinished: u64 = s.unfinished.values().sum();
    assert_eq!(s.columns + unfinished, 225, "{:?}", s.unfinished);
    assert!(unfinished > 100 && s.columns > 10, "{} finished, {:?}", s.columns, s.unfinished);
}

/// The test world's Bedrock states as older versions saved them: stone with its
/// `stone_type` (before 1.20.50), the oak fence as `minecraft:fence` with a `wood_type`
/// (before 1.19.80), the chest facing by number (before 1.20.40). Such a world converts to
/// the same Java world as the one saved today, nothing dropped.
#[test]
fn an_old_bedrock_world_converts_as_the_same_world_saved_today() {
    use terrane::bedrock::format::db::{ReadDb, WriteDb};
    use terrane::bedrock::format::subchunk::SubChunk;
    use terrane::nbt::{Compound, Tag};

    let v = |a, b, c, d| Tag::Int(i32::from_be_bytes([a, b, c, d]));
    let olden = |c: &mut Compound| -> bool {
        let Some(Tag::String(name)) = c.get("name") else { return false };
        let (name, states, version): (&str, Vec<(&str, Tag)>, Tag) = match name.as_str() {
            "minecraft:stone" => (
                "minecraft:stone",
                vec![("stone_type", Tag::String("stone".into()))],
                v(1, 20, 0, 1),
            ),
            "minecraft:oak_fence" => {
                ("minecraft:fence", vec![("wood_type", Tag::String("oak".into()))], v(1, 19, 0, 1))
            }
            "minecraft:chest" => {
                ("minecraft:chest", vec![("facing_direction", Tag::Int(2))], v(1, 20, 0, 1))
            }
            // 1.2.13 to 1.12: a numeric meta instead of states.
            "minecraft:dirt" | "minecraft:grass_block" => {
                let old =
                    if name == "minecraft:dirt" { "minecraft:dirt" } else { "minecraft:grass" };
                *c = Compound::new();
                c.insert("name".to_string(), Tag::String(old.to_string()));
                c.insert("val".to_string(), Tag::Short(0));
                return true;
            }
            _ => return false,
        };
        let mut s = Compound::new();
        for (k, t) in states {
            s.insert(k.to_string(), t);
        }
        c.insert("name".to_string(), Tag::String(name.to_string()));
        c.insert("states".to_string(), Tag::Compound(s));
        c.insert("version".to_string(), version);
        true
    };
    let dir = tempfile::tempdir().unwrap();
    let src = bedrock_world();
    let old = dir.path().join("old");
    std::fs::create_dir_all(&old).unwrap();
    for file in ["level.dat", "levelname.txt"] {
        std::fs::copy(src.join(file), old.join(file)).unwrap();
    }
    let mut from = ReadDb::open(&src.join("db")).unwrap();
    let mut to = WriteDb::create(&old.join("db")).unwrap();
    // Before 1.2.13: ids and metas, for sub-chunks of blocks that had them.
    let legacy_id = |c: &Compound| -> Option<(u8, u8)> {
        let Some(Tag::String(name)) = c.get("name") else { return None };
        Some(match name.as_str() {
            "minecraft:air" => (0, 0),
            "minecraft:stone" => (1, 0),
            "minecraft:granite" => (1, 1),
            "minecraft:diorite" => (1, 3),
            "minecraft:andesite" => (1, 5),
            "minecraft:grass_block" => (2, 0),
            "minecraft:dirt" => (3, 0),
            "minecraft:bedrock" => (7, 0),
            "minecraft:gravel" => (13, 0),
            "minecraft:gold_ore" => (14, 0),
            "minecraft:iron_ore" => (15, 0),
            "minecraft:coal_ore" => (16, 0),
            _ => return None,
        })
    };
    let (mut oldened, mut numbered) = (0, 0);
    from.for_each(|k, value| {
        let is_sub_chunk = (k.len() == 10 || k.len() == 14) && k[k.len() - 2] == 0x2f;
        let mut value = value.to_vec();
        let sc = if is_sub_chunk { SubChunk::decode(&value).ok() } else { None };
        let ids: Option<Vec<(u8, u8)>> = sc
            .as_ref()
            .filter(|sc| sc.storages.len() == 1)
            .and_then(|sc| sc.storages[0].palette.iter().map(legacy_id).collect());
        if let (Some(sc), Some(ids)) = (&sc, ids) {
            let s = &sc.storages[0];
            let mut v = vec![0u8; 1 + 4096 + 2048 + 4096];
            for (i, &p) in s.indices.iter().enumerate() {
                let (id, meta) = ids[p as usize];
                v[1 + i] = id;
                v[1 + 4096 + i / 2] |= meta << ((i % 2) * 4);
            }
            numbered += 1;
            to.put(k, &v).unwrap();
            to.end_group().unwrap();
            return Ok(());
        }
        if let Some(mut sc) = sc {
            let mut changed = false;
            for s in &mut sc.storages {
                for c in &mut s.palette {
                    changed |= olden(c);
                }
            }
            if changed {
                oldened += 1;
                value = SubChunk::encode(k[k.len() - 1] as i8, &sc.storages).unwrap();
            }
        }
        to.put(k, &value).unwrap();
        to.end_group().unwrap();
        Ok(())
    })
    .unwrap();
    to.finish().unwrap();
    assert!(oldened >= 9, "{oldened} sub-chunks hold old states");
    assert!(numbered >= 1, "{numbered} sub-chunks hold numeric ids");

    let today = convert::bedrock_to_java(&src, &dir.path().join("today"), &mut |_| {}).unwrap();
    let then = convert::bedrock_to_java(&old, &dir.path().join("then"), &mut |_| {}).unwrap();
    assert!(then.blocks.dropped.is_empty(), "{:?}", then.blocks.dropped);
    assert_eq!(then.columns, today.columns);
    // amulet-core reads the old world through its own tables of every version and agrees
    // with the conversion, but for one reading of its own: a fence saved before 1.19.80
    // (`minecraft:fence` with a `wood_type`) it reads joined to its neighbours, one saved since
    // unjoined. Bedrock stores no joins; the conversion writes today's fence for both.
    let fence_joins = |u: &str, v: &str| {
        let post = |b: &str| {
            let mut b = b.to_string();
            for side in ["east", "north", "south", "west"] {
                b = b.replace(&format!("{side}=\"true\""), &format!("{side}=\"false\""));
            }
            b
        };
        u.starts_with("universal_minecraft:fence[") && post(u) == v
    };
    let approximated = then.blocks.approximated_cells();
    let then_dir = dir.path().join("then");
    amulet::assert_amulet_agrees_excusing(&old, &then_dir, approximated, 100_000, &fence_joins);
    // The same world saved today: the same agreement with nothing excused.
    amulet::assert_amulet_agrees(
        &src,
        &dir.path().join("today"),
        today.blocks.approximated_cells(),
        100_000,
    );
    let java = |name: &str| {
        let mut w = World::builder()
            .backend(Backend::Memory)
            .create(dir.path().join(format!("w-{name}")))
            .unwrap();
        terrane::java::import_java_world(&mut w, &dir.path().join(name), &mut |_, _| {}).unwrap();
        named(&w)
    };
    let (a, b) = (java("today"), java("then"));
    assert!(a.len() > 20, "{} chunks", a.len());
    assert!(a == b, "the old world's Java blocks differ from today's");
}

/// Every `player_server_` record of a Bedrock world, by id.
fn server_players(world: &Path) -> BTreeMap<String, terrane::nbt::Compound> {
    use terrane::bedrock::format::{db, read};
    let mut d = db::ReadDb::open(&read::db_dir(world).unwrap()).unwrap();
    let mut out = BTreeMap::new();
    read::read_db(
        &mut d,
        |_| Ok(()),
        |k, v| {
            if let Some(id) = k.strip_prefix(b"player_server_") {
                let c = terrane::nbt::Reader::little_endian(v).root_compound().unwrap();
                out.insert(String::from_utf8(id.to_vec()).unwrap(), c);
            }
            Ok(())
        },
    )
    .unwrap();
    out
}

/// A Java player file (gzip NBT).
fn player_file(p: &terrane::nbt::Compound) -> Vec<u8> {
    let raw = terrane::nbt::to_bytes("", &terrane::nbt::Tag::Compound(p.clone())).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &raw).unwrap();
    gz.finish().unwrap()
}

/// The player files of a Java world, by UUID.
fn java_players(world: &Path) -> BTreeMap<String, terrane::nbt::Compound> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(world.join("playerdata")).unwrap() {
        let path = e.unwrap().path();
        let mut raw = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(&std::fs::read(&path).unwrap()[..]),
            &mut raw,
        )
        .unwrap();
        let (_, root) = terrane::nbt::from_bytes(&raw).unwrap();
        let uuid = path.file_stem().unwrap().to_string_lossy().into_owned();
        out.insert(uuid, root.as_compound().unwrap().clone());
    }
    out
}

#[test]
fn every_player_goes_to_bedrock_and_back_under_the_same_id() {
    use terrane::nbt::{Compound, Tag};
    let dir = tempfile::tempdir().unwrap();
    let java = java_world(dir.path());
    let player = |y: f64, dim: &str, mode: i32, xp: i32, item: &str| {
        let mut p = Compound::new();
        p.insert("Pos", Tag::list(vec![Tag::Double(1.5), Tag::Double(y), Tag::Double(2.5)]));
        p.insert("Dimension", Tag::String(dim.into()));
        p.insert("playerGameType", Tag::Int(mode));
        p.insert("XpLevel", Tag::Int(xp));
        let mut i = Compound::new();
        i.insert("Slot", Tag::Byte(4));
        i.insert("id", Tag::String(item.into()));
        i.insert("count", Tag::Int(7));
        p.insert("Inventory", Tag::compound_list([i.clone()]));
        i.insert("Slot", Tag::Byte(2));
        p.insert("EnderItems", Tag::compound_list([i]));
        p
    };
    let alex = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
    // A player first met in Bedrock under an id that is not a UUID: its Java file is named
    // after the UUID terrane gave it, and the id file says which id it was.
    let steve = terrane::convert::bedrock_player_uuid("xbox:2535416");
    std::fs::create_dir_all(java.join("playerdata")).unwrap();
    let players = [
        (alex.to_string(), player(40.0, "minecraft:the_nether", 1, 12, "minecraft:diamond")),
        (steve.clone(), player(90.0, "minecraft:overworld", 0, 3, "minecraft:torch")),
    ];
    for (uuid, p) in &players {
        std::fs::write(java.join(format!("playerdata/{uuid}.dat")), player_file(p)).unwrap();
    }
    std::fs::write(
        java.join(terrane::convert::BEDROCK_PLAYER_IDS),
        format!("{steve} xbox:2535416\n"),
    )
    .unwrap();

    let bedrock = dir.path().join("bedrock");
    let there = convert::java_to_bedrock(&java, &bedrock, &mut |_| {}).unwrap();
    assert_eq!(there.players, 2);
    let in_bedrock = server_players(&bedrock);
    assert_eq!(in_bedrock.keys().collect::<Vec<_>>(), [alex, "xbox:2535416"]);
    let a = &in_bedrock[alex];
    assert_eq!(a.get("DimensionId"), Some(&Tag::Int(1)));
    assert_eq!(a.get("PlayerGameMode"), Some(&Tag::Int(1)));
    assert_eq!(a.get("PlayerLevel"), Some(&Tag::Int(12)));
    assert_eq!(carried(a).len(), 2, "{:?}", carried(a));

    let back_dir = dir.path().join("back");
    let back = convert::bedrock_to_java(&bedrock, &back_dir, &mut |_| {}).unwrap();
    assert_eq!(back.players, 2);
    let in_java = java_players(&back_dir);
    assert_eq!(in_java.keys().collect::<Vec<_>>(), [alex, steve.as_str()]);
    for (uuid, p) in &players {
        let again = &in_java[uuid];
        for k in ["Dimension", "playerGameType", "XpLevel"] {
            assert_eq!(again.get(k), p.get(k), "{uuid}: {k}");
        }
        assert_eq!(java_carried(again), java_carried(p), "{uuid}");
        let ints = again.get("UUID").unwrap();
        assert!(matches!(ints, Tag::IntArray(v) if v.len() == 4), "{ints:?}");
    }
    // The id file goes with the world, so that the next conversion finds the same ids.
    let ids = std::fs::read_to_string(back_dir.join(terrane::convert::BEDROCK_PLAYER_IDS)).unwrap();
    assert_eq!(ids, format!("{steve} xbox:2535416\n"));
    let again = dir.path().join("again");
    convert::java_to_bedrock(&back_dir, &again, &mut |_| {}).unwrap();
    assert_eq!(server_players(&again).keys().collect::<Vec<_>>(), [alex, "xbox:2535416"]);
}

/// The blocks of a Java world folder, imported.
fn import_java(dir: &Path, java: &Path) -> Named {
    let mut w = World::builder().backend(Backend::Memory).create(dir).unwrap();
    terrane::java::import_java_world(&mut w, java, &mut |_, _| {}).unwrap();
    named(&w)
}

/// A Bedrock → Java run stopped half-way (a panic stands for the kill: nothing is cleaned up)
/// leaves spill files; what a crash can leave besides is added to them (the temporary file of
/// a `schema.txt` rewrite, a column with a damaged byte, a tail of zeros); the next run keeps
/// the whole columns, redoes the rest and ends with the world of a run never stopped
/// (`docs/format/convert-spill.md`).
#[test]
fn a_stopped_conversion_to_java_resumes_past_what_a_crash_leaves_in_its_spill_files() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    convert::bedrock_to_java(&bedrock_world(), &whole, &mut |_| {}).unwrap();

    let java = dir.path().join("java");
    let stopped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        convert::bedrock_to_java(&bedrock_world(), &java, &mut |p| {
            assert!(p.columns_done < 20, "stopped");
        })
    }));
    assert!(stopped.is_err());
    // The marker names the direction, the source and the terrane version.
    let marker = std::fs::read_to_string(dir.path().join(".java.terrane-convert/.terrane-convert"));
    assert!(marker.unwrap().ends_with(&format!("\nterrane {}\n", env!("CARGO_PKG_VERSION"))));
    let spill = dir.path().join(".java.terrane-convert/.spill");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&spill)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "schema.txt")
        .collect();
    files.sort_by_key(|p| std::cmp::Reverse(std::fs::metadata(p).unwrap().len()));
    assert!(!files.is_empty(), "{spill:?} holds spill files");
    std::fs::write(spill.join("schema.txt.terrane-tmp"), b"minecraft:air\nminecraft:st").unwrap();
    // The largest spill file: its last column's last byte flipped, then a tail of zeros (a
    // power loss can leave one where the length said more was written).
    let f = &files[0];
    let mut bytes = std::fs::read(f).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    bytes.extend_from_slice(&[0u8; 4096]);
    std::fs::write(f, &bytes).unwrap();

    let s = convert::bedrock_to_java(&bedrock_world(), &java, &mut |_| {}).unwrap();
    assert!(s.columns_resumed > 0, "the whole spilled columns are kept");
    assert!(s.columns > 0, "the damaged column and the rest are converted again");
    assert!(!dir.path().join(".java.terrane-convert").exists());
    let a = import_java(&dir.path().join("a"), &whole);
    let b = import_java(&dir.path().join("b"), &java);
    assert_eq!(a.len(), b.len());
    assert!(a == b, "the resumed world's blocks are the uninterrupted world's");
}
