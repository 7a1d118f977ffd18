//! Capture and restore against an in-memory world, the restore queue with a fake clock, and
//! snapshot/schematic conversions.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use terrane_section::{BlockPos, ChunkPos};
use terrane_snapshot::{
    BlockBox, ChunkAccess, Error, FakeClock, MemChunks, Progress, QueueConfig, RestoreCursor,
    RestoreQueue, Schematic, Snapshot,
};

/// A deterministic mess of states: `n` distinct, varied per position.
fn state_at(p: BlockPos, n: u64) -> String {
    let h = (p.x.wrapping_mul(73856093) ^ p.y.wrapping_mul(19349663) ^ p.z.wrapping_mul(83492791))
        as u64;
    format!("test:s{}", h.wrapping_mul(0x9E3779B97F4A7C15) % n)
}

fn fill(world: &mut MemChunks, bbox: BlockBox, n: u64) {
    for r in bbox.sub_regions() {
        world.ensure_chunk(r.chunk);
    }
    let (a, b) = (bbox.min(), bbox.max());
    for x in a.x..=b.x {
        for y in a.y..=b.y {
            for z in a.z..=b.z {
                let p = BlockPos::new(x, y, z);
                world.set_named(p, &state_at(p, n));
            }
        }
    }
}

fn all_positions(bbox: BlockBox) -> impl Iterator<Item = BlockPos> {
    let (a, b) = (bbox.min(), bbox.max());
    (a.x..=b.x).flat_map(move |x| {
        (a.y..=b.y).flat_map(move |y| (a.z..=b.z).map(move |z| BlockPos::new(x, y, z)))
    })
}

#[test]
fn sub_regions_cover_an_unaligned_box_exactly_once() {
    let bbox = BlockBox::new(BlockPos::new(-17, -3, 30), BlockPos::new(5, 20, 31));
    let mut seen = std::collections::HashSet::new();
    for r in bbox.sub_regions() {
        for c in 0..r.volume() {
            let p = r.pos(c);
            assert!(bbox.contains(p), "{p:?}");
            assert_eq!(p.chunk(), r.chunk);
            assert!(seen.insert(p), "{p:?} twice");
        }
    }
    assert_eq!(seen.len() as u128, bbox.volume());
    // Chunks: x -2..=0, y -1..=1, z 1..=1.
    assert_eq!(bbox.sub_regions().count(), 9);
}

#[test]
fn capture_and_restore_round_trip_with_big_palettes() {
    // 600 states over a 2×2×2-chunk box: local palettes well past 128 and 256 entries, which a
    // byte-offset reader (the Gaia bug) would misplace.
    let bbox = BlockBox::new(BlockPos::new(-9, 3, -20), BlockPos::new(12, 30, 2));
    let mut src = MemChunks::new();
    fill(&mut src, bbox, 600);
    let snap = Snapshot::capture(&src, bbox).unwrap();
    assert!(snap.states().len() > 500);
    for p in all_positions(bbox) {
        assert_eq!(snap.block(p), Some(&*state_at(p, 600)), "{p:?}");
    }
    assert_eq!(snap.block(BlockPos::new(13, 3, -20)), None);

    // Into a different world whose ids differ (registration order reversed).
    let mut dst = MemChunks::new();
    for s in snap.states().iter().rev() {
        dst.register(s);
    }
    let stats = snap.restore(&mut dst, false).unwrap();
    assert_eq!(stats.visited as u128, bbox.volume());
    assert_eq!(stats.written, stats.visited);
    for p in all_positions(bbox) {
        assert_eq!(dst.get_named(p), src.get_named(p), "{p:?}");
    }
    // Outside the box nothing was written.
    assert_eq!(dst.get_named(BlockPos::new(-10, 3, -20)), Some("minecraft:air"));

    // A diff restore over an identical world writes nothing; after changes, only those.
    assert_eq!(snap.restore(&mut dst, true).unwrap().written, 0);
    dst.set_named(BlockPos::new(0, 10, 0), "minecraft:tnt");
    dst.set_named(BlockPos::new(12, 30, 2), "minecraft:tnt");
    let st = snap.restore(&mut dst, true).unwrap();
    assert_eq!(st.written, 2);
    assert_eq!(dst.get_named(BlockPos::new(12, 30, 2)), src.get_named(BlockPos::new(12, 30, 2)));
}

