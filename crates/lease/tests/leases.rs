//! Leases on the in-memory store and on a real PostgreSQL world shared by real processes: the
//! rules (acquire, held, renew, release, takeover with a higher epoch), races with one winner,
//! and a paused server fenced out after its area was taken over.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use terrane_lease::{AreaId, LeaseError, Leases, fence};
use terrane_postgres::testing::PgServer;
use terrane_postgres::{PgOptions, PgStore};
use terrane_section::testdata::ChildGuard;
use terrane_store::{Batch, Error, MemStore, ReadView, Store, StoreConfig, tables};

const TTL: u64 = 10_000;

fn rules(world: Arc<dyn Store>) {
    let a = Leases::new(Arc::clone(&world), "server-a", TTL).unwrap();
    let b = Leases::new(Arc::clone(&world), "server-b", TTL).unwrap();
    let area = AreaId::new(3, -4);
    assert_eq!(a.get(area).unwrap(), None);
    let la = a.acquire(area, 1_000).unwrap();
    assert_eq!((la.epoch, la.expires_ms, la.owner.as_str()), (1, 11_000, "server-a"));
    match b.acquire(area, 5_000) {
        Err(LeaseError::Held { owner, epoch: 1, .. }) => assert_eq!(owner, "server-a"),
        other => panic!("expected Held, got {other:?}"),
    }
    // Renewal keeps the epoch; a second acquire by the owner is a renewal.
    let la = a.renew(&la, 9_000).unwrap();
    assert_eq!((la.epoch, la.expires_ms), (1, 19_000));
    assert_eq!(a.acquire(area, 9_500).unwrap().epoch, 1);
    // The owner's fenced batch applies.
    let mut save = Batch::new();
    fence(&mut save, [&la]);
    save.put(tables::CHUNK_L0, b"chunk".to_vec(), 1, b"a".to_vec());
    world.write(&save).unwrap();
    // Expired: b takes it over at epoch 2; a's renewal and a's fenced batch are refused.
    let lb = b.acquire(area, 30_000).unwrap();
    assert_eq!((lb.epoch, lb.owner.as_str()), (2, "server-b"));
    assert!(matches!(a.renew(&la, 30_001), Err(LeaseError::Lost { epoch: 1, .. })));
    let mut stale = Batch::new();
    fence(&mut stale, [&la]);
    stale.put(tables::CHUNK_L0, b"chunk".to_vec(), 2, b"stale".to_vec());
    assert!(matches!(world.write(&stale), Err(Error::PreconditionFailed { .. })));
    assert_eq!(world.get(tables::CHUNK_L0, b"chunk").unwrap().unwrap().data, b"a");
    // Release: the next owner raises the epoch again.
    b.release(&lb).unwrap();
    let la2 = a.acquire(area, 30_002).unwrap();
    assert_eq!(la2.epoch, 3);
    assert_eq!(a.all().unwrap(), vec![la2]);
    assert!(matches!(
        Leases::new(Arc::clone(&world), "", TTL),
        Err(LeaseError::InvalidServerId(_))
    ));
}

#[test]
fn lease_rules_on_memory() {
    rules(Arc::new(MemStore::new()));
}

fn shared(server: &PgServer) -> PgStore {
    PgStore::open_with(
        &server.conninfo(),
        &StoreConfig::new("terrane lease test"),
        &PgOptions::new().shared_writers(true).pool_size(4),
    )
    .unwrap()
}

