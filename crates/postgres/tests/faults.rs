//! Bad input and faults: each a typed error a user can act on, with nothing half-written.

mod common;

use std::time::{Duration, Instant};

use terrane_postgres::testing::PgServer;
use terrane_postgres::{MAX_VALUE_LEN, PgOptions, PgStore};
use terrane_store::{Batch, Error, ReadView, Store, StoreConfig, tables};

fn config() -> StoreConfig {
    StoreConfig::new("terrane faults test")
}

#[test]
fn wrong_user_database_or_host_give_typed_errors_in_bounded_time() {
    let server = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let socket = server.conninfo().split_whitespace().next().unwrap().to_string();
    let e = PgStore::open(&format!("{socket} user=nobody dbname=postgres"), &config()).unwrap_err();
    assert!(e.to_string().contains("check the user and password"), "{e}");
    let e = PgStore::open(&format!("{socket} user=terrane dbname=nowhere"), &config()).unwrap_err();
    assert!(e.to_string().contains("create the database first"), "{e}");
    let e = PgStore::open("host=/nonexistent/socket/dir user=terrane", &config()).unwrap_err();
    assert!(matches!(e, Error::Io(_)), "{e}");
    assert!(e.to_string().contains("connecting to host=/nonexistent"), "{e}");
    // A host that never answers: the connect timeout bounds the wait.
    let start = Instant::now();
    let options = PgOptions::new().connect_timeout(Duration::from_secs(1));
    let e = PgStore::open_with("postgres://terrane@10.255.255.1:5432/db", &config(), &options)
        .unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(5), "took {:?}: {e}", start.elapsed());
    let e = PgStore::open("not a connection string = = =", &config()).unwrap_err();
    assert!(e.to_string().contains("connection string"), "{e}");
}

#[test]
fn a_schema_of_another_program_or_world_is_refused_and_left_alone() {
    let server = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let mut c = postgres::Client::connect(&server.conninfo(), postgres::NoTls).unwrap();
    c.batch_execute(
        "CREATE SCHEMA theirs; CREATE TABLE theirs.accounts (id int); \
         INSERT INTO theirs.accounts VALUES (7)",
    )
    .unwrap();
    let theirs = PgOptions::new().schema("theirs");
    let e = PgStore::open_with(&server.conninfo(), &config(), &theirs).unwrap_err();
    assert!(matches!(e, Error::NotAStore { .. }), "{e}");
    // Their own table named `meta`, of other columns, or of terrane's names with other types
    // (read without a panic): another program's schema too.
    let foreign_metas = [
        ("theirs_a", "id int", "7"),
        ("theirs_b", "name int, value text", "1, 'format'"),
        ("theirs_c", "name text, value text", "'format', 'x'"),
        ("theirs_d", "name date, value bytea", "'2020-01-01', 'x'"),
    ];
    for (schema, columns, row) in foreign_metas {
        c.batch_execute(&format!(
            "CREATE SCHEMA {schema}; CREATE TABLE {schema}.meta ({columns}); \
             INSERT INTO {schema}.meta VALUES ({row})"
        ))
        .unwrap();
        let options = PgOptions::new().schema(schema);
        match PgStore::open_with(&server.conninfo(), &config(), &options) {
            Err(Error::NotAStore { detail, .. }) => {
                assert!(detail.contains("its meta table is not terrane's"), "{detail}")
            }
            other => panic!("{schema}: expected NotAStore, got {other:?}"),
        }
        // Nor is it removed.
        match PgStore::remove(&server.conninfo(), &options) {
            Err(Error::NotAStore { .. }) => {}
            other => panic!("{schema}: remove: expected NotAStore, got {other:?}"),
        }
        let rows: i64 =
            c.query_one(&format!("SELECT count(*) FROM {schema}.meta"), &[]).unwrap().get(0);
        let tables: i64 = c
            .query_one("SELECT count(*) FROM pg_tables WHERE schemaname = $1", &[&schema])
            .unwrap()
            .get(0);
        assert_eq!((rows, tables), (1, 1), "{schema} was changed");
    }
    let n: i64 = c.query_one("SELECT count(*) FROM theirs.accounts", &[]).unwrap().get(0);
    assert_eq!(n, 1, "the other program's table was changed");
    let tables: i64 = c
        .query_one("SELECT count(*) FROM pg_tables WHERE schemaname = 'theirs'", &[])
        .unwrap()
        .get(0);
    assert_eq!(tables, 1, "tables were added to another program's schema");
    drop(PgStore::open(&server.conninfo(), &config()).unwrap());
    match PgStore::open(&server.conninfo(), &StoreConfig::new("another world v9")) {
        Err(Error::SignatureMismatch { found, .. }) => assert_eq!(found, "terrane faults test"),
        other => panic!("expected SignatureMismatch, got {other:?}"),
    }
}

#[test]
fn values_over_the_limit_are_refused_whole() {
    let server = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let store = PgStore::open(&server.conninfo(), &config()).unwrap();
    let mut b = Batch::new();
    b.put(tables::CHUNK_L0, b"small".to_vec(), 1, b"fits".to_vec());
    b.put(tables::CHUNK_L2, b"huge".to_vec(), 1, vec![0u8; MAX_VALUE_LEN + 1]);
    match store.write(&b.synced()) {
        Err(Error::ValueTooLarge { len, max }) => {
            assert_eq!((len, max), (MAX_VALUE_LEN + 1, MAX_VALUE_LEN))
        }
        other => panic!("expected ValueTooLarge, got {other:?}"),
    }
    assert_eq!(store.get(tables::CHUNK_L0, b"small").unwrap(), None, "half a batch was written");
}