#[test]
fn uniform_chunks_cost_no_index_bits() {
    let bbox = BlockBox::new(BlockPos::new(0, 0, 0), BlockPos::new(63, 63, 63));
    let mut w = MemChunks::new();
    for r in bbox.sub_regions() {
        w.ensure_chunk(r.chunk);
    }
    w.set_named(BlockPos::new(1, 1, 1), "minecraft:stone");
    let s = Snapshot::capture(&w, bbox).unwrap();
    // 64 chunks, one with 2 states (1 bit: 64 words), the others with none.
    let per_block = s.heap_bytes() as f64 / bbox.volume() as f64;
    assert!(per_block < 0.05, "{per_block} bytes per block");
    assert_eq!(s.block(BlockPos::new(1, 1, 1)), Some("minecraft:stone"));
}

#[test]
fn capture_needs_loaded_chunks_and_restore_needs_known_states() {
    let w = MemChunks::new();
    let bbox = BlockBox::new(BlockPos::new(0, 0, 0), BlockPos::new(3, 3, 3));
    assert!(
        matches!(Snapshot::capture(&w, bbox), Err(Error::ChunkUnavailable(c)) if c == ChunkPos::new(0, 0, 0))
    );

    /// A world that knows no states at all.
    struct Picky(MemChunks);
    impl ChunkAccess for Picky {
        type Block = u16;
        type Chunk<'a> = terrane_snapshot::MemChunk<'a>;
        type ChunkMut<'a> = terrane_snapshot::MemChunkMut<'a>;
        fn chunk(&self, p: ChunkPos) -> Option<Self::Chunk<'_>> {
            self.0.chunk(p)
        }
        fn chunk_mut(&mut self, p: ChunkPos) -> Option<Self::ChunkMut<'_>> {
            self.0.chunk_mut(p)
        }
        fn state_name(&self, b: u16) -> std::borrow::Cow<'_, str> {
            self.0.state_name(b)
        }
        fn resolve_state(&mut self, _: &str) -> Option<u16> {
            None
        }
    }
    let mut w = MemChunks::new();
    w.ensure_chunk(ChunkPos::new(0, 0, 0));
    let snap = Snapshot::capture(&w, bbox).unwrap();
    let e = snap.restore(&mut Picky(w), false).unwrap_err();
    assert!(matches!(e, Error::UnknownState(ref s) if s == "minecraft:air"), "{e}");
}

/// The order a restore visits blocks: sub-regions in order, Sponge order inside.
fn restore_order(s: &Snapshot) -> Vec<BlockPos> {
    (0..s.region_count())
        .flat_map(|i| {
            let r = s.region(i).unwrap();
            (0..r.volume()).map(move |c| r.pos(c))
        })
        .collect()
}

