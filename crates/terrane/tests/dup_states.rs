//! One block state under several ids: schematics spelling a state three ways register it
//! once; worlds written before that (the `tests/data/dup-states` fixture, and worlds made here
//! with spellings at every level) are reported by `verify` and merged by
//! `merge_duplicate_states`, also when a first merge stopped half way.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use terrane::anvil::mapping::{BLOCK_ENTITY_COMPONENT, block_entity_component};
use terrane::chunk::ComponentId;
use terrane::chunk::block_state::canonical;
use terrane::{
    Backend, BlockId, BlockPos, Chunk, ChunkPos, Error, Level, Schema, Schematic, World, schem,
};

const STAIRS: &str =
    "minecraft:oak_stairs[facing=north,half=bottom,shape=straight,waterlogged=false]";
const CHEST: &str = "minecraft:chest[facing=west,type=single,waterlogged=false]";

fn fixture_copy(to: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/dup-states/world");
    let w = to.join("world");
    std::fs::create_dir(&w).unwrap();
    for f in ["terrane-world", "world.tbf"] {
        std::fs::copy(from.join(f), w.join(f)).unwrap_or_else(|e| panic!("fixture {f}: {e}"));
    }
    w
}

/// Every stored chunk as (level, per cell and layer the canonical name of its block, the
/// component values by cell, layer and component name).
type Blocks = BTreeMap<ChunkPos, (Level, Vec<Vec<String>>, BTreeMap<(u16, u32, String), Vec<u8>>)>;

fn blocks(w: &World) -> Blocks {
    let schema = w.schema();
    let name = |b: BlockId| canonical(schema.blocks().get(b.0).unwrap());
    let mut out = BTreeMap::new();
    for ((_, pos), (level, bytes)) in w.tiered().all_chunks().unwrap() {
        let c = Chunk::decode(&bytes, schema).unwrap();
        let cells = (0..4096u16)
            .map(|i| (0..c.layer_count(i)).map(|l| name(c.get_layer(i, l).unwrap())).collect())
            .collect();
        let comps = c
            .component_values()
            .map(|(i, l, id, v)| {
                let n = schema.components().get(id.index() as u32).unwrap().to_string();
                ((i, l, n), v.to_vec())
            })
            .collect();
        out.insert(pos, (level, cells, comps));
    }
    out
}

#[test]
fn schematics_spelling_a_state_three_ways_register_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = World::builder().backend(Backend::BlockFile).create(dir.path().join("w")).unwrap();
    let spellings = [
        STAIRS,
        "minecraft:oak_stairs[waterlogged=false,shape=straight,half=bottom,facing=north]",
        "minecraft:oak_stairs[ facing = north ,half=bottom,shape=straight,waterlogged=false]",
    ];
    for (i, sp) in spellings.into_iter().enumerate() {
        let s = Schematic::from_parts(1, 1, 1, vec![sp.to_string()], vec![0]).unwrap();
        assert_eq!(s.palette(), [sp], "the schematic holds the spelling as given");
        schem::paste(&mut w, &s, Some(BlockPos::new(i as i64 * 16, 64, 0))).unwrap();
        assert_eq!(w.schema().blocks().len(), 2, "air and one stair after {sp:?}");
        assert_eq!(w.info().unwrap().block_states, 2);
    }
    let id = w.schema().blocks().find(STAIRS).expect("registered by its canonical form");
    for i in 0..3 {
        let c = w.get_chunk(ChunkPos::new(i, 4, 0)).unwrap().unwrap();
        assert_eq!(c.get(0, 0, 0), BlockId(id));
    }
    w.verify().unwrap();
}

#[test]
fn the_fixture_is_reported_then_merged_and_reads_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path());
    let tbf = std::fs::read(path.join("world.tbf")).unwrap();

    let w = World::open_read_only(&path).unwrap();
    let before = blocks(&w);
    let info = w.info().unwrap();
    assert_eq!((info.block_states, info.unused_spellings), (8, 0));
    let dups = w.duplicate_states().unwrap();
    assert_eq!(dups.iter().map(|d| d.canonical.as_str()).collect::<Vec<_>>(), [CHEST, STAIRS]);
    for d in &dups {
        assert_eq!(w.schema().blocks().get(d.id.unwrap().0), Some(d.canonical.as_str()));
        assert_eq!(d.spellings.len(), 2, "{d}");
    }
    let err = w.verify().unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::DuplicateStates(ref d) if *d == dups), "{msg}");
    for needle in [
        STAIRS,
        "minecraft:oak_stairs[waterlogged=false,shape=straight,half=bottom,facing=north]",
        "minecraft:chest[ type = single , facing=west,waterlogged=false]",
        "merge_duplicate_states",
    ] {
        assert!(msg.contains(needle), "{needle}: {msg}");
    }
    drop(w);
    assert_eq!(std::fs::read(path.join("world.tbf")).unwrap(), tbf, "reading changed nothing");

    let mut w = World::open(&path).unwrap();
    let report = w.merge_duplicate_states().unwrap();
    assert_eq!(report.states, dups);
    // a.schem's chunk used the canonical spellings already; b's and c's three are rewritten.
    assert_eq!((report.registered, report.chunks), (0, [3, 0, 0]));
    assert_eq!(w.merge_duplicate_states().unwrap().chunks, [0; 3], "nothing left to merge");
    w.close().unwrap();

    let w = World::open_read_only(&path).unwrap();
    w.verify().unwrap();
    let info = w.info().unwrap();
    assert_eq!((info.block_states, info.unused_spellings), (4, 4), "air, stair, stone, chest");
    assert_eq!(blocks(&w), before, "every block, block entity and level as before");
    for (_, (_, cells, _)) in blocks(&w) {
        assert!(cells.iter().flatten().all(|n| w.schema().blocks().find(n).is_some()));
    }
    // Every chunk now names the canonical ids only.
    let used: Vec<&str> = w
        .tiered()
        .all_chunks()
        .unwrap()
        .values()
        .flat_map(|(_, b)| terrane::ChunkView::parse(b).unwrap().palette_iter().collect::<Vec<_>>())
        .map(|b| w.schema().blocks().get(b.0).unwrap())
        .collect();
    assert!(used.contains(&STAIRS) && used.contains(&CHEST));
    assert!(used.iter().all(|n| canonical(n) == *n), "{used:?}");
}

