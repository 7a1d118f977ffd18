//! [`WritePipeline`]: a store whose writes return once queued and land in order from a thread
//! of their own, at most `depth` in flight, so that a game's tick never waits on a network
//! round trip for its save.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use crate::{
    Batch, Error, KeyRange, Object, Op, Parts, ReadView, Result, Scan, Store, cut_parts,
    cut_parts_then,
};

/// Where a key's value in the batches in flight is: the sequence number of the newest batch
/// writing it, that batch, and the index of its operation (the bytes are not copied again).
type Pending = (u64, Arc<Batch>, usize);

/// The object operation `i` of `batch` leaves (`None`: deleted).
fn op_value(batch: &Batch, i: usize) -> Option<Object> {
    match batch.ops().get(i)? {
        Op::Put { version, data, .. } => Some(Object { version: *version, data: data.clone() }),
        Op::Delete { .. } => None,
    }
}

/// What the writer thread and the callers share.
#[derive(Default)]
struct State {
    /// The last batch accepted (0: none yet).
    submitted: u64,
    /// The last batch the inner store acknowledged.
    durable: u64,
    /// Batches accepted and not yet taken by the writer thread.
    queue: VecDeque<(u64, Arc<Batch>)>,
    /// The newest value of every key written by a batch in flight.
    overlay: HashMap<(String, Vec<u8>), Pending>,
    /// The first failure: the batch's sequence number and the inner store's error.
    failed: Option<(u64, String)>,
    /// The error itself, once, for [`WritePipeline::failure`].
    error: Option<Error>,
    /// Time writers spent waiting for room since the last `take_waited`.
    waited: Duration,
    /// Objects written (landed) or read before, by table and key (`None`: absent).
    cache: HashMap<(String, Vec<u8>), Option<Object>>,
    /// The bytes of `cache`'s keys and values.
    cache_bytes: usize,
    /// Times the cache lost entries (emptied when full or on a failure, an object too big
    /// for it dropped): a read that began before the last loss may be older than a write
    /// the cache no longer shows, so it is not cached.
    losses: u64,
    stopping: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled whenever a batch is queued, lands or fails, and on stopping.
    changed: Condvar,
}

impl State {
    /// What a read of `id` answers without the inner store: a batch in flight's value, else
    /// the cached one.
    fn known(&self, id: &(String, Vec<u8>)) -> Option<Option<Object>> {
        match self.overlay.get(id) {
            Some((_, batch, i)) => Some(op_value(batch, *i)),
            None => self.cache.get(id).cloned(),
        }
    }

    /// Caches `value` under `id`, emptying the cache first when it would pass `limit` bytes.
    fn remember(&mut self, id: (String, Vec<u8>), value: Option<Object>, limit: usize) {
        let size = |id: &(String, Vec<u8>), v: &Option<Object>| {
            id.0.len() + id.1.len() + v.as_ref().map_or(0, |o| o.data.len()) + 64
        };
        let bytes = size(&id, &value);
        if bytes > limit {
            if let Some(old) = self.cache.remove(&id) {
                self.cache_bytes -= size(&id, &old);
            }
            self.losses += 1;
            return;
        }
        if self.cache_bytes + bytes > limit {
            self.cache.clear();
            self.cache_bytes = 0;
            self.losses += 1;
        }
        if let Some(old) = self.cache.insert(id.clone(), value) {
            self.cache_bytes -= size(&id, &old);
        }
        self.cache_bytes += bytes;
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed.wait(g).unwrap_or_else(|e| e.into_inner())
    }
}

