//! Exports and their destinations: a destination that holds region files, a world or a file is
//! refused with nothing written unless the caller says to replace or merge
//! (`terrane::export::Overwrite`), and replacing or merging gives what each promises; a
//! schematic exported again keeps its paste anchor; an import's refusal says where the
//! world's chunks came from.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use terrane::anvil::ExportOptions;
use terrane::export::Overwrite;
use terrane::refusal::{Holds, Refusal};
use terrane::{Backend, BlockBox, BlockPos, Chunk, ChunkPos, Error, Schematic, TickSave, World};
use terrane::{bedrock, java, schem};

/// A world whose Overworld holds one stone chunk (y 4) in each column of `columns`.
fn world_with(dir: &Path, columns: &[(i64, i64)]) -> World {
    let mut w = World::builder().backend(Backend::Memory).create(dir).unwrap();
    let mut schema = w.schema().clone();
    schem::register_states(&mut schema, ["minecraft:stone"]).unwrap();
    w.extend_schema(schema).unwrap();
    let stone = terrane::BlockId(w.schema().blocks().find("minecraft:stone").unwrap());
    let mut chunk = Chunk::new(w.air());
    chunk.set(1, 2, 3, stone);
    let mut save = TickSave::new();
    for &(x, z) in columns {
        save.put_chunk(0, ChunkPos::new(x, 4, z), chunk.encode(w.schema()));
    }
    w.save_tick(1, save).unwrap();
    w
}

