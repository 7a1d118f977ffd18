//! [`FaultProxy`]: a loopback TCP proxy that shapes and breaks the network between a client
//! and a server, for tests (in the spirit of toxiproxy; this kernel has no `tc netem`).

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Where the proxy forwards its connections.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Upstream {
    /// A TCP address.
    Tcp(SocketAddr),
    /// A Unix socket's path (PostgreSQL's is `<socket dir>/.s.PGSQL.5432`).
    Unix(PathBuf),
}

/// One direction of the link: what each chunk of bytes crossing it meets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Link {
    /// The one-way delay.
    pub delay: Duration,
    /// Up to this much more delay, at random per chunk (order is kept).
    pub jitter: Duration,
    /// Bytes per second; `None`: as fast as loopback.
    pub bytes_per_second: Option<u64>,
}

impl Link {
    /// A link that only delays, by `delay` each way.
    pub fn delayed(delay: Duration) -> Self {
        Link { delay, ..Link::default() }
    }
}

/// A direction through the proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the client to the upstream server.
    ToServer,
    /// From the upstream server to the client.
    ToClient,
}

/// The settings and open connections the proxy's threads share.
#[derive(Debug, Default)]
struct Shared {
    to_server: Mutex<Link>,
    to_client: Mutex<Link>,
    refuse: AtomicBool,
    cut: AtomicBool,
    stopping: AtomicBool,
    next_id: AtomicU64,
    accepted: AtomicU64,
    /// Client-initiated exchanges: bytes towards the server after bytes towards the client
    /// (or first) on a connection.
    round_trips: AtomicU64,
    /// Open connections: both sockets, to shut them down on a reset.
    open: Mutex<HashMap<u64, (TcpStream, Side)>>,
}

impl Shared {
    fn link(&self, dir: Direction) -> Link {
        let m = match dir {
            Direction::ToServer => &self.to_server,
            Direction::ToClient => &self.to_client,
        };
        *m.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits while the link is cut; `false` when the proxy stops meanwhile.
    fn wait_for_heal(&self) -> bool {
        while self.cut.load(Ordering::SeqCst) {
            if self.stopping.load(Ordering::SeqCst) {
                return false;
            }
            thread::sleep(Duration::from_millis(2));
        }
        !self.stopping.load(Ordering::SeqCst)
    }
}

/// The upstream side of a connection.
#[derive(Debug)]
enum Side {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Side {
    fn connect(to: &Upstream) -> io::Result<Side> {
        Ok(match to {
            Upstream::Tcp(a) => {
                let s = TcpStream::connect(a)?;
                s.set_nodelay(true)?;
                Side::Tcp(s)
            }
            Upstream::Unix(p) => Side::Unix(UnixStream::connect(p)?),
        })
    }

    fn try_clone(&self) -> io::Result<Side> {
        Ok(match self {
            Side::Tcp(s) => Side::Tcp(s.try_clone()?),
            Side::Unix(s) => Side::Unix(s.try_clone()?),
        })
    }

    fn shutdown(&self, how: Shutdown) {
        let _ = match self {
            Side::Tcp(s) => s.shutdown(how),
            Side::Unix(s) => s.shutdown(how),
        };
    }
}

impl Read for Side {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Side::Tcp(s) => s.read(buf),
            Side::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Side {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Side::Tcp(s) => s.write(buf),
            Side::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Either end of a pump: the client's socket or the upstream's.
trait End: Read + Write + Send + 'static {
    fn close(&self, how: Shutdown);
}

impl End for TcpStream {
    fn close(&self, how: Shutdown) {
        let _ = self.shutdown(how);
    }
}

impl End for Side {
    fn close(&self, how: Shutdown) {
        self.shutdown(how);
    }
}

/// A loopback TCP proxy that delays, throttles, refuses, resets and partitions. Dropping it
/// stops accepting and shuts every open connection down.
///
/// The proxy listens on `127.0.0.1` and forwards each connection it accepts to its upstream
/// (a TCP address or a Unix socket, such as a [`PgServer`](super::PgServer)'s). Every
/// setting applies at once, to open connections as well as new ones:
///
/// - [`set_link`](FaultProxy::set_link): per direction, a one-way delay, a jitter (each chunk
///   of bytes waits `delay + [0, jitter)`, never overtaking an earlier one: TCP keeps order)
///   and a bandwidth;
/// - [`refuse_new`](FaultProxy::refuse_new): new connections are accepted and closed at
///   once, before a byte crosses (a server that turns clients away);
/// - [`reset_open`](FaultProxy::reset_open): every open connection is shut down on both
///   sides at once, mid-message if a message is crossing (a broken link, a middlebox reset);
/// - [`cut`](FaultProxy::cut) / [`heal`](FaultProxy::heal): a partition. Bytes in either
///   direction are held, not delivered, and new connections reach the upstream only after
///   the heal; connections stay open, so what was sent during the cut arrives after it (TCP
///   retransmits), unless a side gave up first.
///
/// What it does not model: packet loss and reordering (TCP hides both, as delay), and the
/// failure of a connect during a cut (the client's connect succeeds; its first exchange
/// waits for the heal).
///
/// ```no_run
/// use std::time::Duration;
/// use terrane_postgres::testing::{FaultProxy, Link, PgServer};
///
/// let server = PgServer::start()?;
/// let proxy = FaultProxy::start(server.upstream())?;
/// proxy.set_delay(Duration::from_millis(10)); // 20 ms round trips
/// let conninfo = server.conninfo_via(&proxy);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct FaultProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl FaultProxy {
    /// Listens on a free port of `127.0.0.1` and forwards to `upstream`, with no delay.
    pub fn start(upstream: Upstream) -> io::Result<FaultProxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
        let s = Arc::clone(&shared);
        thread::Builder::new()
            .name("fault-proxy-accept".into())
            .spawn(move || accept(listener, upstream, s))?;
        Ok(FaultProxy { addr, shared })
    }

