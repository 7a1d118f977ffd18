//! One writer or many readers per store, as on the file backends: a session advisory lock.
//!
//! A writer holds `pg_try_advisory_lock(key)`, a reader `pg_try_advisory_lock_shared(key)`, on
//! a connection of their own kept for the store's life. The server drops the lock when that
//! session ends: the process exited or was killed (its socket closes), or the server
//! restarted. A refused open is [`Error::Locked`], naming the holder's process from the
//! `application_name` (`terrane pid=N`) every terrane connection sets.

use std::time::Instant;

use terrane_store::{Error, Result};

use crate::conn::{Conn, pg_err};

/// Takes the store's lock on `conn` (exclusive unless `shared`), waiting up to `grace` for a
/// holder that is going away.
pub(crate) fn acquire(
    conn: &mut Conn,
    key: i64,
    shared: bool,
    grace: std::time::Duration,
    location: &str,
) -> Result<()> {
    let sql = if shared {
        "SELECT pg_try_advisory_lock_shared($1)"
    } else {
        "SELECT pg_try_advisory_lock($1)"
    };
    let deadline = Instant::now() + grace;
    loop {
        let got: bool =
            conn.client.query_one(sql, &[&key]).map_err(|e| pg_err("locking the store", e))?.get(0);
        if got {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(Error::Locked { path: location.into(), holder: holder(conn, key) });
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The client process of a session holding the lock `key`, from its `application_name`.
fn holder(conn: &mut Conn, key: i64) -> Option<u32> {
    // An advisory lock on a bigint keeps its high half in classid, its low half in objid.
    let (hi, lo) = ((key >> 32) as u32, key as u32);
    let rows = conn
        .client
        .query(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
             WHERE l.locktype = 'advisory' AND l.granted AND l.classid::bigint = $1 \
             AND l.objid::bigint = $2 AND l.objsubid = 1",
            &[&i64::from(hi), &i64::from(lo)],
        )
        .ok()?;
    rows.iter().find_map(|r| {
        let name: Option<String> = r.get(0);
        name?.strip_prefix("terrane pid=")?.parse().ok()
    })
}