/// Every file under `dir` (relative path → bytes).
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(p.strip_prefix(root).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn names(dir: &Path) -> Vec<String> {
    tree(dir).keys().map(|p| p.to_string_lossy().into_owned()).collect()
}

/// Exports the Overworld of `w` into `java/region` (entities into `java/entities`).
fn export_regions(w: &World, java: &Path, overwrite: Overwrite) -> terrane::Result<()> {
    let options = ExportOptions::new().entities_dir(java.join("entities"));
    java::export_region_dir(w, 0, &java.join("region"), &options, overwrite, &mut |_| {})?;
    Ok(())
}

/// World A's regions, then world B's over them: refused with nothing written; merged (B's
/// regions over A's, each with its stale entity region and side files gone, A's other regions
/// kept); replaced (exactly B's files).
#[test]
fn a_region_folder_export_never_writes_over_region_files_unless_told() {
    let dir = tempfile::tempdir().unwrap();
    // A: regions (0, 0) and (-2, -2); B: regions (0, 0) and (1, 0).
    let a = world_with(&dir.path().join("a"), &[(0, 0), (-40, -40)]);
    let b = world_with(&dir.path().join("b"), &[(1, 1), (40, 0)]);
    let java = dir.path().join("java");
    export_regions(&a, &java, Overwrite::Refuse).unwrap();
    assert_eq!(names(&java), ["region/r.-2.-2.mca", "region/r.0.0.mca"]);
    // What A's files would have beside them in a player's world: an entity region and a side
    // file of region (0, 0), a side file of region (-2, -2).
    for f in ["entities/r.0.0.mca", "region/c.5.5.mcc", "region/c.-40.-40.mcc"] {
        std::fs::create_dir_all(java.join(f).parent().unwrap()).unwrap();
        std::fs::write(java.join(f), b"world A's").unwrap();
    }
    let before = tree(&java);

    let e = export_regions(&b, &java, Overwrite::Refuse).unwrap_err();
    assert!(
        matches!(&e, Error::WouldOverwrite { path, merge: true, .. } if path == &java.join("region")),
        "{e}"
    );
    let says = e.to_string();
    assert!(says.contains("Overwrite::Replace") && says.contains("Overwrite::Merge"), "{e}");
    assert_eq!(tree(&java), before, "nothing written");
    // The entities folder alone holding region files is refused too.
    let only_entities = dir.path().join("only-entities");
    std::fs::create_dir_all(only_entities.join("entities")).unwrap();
    std::fs::write(only_entities.join("entities/r.9.9.mca"), b"x").unwrap();
    let e = export_regions(&b, &only_entities, Overwrite::Refuse).unwrap_err();
    assert!(matches!(e, Error::WouldOverwrite { .. }), "{e}");
    assert!(!only_entities.join("region").exists());

    export_regions(&b, &java, Overwrite::Merge).unwrap();
    let merged = tree(&java);
    assert_eq!(
        names(&java),
        ["region/c.-40.-40.mcc", "region/r.-2.-2.mca", "region/r.0.0.mca", "region/r.1.0.mca"],
        "B's regions over A's, whole: region (0, 0)'s entity region and side file were A's"
    );
    let a_region = |p: &str| before[Path::new(p)].clone();
    assert_eq!(merged[Path::new("region/r.-2.-2.mca")], a_region("region/r.-2.-2.mca"));
    assert_ne!(merged[Path::new("region/r.0.0.mca")], a_region("region/r.0.0.mca"));

    export_regions(&a, &java, Overwrite::Replace).unwrap();
    assert_eq!(names(&java), ["region/r.-2.-2.mca", "region/r.0.0.mca"], "exactly A again");
}

/// A destination of the wrong kind is refused whatever the caller says: a file where a folder
/// goes, a Java world folder given as a region folder, a terrane world.
#[test]
fn a_destination_of_the_wrong_kind_is_refused_whatever_the_caller_says() {
    let dir = tempfile::tempdir().unwrap();
    let w = world_with(&dir.path().join("w"), &[(0, 0)]);
    let file = dir.path().join("file");
    std::fs::write(&file, b"not a folder").unwrap();
    let java_world = dir.path().join("java");
    std::fs::create_dir_all(java_world.join("region")).unwrap();
    std::fs::write(java_world.join("level.dat"), b"x").unwrap();
    let terrane_world = dir.path().join("tw");
    World::builder().backend(Backend::BlockFile).create(&terrane_world).unwrap().close().unwrap();
    for overwrite in [Overwrite::Refuse, Overwrite::Replace, Overwrite::Merge] {
        let opts = ExportOptions::new();
        let region = |d: &Path| java::export_region_dir(&w, 0, d, &opts, overwrite, &mut |_| {});
        let e = region(&file).unwrap_err();
        assert!(
            matches!(&e, Error::Refused(Refusal::Destination { holds: Holds::File, .. })),
            "{e}"
        );
        let e = region(&java_world).unwrap_err();
        let refusal = Refusal::Destination {
            path: java_world.clone(),
            holds: Holds::JavaWorld,
            writes: terrane::refusal::Writes::RegionFiles,
        };
        assert_eq!(e.to_string(), refusal.to_string());
        assert!(e.to_string().contains("export the whole world as a world folder"), "{e}");
        let e = region(&terrane_world).unwrap_err();
        assert!(e.to_string().contains("is a terrane world"), "{e}");
        let e = java::export_java_world(&w, &file, overwrite, &mut |_, _| {}).unwrap_err();
        assert!(matches!(e, Error::Refused(_)), "{e}");
        let e = bedrock::export_bedrock_world(&w, &file, overwrite, &mut |_| {}).unwrap_err();
        assert!(matches!(e, Error::Refused(_)), "{e}");
        let e = bedrock::export_bedrock_world(&w, &java_world, overwrite, &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("holds no Bedrock world"), "{e}");
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"not a folder");
    assert_eq!(names(&java_world), ["level.dat"]);
}

/// A Java world folder: refused over a Java world; replaced, it holds exactly the new world
/// (the dimension it lacks and the old level.dat gone); merged, the old world's other regions
/// and level.dat stay.
#[test]
fn a_world_folder_export_replaces_or_merges_only_when_told() {
    let dir = tempfile::tempdir().unwrap();
    let w = world_with(&dir.path().join("w"), &[(0, 0)]);
    let java = dir.path().join("java");
    for f in ["level.dat", "region/r.5.5.mca", "DIM-1/region/r.0.0.mca", "playerdata/p.dat"] {
        std::fs::create_dir_all(java.join(f).parent().unwrap()).unwrap();
        std::fs::write(java.join(f), b"old").unwrap();
    }
    let before = tree(&java);
    let e = java::export_java_world(&w, &java, Overwrite::Refuse, &mut |_, _| {}).unwrap_err();
    assert!(matches!(&e, Error::WouldOverwrite { holds, .. } if holds == "a Java world"), "{e}");
    assert_eq!(tree(&java), before);

    java::export_java_world(&w, &java, Overwrite::Merge, &mut |_, _| {}).unwrap();
    assert_eq!(
        names(&java),
        [
            "DIM-1/region/r.0.0.mca",
            "level.dat",
            "playerdata/p.dat",
            "region/r.0.0.mca",
            "region/r.5.5.mca"
        ]
    );
    java::export_java_world(&w, &java, Overwrite::Replace, &mut |_, _| {}).unwrap();
    assert_eq!(
        names(&java),
        ["playerdata/p.dat", "region/r.0.0.mca"],
        "the world's chunk files only (playerdata is not the export's)"
    );
}

fn bedrock_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bedrock/tests/data/world")
}

