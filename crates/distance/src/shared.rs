//! [`SharedDistanceGraph`]: the graph and its claims behind one lock, for many threads.

use std::path::Path;
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use terrane_section::ColumnPos;

use crate::{Claims, DistanceGraph, Error, Hit};

/// The graph and its [`Claims`], shared by threads.
#[derive(Debug, Default)]
struct State {
    graph: DistanceGraph,
    claims: Claims,
}

/// A [`DistanceGraph`] plus its [`Claims`] behind one reader-writer lock, for many threads
/// marking completions while workers search and claim.
///
/// # Why one lock and not shards
///
/// Every write is a few tens of nanoseconds (four levels below one hash lookup), so a writer
/// holds the lock far shorter than it takes to hand a chunk between threads, and
/// [`complete_many`](Self::complete_many) amortises the lock over a batch. A search, on the
/// other hand, walks the disc across roots in distance order: sharding by root would make
/// every search take every shard's lock anyway, and sharding below the roots would break the
/// canonical single-owner tree. Searching and claiming happen under one write lock, so two
/// workers never receive the same chunk; counting and iterating take the read lock and run
/// concurrently with each other.
///
/// Poisoning is ignored: the graph is consistent after every completed call, and a panic in a
/// caller's closure cannot leave it half-updated.
#[derive(Debug, Default)]
pub struct SharedDistanceGraph {
    inner: RwLock<State>,
    /// Held from encoding to the rename, so concurrent saves land in the order they encoded.
    save: Mutex<()>,
}

impl SharedDistanceGraph {
    /// Shares `graph`, with no claims.
    pub fn new(graph: DistanceGraph) -> Self {
        Self { inner: RwLock::new(State { graph, claims: Claims::new() }), save: Mutex::new(()) }
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// The graph, dropping the claims.
    pub fn into_inner(self) -> DistanceGraph {
        self.inner.into_inner().unwrap_or_else(PoisonError::into_inner).graph
    }

    /// Marks `p` completed and releases its claim. Returns whether it was newly completed.
    ///
    /// # Errors
    /// [`Error::OutOfRange`].
    pub fn complete(&self, p: ColumnPos) -> Result<bool, Error> {
        let mut s = self.write();
        let added = s.graph.insert(p)?;
        s.claims.release(p);
        Ok(added)
    }

    /// [`complete`](Self::complete) for many chunks under one lock. Returns how many were new.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] at the first chunk out of range (the ones before it are applied).
    pub fn complete_many(&self, ps: impl IntoIterator<Item = ColumnPos>) -> Result<u64, Error> {
        let mut s = self.write();
        let mut n = 0;
        for p in ps {
            n += s.graph.insert(p)? as u64;
            s.claims.release(p);
        }
        Ok(n)
    }

    /// Marks column `p` not generated any more (its chunks were removed: a trim): it becomes
    /// work again. Returns whether it was generated.
    ///
    /// # Errors
    /// [`Error::OutOfRange`].
    pub fn remove(&self, p: ColumnPos) -> Result<bool, Error> {
        self.write().graph.remove(p)
    }

    /// Releases the claim on `p` without completing it (generation failed or was cancelled):
    /// the chunk becomes a candidate again. Returns whether it was claimed.
    pub fn abandon(&self, p: ColumnPos) -> bool {
        self.write().claims.release(p)
    }

    /// Finds the nearest unclaimed work in `D(c, r)` and claims it, atomically (see
    /// [`DistanceGraph::nearest_unclaimed`]).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] when the centre is out of range.
    pub fn claim_nearest(&self, c: ColumnPos, r: u32) -> Result<Option<Hit>, Error> {
        let mut s = self.write();
        let hit = s.graph.nearest_unclaimed(c, r, &s.claims)?;
        if let Some(h) = &hit {
            s.claims.claim(h);
        }
        Ok(hit)
    }

    /// Over several `(centre, radius)` pairs (players), finds the unclaimed work with the
    /// smallest squared distance to its own centre (ties: the earlier pair) and claims it.
    /// Returns the pair's index and the hit.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] when a centre is out of range.
    pub fn claim_nearest_any(
        &self,
        centres: &[(ColumnPos, u32)],
    ) -> Result<Option<(usize, Hit)>, Error> {
        let mut s = self.write();
        let mut best: Option<(usize, Hit)> = None;
        for (i, &(c, r)) in centres.iter().enumerate() {
            if let Some(h) = s.graph.nearest_unclaimed(c, r, &s.claims)?
                && best.is_none_or(|(_, b)| h.d2 < b.d2)
            {
                best = Some((i, h));
            }
        }
        if let Some((_, h)) = &best {
            s.claims.claim(h);
        }
        Ok(best)
    }

    /// Is `p` completed?
    pub fn contains(&self, p: ColumnPos) -> bool {
        self.read().graph.contains(p)
    }

    /// Number of completed chunks.
    pub fn len(&self) -> u64 {
        self.read().graph.len()
    }

    /// Is nothing completed?
    pub fn is_empty(&self) -> bool {
        self.read().graph.is_empty()
    }

    /// Number of claimed chunks.
    pub fn claimed_chunks(&self) -> u64 {
        self.read().claims.chunks()
    }

    /// See [`DistanceGraph::count_missing`].
    ///
    /// # Errors
    /// [`Error::OutOfRange`] when the centre is out of range.
    pub fn count_missing(&self, c: ColumnPos, r: u32) -> Result<u64, Error> {
        self.read().graph.count_missing(c, r)
    }

    /// See [`DistanceGraph::count_completed`].
    ///
    /// # Errors
    /// [`Error::OutOfRange`] when the centre is out of range.
    pub fn count_completed(&self, c: ColumnPos, r: u32) -> Result<u64, Error> {
        self.read().graph.count_completed(c, r)
    }

    /// Runs `f` on the graph under the read lock (for iteration or several queries at one
    /// consistent state). Writers wait until it returns.
    pub fn with_graph<T>(&self, f: impl FnOnce(&DistanceGraph) -> T) -> T {
        f(&self.read().graph)
    }

    /// The canonical encoding of the current state (claims are not persisted: in-flight work
    /// is simply found again after a restart).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.read().graph.to_bytes()
    }

    /// Saves atomically (see [`DistanceGraph::save`]). Encodes under the read lock, writes the
    /// file after releasing it, so completions are not blocked by the disk. Concurrent saves
    /// are serialised: the file always ends as the state of the last save to encode.
    ///
    /// # Errors
    /// [`Error::Io`].
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let _one_save_at_a_time = self.save.lock().unwrap_or_else(PoisonError::into_inner);
        let bytes = self.to_bytes();
        crate::codec::write_atomic(path.as_ref(), &bytes)
    }
}