#[test]
fn lease_rules_on_postgres_with_racing_servers() {
    let server = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    rules(Arc::new(shared(&server)));
    // Eight servers (each its own store, as separate processes would be) race for ten areas.
    let stores: Vec<Arc<PgStore>> = (0..8).map(|_| Arc::new(shared(&server))).collect();
    let winners = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for (i, store) in stores.iter().enumerate() {
            let winners = &winners;
            s.spawn(move || {
                let me = Leases::new(Arc::clone(store), &format!("server-{i}"), TTL).unwrap();
                for x in 0..10 {
                    match me.acquire(AreaId::new(100 + x, 0), 50_000) {
                        Ok(l) => winners.lock().unwrap().push((x, l.owner)),
                        Err(LeaseError::Held { .. } | LeaseError::Lost { .. }) => {}
                        Err(e) => panic!("{e}"),
                    }
                }
            });
        }
    });
    let mut w = winners.into_inner().unwrap();
    w.sort();
    assert_eq!(w.len(), 10, "exactly one owner per area: {w:?}");
    w.dedup_by_key(|(x, _)| *x);
    assert_eq!(w.len(), 10);
    // A single-writer open is refused while shared writers are in.
    let single = PgStore::open(&server.conninfo(), &StoreConfig::new("terrane lease test"));
    assert!(matches!(single, Err(Error::Locked { .. })), "{single:?}");
}

const CHILD_ENV: &str = "TERRANE_LEASE_CHILD";