/// The registry of a world written before imports canonicalised: spellings of a stair
/// (without the canonical one), of a chest (with it; one more spelling lacks the block-entity
/// component and stays apart) and an air spelled with a trailing space (which the default
/// opacity rule calls opaque: it stays apart too).
fn old_schema() -> (Schema, ComponentId) {
    let mut s = Schema::new();
    s.add_block("minecraft:air", &[]).unwrap();
    let be = block_entity_component(&mut s).unwrap();
    for (name, comps) in [
        ("minecraft:oak_stairs[half=top,facing=east]", &[][..]),
        ("oak_stairs[facing=east, half=top]", &[]),
        ("minecraft:chest[facing=north]", &[be][..]),
        ("minecraft:chest[ facing=north ]", &[be]),
        ("chest[facing=north]", &[]),
        ("minecraft:stone", &[]),
        ("minecraft:air ", &[]),
    ] {
        s.add_block(name, comps).unwrap();
    }
    (s, be)
}

/// A chunk using every id of [`old_schema`], an extra layer of a stair spelling, and block
/// entity values on both chest spellings (layer 0 and 1).
fn old_chunk(schema: &Schema, be: ComponentId, seed: u16) -> Chunk {
    let mut c = Chunk::new(BlockId(0));
    for id in 1..=7u16 {
        c.set_index(seed * 8 + id, BlockId(u32::from(id)));
    }
    c.set_index(1000, BlockId(6));
    c.push_layer(1000, BlockId(2));
    c.push_layer(1000, BlockId(4));
    c.set_component(schema, seed * 8 + 3, 0, be, format!("chest {seed} a").as_bytes()).unwrap();
    c.set_component(schema, seed * 8 + 4, 0, be, format!("chest {seed} b").as_bytes()).unwrap();
    c.set_component(schema, 1000, 2, be, b"layered chest").unwrap();
    c
}

/// A block-file world with [`old_schema`] and its chunks at every level: 4 in an L2 cluster,
/// 2 in an L1 cluster, 1 at L0.
fn old_world(path: &Path) -> World {
    let (schema, be) = old_schema();
    let mut w = World::builder()
        .backend(Backend::BlockFile)
        .schema(schema.clone())
        .tiers(|t| t.l0_idle_ticks(10).l1_idle_ticks(40))
        .create(path)
        .unwrap();
    let put = |w: &mut World, pos: ChunkPos, seed: u16, tick: u64| {
        let mut save = terrane::TickSave::new();
        save.put_chunk(0, pos, old_chunk(&schema, be, seed).encode(&schema));
        w.save_tick(tick, save).unwrap();
    };
    for i in 0..4 {
        put(&mut w, ChunkPos::new(i, 0, 0), i as u16, 1);
    }
    w.maintain(20).unwrap();
    w.maintain(100).unwrap();
    put(&mut w, ChunkPos::new(0, 8, 0), 4, 100);
    put(&mut w, ChunkPos::new(1, 8, 0), 5, 100);
    w.maintain(115).unwrap();
    put(&mut w, ChunkPos::new(0, -8, 0), 6, 116);
    assert_eq!(w.tiered().verify().unwrap().chunks, [1, 2, 4]);
    w
}