/// A store whose writes return once queued and land in order from a thread of their own, at
/// most `depth` in flight.
///
/// # What it guarantees
///
/// - **Order.** Batches are applied to the inner store one at a time, in the order
///   [`write`](Store::write) accepted them; batch *n* is applied only after batch *n − 1*
///   succeeded.
/// - **Reads see every accepted write.** `get`, `multi_get` and `get_parts` answer from the
///   batches in flight first (the newest write of a key wins), then from the objects it
///   wrote or read before (up to [`cache_bytes`](WritePipeline::with_cache), 64 MiB by
///   default), then from the inner store: code that reads what it just wrote (a tick save
///   reading its chunks ahead) sees it, although the inner store may not hold it yet, and
///   pays no round trip for it. Scans, snapshots, `flush` and `sync` wait until every batch
///   in flight has landed, then ask the inner store.
/// - **Durability is reported, not assumed.** `write` returning `Ok` means *accepted*, not
///   durable. [`durable`](WritePipeline::durable) is the sequence number of the last batch
///   the inner store acknowledged (with the inner store's own guarantees: a synced batch on
///   PostgreSQL is on the synchronous standby too); [`submitted`](WritePipeline::submitted)
///   the last accepted. Report a save to a player only once `durable` has reached it.
/// - **Bounded.** At most `depth` batches are in flight: a `write` beyond that waits for the
///   oldest to land (backpressure; [`take_waited`](WritePipeline::take_waited) says for how
///   long), so a store that falls behind slows its writer instead of filling memory.
/// - **A failure stops the line.** When the inner store fails a batch (a lost connection, a
///   fenced precondition), that batch's outcome is the inner store's (on PostgreSQL:
///   unknown, whole or absent), and the batches queued after it are dropped unapplied: they
///   were built on a state that may never have existed. Every later `write` fails with
///   [`Error::Poisoned`] naming the first failure, which [`failure`](WritePipeline::failure)
///   returns. Reads then go to the inner store alone. Once the writer has read back what it
///   holds (its state was ahead of the store), [`resume`](WritePipeline::resume) opens the
///   line again; or reopen the store.
/// - **Scans see every accepted write too.** A scan merges the batches in flight when it
///   began over the inner store's scan (a range no batch in flight writes is the inner
///   store's scan as it is, streamed).
///
/// # What it does not guarantee
///
/// - Reads of objects changed by another writer: the pipeline must be the inner store's only
///   writer, as a store's lock makes it (terrane's backends; on PostgreSQL a writer that lost
///   its lock finds every later batch refused by the writer epoch, which stops the line: no
///   batch built on a stale read lands). Where several writers share a store, each one's
///   keys its own (the areas of a shared world), the tables others write into are kept out
///   of the cache ([`with_uncached`](WritePipeline::with_uncached)) and the cache is
///   [forgotten](WritePipeline::forget_cache) when keys change owner.
/// - That an accepted batch is valid: the inner store validates it when it applies it, and
///   an invalid batch stops the line like any other failure.
/// - Snapshots of batches in flight: they wait for them instead.
/// - Durability of anything on drop: dropping the pipeline applies the batches still queued
///   (the thread finishes them), without reporting their outcome; call
///   [`settle`](WritePipeline::settle) first to know it.
pub struct WritePipeline {
    inner: Arc<dyn Store>,
    shared: Arc<Shared>,
    depth: u64,
    cache_limit: usize,
    /// Tables whose reads and landed writes are not cached (others write into them).
    uncached: HashSet<String>,
    thread: Option<thread::JoinHandle<()>>,
}

impl std::fmt::Debug for WritePipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.shared.lock();
        f.debug_struct("WritePipeline")
            .field("depth", &self.depth)
            .field("submitted", &s.submitted)
            .field("durable", &s.durable)
            .field("failed", &s.failed)
            .finish_non_exhaustive()
    }
}

impl WritePipeline {
    /// Writes to `inner` from a new thread, at most `depth` batches in flight (at least 1),
    /// keeping up to 64 MiB of the objects it wrote or read to answer reads.
    pub fn new(inner: Arc<dyn Store>, depth: usize) -> Result<Arc<WritePipeline>> {
        Self::with_cache(inner, depth, DEFAULT_CACHE_BYTES)
    }

    /// [`new`](Self::new) keeping up to `cache_bytes` of the objects it wrote or read (0: none;
    /// every read that no batch in flight answers goes to the inner store).
    pub fn with_cache(
        inner: Arc<dyn Store>,
        depth: usize,
        cache_bytes: usize,
    ) -> Result<Arc<WritePipeline>> {
        Self::with_uncached(inner, depth, cache_bytes, &[])
    }