#[test]
fn queue_stops_when_the_budget_is_spent_and_resumes_at_the_exact_block() {
    let bbox = BlockBox::new(BlockPos::new(-5, 0, -5), BlockPos::new(20, 20, 7));
    let mut src = MemChunks::new();
    fill(&mut src, bbox, 40);
    let snap = Arc::new(Snapshot::capture(&src, bbox).unwrap());
    let order = restore_order(&snap);
    let total = order.len();

    // Target: the same chunks, all air.
    let mut dst = MemChunks::new();
    for r in bbox.sub_regions() {
        dst.ensure_chunk(r.chunk);
    }
    // Every clock read advances 1 ms; 30 ms budget; a read every 100 blocks.
    let clock = FakeClock::new(Duration::from_millis(1));
    let cfg = QueueConfig {
        budget: Duration::from_millis(30),
        max_chunks_in_flight: 4,
        check_every: 100,
    };
    let mut q: RestoreQueue<MemChunks, FakeClock> = RestoreQueue::with_clock(cfg, clock.clone());
    let progress: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let done: Arc<Mutex<Vec<u64>>> = Arc::default();
    {
        let p = progress.clone();
        q.on_progress(move |pr| p.lock().unwrap().push(*pr));
        let d = done.clone();
        q.on_complete(move |id, r| d.lock().unwrap().push(id.0 + 1000 * r.unwrap().visited));
    }
    let id = q.push(snap.clone(), false);

    // The tick reads the clock at 0 (start), then at 1, 2, ... after each 100 blocks: the
    // 30th read (t = 30 ms) ends it, after exactly 30 × 100 blocks.
    let per_tick = 3000;
    let mut restored = 0usize;
    let mut ticks = 0;
    while restored < total {
        let rep = q.tick(&mut dst);
        ticks += 1;
        let expect = per_tick.min(total - restored);
        assert_eq!(rep.blocks as usize, expect, "tick {ticks}");
        restored += expect;
        if restored < total {
            assert!(rep.budget_exhausted);
            assert!(rep.elapsed >= cfg.budget);
            // Exactly the first `restored` blocks in restore order are written.
            for (i, p) in order.iter().enumerate().step_by(7) {
                let want = if i < restored { src.get_named(*p) } else { Some("minecraft:air") };
                assert_eq!(dst.get_named(*p), want, "tick {ticks}, block {i}");
            }
            let at = order[restored];
            assert_eq!(dst.get_named(at), Some("minecraft:air"));
            assert_eq!(dst.get_named(order[restored - 1]), src.get_named(order[restored - 1]));
            let pr = q.progress(id).unwrap();
            assert_eq!(pr.blocks_done as usize, restored);
            assert!(q.chunks_in_flight() <= 4);
        }
        assert!(ticks < 100);
    }
    assert!(q.is_empty());
    assert_eq!(q.chunks_in_flight(), 0);
    assert_eq!(ticks, total.div_ceil(per_tick));
    assert_eq!(*done.lock().unwrap(), vec![total as u64 * 1000]);
    let pr = progress.lock().unwrap();
    assert_eq!(pr.len(), ticks);
    assert!(pr.windows(2).all(|w| w[0].blocks_done < w[1].blocks_done));
    assert_eq!(pr.last().unwrap().blocks_done as usize, total);
    for p in all_positions(bbox) {
        assert_eq!(dst.get_named(p), src.get_named(p));
    }
}

/// A world whose chunks become ready one tick after being requested, counting tickets.
struct Slow {
    inner: MemChunks,
    requested: Vec<ChunkPos>,
    ready: Vec<ChunkPos>,
    max_held: usize,
}

impl ChunkAccess for Slow {
    type Block = u16;
    type Chunk<'a> = terrane_snapshot::MemChunk<'a>;
    type ChunkMut<'a> = terrane_snapshot::MemChunkMut<'a>;
    fn chunk(&self, p: ChunkPos) -> Option<Self::Chunk<'_>> {
        self.inner.chunk(p)
    }
    fn chunk_mut(&mut self, p: ChunkPos) -> Option<Self::ChunkMut<'_>> {
        assert!(self.ready.contains(&p), "wrote to a chunk that is not loaded");
        self.inner.chunk_mut(p)
    }
    fn state_name(&self, b: u16) -> std::borrow::Cow<'_, str> {
        self.inner.state_name(b)
    }
    fn resolve_state(&mut self, n: &str) -> Option<u16> {
        self.inner.resolve_state(n)
    }
    fn request_chunk(&mut self, p: ChunkPos) {
        self.requested.push(p);
        self.max_held = self.max_held.max(self.requested.len() + self.ready.len());
    }
    fn chunk_ready(&self, p: ChunkPos) -> bool {
        self.ready.contains(&p)
    }
    fn release_chunk(&mut self, p: ChunkPos) {
        let i = self.ready.iter().position(|&q| q == p).expect("released a chunk never loaded");
        self.ready.remove(i);
    }
}