    /// The address clients connect to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The port clients connect to (on `127.0.0.1`).
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Shapes one direction from now on (chunks already queued keep their time).
    pub fn set_link(&self, dir: Direction, link: Link) {
        let m = match dir {
            Direction::ToServer => &self.shared.to_server,
            Direction::ToClient => &self.shared.to_client,
        };
        *m.lock().unwrap_or_else(|e| e.into_inner()) = link;
    }

    /// Delays both directions by `each_way` (a round trip costs twice that), no jitter, no
    /// bandwidth limit.
    pub fn set_delay(&self, each_way: Duration) {
        self.set_link(Direction::ToServer, Link::delayed(each_way));
        self.set_link(Direction::ToClient, Link::delayed(each_way));
    }

    /// Accepts new connections and closes them at once (`true`), or forwards them again.
    pub fn refuse_new(&self, refuse: bool) {
        self.shared.refuse.store(refuse, Ordering::SeqCst);
    }

    /// Shuts every open connection down on both sides at once. Returns how many there were.
    pub fn reset_open(&self) -> usize {
        let open: Vec<(TcpStream, Side)> = {
            let mut m = self.shared.open.lock().unwrap_or_else(|e| e.into_inner());
            m.drain().map(|(_, c)| c).collect()
        };
        for (client, server) in &open {
            let _ = client.shutdown(Shutdown::Both);
            server.shutdown(Shutdown::Both);
        }
        open.len()
    }

    /// Partitions the client from the upstream: nothing crosses until [`heal`](Self::heal).
    pub fn cut(&self) {
        self.shared.cut.store(true, Ordering::SeqCst);
    }

    /// Lifts a [`cut`](Self::cut): what was held crosses, in order, with the link's delay.
    pub fn heal(&self) {
        self.shared.cut.store(false, Ordering::SeqCst);
    }

    /// Whether the link is cut.
    pub fn is_cut(&self) -> bool {
        self.shared.cut.load(Ordering::SeqCst)
    }