    /// [`with_cache`](Self::with_cache), keeping `uncached` tables out of the cache: every
    /// read of them that no batch in flight answers goes to the inner store. For tables other
    /// writers write into (a shared world's entities handed off into this server's areas,
    /// its leases and presence records).
    pub fn with_uncached(
        inner: Arc<dyn Store>,
        depth: usize,
        cache_bytes: usize,
        uncached: &[&str],
    ) -> Result<Arc<WritePipeline>> {
        let shared =
            Arc::new(Shared { state: Mutex::new(State::default()), changed: Condvar::new() });
        let uncached: HashSet<String> = uncached.iter().map(|t| t.to_string()).collect();
        let (s, store, skip) = (Arc::clone(&shared), Arc::clone(&inner), uncached.clone());
        let thread = thread::Builder::new()
            .name("terrane-write-pipeline".into())
            .spawn(move || apply(&*store, &s, cache_bytes, &skip))?;
        Ok(Arc::new(WritePipeline {
            inner,
            shared,
            depth: depth.max(1) as u64,
            cache_limit: cache_bytes,
            uncached,
            thread: Some(thread),
        }))
    }

    /// The store the batches land in.
    pub fn inner(&self) -> &Arc<dyn Store> {
        &self.inner
    }

    /// The most batches in flight at once.
    pub fn depth(&self) -> usize {
        self.depth as usize
    }

    /// The sequence number of the last batch accepted (1 for the first; 0: none yet).
    pub fn submitted(&self) -> u64 {
        self.shared.lock().submitted
    }

    /// The sequence number of the last batch the inner store acknowledged: it and every
    /// batch before it have landed.
    pub fn durable(&self) -> u64 {
        self.shared.lock().durable
    }

    /// Batches accepted and not acknowledged yet.
    pub fn in_flight(&self) -> u64 {
        let s = self.shared.lock();
        if s.failed.is_some() { 0 } else { s.submitted - s.durable }
    }

    /// How long writes waited for room since the last call (the store falling behind).
    pub fn take_waited(&self) -> Duration {
        std::mem::take(&mut self.shared.lock().waited)
    }

    /// The first failure, once: the error the inner store returned for the batch that
    /// stopped the line, and that batch's sequence number. `None` while none failed (and on
    /// later calls).
    pub fn failure(&self) -> Option<(u64, Error)> {
        let mut s = self.shared.lock();
        let seq = s.failed.as_ref()?.0;
        s.error.take().map(|e| (seq, e))
    }

    /// `Ok` while no batch failed; otherwise the [`Error::Poisoned`] every later write gets.
    pub fn check(&self) -> Result<()> {
        match &self.shared.lock().failed {
            Some((seq, msg)) => Err(poisoned(*seq, msg)),
            None => Ok(()),
        }
    }

    /// Opens the line again after a failure: later writes are accepted and land. The batches
    /// dropped by the failure stay dropped (they count as landed in
    /// [`durable`](Self::durable), which moves to [`submitted`](Self::submitted)); call it
    /// only once the writer has read back what it holds, since its state was ahead of the
    /// store. Returns the failure's sequence number (`None`: nothing had failed; nothing
    /// changes).
    pub fn resume(&self) -> Option<u64> {
        let mut s = self.shared.lock();
        let (seq, _) = s.failed.take()?;
        s.error = None;
        s.durable = s.submitted;
        drop(s);
        self.shared.changed.notify_all();
        Some(seq)
    }

    /// Empties the cache (batches in flight still answer reads of what they write): for a
    /// writer whose keys changed owner, such as a shared world's server taking an area that
    /// another server wrote meanwhile.
    pub fn forget_cache(&self) {
        let mut s = self.shared.lock();
        s.cache.clear();
        s.cache_bytes = 0;
        s.losses += 1;
    }

    /// Waits until every batch accepted so far has landed; the first failure's error when
    /// one failed.
    pub fn settle(&self) -> Result<()> {
        let mut s = self.shared.lock();
        loop {
            if let Some((seq, msg)) = &s.failed {
                return Err(poisoned(*seq, msg));
            }
            if s.durable == s.submitted {
                return Ok(());
            }
            s = self.shared.wait(s);
        }
    }

