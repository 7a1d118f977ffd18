//! The conformance suite of terrane-store, unmodified, on PostgreSQL (a throwaway server per
//! test: see `terrane_postgres::testing`).

mod common;

use terrane_store::conformance;

#[test]
fn postgres_conforms() {
    let (_server, conninfo) = common::server();
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    conformance::run_all(|| {
        n += 1;
        common::open(
            &conninfo,
            &dir.path().join(format!("db{n}")),
            &conformance::config("conformance"),
        )
        .unwrap()
    });
}

#[test]
fn postgres_conforms_across_reopens() {
    let (_server, conninfo) = common::server();
    conformance::run_persistent(|dir, config| common::open(&conninfo, dir, config));
}

/// A second process is refused with the holder's pid; killing the holder frees the store.
#[test]
fn second_process() {
    let (_server, conninfo) = common::server();
    let env = common::child_env(&conninfo);
    conformance::process_lock::run_with_env("second_process", &env, |dir, config| {
        common::open(&conninfo, dir, config)
    });
}