/// What a Bedrock world folder holds, imported: (columns, entities, world records).
fn bedrock_counts(dir: &Path, folder: &Path) -> (u64, u64, u64) {
    let mut w = World::builder().backend(Backend::Memory).create(dir).unwrap();
    let s = bedrock::import_bedrock_world(&mut w, folder, &mut |_| {}).unwrap();
    (s.columns, s.entities, s.world_records)
}

/// A Bedrock world there: refused with nothing written; merged, the new columns replace the
/// same columns (with their entities) and the rest stays, files around the database
/// included; replaced, the folder holds exactly the new world.
#[test]
fn a_bedrock_export_over_a_bedrock_world_replaces_or_merges_only_when_told() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = World::builder().backend(Backend::Memory).create(dir.path().join("a")).unwrap();
    bedrock::import_bedrock_world(&mut a, &bedrock_data(), &mut |_| {}).unwrap();
    let out = dir.path().join("out");
    bedrock::export_bedrock_world(&a, &out, Overwrite::Refuse, &mut |_| {}).unwrap();
    std::fs::write(out.join("world_icon.jpeg"), b"icon").unwrap();
    let level_dat = std::fs::read(out.join("level.dat")).unwrap();
    let before = tree(&out);
    // 27 columns, 7 entities (the cow of Overworld column 0,0 among them), 3 world records.
    assert_eq!(bedrock_counts(&dir.path().join("c0"), &out), (27, 7, 3));

    // B: Overworld column 0,0 (A has it, with a cow) and 100,100 (A has not).
    let b = world_with(&dir.path().join("b"), &[(0, 0), (100, 100)]);
    let e = bedrock::export_bedrock_world(&b, &out, Overwrite::Refuse, &mut |_| {}).unwrap_err();
    assert!(matches!(&e, Error::WouldOverwrite { holds, .. } if holds == "a Bedrock world"), "{e}");
    assert_eq!(tree(&out), before, "nothing written");

    bedrock::export_bedrock_world(&b, &out, Overwrite::Merge, &mut |_| {}).unwrap();
    assert_eq!(
        bedrock_counts(&dir.path().join("c1"), &out),
        (28, 6, 3),
        "A's 27 columns with B's 0,0 over A's (its cow gone), and B's 100,100"
    );
    assert_eq!(std::fs::read(out.join("world_icon.jpeg")).unwrap(), b"icon");
    assert_eq!(std::fs::read(out.join("level.dat")).unwrap(), level_dat, "B kept none");

    bedrock::export_bedrock_world(&b, &out, Overwrite::Replace, &mut |_| {}).unwrap();
    assert_eq!(bedrock_counts(&dir.path().join("c2"), &out), (2, 0, 0), "exactly B");
    assert!(!out.join("world_icon.jpeg").exists());
    let beside: Vec<_> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(!beside.iter().any(|n| n.to_string_lossy().contains("terrane-")), "{beside:?}");
}

