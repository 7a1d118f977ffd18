//! Property tests: random add / remove / tick / release sequences against a model, every
//! invariant after every operation, per-chunk tokens conserved through merges and splits,
//! and the callback order of every region.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use terrane_regionizer::{
    Callbacks, Error, RegionData, RegionId, RegionState, Regionizer, RegionizerConfig, SplitRoute,
};
use terrane_section::{ChunkPos, ColumnPos, GridPos};

/// Region data: each loaded chunk's token, grouped by section.
#[derive(Debug)]
struct Tokens<P: GridPos>(BTreeMap<P, BTreeSet<P>>);

impl<P: GridPos> Default for Tokens<P> {
    fn default() -> Self {
        Self(BTreeMap::new())
    }
}

impl<P: GridPos> RegionData<P> for Tokens<P> {
    fn merge(&mut self, from: Self) {
        for (s, set) in from.0 {
            self.0.entry(s).or_default().extend(set);
        }
    }
    fn split(&mut self, route: &SplitRoute<'_, P>, into: &mut [Self]) {
        for (s, set) in std::mem::take(&mut self.0) {
            let i = route.region_of_section(s).expect("a section holding tokens is never purged");
            into[i].0.insert(s, set);
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ev {
    Create,
    Active,
    Inactive,
    Destroy,
}

#[derive(Default)]
struct Recorder {
    events: Mutex<BTreeMap<RegionId, Vec<Ev>>>,
}

impl Recorder {
    fn push(&self, id: RegionId, e: Ev) {
        self.events.lock().unwrap().entry(id).or_default().push(e);
    }
}

#[derive(Clone)]
struct Rec(Arc<Recorder>);

impl std::ops::Deref for Rec {
    type Target = Recorder;
    fn deref(&self) -> &Recorder {
        &self.0
    }
}

impl<P: GridPos> Callbacks<P, Tokens<P>> for Rec {
    fn new_data(&self, _: RegionId) -> Tokens<P> {
        Tokens::default()
    }
    fn on_create(&self, r: RegionId) {
        self.push(r, Ev::Create);
    }
    fn on_destroy(&self, r: RegionId) {
        self.push(r, Ev::Destroy);
    }
    fn on_active(&self, r: RegionId) {
        self.push(r, Ev::Active);
    }
    fn on_inactive(&self, r: RegionId) {
        self.push(r, Ev::Inactive);
    }
}

#[derive(Debug, Clone)]
enum Op {
    Add(Vec<i64>),
    Remove(Vec<i64>),
    /// Remove the n-th loaded chunk (so removals hit loaded chunks often).
    RemoveNth(usize),
    Tick(Vec<i64>),
    /// Release the n-th ticking region, or (when none is) the owner of a chunk.
    Release(usize, Vec<i64>),
}

type Rz<P> = Regionizer<P, Tokens<P>>;

fn edit_tokens<P: GridPos>(rz: &Rz<P>, ticking: &BTreeSet<RegionId>, chunk: P, add: bool) {
    let shift = rz.config().shift();
    let id = rz.owner_of_chunk_exact(chunk).unwrap().expect("a loaded chunk's section is owned");
    let f = |t: &mut Tokens<P>| {
        let set = t.0.entry(chunk.section(shift)).or_default();
        if add {
            assert!(set.insert(chunk));
        } else {
            assert!(set.remove(&chunk));
            if set.is_empty() {
                t.0.remove(&chunk.section(shift));
            }
        }
    };
    if ticking.contains(&id) {
        f(&mut rz.region(id).unwrap().lock_data().unwrap());
    } else {
        rz.with_data(id, f).unwrap();
    }
}

fn check_all<P: GridPos>(
    rz: &Rz<P>,
    rec: &Recorder,
    loaded: &BTreeSet<P>,
    ticking: &BTreeSet<RegionId>,
) {
    if let Err(e) = rz.check_invariants() {
        panic!("{e}");
    }
    assert_eq!(
        rz.loaded_chunks().unwrap(),
        loaded.iter().copied().collect::<Vec<_>>(),
        "invariant 1"
    );
    // Tokens: every loaded chunk exactly once, in the region owning its section.
    let shift = rz.config().shift();
    let mut seen = BTreeSet::new();
    let ids = rz.region_ids().unwrap();
    for &id in &ids {
        let state = rz.region(id).unwrap().state();
        assert_eq!(ticking.contains(&id), state == RegionState::Ticking);
        let collect = |t: &mut Tokens<P>| {
            let mut v = Vec::new();
            for (s, set) in &t.0 {
                for c in set {
                    assert_eq!(c.section(shift), *s);
                    v.push(*c);
                }
            }
            v
        };
        let toks = if ticking.contains(&id) {
            collect(&mut rz.region(id).unwrap().lock_data().unwrap())
        } else {
            rz.with_data(id, collect).unwrap()
        };
        for c in toks {
            assert_eq!(rz.owner_of_chunk(c), Some(id), "token of {c:?} routed to the wrong region");
            assert!(seen.insert(c), "token {c:?} duplicated");
        }
    }
    assert_eq!(&seen, loaded, "tokens in live regions == loaded chunks");
    // Callback order (invariant 8).
    let ev = rec.events.lock().unwrap();
    for (id, list) in ev.iter() {
        assert_eq!(list[0], Ev::Create, "{id}: create first");
        let mut active = false;
        for (i, e) in list.iter().enumerate().skip(1) {
            match e {
                Ev::Create => panic!("{id}: created twice"),
                Ev::Active => {
                    assert!(!active, "{id}: active twice");
                    active = true;
                }
                Ev::Inactive => {
                    assert!(active, "{id}: inactive before active");
                    active = false;
                }
                Ev::Destroy => {
                    assert_eq!(i, list.len() - 1, "{id}: events after destroy");
                    assert!(!active, "{id}: destroyed while active");
                }
            }
        }
        let destroyed = list.last() == Some(&Ev::Destroy);
        assert_eq!(destroyed, !ids.contains(id), "{id}: destroyed iff not live");
    }
    for id in &ids {
        assert!(ev.contains_key(id), "{id}: live without create");
    }
}

/// What a run went through (to prove the random runs reach the interesting transitions).
#[derive(Debug, Default, Clone, Copy)]
struct Coverage {
    transient: u64,
    false_releases: u64,
    splits: u64,
    deaths: u64,
}

fn run<P: GridPos>(cfg: RegionizerConfig, ops: &[Op]) -> Coverage {
    let mut cov = Coverage::default();
    let rec = Arc::new(Recorder::default());
    let rz: Rz<P> = Regionizer::new(cfg, Rec(Arc::clone(&rec)));
    let mut loaded: BTreeSet<P> = BTreeSet::new();
    let mut ticking: BTreeSet<RegionId> = BTreeSet::new();
    let shift = cfg.shift();
    for op in ops {
        match op {
            Op::Add(c) => {
                let p = P::from_coords(c).unwrap();
                let r = rz.add_chunk(p);
                if loaded.insert(p) {
                    r.unwrap();
                    edit_tokens(&rz, &ticking, p, true);
                } else {
                    assert!(matches!(r, Err(Error::DuplicateChunk { .. })), "{r:?}");
                }
            }
            Op::Remove(c) => {
                let p = P::from_coords(c).unwrap();
                if loaded.remove(&p) {
                    edit_tokens(&rz, &ticking, p, false);
                    rz.remove_chunk(p).unwrap();
                } else {
                    let r = rz.remove_chunk(p);
                    assert!(matches!(r, Err(Error::ChunkNotLoaded { .. })), "{r:?}");
                }
            }
            Op::RemoveNth(n) => {
                if loaded.is_empty() {
                    continue;
                }
                let p = *loaded.iter().nth(n % loaded.len()).unwrap();
                loaded.remove(&p);
                edit_tokens(&rz, &ticking, p, false);
                rz.remove_chunk(p).unwrap();
            }
            Op::Tick(c) => {
                let s = P::from_coords(c).unwrap().section(shift);
                let Some(id) = rz.owner_of_section_exact(s).unwrap() else { continue };
                let was_ready = rz.region(id).unwrap().state() == RegionState::Ready;
                let r = rz.try_mark_ticking(id).unwrap();
                assert_eq!(r, was_ready);
                if r {
                    ticking.insert(id);
                }
            }
            Op::Release(n, c) => {
                if ticking.is_empty() {
                    let s = P::from_coords(c).unwrap().section(shift);
                    if let Some(id) = rz.owner_of_section_exact(s).unwrap() {
                        let r = rz.mark_not_ticking(id);
                        assert!(matches!(r, Err(Error::NotTicking { .. })), "{r:?}");
                    }
                } else {
                    let id = *ticking.iter().nth(n % ticking.len()).unwrap();
                    ticking.remove(&id);
                    let before = rz.region_count();
                    let again = rz.mark_not_ticking(id).unwrap();
                    let state = rz.region(id).map(|r| r.state());
                    if !again {
                        cov.false_releases += 1;
                        match state {
                            Some(RegionState::Transient) => {}
                            Some(_) => panic!("false release leaves {state:?}"),
                            None if rz.region_count() >= before => cov.splits += 1,
                            None => cov.deaths += 1,
                        }
                    }
                    assert_eq!(again, state == Some(RegionState::Ready));
                }
            }
        }
        check_all(&rz, &rec, &loaded, &ticking);
        let snap = rz.snapshot().unwrap();
        if snap.regions.iter().any(|r| r.state == RegionState::Transient) {
            cov.transient += 1;
        }
    }
    // Drain: release everything, tick everything until quiescent; tokens still conserved.
    for id in std::mem::take(&mut ticking) {
        rz.mark_not_ticking(id).unwrap();
    }
    for id in rz.region_ids().unwrap() {
        if rz.try_mark_ticking(id).unwrap() {
            rz.mark_not_ticking(id).unwrap();
        }
    }
    check_all(&rz, &rec, &loaded, &ticking);
    cov
}

fn configs() -> Vec<RegionizerConfig> {
    let b = RegionizerConfig::builder();
    vec![
        RegionizerConfig::folia_shift2(),
        RegionizerConfig::folia_shift4(),
        b.shift(1)
            .create_radius(1)
            .merge_radius(1)
            .recalc_count(2)
            .max_dead_fraction(0.2)
            .build()
            .unwrap(),
        b.shift(0)
            .create_radius(1)
            .merge_radius(2)
            .recalc_count(3)
            .max_dead_fraction(0.1)
            .build()
            .unwrap(),
        b.shift(1)
            .create_radius(2)
            .merge_radius(1)
            .recalc_count(1000)
            .max_dead_fraction(0.5)
            .build()
            .unwrap(),
    ]
}

/// Coordinate range per config so sections land within a few sections of each other.
fn range(cfg: &RegionizerConfig) -> i64 {
    (5i64 << cfg.shift()).max(10)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_ops_2d(ci in 0usize..5, ops in proptest::collection::vec(any::<u64>(), 1..160), seed in any::<u64>()) {
        let cfg = configs()[ci];
        let ops = decode(&ops, 2, range(&cfg), seed);
        run::<ColumnPos>(cfg, &ops);
    }

}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn random_ops_3d(ci in 0usize..5, ops in proptest::collection::vec(any::<u64>(), 1..50), seed in any::<u64>()) {
        let cfg = configs()[ci];
        let ops = decode(&ops, 3, range(&cfg).min(8), seed);
        run::<ChunkPos>(cfg, &ops);
    }
}

/// Turns raw numbers into ops (cheaper to shrink than nested strategies).
fn decode(raw: &[u64], dims: usize, range: i64, seed: u64) -> Vec<Op> {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    raw.iter()
        .map(|&r| {
            let coords: Vec<i64> =
                (0..dims).map(|_| (next() % (2 * range as u64)) as i64 - range).collect();
            match r % 14 {
                0..=4 => Op::Add(coords),
                5 => Op::Remove(coords),
                6..=8 => Op::RemoveNth((r >> 8) as usize),
                9..=11 => Op::Tick(coords),
                _ => Op::Release((r >> 8) as usize, coords),
            }
        })
        .collect()
}

/// Fixed random runs reach merge-later (TRANSIENT regions), splits and purged-away regions,
/// so the property tests above exercise them.
#[test]
fn random_runs_reach_every_transition() {
    let mut total = Coverage::default();
    for (i, cfg) in configs().into_iter().enumerate() {
        for seed in 1..3u64 {
            let mut x = seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1;
            let raw: Vec<u64> = (0..150)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x
                })
                .collect();
            let c = run::<ColumnPos>(cfg, &decode(&raw, 2, range(&cfg), seed * 7 + i as u64));
            total.transient += c.transient;
            total.false_releases += c.false_releases;
            total.splits += c.splits;
            total.deaths += c.deaths;
        }
    }
    assert!(total.transient > 0 && total.splits > 0 && total.deaths > 0, "{total:?}");
}

