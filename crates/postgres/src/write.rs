//! Writes: one [`Batch`] is one transaction, in one statement (one round trip once prepared)
//! for batches up to [`STATEMENT_BYTES`].
//!
//! The last operation per key wins, so every key appears once; per table, the deletes become
//! one `DELETE … WHERE key = ANY($n)` and the puts one `INSERT … SELECT * FROM unnest(…) ON
//! CONFLICT (key) DO UPDATE`, all as data-modifying CTEs of a single statement, which
//! PostgreSQL runs as one transaction. Larger batches are split into several such statements
//! inside an explicit transaction.

use std::collections::BTreeMap;

use postgres::types::ToSql;
use terrane_store::{Batch, Op, Result};

use crate::PgStore;
use crate::conn::pg_err;

/// Value bytes per statement; a batch above this is several statements in one transaction.
pub(crate) const STATEMENT_BYTES: usize = 32 << 20;

/// The operations of one table within one statement.
#[derive(Default)]
struct Group<'b> {
    deletes: Vec<&'b [u8]>,
    keys: Vec<&'b [u8]>,
    versions: Vec<i64>,
    data: Vec<&'b [u8]>,
}

/// One statement's share of a batch: table relation → its operations.
type Unit<'b> = BTreeMap<&'b str, Group<'b>>;

/// Splits a validated batch into statements (last operation per key wins).
fn units<'b>(store: &'b PgStore, batch: &'b Batch) -> Result<Vec<Unit<'b>>> {
    let mut last: BTreeMap<(&str, &[u8]), &Op> = BTreeMap::new();
    for op in batch.ops() {
        last.insert((op.table(), op.key()), op);
    }
    let mut out: Vec<Unit<'b>> = vec![Unit::new()];
    let mut bytes = 0usize;
    for ((table, key), op) in last {
        let rel = store.rel(table)?;
        if let Op::Put { data, .. } = op
            && bytes + data.len() > STATEMENT_BYTES
            && bytes > 0
        {
            out.push(Unit::new());
            bytes = 0;
        }
        let group = out.last_mut().expect("one unit").entry(rel).or_default();
        match op {
            Op::Put { version, data, .. } => {
                bytes += data.len();
                group.keys.push(key);
                group.versions.push(*version);
                group.data.push(data);
            }
            Op::Delete { .. } => group.deletes.push(key),
        }
    }
    Ok(out)
}

/// The statement of one unit and its parameters. `fence` is `Some((meta, epoch))` when the
/// statement itself checks the writer epoch (it writes only while the store's `writer_epoch`
/// row holds `epoch`, which it locks `FOR SHARE`, and returns whether it did); `None` inside a
/// transaction that checked it first.
/// With `fence`, the statement also takes the store's write lock shared (see [`write`]); an
/// empty epoch (a store opened for shared writers) checks no epoch.
fn statement<'u>(
    unit: &'u Unit<'_>,
    fence: Option<(&str, &'u Vec<u8>, &'u i64)>,
    pre: &'u [Pre<'u>],
) -> (String, Vec<&'u (dyn ToSql + Sync)>) {
    let mut parts = Vec::new();
    let mut params: Vec<&(dyn ToSql + Sync)> = Vec::new();
    let mut guard = String::new();
    if let Some((meta, epoch, write_key)) = fence {
        params.push(write_key);
        parts.push("lk AS (SELECT pg_advisory_xact_lock_shared($1))".to_string());
        if epoch.is_empty() {
            // Shared writers: fenced by their own preconditions (leases), not by an epoch.
            parts.push("fence AS (SELECT 1 FROM lk)".to_string());
        } else {
            params.push(epoch);
            parts.push(format!(
                "fence AS (SELECT 1 FROM {meta} WHERE name = 'writer_epoch' AND value = $2 \
                 AND EXISTS (SELECT 1 FROM lk) FOR SHARE)"
            ));
        }
        guard.push_str(" AND EXISTS (SELECT 1 FROM fence)");
    }
    // Preconditions on versions: each row locked FOR SHARE, so a concurrent change of it
    // waits for this statement, or has committed and then fails the check.
    for (j, p) in pre.iter().enumerate() {
        params.push(p.key);
        params.push(p.version);
        let n = params.len();
        parts.push(format!(
            "pre{j} AS (SELECT 1 FROM {} WHERE key = ${} AND version = ${n} FOR SHARE)",
            p.rel,
            n - 1
        ));
        guard.push_str(&format!(" AND EXISTS (SELECT 1 FROM pre{j})"));
    }
    for (i, (rel, g)) in unit.iter().enumerate() {
        if !g.deletes.is_empty() {
            params.push(&g.deletes);
            parts.push(format!(
                "d{i} AS (DELETE FROM {rel} WHERE key = ANY(${}::bytea[]){guard})",
                params.len()
            ));
        }
        if !g.keys.is_empty() {
            params.push(&g.keys);
            params.push(&g.versions);
            params.push(&g.data);
            let n = params.len();
            parts.push(format!(
                "p{i} AS (INSERT INTO {rel} (key, version, data) \
                 SELECT * FROM unnest(${}::bytea[], ${}::int8[], ${n}::bytea[]) WHERE true{guard} \
                 ON CONFLICT (key) DO UPDATE SET version = EXCLUDED.version, data = EXCLUDED.data)",
                n - 2,
                n - 1
            ));
        }
    }
    let fence_ok = if fence.is_some() { "EXISTS (SELECT 1 FROM fence)" } else { "true" };
    let pre_ok: Vec<String> =
        (0..pre.len()).map(|j| format!("EXISTS (SELECT 1 FROM pre{j})")).collect();
    let pre_ok = if pre_ok.is_empty() { "true".to_string() } else { pre_ok.join(" AND ") };
    (format!("WITH {} SELECT {fence_ok}, {pre_ok}", parts.join(", ")), params)
}

