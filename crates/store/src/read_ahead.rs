//! [`ReadAhead`]: reads run on a thread of their own, so that a game's tick asks for what it
//! will need and finds it in a [`WritePipeline`](crate::WritePipeline)'s cache a tick later
//! instead of waiting a network round trip for it.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;

use crate::Result;

/// What a job's error may be: any error (the job reads through whatever layer it likes).
pub type JobError = Box<dyn std::error::Error + Send + Sync>;

/// A read to run ahead: it reads through a store whose cache keeps what it read.
type Job = Box<dyn FnOnce() -> std::result::Result<(), JobError> + Send>;

#[derive(Default)]
struct State {
    /// The last job accepted (0: none yet).
    submitted: u64,
    /// The last job finished (with or without success): it and every job before it.
    finished: u64,
    /// Jobs that failed since the thread started.
    failed: u64,
    /// The last failed job's error.
    last_error: Option<String>,
    queue: VecDeque<(u64, Job)>,
    stopping: bool,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A thread that runs reads ahead of need, one after another in the order asked.
///
/// # What it guarantees
///
/// - **Order.** Jobs run one at a time in the order [`submit`](Self::submit) accepted them;
///   [`is_done`](Self::is_done) of a ticket is true once that job and every job before it
///   finished.
/// - **A failed read costs a round trip, never a wrong answer.** A job's error is counted
///   ([`failed`](Self::failed)) and otherwise dropped: the read it was warming runs again
///   when it is needed, and reports its error then, to the caller who can act on it.
/// - **Dropping it stops it**: jobs not started are dropped, the running one finishes.
///
/// # What it does not guarantee
///
/// - That anything is kept: a job warms a cache (a [`WritePipeline`](crate::WritePipeline)'s),
///   whose own rules say what it keeps and for how long. Without such a cache a job only
///   costs a read.
/// - A bound on the queue: the caller asks for what it will need (a player's view), not more.
pub struct ReadAhead {
    shared: Arc<Shared>,
    thread: Option<thread::JoinHandle<()>>,
}

impl std::fmt::Debug for ReadAhead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.shared.lock();
        f.debug_struct("ReadAhead")
            .field("submitted", &s.submitted)
            .field("finished", &s.finished)
            .field("failed", &s.failed)
            .finish_non_exhaustive()
    }
}

impl ReadAhead {
    /// Starts the thread.
    pub fn new() -> Result<ReadAhead> {
        let shared =
            Arc::new(Shared { state: Mutex::new(State::default()), changed: Condvar::new() });
        let s = Arc::clone(&shared);
        let thread =
            thread::Builder::new().name("terrane-read-ahead".into()).spawn(move || run(&s))?;
        Ok(ReadAhead { shared, thread: Some(thread) })
    }

    /// Queues `job` and returns its ticket for [`is_done`](Self::is_done).
    pub fn submit(
        &self,
        job: impl FnOnce() -> std::result::Result<(), JobError> + Send + 'static,
    ) -> u64 {
        let mut s = self.shared.lock();
        s.submitted += 1;
        let ticket = s.submitted;
        s.queue.push_back((ticket, Box::new(job)));
        drop(s);
        self.shared.changed.notify_all();
        ticket
    }

    /// Whether job `ticket` and every job before it finished.
    pub fn is_done(&self, ticket: u64) -> bool {
        self.shared.lock().finished >= ticket
    }

    /// Jobs accepted and not finished.
    pub fn pending(&self) -> u64 {
        let s = self.shared.lock();
        s.submitted - s.finished
    }

    /// Jobs that returned an error (or panicked) since the thread started.
    pub fn failed(&self) -> u64 {
        self.shared.lock().failed
    }

    /// The last failed job's error, as text.
    pub fn last_error(&self) -> Option<String> {
        self.shared.lock().last_error.clone()
    }

    /// Waits until every job accepted so far finished.
    pub fn wait(&self) {
        let mut s = self.shared.lock();
        while s.finished < s.submitted {
            s = self.shared.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }
}

fn run(shared: &Shared) {
    loop {
        let (ticket, job) = {
            let mut s = shared.lock();
            loop {
                if s.stopping {
                    return;
                }
                if let Some(next) = s.queue.pop_front() {
                    break next;
                }
                s = shared.changed.wait(s).unwrap_or_else(|e| e.into_inner());
            }
        };
        let outcome = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)) {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e.to_string()),
            Err(_) => Some("a read ahead panicked".to_string()),
        };
        let mut s = shared.lock();
        s.finished = ticket;
        if let Some(e) = outcome {
            s.failed += 1;
            s.last_error = Some(e);
        }
        drop(s);
        shared.changed.notify_all();
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        self.shared.lock().stopping = true;
        self.shared.changed.notify_all();
        if let Some(h) = self.thread.take() {
            let _ = h.join();
        }
    }
}