/// A schematic file: refused over a file, replaced when told, never merged; a folder is not a
/// file name.
#[test]
fn a_schematic_is_written_over_a_file_only_when_told() {
    let dir = tempfile::tempdir().unwrap();
    let s = Schematic::new(2, 2, 2, 3955).unwrap();
    let path = dir.path().join("box.schem");
    std::fs::write(&path, b"a player's schematic").unwrap();
    let e = schem::write_schematic(&s, &path, Overwrite::Refuse).unwrap_err();
    assert!(matches!(&e, Error::WouldOverwrite { merge: false, .. }), "{e}");
    let says = e.to_string();
    assert!(says.contains("Overwrite::Replace") && !says.contains("Overwrite::Merge"), "{e}");
    assert!(matches!(schem::write_schematic(&s, &path, Overwrite::Merge), Err(Error::Refused(_))));
    assert_eq!(std::fs::read(&path).unwrap(), b"a player's schematic");
    let n = schem::write_schematic(&s, &path, Overwrite::Replace).unwrap();
    assert_eq!(std::fs::read(&path).unwrap().len() as u64, n);
    assert_eq!(Schematic::read_file(&path).unwrap().width(), 2);
    let e = schem::write_schematic(&s, dir.path(), Overwrite::Replace).unwrap_err();
    assert!(matches!(&e, Error::Refused(Refusal::Destination { holds: Holds::Folder, .. })), "{e}");
}

/// The box a schematic was pasted into exports with the schematic's own paste anchor
/// (`Offset`) and, pasted where it said, its own `Metadata.WorldEdit.Origin`: WorldEdit's
/// `//paste` and `//paste -o` put it where the original went. Pasted elsewhere, the anchor is
/// kept and the origin moves with the box; another box gets the plain placement.
#[test]
fn a_schematic_exported_again_keeps_its_paste_anchor() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = World::builder().backend(Backend::Memory).create(dir.path()).unwrap();
    // v3, WorldEdit's: Offset -14,0,-19 from Origin 79,64,-199.
    let v3 =
        Schematic::read_file(terrane_section::testdata::fixture("schem/1_20_1_read_fail.schem"))
            .unwrap();
    assert_eq!((v3.offset, v3.origin()), ([-14, 0, -19], Some([79, 64, -199])));
    let p = schem::paste(&mut w, &v3, None).unwrap();
    let back = schem::export_box(&w, p.bbox, None).unwrap();
    assert_eq!((back.offset, back.origin()), (v3.offset, v3.origin()));
    assert_eq!(back.world_min(), v3.world_min());

    let p = schem::paste(&mut w, &v3, Some(BlockPos::new(1000, 10, 1000))).unwrap();
    let back = schem::export_box(&w, p.bbox, None).unwrap();
    assert_eq!(back.offset, v3.offset, "the anchor");
    assert_eq!(back.world_min(), [1000, 10, 1000], "where it was pasted");

    // v2, WorldEdit's: the anchor in Metadata.WEOffsetX/Y/Z becomes v3's Offset.
    let v2 = Schematic::read_file(terrane_section::testdata::fixture("schem/smallhouse1.schem"))
        .unwrap();
    assert_eq!(v2.version, 2);
    let anchor = v2.paste_offset();
    assert_ne!(anchor, [0; 3]);
    let p = schem::paste(&mut w, &v2, None).unwrap();
    let back = schem::export_box(&w, p.bbox, None).unwrap();
    assert_eq!((back.offset, back.world_min()), (anchor, v2.world_min()));

    let other = BlockBox::new(BlockPos::new(1000, 10, 1000), BlockPos::new(1001, 11, 1001));
    let plain = schem::export_box(&w, other, None).unwrap();
    assert_eq!((plain.offset, plain.origin()), ([0; 3], Some([1000, 10, 1000])));
}

