//! The write pipeline against a model: reads see every accepted write while batches are in
//! flight, batches land whole and in order, at most `depth` in flight, and a failed batch
//! stops the line (nothing after it lands, every later write is refused).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use terrane_store::{
    Batch, Error, FaultPlan, FaultyStore, KeyRange, MemStore, Object, ReadView, Scan, Store,
    WritePipeline, tables,
};

/// A store whose writes wait while its gate is closed and record the order they arrive in,
/// counting the reads that reach it; its reads answer late while `hold_reads` is set.
struct Gated {
    inner: MemStore,
    open: AtomicBool,
    /// Reads read at once and answer once this is cleared (a read crossing a slow network:
    /// the answer is what the store held when the read began).
    hold_reads: AtomicBool,
    writes: AtomicU64,
    reads: AtomicU64,
    /// Panic in `write` (a store with a bug).
    panics: AtomicBool,
    /// Each batch's first key, in the order written.
    order: Mutex<Vec<Vec<u8>>>,
    /// Sleeps this long in each write (slow links).
    delay: Duration,
}

impl Gated {
    fn new(open: bool, delay: Duration) -> Arc<Self> {
        Arc::new(Gated {
            inner: MemStore::new(),
            open: AtomicBool::new(open),
            hold_reads: AtomicBool::new(false),
            writes: AtomicU64::new(0),
            reads: AtomicU64::new(0),
            panics: AtomicBool::new(false),
            order: Mutex::new(Vec::new()),
            delay,
        })
    }
}

impl Gated {
    /// `found`, once reads are no longer held.
    fn answer<T>(&self, found: T) -> T {
        while self.hold_reads.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        found
    }
}

impl ReadView for Gated {
    fn get(&self, table: &str, key: &[u8]) -> terrane_store::Result<Option<Object>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.answer(self.inner.get(table, key))
    }
    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> terrane_store::Result<Vec<Option<Object>>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.answer(self.inner.multi_get(table, keys))
    }
    fn scan(&self, table: &str, range: KeyRange) -> terrane_store::Result<Scan<'_>> {
        self.inner.scan(table, range)
    }
}

impl Store for Gated {
    fn signature(&self) -> &str {
        self.inner.signature()
    }
    fn tables(&self) -> Vec<String> {
        self.inner.tables()
    }
    fn write(&self, batch: &Batch) -> terrane_store::Result<()> {
        assert!(!self.panics.load(Ordering::SeqCst), "a store with a bug");
        while !self.open.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(self.delay);
        if let Some(op) = batch.ops().first() {
            let key = match op {
                terrane_store::Op::Put { key, .. } | terrane_store::Op::Delete { key, .. } => key,
            };
            self.order.lock().unwrap().push(key.clone());
        }
        self.writes.fetch_add(1, Ordering::SeqCst);
        self.inner.write(batch)
    }
    fn snapshot(&self) -> terrane_store::Result<Box<dyn ReadView + '_>> {
        self.inner.snapshot()
    }
    fn flush(&self) -> terrane_store::Result<()> {
        Ok(())
    }
    fn sync(&self) -> terrane_store::Result<()> {
        Ok(())
    }
}

#[derive(Clone, Debug)]
enum Step {
    /// A batch of puts (key, value) and deletes (key, None).
    Write(Vec<(u8, Option<u8>)>),
    Get(u8),
    MultiGet(Vec<u8>),
    Parts(u8),
    Scan,
    Settle,
}

fn step() -> impl Strategy<Value = Step> {
    let key = 0u8..12;
    prop_oneof![
        4 => prop::collection::vec((key.clone(), prop::option::of(any::<u8>())), 1..5)
            .prop_map(Step::Write),
        3 => key.clone().prop_map(Step::Get),
        2 => prop::collection::vec(key.clone(), 0..6).prop_map(Step::MultiGet),
        1 => key.prop_map(Step::Parts),
        1 => Just(Step::Scan),
        1 => Just(Step::Settle),
    ]
}