#[test]
fn spellings_at_every_level_merge_into_one_id_each() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w");
    let mut w = old_world(&path);
    let before = blocks(&w);
    let dups = w.duplicate_states().unwrap();
    let stairs = "minecraft:oak_stairs[facing=east,half=top]";
    assert_eq!(dups.len(), 2, "{dups:?}");
    assert_eq!(
        (dups[0].canonical.as_str(), dups[0].id),
        ("minecraft:chest[facing=north]", Some(BlockId(3)))
    );
    assert_eq!(dups[0].spellings, [(BlockId(4), "minecraft:chest[ facing=north ]".to_string())]);
    assert_eq!((dups[1].canonical.as_str(), dups[1].id), (stairs, None));
    assert_eq!(dups[1].spellings.iter().map(|s| s.0).collect::<Vec<_>>(), [BlockId(1), BlockId(2)]);
    assert!(matches!(w.verify(), Err(Error::DuplicateStates(_))));
    assert_eq!(w.info().unwrap().block_states, 8);

    let report = w.merge_duplicate_states().unwrap();
    assert_eq!((report.registered, report.chunks, report.batches), (1, [1, 2, 4], 4));
    let new = BlockId(w.schema().blocks().find(stairs).expect("the canonical stair") as u32);
    assert_eq!(new, BlockId(8));
    assert_eq!(w.schema().block_components(new), &[] as &[ComponentId]);
    w.verify().unwrap();
    let info = w.info().unwrap();
    // Left as they are: ids 1, 2 and 4 (unused), 5 (no component), 7 (opaque air).
    assert_eq!((info.block_states, info.unused_spellings), (6, 3));
    assert_eq!(blocks(&w), before, "same blocks, values and levels");
    let c = w.get_chunk(ChunkPos::new(0, 8, 0)).unwrap().unwrap();
    assert_eq!(c.get_index(4 * 8 + 1), new);
    assert_eq!(c.get_index(4 * 8 + 4), BlockId(3));
    assert_eq!(c.get_index(4 * 8 + 5), BlockId(5));
    assert_eq!(c.get_index(4 * 8 + 7), BlockId(7));
    assert_eq!(c.layers(1000), [new, BlockId(3)]);
    let be = ComponentId::variable(w.schema().components().find(BLOCK_ENTITY_COMPONENT).unwrap());
    assert_eq!(c.component(4 * 8 + 4, 0, be), Some(&b"chest 4 b"[..]));
    assert_eq!(c.component(1000, 2, be), Some(&b"layered chest"[..]));
}

#[test]
fn a_merge_stopped_half_way_opens_and_a_second_run_finishes_it() {
    let dir = tempfile::tempdir().unwrap();
    // The reference: one merge that ran through.
    let mut whole = old_world(&dir.path().join("whole"));
    whole.merge_duplicate_states().unwrap();
    let want = (whole.schema().clone(), whole.tiered().all_chunks().unwrap());
    whole.close().unwrap();

    // The same world, stopped after the first writes a merge makes: the canonical stair
    // registered (its own batch) and the L0 page rewritten (the first page).
    let path = dir.path().join("half");
    let mut w = old_world(&path);
    let mut schema = w.schema().clone();
    let stairs = schema.add_block("minecraft:oak_stairs[facing=east,half=top]", &[]).unwrap();
    w.extend_schema(schema.clone()).unwrap();
    let map = [(BlockId(1), stairs), (BlockId(2), stairs), (BlockId(4), BlockId(3))];
    w.tiered_mut()
        .rewrite_chunks(|(_, pos), bytes| {
            if pos.y != -8 {
                return Ok(None);
            }
            let mut c = Chunk::decode(bytes, &schema)?;
            let kept: Vec<_> =
                c.component_values().map(|(i, l, id, v)| (i, l, id, v.to_vec())).collect();
            for i in 0..4096u16 {
                for l in 0..c.layer_count(i) {
                    let b = c.get_layer(i, l).unwrap();
                    if let Some(&(_, to)) = map.iter().find(|(from, _)| *from == b) {
                        c.set_layer(i, l, to)?;
                    }
                }
            }
            for (i, l, id, v) in kept {
                c.set_component(&schema, i, l, id, &v)?;
            }
            Ok(Some(c.encode(&schema)))
        })
        .unwrap();
    drop(w);

    let w = World::open(&path).unwrap();
    let left = w.duplicate_states().unwrap();
    assert_eq!(left.len(), 2);
    assert_eq!(left[1].id, Some(stairs), "the stair's canonical spelling is registered now");
    let mut w = w;
    let report = w.merge_duplicate_states().unwrap();
    assert_eq!((report.registered, report.chunks), (0, [0, 2, 4]));
    w.verify().unwrap();
    assert_eq!((w.schema().clone(), w.tiered().all_chunks().unwrap()), want);
}

#[test]
fn merging_is_refused_read_only_and_while_chunks_are_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w");
    let mut w = old_world(&path);
    w.load_chunk(ChunkPos::new(0, -8, 0)).unwrap();
    assert!(
        matches!(w.merge_duplicate_states(), Err(Error::Inconsistent(m)) if m.contains("unload"))
    );
    w.close().unwrap();
    let mut r = World::open_read_only(&path).unwrap();
    assert!(matches!(
        r.merge_duplicate_states(),
        Err(Error::Refused(terrane::Refusal::ReadOnly(_)))
    ));
    assert_eq!(r.duplicate_states().unwrap().len(), 2, "nothing was merged");
}