    /// What a read of `key` in `table` answers without the inner store (a batch in flight's
    /// value, else the cached one), and the cache's losses when asked.
    fn known(&self, table: &str, key: &[u8]) -> (Option<Option<Object>>, u64) {
        let s = self.shared.lock();
        (s.known(&(table.to_string(), key.to_vec())), s.losses)
    }

    /// Caches what the inner store answered for `keys` of `table` by a read that began when
    /// the cache had lost entries `asked` times.
    ///
    /// A key written by a batch accepted after the read began is either still in flight (in
    /// the overlay) or landed (in the cache, unless the cache lost entries since): so a key
    /// found in neither, with no loss since, was not written since, and the read's answer is
    /// its value. Keys in either are left as they are (what they hold is as new or newer).
    fn note_read<'k>(
        &self,
        table: &str,
        found: impl IntoIterator<Item = (&'k [u8], &'k Option<Object>)>,
        asked: u64,
    ) {
        if self.cache_limit == 0 || self.uncached.contains(table) {
            return;
        }
        let mut s = self.shared.lock();
        for (key, value) in found {
            // Checked before each key: remembering one may empty the cache.
            if s.losses != asked || s.failed.is_some() {
                return;
            }
            let id = (table.to_string(), key.to_vec());
            if !s.overlay.contains_key(&id) && !s.cache.contains_key(&id) {
                s.remember(id, value.clone(), self.cache_limit);
            }
        }
    }
}

/// The cache of a [`WritePipeline::new`]: 64 MiB.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

fn poisoned(seq: u64, msg: &str) -> Error {
    Error::Poisoned(format!(
        "pipelined write {seq} failed ({msg}); the writes queued after it were not applied"
    ))
}

/// The writer thread: applies queued batches in order until stopped (finishing the queue). A
/// batch that fails drops the queue and stops the line until [`WritePipeline::resume`].
fn apply(store: &dyn Store, shared: &Shared, cache_limit: usize, uncached: &HashSet<String>) {
    loop {
        let (seq, batch) = {
            let mut s = shared.lock();
            loop {
                if let Some(next) = s.queue.pop_front() {
                    break next;
                }
                if s.stopping {
                    return;
                }
                s = shared.wait(s);
            }
        };
        // A store that panics fails the line instead of leaving every waiter waiting.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| store.write(&batch)))
            .unwrap_or_else(|_| Err(Error::Poisoned("the store panicked writing a batch".into())));
        let mut s = shared.lock();
        match result {
            Ok(()) => {
                s.durable = seq;
                let landed: Vec<(String, Vec<u8>)> = s
                    .overlay
                    .iter()
                    .filter(|(_, (at, _, _))| *at == seq)
                    .map(|(k, _)| k.clone())
                    .collect();
                for id in landed {
                    if let Some((_, batch, i)) = s.overlay.remove(&id)
                        && cache_limit > 0
                        && !uncached.contains(&id.0)
                    {
                        s.remember(id, op_value(&batch, i), cache_limit);
                    }
                }
            }
            Err(e) => {
                s.failed = Some((seq, e.to_string()));
                s.error = Some(e);
                s.queue.clear();
                s.overlay.clear();
                s.cache.clear();
                s.cache_bytes = 0;
                s.losses += 1;
                shared.changed.notify_all();
                continue;
            }
        }
        shared.changed.notify_all();
    }
}

impl Drop for WritePipeline {
    fn drop(&mut self) {
        self.shared.lock().stopping = true;
        self.shared.changed.notify_all();
        if let Some(h) = self.thread.take() {
            let _ = h.join();
        }
    }
}