/// A server restarted under an open store: reads reconnect by themselves (once); a write in
/// flight fails with a lost-connection error (its outcome unknown) and the next one
/// reconnects.
#[test]
fn a_server_restart_under_an_open_store() {
    let server = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let store = PgStore::open(&server.conninfo(), &config()).unwrap();
    let synced_put = |key: &[u8], value: &[u8]| {
        let mut b = Batch::new();
        b.put(tables::ENTITY, key.to_vec(), 1, value.to_vec());
        store.write(&b.synced())
    };
    // Synced: an unsynced commit may be lost when the server crashes.
    synced_put(b"e1", b"before").unwrap();
    // Fill the pool with idle connections.
    let snaps: Vec<_> = (0..3).map(|_| store.snapshot().unwrap()).collect();
    drop(snaps);
    server.kill_primary().unwrap();
    server.restart_primary().unwrap();
    assert_eq!(store.get(tables::ENTITY, b"e1").unwrap().unwrap().data, b"before");
    synced_put(b"e2", b"after").unwrap();
    assert_eq!(store.get(tables::ENTITY, b"e2").unwrap().unwrap().data, b"after");
    server.kill_primary().unwrap();
    let e = synced_put(b"e3", b"lost").unwrap_err();
    assert!(e.to_string().contains("next call reconnects") || matches!(e, Error::Io(_)), "{e}");
    server.restart_primary().unwrap();
    synced_put(b"e4", b"reconnected").unwrap();
    assert_eq!(store.get(tables::ENTITY, b"e4").unwrap().unwrap().data, b"reconnected");
}

/// A writer whose lock ended with its server session (a restart) while another process then
/// opened the store for writing is fenced out: its next batch writes nothing and says so.
#[test]
fn a_writer_that_lost_its_lock_is_fenced_out() {
    let server = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let old = PgStore::open(&server.conninfo(), &config()).unwrap();
    let mut b = Batch::new();
    b.put(tables::ENTITY, b"e".to_vec(), 1, b"old writer".to_vec());
    old.write(&b.synced()).unwrap();
    server.kill_primary().unwrap();
    server.restart_primary().unwrap();
    let new = PgStore::open(&server.conninfo(), &config()).unwrap();
    let mut late = Batch::new();
    late.put(tables::ENTITY, b"e".to_vec(), 2, b"zombie".to_vec());
    late.put(tables::CHUNK_L0, b"c".to_vec(), 2, b"zombie".to_vec());
    // The old store's pooled connections died with the server: one call may fail on that.
    let e = match old.write(&late.clone().synced()) {
        Err(Error::Io(_)) => old.write(&late.synced()).unwrap_err(),
        other => other.unwrap_err(),
    };
    assert!(matches!(e, Error::Poisoned(_)), "{e}");
    assert!(e.to_string().contains("another process opened"), "{e}");
    assert_eq!(new.get(tables::ENTITY, b"e").unwrap().unwrap().data, b"old writer");
    assert_eq!(new.get(tables::CHUNK_L0, b"c").unwrap(), None);
}

/// A sole writer's read cache (`PgOptions::cache_bytes`) never answers with an object another
/// process changed: once the store's lock session is gone (here a restart, after which
/// another writer opens and writes), reads go to the server.
#[test]
fn the_read_cache_never_outlives_the_lock() {
    let server = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let old = PgStore::open(&server.conninfo(), &config()).unwrap();
    let mut b = Batch::new();
    b.put(tables::ENTITY, b"e".to_vec(), 1, b"cached".to_vec());
    b.put(tables::ENTITY, b"f".to_vec(), 1, b"cached too".to_vec());
    old.write(&b.synced()).unwrap();
    // Cached by the write and by reads (absent keys too).
    assert_eq!(old.get(tables::ENTITY, b"e").unwrap().unwrap().data, b"cached");
    assert_eq!(old.get(tables::ENTITY, b"g").unwrap(), None);
    server.kill_primary().unwrap();
    server.restart_primary().unwrap();
    {
        let new = PgStore::open(&server.conninfo(), &config()).unwrap();
        let mut b = Batch::new();
        b.put(tables::ENTITY, b"e".to_vec(), 2, b"changed".to_vec());
        b.put(tables::ENTITY, b"g".to_vec(), 2, b"created".to_vec());
        b.delete(tables::ENTITY, b"f".to_vec());
        new.write(&b.synced()).unwrap();
    }
    // The old store may fail once on its dead connections; it never answers from memory.
    let get = |k: &[u8]| match old.get(tables::ENTITY, k) {
        Err(Error::Io(_)) => old.get(tables::ENTITY, k).unwrap(),
        other => other.unwrap(),
    };
    assert_eq!(get(b"e").unwrap().data, b"changed");
    assert_eq!(get(b"g").unwrap().data, b"created");
    assert_eq!(get(b"f"), None);
    let keys: [&[u8]; 3] = [b"e", b"f", b"g"];
    let all = old.multi_get(tables::ENTITY, &keys).unwrap();
    assert_eq!(all[0].as_ref().unwrap().data, b"changed");
    assert_eq!(all[1], None);
    assert_eq!(all[2].as_ref().unwrap().data, b"created");
}