/// An import over chunks that came from another import says so, instead of calling them the
/// world's own.
#[test]
fn an_import_refusal_says_where_the_chunks_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = World::builder().backend(Backend::Memory).create(dir.path().join("w")).unwrap();
    bedrock::import_bedrock_world(&mut w, &bedrock_data(), &mut |_| {}).unwrap();
    bedrock::refuse_overwrite(&w).unwrap();
    let e = java::refuse_overwrite(&w).unwrap_err().to_string();
    assert!(e.contains("imported from a Bedrock world"), "{e}");
    assert!(!e.contains("did not come from"), "{e}");
    assert!(e.contains("or merge explicitly"), "{e}");

    let own = world_with(&dir.path().join("own"), &[(0, 0)]);
    let e = java::refuse_overwrite(&own).unwrap_err().to_string();
    assert!(e.contains("did not come from a Java or Bedrock world import"), "{e}");
}

/// No silent cross-edition export: a Java world exported to Bedrock has its block states
/// translated (and says what it approximated and left behind); a Bedrock world exported to
/// Java is refused ([`Refusal::BedrockBlocks`]: convert the Bedrock world instead), with
/// nothing written.
#[test]
fn exports_to_the_other_edition_translate_or_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut java = World::builder().backend(Backend::Memory).create(dir.path().join("j")).unwrap();
    let region = dir.path().join("region");
    std::fs::create_dir_all(&region).unwrap();
    std::fs::copy(
        terrane_section::testdata::fixture("anvil/1.21.1/r.0.0.mca"),
        region.join("r.0.0.mca"),
    )
    .unwrap();
    // And a region with a chest and two beds.
    std::fs::copy(
        terrane_section::testdata::fixture("anvil/1.17.1/r.-3.-2.mca"),
        region.join("r.-3.-2.mca"),
    )
    .unwrap();
    terrane::java::import_region_dir(&mut java, 0, &region, &Default::default(), &mut |_| {})
        .unwrap();
    let out = dir.path().join("bedrock");
    let s = bedrock::export_bedrock_world(&java, &out, Overwrite::Refuse, &mut |_| {}).unwrap();
    let report = s.translated.expect("a Java world's export is translated");
    assert!(report.cells > 20_000_000 && report.approximated_cells() > 0, "{report:?}");
    // Block entities go through the same rules as `terrane convert`.
    let be = &s.block_entities;
    assert_eq!((be.converted_count(), be.left_count()), (3, 0), "{be:?}");
    let mut back = World::builder().backend(Backend::Memory).create(dir.path().join("b")).unwrap();
    let imported = bedrock::import_bedrock_world(&mut back, &out, &mut |_| {}).unwrap();
    assert_eq!(imported.block_entities, 3);
    let names: Vec<&str> = back.schema().blocks().names().collect();
    assert!(names.contains(&"minecraft:grass_block"), "{names:?}");
    assert!(
        !names.iter().any(|n| n.contains("snowy=") || n.contains("level=")),
        "Java states in a Bedrock world: {names:?}"
    );

    let to = dir.path().join("java-out");
    let e = terrane::java::export_java_world(&back, &to, Overwrite::Refuse, &mut |_, _| {})
        .unwrap_err();
    assert!(matches!(&e, Error::Refused(Refusal::BedrockBlocks)), "{e}");
    assert!(!to.exists(), "nothing written");
}