impl ReadView for WritePipeline {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        let (known, asked) = self.known(table, key);
        if let Some(o) = known {
            return Ok(o);
        }
        let found = self.inner.get(table, key)?;
        self.note_read(table, [(key, &found)], asked);
        Ok(found)
    }

    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        let (mut out, asked): (Vec<Option<Option<Object>>>, u64) = {
            let s = self.shared.lock();
            let out = keys.iter().map(|k| s.known(&(table.to_string(), k.to_vec()))).collect();
            (out, s.losses)
        };
        let rest: Vec<&[u8]> =
            keys.iter().zip(&out).filter(|(_, o)| o.is_none()).map(|(k, _)| *k).collect();
        if !rest.is_empty() {
            let found = self.inner.multi_get(table, &rest)?;
            self.note_read(table, rest.iter().copied().zip(&found), asked);
            let mut found = found.into_iter();
            for o in out.iter_mut().filter(|o| o.is_none()) {
                *o = Some(found.next().flatten());
            }
        }
        Ok(out.into_iter().map(Option::flatten).collect())
    }

    fn get_parts(&self, table: &str, key: &[u8], ranges: &[Range<u64>]) -> Result<Option<Parts>> {
        match self.known(table, key).0 {
            Some(o) => Ok(o.map(|o| cut_parts(o.version, &o.data, ranges))),
            None => self.inner.get_parts(table, key, ranges),
        }
    }

    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        match self.known(table, key).0 {
            Some(o) => Ok(o.map(|o| cut_parts_then(o.version, &o.data, first, then))),
            None => self.inner.get_parts_then(table, key, first, then),
        }
    }

    /// The inner store's scan with the batches in flight when it began merged over it (their
    /// values win; their deletions hide keys). Streams the inner scan as it is when no batch
    /// in flight writes the range.
    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        // Taken before the inner scan starts: a batch landing during it is either seen by the
        // inner scan or still here (the newest value of each key it writes).
        let in_flight: BTreeMap<Vec<u8>, Option<Object>> = {
            let s = self.shared.lock();
            s.overlay
                .iter()
                .filter(|((t, k), _)| t == table && range.contains(k))
                .map(|((_, k), (_, batch, i))| (k.clone(), op_value(batch, *i)))
                .collect()
        };
        if in_flight.is_empty() {
            return self.inner.scan(table, range);
        }
        let mut merged: BTreeMap<Vec<u8>, Option<Object>> = BTreeMap::new();
        let mut errors = Vec::new();
        for e in self.inner.scan(table, range)? {
            match e {
                Ok((k, o)) => {
                    merged.insert(k, Some(o));
                }
                Err(e) => errors.push(Err(e)),
            }
        }
        merged.extend(in_flight);
        let entries = merged.into_iter().filter_map(|(k, o)| o.map(|o| Ok((k, o))));
        Ok(Box::new(errors.into_iter().chain(entries)))
    }
}

impl Store for WritePipeline {
    fn signature(&self) -> &str {
        self.inner.signature()
    }

    fn tables(&self) -> Vec<String> {
        self.inner.tables()
    }

    /// Accepts `batch` for the writer thread and returns: `Ok` means accepted, not durable
    /// (see [`WritePipeline::durable`]). Waits while `depth` batches are in flight.
    fn write(&self, batch: &Batch) -> Result<()> {
        // The one copy of the batch, made before taking the lock the writer thread needs.
        let batch = Arc::new(batch.clone());
        let mut s = self.shared.lock();
        let started = Instant::now();
        let mut waited = false;
        loop {
            if let Some((seq, msg)) = &s.failed {
                return Err(poisoned(*seq, msg));
            }
            if s.submitted - s.durable < self.depth {
                break;
            }
            waited = true;
            s = self.shared.wait(s);
        }
        if waited {
            s.waited += started.elapsed();
        }
        s.submitted += 1;
        let seq = s.submitted;
        for (i, op) in batch.ops().iter().enumerate() {
            let (Op::Put { table, key, .. } | Op::Delete { table, key }) = op;
            s.overlay.insert((table.clone(), key.clone()), (seq, Arc::clone(&batch), i));
        }
        s.queue.push_back((seq, batch));
        drop(s);
        self.shared.changed.notify_all();
        Ok(())
    }

    fn snapshot(&self) -> Result<Box<dyn ReadView + '_>> {
        self.settle()?;
        self.inner.snapshot()
    }

    fn flush(&self) -> Result<()> {
        self.settle()?;
        self.inner.flush()
    }

    fn sync(&self) -> Result<()> {
        self.settle()?;
        self.inner.sync()
    }

    fn cache_bytes(&self) -> Option<u64> {
        self.inner.cache_bytes()
    }
}
