//! Trimming: a generated world in which a few columns were changed keeps exactly those (and
//! what it is told to keep); every other column's chunks go and the distance graph marks it
//! missing; the dry run counts exactly what the real run removes.

use std::collections::BTreeMap;

use terrane::section::AreaId;
use terrane::worldgen::Terrain;
use terrane::worldgen::hills;
use terrane::{Backend, ChunkPos, ColumnPos, TickSave, TrimOptions, World};

const SEED: u64 = 7;

/// A world of 24 × 24 generated columns (areas (0, 0) to (1, 1)), most of it in clusters.
fn generated(path: &std::path::Path) -> World {
    let schema = hills::schema();
    let palette = hills::Palette::of(&schema).unwrap();
    let mut world =
        World::builder().schema(schema).backend(Backend::BlockFile).create(path).unwrap();
    let mut tick = 0;
    for z in 0..24 {
        let mut save = TickSave::new();
        for x in 0..24 {
            for (p, c) in hills::column(SEED, ColumnPos::new(x, z), &palette) {
                save.put_chunk(0, p, c.encode(world.schema()));
            }
            world.mark_generated(ColumnPos::new(x, z)).unwrap();
        }
        tick += 1;
        world.save_tick(tick, save).unwrap();
    }
    world.maintain(tick + 100_000).unwrap();
    world
}

/// Every stored chunk of dimension 0, by column.
fn chunks(world: &World) -> BTreeMap<ColumnPos, Vec<(i64, Vec<u8>)>> {
    let mut out: BTreeMap<ColumnPos, Vec<(i64, Vec<u8>)>> = BTreeMap::new();
    for ((dim, pos), (_, bytes)) in world.tiered().all_chunks().unwrap() {
        assert_eq!(dim, 0);
        out.entry(ColumnPos::new(pos.x as i32, pos.z as i32)).or_default().push((pos.y, bytes));
    }
    for v in out.values_mut() {
        v.sort();
    }
    out
}

