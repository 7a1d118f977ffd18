//! The demo and the soak on real block-file worlds in temporary directories.

use std::time::Duration;

use terrane::Backend;
use terrane_sim::demo::{self, DemoConfig};
use terrane_sim::soak::SoakConfig;
use terrane_sim::{Error, Event};

/// A demo small enough for a test: a few columns, a small arena, no pacing.
fn small() -> DemoConfig {
    DemoConfig {
        backend: Some(Backend::BlockFile),
        ticks: 30,
        tps: 0.0,
        players: 2,
        view: 2,
        walk: 64.0,
        pregen_radius: 3,
        region_work_us: 0,
        arena: 16,
        ..DemoConfig::DEFAULT
    }
}

#[test]
fn the_demo_reports_its_progress_and_leaves_a_world_that_opens() {
    let dir = tempfile::tempdir().unwrap();
    let world = dir.path().join("world");
    let (mut ticked, mut pregen) = (Vec::new(), None);
    let s = demo::run(&world, &small(), |e| match e {
        Event::Ticked { ran, ticks } => ticked.push((ran, ticks)),
        Event::Pregenerated { completed, disc } => pregen = Some((completed, disc)),
        _ => {}
    })
    .unwrap();
    assert_eq!(ticked.first(), Some(&(1, 30)));
    assert_eq!(ticked.last(), Some(&(30, 30)), "every tick asked for is reported");
    let (completed, disc) = pregen.unwrap();
    assert_eq!(completed, disc, "the pre-generator filled its disc");
    assert!(s.pregen_columns <= disc);
    assert!(s.restore_exact && s.arena_damaged_blocks > 0 && s.restore_blocks_written > 0);
    assert!(s.ticks >= 30 && s.tick_saves >= s.ticks, "{} ticks, {} saves", s.ticks, s.tick_saves);
    assert!(s.player_chunk_loads > 0 && s.player_chunk_unloads > 0);
    // What the summary says is what the world holds.
    let w = terrane::World::open_read_only(&world).unwrap();
    assert_eq!(w.info().unwrap().levels.chunks, s.level_chunks);
    let report = w.verify().unwrap();
    assert_eq!(report.levels.chunks, s.level_chunks);
    assert!(report.generated_columns >= s.columns_generated && report.entities >= 2);
    assert!(world.join("regions.log").exists());
}

#[test]
fn only_a_terrane_world_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("photos");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("cat.jpg"), b"not a world").unwrap();
    let err = demo::run(&other, &small(), |_| {}).unwrap_err();
    assert!(matches!(err, Error::NotEmpty(_)), "{err}");
    let replace = DemoConfig { replace: true, ..small() };
    let err = demo::run(&other, &replace, |_| {}).unwrap_err();
    assert!(matches!(err, Error::NotAWorld(_)), "{err}");
    assert!(other.join("cat.jpg").exists(), "nothing of it was touched");

    let world = dir.path().join("world");
    demo::run(&world, &small(), |_| {}).unwrap();
    assert!(matches!(demo::run(&world, &small(), |_| {}), Err(Error::NotEmpty(_))));
    let again = demo::run(&world, &DemoConfig { seed: 7, ..replace }, |_| {}).unwrap();
    assert_eq!(again.seed, 7);
}

#[test]
fn a_short_soak_closes_rows_and_judges_them() {
    let dir = tempfile::tempdir().unwrap();
    let config =
        DemoConfig { soak: Some(SoakConfig { minutes: 2.0 / 60.0, row_seconds: 0.4 }), ..small() };
    let t = std::time::Instant::now();
    let s = demo::run(&dir.path().join("world"), &config, |_| {}).unwrap();
    assert!(t.elapsed() >= Duration::from_secs(2), "a soak plays for its minutes");
    assert!(s.soak.len() >= 4, "{} rows", s.soak.len());
    assert!(s.soak.iter().map(|r| r.restores).sum::<u64>() >= 1, "{:?}", s.soak);
    let v = s.soak_verdict.expect("a soak has a verdict");
    assert!(v.restores_exact, "{v:?}");
    assert!(s.soak.iter().all(|r| r.rss_mib > 0.0 && r.ticks > 0), "{:?}", s.soak);
}
