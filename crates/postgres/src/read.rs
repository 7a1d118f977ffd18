//! Reads: point reads, `multi_get` in one round trip, snapshots (a `REPEATABLE READ READ
//! ONLY` transaction on a connection of their own) and scans streamed in keyset pages.

use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Mutex;

use postgres::types::ToSql;
use r2d2::PooledConnection;
use terrane_store::{Entry, Error, KeyRange, Object, Parts, ReadView, Result, Scan, check_key};

use crate::PgStore;
use crate::conn::{Conn, Manager, pg_err};

/// The object under `key` in relation `rel`.
pub(crate) fn get(conn: &mut Conn, rel: &str, key: &[u8]) -> Result<Option<Object>> {
    check_key(key)?;
    let sql = format!("SELECT version, data FROM {rel} WHERE key = $1");
    let st = conn.prepare(&sql).map_err(|e| pg_err("reading", e))?;
    let row = conn.client.query_opt(&st, &[&key]).map_err(|e| pg_err("reading", e))?;
    Ok(row.map(|r| Object { version: r.get(0), data: r.get(1) }))
}

/// Ranges of the object under `key`, cut by the server: only they cross the socket.
pub(crate) fn get_parts(
    conn: &mut Conn,
    rel: &str,
    key: &[u8],
    ranges: &[std::ops::Range<u64>],
) -> Result<Option<Parts>> {
    check_key(key)?;
    // bytea positions are 1-based int4; values are at most 1 GiB, so larger bounds only mean
    // "to the end".
    let clamp = |v: u64| v.min(i32::MAX as u64 / 2) as i32;
    let starts: Vec<i32> = ranges.iter().map(|r| clamp(r.start) + 1).collect();
    let counts: Vec<i32> = ranges.iter().map(|r| clamp(r.end.saturating_sub(r.start))).collect();
    let sql = format!(
        "SELECT version, octet_length(data)::int8, \
         ARRAY(SELECT substring(data FROM s FOR n) FROM unnest($2::int4[], $3::int4[]) \
         WITH ORDINALITY AS r(s, n, i) ORDER BY i) FROM {rel} WHERE key = $1"
    );
    let st = conn.prepare(&sql).map_err(|e| pg_err("reading", e))?;
    let row =
        conn.client.query_opt(&st, &[&key, &starts, &counts]).map_err(|e| pg_err("reading", e))?;
    Ok(row.map(|r| {
        let len: i64 = r.get(1);
        Parts { version: r.get(0), len: len as u64, data: r.get(2) }
    }))
}

/// The objects under `keys`, in one round trip.
pub(crate) fn multi_get(conn: &mut Conn, rel: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
    for k in keys {
        check_key(k)?;
    }
    let mut out = vec![None; keys.len()];
    if keys.is_empty() {
        return Ok(out);
    }
    // An index lookup per key (`= ANY`), matched back to the request by key.
    let sql = format!("SELECT key, version, data FROM {rel} WHERE key = ANY($1::bytea[])");
    let st = conn.prepare(&sql).map_err(|e| pg_err("reading", e))?;
    let wanted: Vec<&[u8]> = keys.to_vec();
    let mut found: std::collections::HashMap<Vec<u8>, Object> = std::collections::HashMap::new();
    for r in conn.client.query(&st, &[&wanted]).map_err(|e| pg_err("reading", e))? {
        found.insert(r.get(0), Object { version: r.get(1), data: r.get(2) });
    }
    for (slot, key) in out.iter_mut().zip(keys) {
        *slot = found.get(*key).cloned();
    }
    Ok(out)
}