fn value(v: u8) -> Vec<u8> {
    vec![v; 3 + usize::from(v % 5)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every read answers as the model does at once, although the batches land later.
    #[test]
    fn reads_see_every_accepted_write_and_batches_land_in_order(
        steps in prop::collection::vec(step(), 1..40),
        depth in 1usize..4,
        cache in prop::sample::select(vec![0usize, 400, 1 << 20]),
    ) {
        let inner = Gated::new(true, Duration::from_micros(300));
        let p = WritePipeline::with_cache(Arc::clone(&inner) as Arc<dyn Store>, depth, cache).unwrap();
        let mut model: std::collections::BTreeMap<Vec<u8>, Object> = Default::default();
        let mut version = 0i64;
        let mut firsts = Vec::new();
        for s in &steps {
            match s {
                Step::Write(ops) => {
                    let mut b = Batch::new();
                    for (k, v) in ops {
                        version += 1;
                        match v {
                            Some(v) => {
                                b.put(tables::ENTITY, vec![*k], version, value(*v));
                                model.insert(vec![*k], Object::new(version, value(*v)));
                            }
                            None => {
                                b.delete(tables::ENTITY, vec![*k]);
                                model.remove(&vec![*k]);
                            }
                        }
                    }
                    firsts.push(vec![ops[0].0]);
                    p.write(&b).unwrap();
                    prop_assert!(p.in_flight() <= depth as u64);
                }
                Step::Get(k) => {
                    prop_assert_eq!(p.get(tables::ENTITY, &[*k]).unwrap(), model.get(&vec![*k]).cloned());
                }
                Step::MultiGet(ks) => {
                    let keys: Vec<&[u8]> = ks.iter().map(std::slice::from_ref).collect();
                    let want: Vec<Option<Object>> = ks.iter().map(|k| model.get(&vec![*k]).cloned()).collect();
                    prop_assert_eq!(p.multi_get(tables::ENTITY, &keys).unwrap(), want);
                }
                Step::Parts(k) => {
                    let got = p.get_parts(tables::ENTITY, &[*k], &[1..3, 0..1]).unwrap();
                    let want = model.get(&vec![*k]).map(|o| terrane_store::cut_parts(o.version, &o.data, &[1..3, 0..1]));
                    prop_assert_eq!(got, want);
                }
                Step::Scan => {
                    let got: Vec<(Vec<u8>, Object)> = p.scan(tables::ENTITY, KeyRange::all()).unwrap().map(Result::unwrap).collect();
                    let want: Vec<(Vec<u8>, Object)> = model.clone().into_iter().collect();
                    // Batches in flight merged over what landed, without waiting for them.
                    prop_assert_eq!(got, want);
                }
                Step::Settle => {
                    p.settle().unwrap();
                    prop_assert_eq!(p.durable(), p.submitted());
                }
            }
        }
        p.settle().unwrap();
        prop_assert_eq!(p.durable(), firsts.len() as u64);
        // Landed whole, in the order accepted.
        prop_assert_eq!(&*inner.order.lock().unwrap(), &firsts);
        let stored: std::collections::BTreeMap<Vec<u8>, Object> =
            inner.inner.scan(tables::ENTITY, KeyRange::all()).unwrap().map(Result::unwrap).collect();
        prop_assert_eq!(stored, model);
    }
}

#[test]
fn at_most_depth_batches_are_in_flight_and_a_full_line_waits() {
    let inner = Gated::new(false, Duration::ZERO);
    let p = WritePipeline::new(Arc::clone(&inner) as Arc<dyn Store>, 2).unwrap();
    p.put(tables::ENTITY, b"a", 1, b"1").unwrap();
    p.put(tables::ENTITY, b"b", 1, b"2").unwrap();
    assert_eq!((p.submitted(), p.durable(), p.in_flight()), (2, 0, 2));
    // Both readable before either landed.
    assert_eq!(p.get(tables::ENTITY, b"b").unwrap().unwrap().data, b"2");
    assert_eq!(inner.inner.get(tables::ENTITY, b"a").unwrap(), None);
    std::thread::scope(|s| {
        let third = s.spawn(|| p.put(tables::ENTITY, b"c", 1, b"3"));
        std::thread::sleep(Duration::from_millis(200));
        assert!(!third.is_finished(), "a third write went in with two in flight");
        inner.open.store(true, Ordering::SeqCst);
        third.join().unwrap().unwrap();
    });
    assert!(p.take_waited() >= Duration::from_millis(150));
    assert_eq!(p.take_waited(), Duration::ZERO, "taken once");
    p.settle().unwrap();
    assert_eq!((p.durable(), inner.writes.load(Ordering::SeqCst)), (3, 3));
    assert_eq!(inner.inner.get(tables::ENTITY, b"c").unwrap().unwrap().data, b"3");
}

#[test]
fn a_failed_batch_stops_the_line_and_nothing_after_it_lands() {
    let inner = Arc::new(FaultyStore::new(MemStore::new(), FaultPlan::nth_write(3)));
    let p = WritePipeline::new(Arc::clone(&inner) as Arc<dyn Store>, 8).unwrap();
    for (i, k) in [b"a", b"b", b"c", b"d", b"e"].into_iter().enumerate() {
        // Accepted, or refused once the third failed (the thread may be that quick).
        match p.put(tables::ENTITY, k, 1, &[i as u8]) {
            Ok(()) | Err(Error::Poisoned(_)) => {}
            Err(e) => panic!("{e}"),
        }
    }
    let e = p.settle().unwrap_err();
    assert!(matches!(e, Error::Poisoned(_)), "{e}");
    assert!(e.to_string().contains("pipelined write 3 failed"), "{e}");
    assert_eq!(p.durable(), 2);
    let (seq, first) = p.failure().expect("the first failure");
    assert_eq!(seq, 3);
    assert!(matches!(first, Error::Injected(_)), "{first}");
    assert!(p.failure().is_none(), "reported once");
    // Only the batches before the failed one landed; reads are the inner store's.
    for (k, there) in [(b"a", true), (b"b", true), (b"c", false), (b"d", false), (b"e", false)] {
        assert_eq!(inner.get(tables::ENTITY, k).unwrap().is_some(), there, "{k:?}");
        assert_eq!(p.get(tables::ENTITY, k).unwrap().is_some(), there, "{k:?}");
    }
    assert_eq!(inner.writes(), 3, "nothing was tried after the failure");
    let refused = p.put(tables::ENTITY, b"f", 1, b"x").unwrap_err();
    assert!(matches!(refused, Error::Poisoned(_)), "{refused}");
    assert!(p.sync().is_err() && p.snapshot().is_err());
    let scanned: Vec<Vec<u8>> =
        p.scan(tables::ENTITY, KeyRange::all()).unwrap().map(|e| e.unwrap().0).collect();
    assert_eq!(scanned, [b"a".to_vec(), b"b".to_vec()], "scans are the inner store's too");

    // Resumed (the writer read back what it holds): later batches land, the dropped ones
    // stay dropped.
    assert_eq!(p.resume(), Some(3));
    assert_eq!(p.resume(), None, "resumed once");
    assert_eq!((p.durable(), p.in_flight()), (p.submitted(), 0));
    p.put(tables::ENTITY, b"f", 1, b"after").unwrap();
    p.settle().unwrap();
    assert_eq!(inner.get(tables::ENTITY, b"f").unwrap().unwrap().data, b"after");
    assert_eq!(inner.get(tables::ENTITY, b"d").unwrap(), None);
    assert_eq!(p.durable(), p.submitted());
}

/// A scan does not wait for the batches in flight: it merges them over the inner store's
/// scan (their puts shown, their deletions hidden), and streams the inner scan as it is
/// when none writes the range.
#[test]
fn a_scan_merges_the_batches_in_flight_over_the_inner_store() {
    let inner = Gated::new(false, Duration::ZERO);
    inner.inner.put(tables::ENTITY, b"a1", 1, b"old").unwrap();
    inner.inner.put(tables::ENTITY, b"a2", 1, b"gone").unwrap();
    inner.inner.put(tables::ENTITY, b"b1", 1, b"other").unwrap();
    let p = WritePipeline::new(Arc::clone(&inner) as Arc<dyn Store>, 4).unwrap();
    p.put(tables::ENTITY, b"a1", 2, b"new").unwrap();
    p.delete(tables::ENTITY, b"a2").unwrap();
    p.put(tables::ENTITY, b"a3", 2, b"added").unwrap();
    let scan = |prefix: &[u8]| -> Vec<(Vec<u8>, Vec<u8>)> {
        p.scan_prefix(tables::ENTITY, prefix)
            .unwrap()
            .map(|e| e.unwrap())
            .map(|(k, o)| (k, o.data))
            .collect()
    };
    // The gate is closed: nothing has landed, and the scans return all the same.
    assert_eq!(
        scan(b"a"),
        [(b"a1".to_vec(), b"new".to_vec()), (b"a3".to_vec(), b"added".to_vec())]
    );
    assert_eq!(scan(b"b"), [(b"b1".to_vec(), b"other".to_vec())]);
    assert_eq!(inner.writes.load(Ordering::SeqCst), 0, "nothing landed while scanning");
    inner.open.store(true, Ordering::SeqCst);
    p.settle().unwrap();
    assert_eq!(
        scan(b"a"),
        [(b"a1".to_vec(), b"new".to_vec()), (b"a3".to_vec(), b"added".to_vec())]
    );
}

/// Tables other writers write into are never cached: each read the batches in flight do
/// not answer reaches the inner store, what landed included; and a forgotten cache is
/// read afresh.
#[test]
fn uncached_tables_and_a_forgotten_cache_are_read_from_the_inner_store() {
    let inner = Gated::new(true, Duration::ZERO);
    let p = WritePipeline::with_uncached(
        Arc::clone(&inner) as Arc<dyn Store>,
        2,
        1 << 20,
        &[tables::ENTITY],
    )
    .unwrap();
    let reads = || inner.reads.load(Ordering::SeqCst);
    p.put(tables::ENTITY, b"w", 1, b"mine").unwrap();
    p.settle().unwrap();
    p.get(tables::ENTITY, b"w").unwrap();
    p.get(tables::ENTITY, b"w").unwrap();
    assert_eq!(reads(), 2, "an uncached table is read each time, what landed included");
    // Another writer changes it: the next read says so.
    inner.inner.put(tables::ENTITY, b"w", 2, b"theirs").unwrap();
    assert_eq!(p.get(tables::ENTITY, b"w").unwrap().unwrap().data, b"theirs");
    // A cached table: read once, then from the cache until it is forgotten.
    assert_eq!(p.get(tables::CHUNK_L0, b"c").unwrap(), None);
    assert_eq!(p.get(tables::CHUNK_L0, b"c").unwrap(), None);
    assert_eq!(reads(), 4);
    inner.inner.put(tables::CHUNK_L0, b"c", 1, b"theirs").unwrap();
    p.forget_cache();
    assert_eq!(p.get(tables::CHUNK_L0, b"c").unwrap().unwrap().data, b"theirs");
    assert_eq!(reads(), 5);
}

#[test]
fn dropping_the_pipeline_lands_what_it_accepted() {
    let inner = Gated::new(true, Duration::from_millis(5));
    {
        let p = WritePipeline::new(Arc::clone(&inner) as Arc<dyn Store>, 4).unwrap();
        for i in 0..4u8 {
            p.put(tables::ENTITY, &[i], 1, &[i]).unwrap();
        }
    }
    assert_eq!(inner.writes.load(Ordering::SeqCst), 4);
    assert_eq!(inner.inner.get(tables::ENTITY, &[3]).unwrap().unwrap().data, [3]);
}

/// Reads of what it wrote or read before cost the inner store nothing: a sole writer's
/// saves read their own objects back without a round trip.
#[test]
fn what_it_wrote_or_read_is_answered_without_the_inner_store() {
    let inner = Gated::new(true, Duration::ZERO);
    let p = WritePipeline::new(Arc::clone(&inner) as Arc<dyn Store>, 2).unwrap();
    p.put(tables::ENTITY, b"w", 1, b"written").unwrap();
    p.settle().unwrap();
    assert_eq!(p.get(tables::ENTITY, b"w").unwrap().unwrap().data, b"written");
    assert_eq!(p.get(tables::ENTITY, b"r").unwrap(), None);
    assert_eq!(inner.reads.load(Ordering::SeqCst), 1, "only the unknown key was read");
    assert_eq!(p.get(tables::ENTITY, b"r").unwrap(), None);
    let got = p.multi_get(tables::ENTITY, &[b"w", b"r", b"x"]).unwrap();
    assert_eq!(got.iter().filter(|o| o.is_some()).count(), 1);
    assert_eq!(inner.reads.load(Ordering::SeqCst), 2, "one multi_get for the one unknown key");
    // Without a cache, every read that no batch in flight answers reaches the inner store.
    let bare = WritePipeline::with_cache(Arc::clone(&inner) as Arc<dyn Store>, 2, 0).unwrap();
    bare.get(tables::ENTITY, b"w").unwrap();
    bare.get(tables::ENTITY, b"w").unwrap();
    assert_eq!(inner.reads.load(Ordering::SeqCst), 4);
}

/// A store that panics in `write` fails the line: nobody waits forever for a batch that
/// will never land.
#[test]
fn a_store_that_panics_stops_the_line_instead_of_hanging_it() {
    let inner = Gated::new(true, Duration::ZERO);
    inner.panics.store(true, Ordering::SeqCst);
    let p = WritePipeline::new(Arc::clone(&inner) as Arc<dyn Store>, 2).unwrap();
    p.put(tables::ENTITY, b"a", 1, b"1").unwrap();
    let e = p.settle().unwrap_err();
    assert!(e.to_string().contains("panicked"), "{e}");
    assert!(p.put(tables::ENTITY, b"b", 1, b"2").is_err());
}

/// A read that crosses a write of the same key (it began before the write was accepted and
/// answers after it landed) must not cache its older answer; a read that crosses a write of
/// other keys is cached (reads ahead run while saves land, 20 a second).
#[test]
fn a_read_crossing_a_write_caches_only_what_the_write_did_not_change() {
    for cache in [1usize << 20, 200] {
        let inner = Gated::new(true, Duration::ZERO);
        inner.hold_reads.store(true, Ordering::SeqCst);
        inner.inner.put(tables::ENTITY, b"k", 1, b"old").unwrap();
        inner.inner.put(tables::ENTITY, b"other", 1, b"same").unwrap();
        let p = WritePipeline::with_cache(Arc::clone(&inner) as Arc<dyn Store>, 2, cache).unwrap();
        let reader = {
            let p = Arc::clone(&p);
            std::thread::spawn(move || p.multi_get(tables::ENTITY, &[b"k", b"other"]).unwrap())
        };
        while inner.reads.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        p.put(tables::ENTITY, b"k", 2, b"new").unwrap();
        p.settle().unwrap();
        inner.hold_reads.store(false, Ordering::SeqCst);
        let crossed = reader.join().unwrap();
        assert_eq!(crossed[0].as_ref().unwrap().data, b"old", "the read began before the write");
        let reads = inner.reads.load(Ordering::SeqCst);
        assert_eq!(p.get(tables::ENTITY, b"k").unwrap().unwrap().data, b"new", "cache {cache}");
        assert_eq!(p.get(tables::ENTITY, b"other").unwrap().unwrap().data, b"same");
        if cache > 1000 {
            assert_eq!(inner.reads.load(Ordering::SeqCst), reads, "both answered from memory");
        }
    }
}

/// When the cache lets entries go while a read is out (it filled up), the read's answers are
/// not cached: a write it crossed may be among what the cache forgot.
#[test]
fn a_read_crossing_a_cache_that_emptied_caches_nothing() {
    let inner = Gated::new(true, Duration::ZERO);
    inner.hold_reads.store(true, Ordering::SeqCst);
    inner.inner.put(tables::ENTITY, b"k", 1, b"old").unwrap();
    // Room for about two small objects.
    let p = WritePipeline::with_cache(Arc::clone(&inner) as Arc<dyn Store>, 2, 170).unwrap();
    let reader = {
        let p = Arc::clone(&p);
        std::thread::spawn(move || p.get(tables::ENTITY, b"k").unwrap())
    };
    while inner.reads.load(Ordering::SeqCst) == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    p.put(tables::ENTITY, b"k", 2, b"new").unwrap();
    for i in 0..4u8 {
        p.put(tables::ENTITY, &[b'x', i], 1, b"filler").unwrap();
    }
    p.settle().unwrap();
    inner.hold_reads.store(false, Ordering::SeqCst);
    assert_eq!(reader.join().unwrap().unwrap().data, b"old");
    assert_eq!(p.get(tables::ENTITY, b"k").unwrap().unwrap().data, b"new");
}