    /// Connections open through the proxy now.
    pub fn open_connections(&self) -> usize {
        self.shared.open.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Round trips since the start, over every connection: each time a client sends after it
    /// last received (or first), it waits for an answer once more. What a delay costs is
    /// this count times the round-trip time; a test can assert it whatever the machine's
    /// speed.
    pub fn round_trips(&self) -> u64 {
        self.shared.round_trips.load(Ordering::SeqCst)
    }

    /// Connections accepted since the start (refused ones included).
    pub fn accepted(&self) -> u64 {
        self.shared.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then sees `stopping`.
        let _ = TcpStream::connect(self.addr);
        self.reset_open();
    }
}

fn accept(listener: TcpListener, upstream: Upstream, shared: Arc<Shared>) {
    for client in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        shared.accepted.fetch_add(1, Ordering::SeqCst);
        if shared.refuse.load(Ordering::SeqCst) {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        }
        let s = Arc::clone(&shared);
        let up = upstream.clone();
        let _ = thread::Builder::new()
            .name("fault-proxy-conn".into())
            .spawn(move || connection(client, &up, s));
    }
}

/// One connection: waits out a cut, connects upstream, and pumps both directions.
fn connection(client: TcpStream, upstream: &Upstream, shared: Arc<Shared>) {
    if !shared.wait_for_heal() {
        return;
    }
    let _ = client.set_nodelay(true);
    let Ok(server) = Side::connect(upstream) else {
        let _ = client.shutdown(Shutdown::Both);
        return;
    };
    let id = shared.next_id.fetch_add(1, Ordering::SeqCst);
    let clones = (client.try_clone(), server.try_clone(), client.try_clone(), server.try_clone());
    let (Ok(c_read), Ok(s_write), Ok(c_kept), Ok(s_kept)) = clones else {
        let _ = client.shutdown(Shutdown::Both);
        server.shutdown(Shutdown::Both);
        return;
    };
    shared.open.lock().unwrap_or_else(|e| e.into_inner()).insert(id, (c_kept, s_kept));
    // `done`: pumps ended; `turn`: the direction bytes last took (0: none yet).
    let done = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let up = pump(c_read, s_write, Direction::ToServer, Arc::clone(&shared), id, &done);
    let down = pump(server, client, Direction::ToClient, Arc::clone(&shared), id, &done);
    for h in [up, down].into_iter().flatten() {
        let _ = h.join();
    }
}

/// Bytes read from `from`, each chunk to be written to `to` once due (`None`: end).
type Queued = Option<(Instant, Vec<u8>)>;

/// Starts one direction: a reader that stamps each chunk with its due time, and a writer
/// that delivers it then (not while cut, at the link's bandwidth).
fn pump<R: End, W: End>(
    mut from: R,
    mut to: W,
    dir: Direction,
    shared: Arc<Shared>,
    id: u64,
    done: &Arc<[AtomicU64; 2]>,
) -> Option<thread::JoinHandle<()>> {
    let (tx, rx) = mpsc::channel::<Queued>();
    let s = Arc::clone(&shared);
    let turn = Arc::clone(done);
    let reader = thread::Builder::new().name("fault-proxy-read".into()).spawn(move || {
        let mut buf = vec![0u8; 64 << 10];
        let mut last_due = Instant::now();
        let mut rng = Jitter::new(id ^ (dir as u64) << 32);
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(None);
                    return;
                }
                Ok(n) => {
                    let code = dir as u64 + 1;
                    if turn[1].swap(code, Ordering::SeqCst) != code && dir == Direction::ToServer {
                        s.round_trips.fetch_add(1, Ordering::SeqCst);
                    }
                    let link = s.link(dir);
                    let due = (Instant::now() + link.delay + rng.upto(link.jitter)).max(last_due);
                    last_due = due;
                    if tx.send(Some((due, buf[..n].to_vec()))).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let reader = reader.ok()?;
    let done = Arc::clone(done);
    let writer = thread::Builder::new().name("fault-proxy-write".into()).spawn(move || {
        let mut eof = false;
        loop {
            let (due, bytes) = match rx.recv() {
                Ok(Some(chunk)) => chunk,
                Ok(None) => {
                    eof = true;
                    break;
                }
                Err(_) => break,
            };
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                thread::sleep(wait);
            }
            if !shared.wait_for_heal() {
                break;
            }
            if let Some(bps) = shared.link(dir).bytes_per_second.filter(|b| *b > 0) {
                thread::sleep(Duration::from_secs_f64(bytes.len() as f64 / bps as f64));
            }
            if to.write_all(&bytes).is_err() {
                break;
            }
        }
        // The end (or a failed write): pass the end on. The second pump to end forgets the
        // connection.
        to.close(if eof { Shutdown::Write } else { Shutdown::Both });
        let last = done[0].fetch_add(1, Ordering::SeqCst) == 1;
        let open = if last {
            shared.open.lock().unwrap_or_else(|e| e.into_inner()).remove(&id)
        } else {
            None
        };
        if let Some((c, s)) = open {
            let _ = c.shutdown(Shutdown::Both);
            s.shutdown(Shutdown::Both);
        }
        let _ = reader.join();
    });
    writer.ok()
}

/// A small xorshift generator for jitter (tests need no better randomness).
struct Jitter(u64);

impl Jitter {
    fn new(seed: u64) -> Self {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Jitter((seed ^ t) | 1)
    }

    fn upto(&mut self, max: Duration) -> Duration {
        if max.is_zero() {
            return Duration::ZERO;
        }
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        Duration::from_nanos(self.0 % max.as_nanos().max(1) as u64)
    }
}