#[test]
fn queue_respects_chunks_in_flight_and_runs_ops_in_turn() {
    let a = BlockBox::new(BlockPos::new(0, 0, 0), BlockPos::new(47, 15, 15));
    let b = BlockBox::new(BlockPos::new(100, 0, 0), BlockPos::new(131, 15, 15));
    let mut src = MemChunks::new();
    fill(&mut src, a, 5);
    fill(&mut src, b, 5);
    let sa = Arc::new(Snapshot::capture(&src, a).unwrap());
    let sb = Arc::new(Snapshot::capture(&src, b).unwrap());
    let mut w = Slow { inner: MemChunks::new(), requested: vec![], ready: vec![], max_held: 0 };
    let mut q =
        RestoreQueue::new(QueueConfig { max_chunks_in_flight: 2, ..QueueConfig::default() });
    let done: Arc<Mutex<Vec<u64>>> = Arc::default();
    let d = done.clone();
    q.on_complete(move |id, _| d.lock().unwrap().push(id.0));
    q.push(sa, true);
    q.push(sb, false);
    let mut ticks = 0;
    while !q.is_empty() {
        q.tick(&mut w);
        // The "server" loads what was asked for, by next tick.
        let req = std::mem::take(&mut w.requested);
        w.ready.extend(req);
        ticks += 1;
        assert!(ticks < 50);
    }
    assert!(w.max_held <= 2, "{} chunks held", w.max_held);
    assert!(w.ready.is_empty(), "every ticket released");
    assert_eq!(*done.lock().unwrap(), vec![0, 1]);
    for p in all_positions(a).chain(all_positions(b)) {
        assert_eq!(w.inner.get_named(p), src.get_named(p));
    }
}

#[test]
fn queue_reports_failures_through_completion() {
    let bbox = BlockBox::new(BlockPos::new(0, 0, 0), BlockPos::new(3, 3, 3));
    let mut w = MemChunks::new();
    w.set_named(BlockPos::new(0, 0, 0), "minecraft:stone");
    let snap = Arc::new(Snapshot::capture(&w, bbox).unwrap());
    struct NoChunks(MemChunks);
    impl ChunkAccess for NoChunks {
        type Block = u16;
        type Chunk<'a> = terrane_snapshot::MemChunk<'a>;
        type ChunkMut<'a> = terrane_snapshot::MemChunkMut<'a>;
        fn chunk(&self, p: ChunkPos) -> Option<Self::Chunk<'_>> {
            self.0.chunk(p)
        }
        fn chunk_mut(&mut self, _: ChunkPos) -> Option<Self::ChunkMut<'_>> {
            None
        }
        fn state_name(&self, b: u16) -> std::borrow::Cow<'_, str> {
            self.0.state_name(b)
        }
        fn resolve_state(&mut self, n: &str) -> Option<u16> {
            self.0.resolve_state(n)
        }
    }
    let mut q = RestoreQueue::new(QueueConfig::default());
    let got: Arc<Mutex<Option<String>>> = Arc::default();
    let g = got.clone();
    q.on_complete(move |_, r| *g.lock().unwrap() = Some(r.unwrap_err().to_string()));
    q.push(snap, false);
    let mut nw = NoChunks(MemChunks::new());
    q.tick(&mut nw);
    assert!(q.is_empty());
    assert_eq!(q.chunks_in_flight(), 0);
    assert!(got.lock().unwrap().as_deref().unwrap().contains("not available"));
}

#[test]
fn snapshot_schematic_round_trip() {
    let bbox = BlockBox::new(BlockPos::new(-20, 60, 7), BlockPos::new(3, 75, 40));
    let mut src = MemChunks::new();
    fill(&mut src, bbox, 200);
    let snap = Snapshot::capture(&src, bbox).unwrap();
    let schem = snap.to_schematic(3955).unwrap();
    assert_eq!((schem.width(), schem.height(), schem.length()), (24, 16, 34));
    let back = Schematic::read(&schem.write().unwrap()).unwrap();
    assert_eq!(back.world_min(), [-20, 60, 7]);
    let min = back.world_min();
    let snap2 =
        Snapshot::from_schematic(&back, BlockPos::new(min[0] as i64, min[1] as i64, min[2] as i64))
            .unwrap();
    for p in all_positions(bbox) {
        assert_eq!(snap2.block(p), snap.block(p));
    }
    // A fixture placed anywhere restores to the same blocks.
    let path = terrane_section::testdata::fixture("schem/smallhouse1.schem");
    let house =
        Schematic::read_file(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()));
    let at = BlockPos::new(-7, -64, 1000);
    let s = Snapshot::from_schematic(&house, at).unwrap();
    let mut w = MemChunks::new();
    s.restore(&mut w, false).unwrap();
    assert_eq!(
        w.get_named(BlockPos::new(at.x + 7, at.y + 7, at.z + 13)),
        Some(
            "minecraft:cobblestone_stairs[facing=south,half=top,shape=straight,waterlogged=false]"
        )
    );
}