/// The child: server A. Takes area (0, 0) with a short lease, then saves fenced batches, one
/// per line of input, reporting each outcome.
fn child(conninfo: &str) {
    let store = Arc::new(
        PgStore::open_with(
            conninfo,
            &StoreConfig::new("terrane lease test"),
            &PgOptions::new().shared_writers(true).pool_size(2),
        )
        .unwrap(),
    );
    let leases = Leases::new(Arc::clone(&store), "server-a", 300).unwrap();
    let lease = leases.acquire(AreaId::new(0, 0), now_ms()).unwrap();
    println!("LEASED {}", lease.epoch);
    for (i, line) in std::io::stdin().lock().lines().enumerate() {
        if line.is_err() {
            break;
        }
        let mut save = Batch::new();
        fence(&mut save, [&lease]);
        save.put(tables::CHUNK_L0, b"spawn".to_vec(), i as i64 + 1, format!("a {i}").into_bytes());
        match store.write(&save.synced()) {
            Ok(()) => println!("SAVED {i}"),
            Err(Error::PreconditionFailed { .. }) => println!("REFUSED {i}"),
            Err(e) => println!("ERROR {e}"),
        }
        std::io::stdout().flush().unwrap();
    }
    std::process::exit(0);
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

/// A real server process paused (SIGSTOP) past its lease: another takes the area over, and
/// when the paused one resumes, its save is refused and nothing of it lands.
#[test]
fn a_paused_server_is_fenced_out_after_a_takeover() {
    if let Ok(c) = std::env::var(CHILD_ENV) {
        child(&c);
    }
    let server = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let mut a = ChildGuard::spawn(
        Command::new(std::env::current_exe().unwrap())
            .args(["a_paused_server_is_fenced_out_after_a_takeover", "--exact", "--nocapture"])
            .env(CHILD_ENV, server.conninfo())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    )
    .unwrap();
    let mut to_a = a.stdin.take().unwrap();
    let mut from_a = BufReader::new(a.stdout.take().unwrap()).lines().map_while(|l| l.ok());
    let mut expect = |what: &str| {
        let line =
            from_a.find(|l| l.contains(what.split(' ').next().unwrap()) || l.contains("ERROR"));
        let line = line.unwrap_or_default();
        assert!(line.contains(what), "server a said {line:?}, expected {what:?}");
    };
    expect("LEASED 1");
    writeln!(to_a, "save").unwrap();
    expect("SAVED 0");
    // Pause a past its 300 ms lease; b takes the area over.
    let pid = a.id().to_string();
    assert!(Command::new("kill").args(["-STOP", &pid]).status().unwrap().success());
    std::thread::sleep(Duration::from_millis(600));
    let store_b = Arc::new(shared(&server));
    let b = Leases::new(Arc::clone(&store_b), "server-b", TTL).unwrap();
    let lb = b.acquire(AreaId::new(0, 0), now_ms()).unwrap();
    assert_eq!(lb.epoch, 2);
    let mut save = Batch::new();
    fence(&mut save, [&lb]);
    save.put(tables::CHUNK_L0, b"spawn".to_vec(), 100, b"b".to_vec());
    store_b.write(&save.synced()).unwrap();
    // a resumes and saves: refused, and b's chunk stays.
    assert!(Command::new("kill").args(["-CONT", &pid]).status().unwrap().success());
    writeln!(to_a, "save").unwrap();
    expect("REFUSED 1");
    drop(to_a);
    a.wait().unwrap();
    assert_eq!(store_b.get(tables::CHUNK_L0, b"spawn").unwrap().unwrap().data, b"b");
}

/// A keeper renews before expiry, and after a refused save names exactly the areas taken over;
/// its fence then covers only what it still holds, so its next save applies.
#[test]
fn a_keeper_renews_and_names_the_areas_it_lost() {
    let world: Arc<dyn Store> = Arc::new(MemStore::new());
    let mut a = terrane_lease::LeaseKeeper::new(
        Leases::new(Arc::clone(&world), "server-a", 3_000).unwrap(),
    );
    let b = Leases::new(Arc::clone(&world), "server-b", 3_000).unwrap();
    let (near, far) = (AreaId::new(0, 0), AreaId::new(5, 5));
    a.acquire(near, 0).unwrap();
    a.acquire(far, 0).unwrap();
    assert_eq!(a.tick(500).unwrap(), Vec::<AreaId>::new());
    assert_eq!(
        a.held().map(|l| l.expires_ms).collect::<Vec<_>>(),
        vec![3_000, 3_000],
        "not due yet"
    );
    assert_eq!(a.tick(2_500).unwrap(), Vec::<AreaId>::new());
    assert!(a.held().all(|l| l.expires_ms == 5_500), "renewed with a third left");
    // a stalls past the expiry; b takes `far` over.
    b.acquire(far, 9_000).unwrap();
    let mut save = Batch::new();
    save.put(tables::CHUNK_L0, b"near".to_vec(), 1, b"a".to_vec());
    let mut fenced = save.clone();
    for p in a.preconditions() {
        fenced.expect(&p.table, p.key, p.version);
    }
    assert!(matches!(world.write(&fenced), Err(Error::PreconditionFailed { .. })));
    assert_eq!(a.check().unwrap(), vec![far]);
    assert!(a.owns(near) && !a.owns(far));
    let mut fenced = save;
    for p in a.preconditions() {
        fenced.expect(&p.table, p.key, p.version);
    }
    world.write(&fenced).expect("the areas still held save");
    a.release_all().unwrap();
    assert!(b.acquire(near, 9_001).is_ok(), "released areas are free at once");
}

/// Renewals made off the tick are taken by the keeper only for what it still holds at that
/// epoch; a lease taken elsewhere is held once noted.
#[test]
fn a_keeper_takes_renewals_and_leases_made_elsewhere() {
    use terrane_lease::{LeaseKeeper, Renewal};
    let store = Arc::new(MemStore::new());
    let leases = Leases::new(Arc::clone(&store), "a", 1_000).unwrap();
    let other = Leases::new(Arc::clone(&store), "a", 1_000).unwrap();
    let mut keeper = LeaseKeeper::new(leases);
    let area = AreaId::new(0, 0);
    let lease = other.acquire(area, 0).unwrap();
    keeper.hold(lease.clone());
    assert!(keeper.owns(area));
    let renewed = other.renew(&lease, 600).unwrap();
    assert!(!keeper.note_renewal(&Renewal::Renewed(renewed.clone())));
    assert_eq!(keeper.held().next().unwrap().expires_ms, 1_600);
    // An older renewal does not shorten it; a loss at another epoch does not drop it.
    assert!(!keeper.note_renewal(&Renewal::Renewed(lease.clone())));
    assert_eq!(keeper.held().next().unwrap().expires_ms, 1_600);
    assert!(!keeper.note_renewal(&Renewal::Lost { area, epoch: lease.epoch + 1 }));
    assert!(keeper.owns(area));
    assert!(keeper.note_renewal(&Renewal::Lost { area, epoch: lease.epoch }));
    assert!(!keeper.owns(area), "lost: no longer held");
    assert!(!keeper.note_renewal(&Renewal::Lost { area, epoch: lease.epoch }), "once");
}