/// A precondition on a version, for the single-statement path.
struct Pre<'b> {
    rel: &'b str,
    key: &'b Vec<u8>,
    version: &'b i64,
}

/// The error of a write that found another writer's epoch.
fn fenced(store: &PgStore) -> terrane_store::Error {
    terrane_store::Error::Poisoned(format!(
        "another process opened {} for writing after this store was opened (this one lost its \
         lock: a server restart or failover ended its session); nothing of the batch was written",
        store.location()
    ))
}

/// Applies a validated batch (non-empty, or with preconditions).
///
/// Every write holds the store's write lock (a transaction advisory lock) shared; a batch with
/// preconditions holds it exclusively from its checks to its commit, so no other write of the
/// store comes between them, and locks the rows it checked `FOR SHARE`.
pub(crate) fn write(store: &PgStore, batch: &Batch) -> Result<()> {
    let units: Vec<Unit<'_>> = units(store, batch)?.into_iter().filter(|u| !u.is_empty()).collect();
    let mut conn = store.conn()?;
    conn.set_synced(batch.is_synced()).map_err(|e| pg_err("setting synchronous_commit", e))?;
    // One statement when the batch fits one and its preconditions are on versions (a
    // precondition of absence needs the exclusive write lock below: an absent row cannot be
    // locked).
    let versions: Option<Vec<Pre<'_>>> = batch
        .preconditions()
        .iter()
        .map(|p| {
            let rel = store.rel(&p.table).ok()?;
            Some(Pre { rel, key: &p.key, version: p.version.as_ref()? })
        })
        .collect();
    if let (Some(pre), true) = (versions, units.len() <= 1) {
        let empty = Unit::new();
        let unit = units.first().unwrap_or(&empty);
        let fence = Some((store.meta.as_str(), &store.epoch, &store.write_key));
        let (sql, params) = statement(unit, fence, &pre);
        let st = conn.prepare(&sql).map_err(|e| pg_err("preparing a batch", e))?;
        let row = crate::conn::confirmed(|| {
            conn.client.query_one(&st, &params).map_err(|e| pg_err("writing a batch", e))
        })?;
        if !row.get::<_, bool>(0) {
            return Err(fenced(store));
        }
        if row.get::<_, bool>(1) {
            return Ok(());
        }
        // Name the failed precondition (read again; nothing was written).
        batch.check_preconditions(|table, key| {
            Ok(crate::read::get(&mut conn, store.rel(table)?, key)?.map(|o| o.version))
        })?;
        let p = &batch.preconditions()[0];
        return Err(terrane_store::Error::PreconditionFailed {
            table: p.table.clone(),
            key: p.key.clone(),
            expected: p.version,
            found: None,
        });
    }
    let mut prepared = Vec::with_capacity(units.len());
    for unit in &units {
        let (sql, params) = statement(unit, None, &[]);
        let st = conn.prepare(&sql).map_err(|e| pg_err("preparing a batch", e))?;
        prepared.push((st, params));
    }
    let check = format!(
        "SELECT 1 FROM {} WHERE name = 'writer_epoch' AND value = $1 FOR SHARE",
        store.meta
    );
    let lock = if batch.preconditions().is_empty() {
        "SELECT pg_advisory_xact_lock_shared($1)"
    } else {
        "SELECT pg_advisory_xact_lock($1)"
    };
    let mut tx = conn.client.transaction().map_err(|e| pg_err("writing a batch", e))?;
    tx.query(lock, &[&store.write_key]).map_err(|e| pg_err("writing a batch", e))?;
    if !store.epoch.is_empty()
        && tx.query(&check, &[&store.epoch]).map_err(|e| pg_err("writing a batch", e))?.is_empty()
    {
        return Err(fenced(store));
    }
    let mut failed = None;
    batch
        .check_preconditions(|table, key| {
            let sql = format!("SELECT version FROM {} WHERE key = $1 FOR SHARE", store.rel(table)?);
            let row =
                tx.query_opt(&sql, &[&key]).map_err(|e| pg_err("checking a precondition", e))?;
            Ok(row.map(|r| r.get::<_, i64>(0)))
        })
        .unwrap_or_else(|e| failed = Some(e));
    if let Some(e) = failed {
        return Err(e);
    }
    for (st, params) in &prepared {
        tx.query(st, params).map_err(|e| pg_err("writing a batch", e))?;
    }
    crate::conn::confirmed(|| tx.commit().map_err(|e| pg_err("committing a batch", e)))
}