/// The same operations always give the same regions, ids and states.
#[test]
fn deterministic() {
    for cfg in configs() {
        let raw: Vec<u64> = (0..400u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
        let ops = decode(&raw, 2, range(&cfg), 42);
        let snap = || {
            let rz: Rz<ColumnPos> = Regionizer::new(cfg, Rec(Arc::new(Recorder::default())));
            let mut ticking = Vec::new();
            for op in &ops {
                match op {
                    Op::Add(c) => {
                        let _ = rz.add_chunk(ColumnPos::from_coords(c).unwrap());
                    }
                    Op::Remove(c) => {
                        let _ = rz.remove_chunk(ColumnPos::from_coords(c).unwrap());
                    }
                    Op::Tick(c) => {
                        let s = ColumnPos::from_coords(c).unwrap().section(cfg.shift());
                        if let Some(id) = rz.owner_of_section_exact(s).unwrap()
                            && rz.try_mark_ticking(id).unwrap()
                        {
                            ticking.push(id);
                        }
                    }
                    Op::Release(..) => {
                        if let Some(id) = ticking.pop() {
                            rz.mark_not_ticking(id).unwrap();
                        }
                    }
                    Op::RemoveNth(_) => {}
                }
            }
            rz.snapshot().unwrap()
        };
        let a = snap();
        assert!(!a.regions.is_empty());
        assert_eq!(a, snap());
    }
}