/// The next page of `rel` after `start`, up to `end`, at most `rows` entries.
pub(crate) fn page(
    conn: &mut Conn,
    rel: &str,
    start: &Bound<Vec<u8>>,
    end: &Bound<Vec<u8>>,
    rows: i64,
) -> Result<Vec<Entry>> {
    let mut cond = Vec::new();
    let mut params: Vec<&(dyn ToSql + Sync)> = Vec::new();
    for (bound, incl, excl) in [(start, ">=", ">"), (end, "<=", "<")] {
        let (op, key) = match bound {
            Bound::Included(k) => (incl, k),
            Bound::Excluded(k) => (excl, k),
            Bound::Unbounded => continue,
        };
        params.push(key);
        cond.push(format!("key {op} ${}", params.len()));
    }
    params.push(&rows);
    let filter =
        if cond.is_empty() { String::new() } else { format!("WHERE {}", cond.join(" AND ")) };
    let sql = format!(
        "SELECT key, version, data FROM {rel} {filter} ORDER BY key LIMIT ${}",
        params.len()
    );
    let st = conn.prepare(&sql).map_err(|e| pg_err("scanning", e))?;
    let found = conn.client.query(&st, &params).map_err(|e| pg_err("scanning", e))?;
    Ok(found
        .into_iter()
        .map(|r| (r.get::<_, Vec<u8>>(0), Object { version: r.get(1), data: r.get(2) }))
        .collect())
}

/// A consistent view: a `REPEATABLE READ READ ONLY` transaction held on a pooled connection
/// until the snapshot is dropped (then rolled back).
pub(crate) struct PgSnapshot<'a> {
    store: &'a PgStore,
    conn: Mutex<PooledConnection<Manager>>,
}

impl<'a> PgSnapshot<'a> {
    pub(crate) fn new(store: &'a PgStore) -> Result<Self> {
        let mut conn = store.conn()?;
        // The snapshot is taken by the first statement after BEGIN.
        conn.client
            .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT 1")
            .map_err(|e| pg_err("starting a snapshot", e))?;
        Ok(PgSnapshot { store, conn: Mutex::new(conn) })
    }

    fn with<T>(&self, f: impl FnOnce(&mut Conn) -> Result<T>) -> Result<T> {
        let mut conn = self
            .conn
            .lock()
            .map_err(|_| Error::Poisoned("a thread panicked while reading a snapshot".into()))?;
        f(&mut conn)
    }
}

impl Drop for PgSnapshot<'_> {
    fn drop(&mut self) {
        if let Ok(conn) = self.conn.get_mut() {
            // A failure leaves a broken connection, which the pool discards.
            let _ = conn.client.batch_execute("ROLLBACK");
        }
    }
}

impl ReadView for PgSnapshot<'_> {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        let rel = self.store.rel(table)?;
        self.store.noted(self.with(|c| get(c, rel, key)))
    }

    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        let rel = self.store.rel(table)?;
        self.store.noted(self.with(|c| multi_get(c, rel, keys)))
    }

    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<Parts>> {
        let rel = self.store.rel(table)?;
        self.store.noted(self.with(|c| get_parts(c, rel, key, ranges)))
    }

    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        let rel = self.store.rel(table)?.to_string();
        Ok(Box::new(Pager::new(Holder::Borrowed(self), rel, range)))
    }
}

/// The snapshot a scan pages through: its own (a store's scan) or a borrowed one.
pub(crate) enum Holder<'a> {
    Owned(Box<PgSnapshot<'a>>),
    Borrowed(&'a PgSnapshot<'a>),
}

/// A scan: keyset pages of one snapshot, fetched as the iterator advances.
pub(crate) struct Pager<'a> {
    snap: Holder<'a>,
    rel: String,
    start: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
    buf: VecDeque<Entry>,
    done: bool,
}

impl<'a> Pager<'a> {
    pub(crate) fn new(snap: Holder<'a>, rel: String, range: KeyRange) -> Self {
        let done = range.is_empty();
        Pager { snap, rel, start: range.start, end: range.end, buf: VecDeque::new(), done }
    }
}

impl Iterator for Pager<'_> {
    type Item = Result<Entry>;

    fn next(&mut self) -> Option<Result<Entry>> {
        if self.buf.is_empty() && !self.done {
            let snap = match &self.snap {
                Holder::Owned(s) => &**s,
                Holder::Borrowed(s) => *s,
            };
            let rows = i64::from(snap.store.options.scan_page_rows);
            let fetched = snap.with(|c| page(c, &self.rel, &self.start, &self.end, rows));
            match snap.store.noted(fetched) {
                Ok(entries) => {
                    self.done = (entries.len() as i64) < rows;
                    if let Some((last, _)) = entries.last() {
                        self.start = Bound::Excluded(last.clone());
                    }
                    self.buf.extend(entries);
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        self.buf.pop_front().map(Ok)
    }
}