#[test]
fn a_trim_keeps_exactly_the_changed_columns() {
    let dir = tempfile::tempdir().unwrap();
    let mut world = generated(&dir.path().join("w"));
    let terrain = Terrain::Hills { seed: SEED };
    let stone = terrane::BlockId(world.schema().blocks().find("minecraft:stone").unwrap());
    // A player digs at (2, 2), builds a tower above the terrain at (20, 5), and stands at
    // (17, 18).
    let mut save = TickSave::new();
    let p = ChunkPos::new(2, 2, 2);
    let mut c = world.load_chunk(p).unwrap().unwrap();
    let cobble = terrane::BlockId(world.schema().blocks().find("minecraft:cobblestone").unwrap());
    c.set(3, 3, 3, cobble);
    save.put_chunk(0, p, c.encode(world.schema()));
    let mut tower = terrane::Chunk::new(world.air());
    tower.set(8, 0, 8, stone);
    save.put_chunk(0, ChunkPos::new(20, 12, 5), tower.encode(world.schema()));
    let q = ChunkPos::new(17, 4, 18);
    let mut standing = world.load_chunk(q).unwrap().unwrap();
    standing.add_entity([9; 16]);
    save.put_entity([9; 16], b"player".to_vec());
    save.put_chunk(0, q, standing.encode(world.schema()));
    let tick = world.tick() + 1;
    world.save_tick(tick, save).unwrap();
    for pos in [p, q] {
        world.unload_chunk(pos).unwrap();
    }
    let changed = [ColumnPos::new(2, 2), ColumnPos::new(20, 5), ColumnPos::new(17, 18)];
    let before = chunks(&world);

    // A radius keeps the columns whose centres are within it; a loaded area is kept whole.
    let near =
        TrimOptions { keep_radius: Some((8, 8, 20)), dry_run: true, ..TrimOptions::default() };
    assert_eq!(world.trim(&terrain, &near).unwrap().columns_kept, 3, "(0, 0), (1, 0), (0, 1)");
    world.load_chunk(ChunkPos::new(5, 4, 5)).unwrap();
    let loaded = TrimOptions { dry_run: true, ..TrimOptions::default() };
    assert_eq!(world.trim(&terrain, &loaded).unwrap().columns_kept, 256, "area (0, 0)");
    world.unload_chunk(ChunkPos::new(5, 4, 5)).unwrap();
    assert_eq!(chunks(&world), before, "dry runs write nothing");

    // Area (1, 1) kept whole: a dry run, then the real one, count the same.
    let keep = TrimOptions { keep_areas: vec![AreaId::new(1, 1)], ..TrimOptions::default() };
    let dry = world.trim(&terrain, &TrimOptions { dry_run: true, ..keep.clone() }).unwrap();
    assert_eq!(chunks(&world), before, "a dry run writes nothing");
    let real = world.trim(&terrain, &keep).unwrap();
    assert_eq!(
        (
            dry.columns_checked,
            dry.columns_trimmed,
            dry.chunks_removed,
            dry.bytes_removed,
            dry.columns_changed
        ),
        (
            real.columns_checked,
            real.columns_trimmed,
            real.chunks_removed,
            real.bytes_removed,
            real.columns_changed
        ),
        "dry {dry:?} real {real:?}"
    );
    assert_eq!(real.columns_checked, 576);
    assert_eq!(real.columns_kept, 8 * 8, "area (1, 1): columns 16..24");
    assert_eq!(real.columns_changed, 2, "(17, 18) is in the kept area");
    assert_eq!(real.columns_trimmed, 576 - 64 - 2);
    let after = chunks(&world);
    for (col, stored) in &before {
        let in_kept = AreaId::of_column(*col) == AreaId::new(1, 1);
        if in_kept || changed.contains(col) {
            assert_eq!(after.get(col), Some(stored), "{col:?} kept as it was");
            assert!(world.distance().contains(*col));
        } else {
            assert!(!after.contains_key(col), "{col:?} trimmed");
            assert!(!world.distance().contains(*col), "{col:?} is missing again");
        }
    }
    let removed: u64 =
        before.iter().filter(|(c, _)| !after.contains_key(c)).map(|(_, v)| v.len() as u64).sum();
    assert_eq!(real.chunks_removed, removed);
    world.verify().unwrap();

    // The rest, once nothing is kept: only the changed columns stay.
    let rest = world.trim(&terrain, &TrimOptions::default()).unwrap();
    assert_eq!((rest.columns_trimmed, rest.columns_changed), (64 - 1, 3), "{rest:?}");
    let left: Vec<ColumnPos> = chunks(&world).into_keys().collect();
    assert_eq!(left, {
        let mut c = changed.to_vec();
        c.sort();
        c
    });
    // Generated again, a trimmed column is what it was.
    let ids = terrain.ids(world.schema()).unwrap();
    let again: Vec<(i64, Vec<u8>)> = terrain
        .column(ColumnPos::new(5, 5), &ids)
        .into_iter()
        .map(|(y, c)| (y, c.encode(world.schema())))
        .collect();
    assert_eq!(before[&ColumnPos::new(5, 5)], again);
    // Reopened, the graph says the same.
    drop(world);
    let w = World::open_read_only(dir.path().join("w")).unwrap();
    assert!(
        !w.distance().contains(ColumnPos::new(5, 5)) && w.distance().contains(ColumnPos::new(2, 2))
    );
    w.verify().unwrap();
}

#[test]
fn a_world_of_another_terrain_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut world =
        World::builder().backend(Backend::BlockFile).create(dir.path().join("w")).unwrap();
    let e = world.trim(&Terrain::Hills { seed: 1 }, &TrimOptions::default()).unwrap_err();
    assert!(matches!(e, terrane::Error::TerrainMismatch), "{e}");
}