/// A Java-state world's mobs go to Bedrock through the same rules as `terrane convert`:
/// the 1.12.2 region's 31 pigs, chickens and cows are written as Bedrock entity records and
/// its 29 falling blocks counted as left out.
#[test]
fn a_java_worlds_mobs_are_translated_by_a_bedrock_export() {
    let dir = tempfile::tempdir().unwrap();
    let mut java = World::builder().backend(Backend::Memory).create(dir.path().join("j")).unwrap();
    let region = dir.path().join("region");
    std::fs::create_dir_all(&region).unwrap();
    std::fs::copy(
        terrane_section::testdata::fixture("anvil/1.12.2/r.0.-1.mca"),
        region.join("r.0.-1.mca"),
    )
    .unwrap();
    terrane::java::import_region_dir(&mut java, 0, &region, &Default::default(), &mut |_| {})
        .unwrap();
    let out = dir.path().join("bedrock");
    let s = bedrock::export_bedrock_world(&java, &out, Overwrite::Refuse, &mut |_| {}).unwrap();
    let e = &s.entity_translation;
    assert_eq!((e.converted_count(), e.left_count()), (31, 29), "{e:?}");
    assert_eq!(e.left.get("minecraft:falling_block"), Some(&29));
    assert_eq!(s.entities, 31);
    let mut back = World::builder().backend(Backend::Memory).create(dir.path().join("b")).unwrap();
    let imported = bedrock::import_bedrock_world(&mut back, &out, &mut |_| {}).unwrap();
    assert_eq!(imported.entities, 31);
}

/// A chunk beyond the coordinates Minecraft's formats hold stops a Java export with the
/// typed refusal, out of terrane-anvil's exporter as the facade's own error.
#[test]
fn a_chunk_beyond_minecrafts_coordinates_is_refused_typed() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = World::builder().backend(Backend::Memory).create(dir.path().join("w")).unwrap();
    let far = 1_i64 << 33;
    let mut save = TickSave::new();
    save.put_chunk(0, ChunkPos::new(far, 4, 0), Chunk::new(w.air()).encode(w.schema()));
    w.save_tick(1, save).unwrap();
    let out = dir.path().join("out");
    let e = java::export_java_world(&w, &out, Overwrite::Refuse, &mut |_, _| {}).unwrap_err();
    assert!(
        matches!(&e, Error::Refused(Refusal::BeyondMinecraft { chunk, dimension: 0 }) if chunk.x == far),
        "{e:?}"
    );
}

/// What a game changed in the Nether and the End (chunks of dimensions 1 and 2, no column
/// record: a server made them) goes out to `DIM-1` and `DIM1` and comes back with an import.
#[test]
fn the_nether_and_the_end_go_out_where_java_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = world_with(&dir.path().join("w"), &[(0, 0)]);
    let gold = {
        let mut schema = w.schema().clone();
        schem::register_states(&mut schema, ["minecraft:gold_block"]).unwrap();
        w.extend_schema(schema).unwrap();
        terrane::BlockId(w.schema().blocks().find("minecraft:gold_block").unwrap())
    };
    let mut chunk = Chunk::new(w.air());
    chunk.set(5, 6, 7, gold);
    let mut save = TickSave::new();
    save.put_chunk(1, ChunkPos::new(-2, 3, 1), chunk.encode(w.schema()));
    save.put_chunk(2, ChunkPos::new(6, 3, 0), chunk.encode(w.schema()));
    w.save_tick(2, save).unwrap();
    let java = dir.path().join("java");
    java::export_java_world(&w, &java, Overwrite::Refuse, &mut |_, _| {}).unwrap();
    assert_eq!(
        names(&java),
        ["DIM-1/region/r.-1.0.mca", "DIM1/region/r.0.0.mca", "region/r.0.0.mca"]
    );
    let mut back = World::builder().backend(Backend::Memory).create(dir.path().join("b")).unwrap();
    java::import_java_world(&mut back, &java, &mut |_, _| {}).unwrap();
    for (dim, pos) in [(1, ChunkPos::new(-2, 3, 1)), (2, ChunkPos::new(6, 3, 0))] {
        let c = back.get_chunk_in(dim, pos).unwrap().expect("imported");
        let id = c.get(5, 6, 7);
        assert_eq!(back.schema().blocks().get(id.0).unwrap(), "minecraft:gold_block", "{dim}");
    }
}