#[test]
fn spellings_of_one_state_in_a_schematic_become_one_canonical_state() {
    let canonical = "minecraft:oak_stairs[facing=north,half=bottom,waterlogged=false]";
    let palette = vec![
        "minecraft:air".to_string(),
        "minecraft:oak_stairs[waterlogged=false,half=bottom,facing=north]".to_string(),
        "oak_stairs[ facing = north ,half=bottom,waterlogged=false]".to_string(),
        canonical.to_string(),
        "stone".to_string(),
    ];
    let s = Schematic::from_parts(5, 1, 1, palette, vec![1, 2, 3, 4, 0]).unwrap();
    let snap = Snapshot::from_schematic(&s, BlockPos::new(0, 0, 0)).unwrap();
    assert_eq!(snap.states(), ["minecraft:air", canonical, "minecraft:stone"]);
    for x in 0..3 {
        assert_eq!(snap.block(BlockPos::new(x, 0, 0)), Some(canonical), "x {x}");
    }
    assert_eq!(snap.block(BlockPos::new(3, 0, 0)), Some("minecraft:stone"));
    let mut w = MemChunks::new();
    snap.restore(&mut w, false).unwrap();
    assert_eq!(w.get_named(BlockPos::new(1, 0, 0)), Some(canonical));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any box, any state count, any slice sizes: stepping a cursor in slices restores exactly
    /// what a one-shot restore does, and positions follow the block counter.
    #[test]
    fn stepped_restore_equals_capture(
        x in -40i64..40, y in -40i64..40, z in -40i64..40,
        sx in 1u64..30, sy in 1u64..20, sz in 1u64..30,
        n in 1u64..700, slice in 1u32..5000,
    ) {
        let bbox = BlockBox::from_size(BlockPos::new(x, y, z), [sx, sy, sz]).unwrap();
        let mut src = MemChunks::new();
        fill(&mut src, bbox, n);
        let snap = Snapshot::capture(&src, bbox).unwrap();
        let mut dst = MemChunks::new();
        let mut cur = RestoreCursor::new(false);
        let mut guard = 0;
        while !cur.done(&snap) {
            cur.step(&snap, &mut dst, slice).unwrap();
            guard += 1;
            prop_assert!(guard < 1_000_000);
        }
        prop_assert_eq!(cur.stats.visited as u128, bbox.volume());
        for p in all_positions(bbox) {
            prop_assert_eq!(dst.get_named(p), src.get_named(p));
            prop_assert_eq!(snap.block(p), src.get_named(p));
        }
    }
}

#[test]
fn queue_and_snapshot_cross_threads() {
    fn send<T: Send>() {}
    fn sync<T: Send + Sync>() {}
    send::<RestoreQueue<MemChunks>>();
    send::<RestoreQueue<MemChunks, FakeClock>>();
    sync::<Snapshot>();
    sync::<Schematic>();
    // A snapshot captured on one thread restores on another.
    let bbox = BlockBox::new(BlockPos::new(0, 0, 0), BlockPos::new(5, 5, 5));
    let mut w = MemChunks::new();
    fill(&mut w, bbox, 9);
    let snap = Arc::new(Snapshot::capture(&w, bbox).unwrap());
    let s2 = snap.clone();
    let restored = std::thread::spawn(move || {
        let mut dst = MemChunks::new();
        s2.restore(&mut dst, false).unwrap();
        dst
    })
    .join()
    .unwrap();
    for p in all_positions(bbox) {
        assert_eq!(restored.get_named(p), w.get_named(p));
    }
}

#[test]
fn two_phase_capture_equals_capture() {
    let bbox = BlockBox::new(BlockPos::new(-9, 3, -20), BlockPos::new(12, 30, 2));
    let mut src = MemChunks::new();
    fill(&mut src, bbox, 300);
    let direct = Snapshot::capture(&src, bbox).unwrap();
    let copied = Snapshot::copy(&src, bbox).unwrap();
    assert_eq!(copied.bbox(), bbox);
    // Encode on another thread with a copy of the registry.
    let names: Vec<String> = (0..).map_while(|id| src.name(id).map(str::to_owned)).collect();
    let snap =
        std::thread::spawn(move || copied.encode(|b| names[b as usize].clone())).join().unwrap();
    assert_eq!(snap, direct);
    assert!(matches!(Snapshot::copy(&MemChunks::new(), bbox), Err(Error::ChunkUnavailable(_))));
}
