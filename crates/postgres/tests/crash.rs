//! Client crashes: the SIGKILL crash harness of terrane-store (the one every backend runs)
//! kills a writer mid-batch; every reopen shows exactly the state after the last acknowledged
//! batch (or the one in flight), with no partial batch and no torn value.
//!
//! `TERRANE_CRASH_KILLS=N` overrides the number of kills (`cargo xtask crash --kills N`).

mod common;

use terrane_store::conformance::crash;

#[test]
fn crash() {
    let (_server, conninfo) = common::server();
    let env = common::child_env(&conninfo);
    let report = crash::run_with_env("crash", 200, &env, |dir| {
        common::open(&conninfo, dir, &terrane_store::StoreConfig::new("terrane crash test"))
    });
    eprintln!("terrane-postgres: {report:?}");
    assert!(report.kills > 0);
    assert!(report.committed >= report.acknowledged);
}
