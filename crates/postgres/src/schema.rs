//! The SQL layout of a store (`docs/format/postgres-v1.md`): names, creation and the checks
//! of an open.

use std::collections::BTreeMap;

use postgres::Client;
use postgres::error::SqlState;
use terrane_store::{Error, OpenMode, Result, StoreConfig};

use crate::conn::pg_err;

/// The format row of a store's meta table (`docs/format/postgres-v1.md`).
pub const FORMAT: &str = "terrane-postgres/1";

/// A quoted SQL identifier.
pub(crate) fn ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// The relation name of store table `table`: the name itself (store names are 1–64 bytes of
/// `[A-Za-z0-9_.:-]`), or for a 64-byte name its first 54 bytes, `~` and 8 hex digits of its
/// FNV-1a hash (PostgreSQL's identifiers hold 63 bytes).
pub(crate) fn relname(table: &str) -> String {
    if table.len() <= 63 {
        return table.to_string();
    }
    let h = table.bytes().fold(0x811c_9dc5u32, |h, b| (h ^ b as u32).wrapping_mul(0x0100_0193));
    format!("{}~{h:08x}", &table[..54])
}

/// `"schema"."relname"` of store table `table`.
pub(crate) fn qualified(schema: &str, table: &str) -> String {
    format!("{}.{}", ident(schema), ident(&relname(table)))
}

/// The advisory-lock key of a schema's store (the lock held for the store's life); the key
/// that serialises opens is this one with the lowest bit flipped.
pub(crate) fn lock_key(schema: &str) -> i64 {
    let h = format!("terrane:{schema}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    (h & !1) as i64
}

/// Where the store is, for messages: the schema and the connection string without password.
pub(crate) fn location(schema: &str, conninfo: &str) -> String {
    let redacted = redact(conninfo);
    format!("schema {schema} of {redacted}")
}

/// A connection string with any password replaced by `***`.
pub(crate) fn redact(conninfo: &str) -> String {
    if let Some(rest) = conninfo.split_once("://") {
        // scheme://user:password@host...
        let (scheme, rest) = rest;
        if let Some((creds, host)) = rest.split_once('@')
            && let Some((user, _)) = creds.split_once(':')
        {
            return format!("{scheme}://{user}:***@{host}");
        }
        return conninfo.to_string();
    }
    conninfo
        .split_whitespace()
        .map(|kv| if kv.starts_with("password=") { "password=***" } else { kv })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A store table: a row of up to a page is kept whole in the table's own pages (`STORAGE
/// MAIN`, `toast_tuple_target` 8160), so that a chunk-sized value is read without visiting
/// the TOAST table and is stored as written, uncompressed; a larger value is compressed (lz4
/// when the server has it) and goes out of line if it is still too large.
fn create_table_sql(schema: &str, table: &str, lz4: bool) -> String {
    let compression = if lz4 { " COMPRESSION lz4" } else { "" };
    let rel = qualified(schema, table);
    format!(
        "CREATE TABLE {rel} (key bytea PRIMARY KEY, version bigint NOT NULL, data bytea{compression} NOT NULL) \
         WITH (toast_tuple_target = 8160); ALTER TABLE {rel} ALTER COLUMN data SET STORAGE MAIN"
    )
}

/// Whether the server can compress TOASTed values with lz4 (PostgreSQL 14+ built with lz4).
fn has_lz4(client: &mut impl postgres::GenericClient) -> Result<bool> {
    let row = client
        .query_opt(
            "SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' \
             AND 'lz4' = ANY(enumvals)",
            &[],
        )
        .map_err(|e| pg_err("checking for lz4", e))?;
    Ok(row.is_some())
}

/// The rows of `schema`'s meta table (name → value), or `None` when the table is not shaped
/// like terrane's (a column missing, or of another type): another program's. Any other
/// failure (the server failing to read its files, a lost connection) is that failure, not a
/// verdict on the schema.
fn read_meta(
    client: &mut impl postgres::GenericClient,
    schema: &str,
) -> Result<Option<BTreeMap<String, Vec<u8>>>> {
    let rows = match client.query(&format!("SELECT name, value FROM {}.meta", ident(schema)), &[]) {
        Ok(rows) => rows,
        Err(e) if e.code() == Some(&SqlState::UNDEFINED_COLUMN) => return Ok(None),
        Err(e) => return Err(pg_err("reading the meta table", e)),
    };
    let mut found = BTreeMap::new();
    for r in rows {
        let (Ok(name), Ok(value)) = (r.try_get::<_, String>(0), r.try_get::<_, Vec<u8>>(1)) else {
            return Ok(None);
        };
        found.insert(name, value);
    }
    Ok(Some(found))
}

/// Checks that `schema` exists and holds a terrane store (of any signature).
pub(crate) fn check_ours(client: &mut Client, schema: &str, location: &str) -> Result<()> {
    let row = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1), to_regclass($2) IS NOT NULL",
            &[&schema, &format!("{}.meta", ident(schema))],
        )
        .map_err(|e| pg_err("looking for the schema", e))?;
    let (exists, has_meta): (bool, bool) = (row.get(0), row.get(1));
    if !exists {
        return Err(Error::NotFound(location.into()));
    }
    let format = if has_meta {
        read_meta(client, schema)?.and_then(|m| m.get("format").cloned())
    } else {
        None
    };
    if format.as_deref() != Some(FORMAT.as_bytes()) {
        return Err(Error::NotAStore {
            backend: "terrane-postgres",
            detail: format!("{location} is not a terrane store: left alone"),
        });
    }
    Ok(())
}

/// What an open found: the store's tables (store name → relation name).
pub(crate) struct Opened {
    pub(crate) tables: BTreeMap<String, String>,
    /// The writer epoch this open took (empty for a reader).
    pub(crate) epoch: Vec<u8>,
}

/// Checks (and, when the mode allows, creates or extends) the store in `schema`, in one
/// transaction serialised with other opens by an advisory lock. A schema that exists without
/// terrane's meta table or format row is refused and left alone.
pub(crate) fn open(
    client: &mut Client,
    schema: &str,
    config: &StoreConfig,
    location: &str,
    take_epoch: bool,
) -> Result<Opened> {
    let read_only = config.read_only;
    let mut tx = client.transaction().map_err(|e| pg_err("beginning the open", e))?;
    if !read_only {
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&(lock_key(schema) | 1)])
            .map_err(|e| pg_err("serialising opens", e))?;
    }
    let exists = tx
        .query_one("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", &[&schema])
        .map_err(|e| pg_err("looking for the schema", e))?
        .get::<_, bool>(0);
    let meta = format!("{}.meta", ident(schema));
    let mut tables = BTreeMap::new();
    if !exists {
        if read_only || config.mode == OpenMode::Open {
            return Err(Error::NotFound(location.into()));
        }
        let lz4 = has_lz4(&mut tx)?;
        let mut sql = format!(
            "CREATE SCHEMA {s}; CREATE TABLE {meta} (name text PRIMARY KEY, value bytea NOT NULL);",
            s = ident(schema)
        );
        for t in &config.tables {
            sql.push_str(&create_table_sql(schema, t, lz4));
            sql.push(';');
        }
        tx.batch_execute(&sql).map_err(|e| pg_err("creating the store", e))?;
        let insert = format!("INSERT INTO {meta} (name, value) VALUES ($1, $2)");
        tx.execute(&insert, &[&"format", &FORMAT.as_bytes()])
            .map_err(|e| pg_err("creating the store", e))?;
        tx.execute(&insert, &[&"signature", &config.signature.as_bytes()])
            .map_err(|e| pg_err("creating the store", e))?;
        for t in &config.tables {
            tx.execute(&insert, &[&format!("table:{t}"), &relname(t).as_bytes()])
                .map_err(|e| pg_err("creating the store", e))?;
            tables.insert(t.clone(), relname(t));
        }
    } else {
        let not_ours = |detail: String| Error::NotAStore { backend: "terrane-postgres", detail };
        let has_meta = tx
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&format!("{}.meta", ident(schema))])
            .map_err(|e| pg_err("looking for the meta table", e))?
            .get::<_, bool>(0);
        if !has_meta {
            return Err(not_ours(format!(
                "{location} exists and holds no terrane meta table: another program's schema \
                 (pick another with PgOptions::schema)"
            )));
        }
        let Some(found) = read_meta(&mut tx, schema)? else {
            return Err(not_ours(format!(
                "{location}: its meta table is not terrane's (columns `name text, value bytea` \
                 expected): another program's schema (pick another with PgOptions::schema)"
            )));
        };
        match found.get("format").map(Vec::as_slice) {
            Some(f) if f == FORMAT.as_bytes() => {}
            Some(f) => {
                return Err(not_ours(format!(
                    "{location} has format {:?}, this build reads {FORMAT}",
                    String::from_utf8_lossy(f)
                )));
            }
            None => return Err(not_ours(format!("{location}: its meta table has no format row"))),
        }
        let sig = found.get("signature").map(|s| String::from_utf8_lossy(s).into_owned());
        if sig.as_deref() != Some(config.signature.as_str()) {
            return Err(Error::SignatureMismatch {
                expected: config.signature.clone(),
                found: sig.unwrap_or_default(),
            });
        }
        if config.mode == OpenMode::Create {
            return Err(Error::AlreadyExists(location.into()));
        }
        for (name, value) in &found {
            if let Some(t) = name.strip_prefix("table:") {
                tables.insert(t.to_string(), String::from_utf8_lossy(value).into_owned());
            }
        }
        let missing: Vec<&String> =
            config.tables.iter().filter(|t| !tables.contains_key(*t)).collect();
        if !missing.is_empty() && !read_only {
            let lz4 = has_lz4(&mut tx)?;
            let insert = format!("INSERT INTO {meta} (name, value) VALUES ($1, $2)");
            for t in missing {
                tx.batch_execute(&create_table_sql(schema, t, lz4))
                    .map_err(|e| pg_err("adding a table", e))?;
                tx.execute(&insert, &[&format!("table:{t}"), &relname(t).as_bytes()])
                    .map_err(|e| pg_err("adding a table", e))?;
                tables.insert(t.clone(), relname(t));
            }
        }
    }
    // A writer takes the next epoch: `FOR UPDATE` waits for the writes of earlier writers
    // still in flight (they hold the row `FOR SHARE`), and every write of theirs that starts
    // later finds another epoch and writes nothing.
    let mut epoch = Vec::new();
    if take_epoch {
        let current = tx
            .query_opt(
                &format!("SELECT value FROM {meta} WHERE name = 'writer_epoch' FOR UPDATE"),
                &[],
            )
            .map_err(|e| pg_err("taking the writer epoch", e))?
            .and_then(|r| r.try_get::<_, Vec<u8>>(0).ok())
            .and_then(|v| <[u8; 8]>::try_from(v).ok())
            .map_or(0, u64::from_be_bytes);
        epoch = (current + 1).to_be_bytes().to_vec();
        tx.execute(
            &format!(
                "INSERT INTO {meta} (name, value) VALUES ('writer_epoch', $1) \
                 ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value"
            ),
            &[&epoch],
        )
        .map_err(|e| pg_err("taking the writer epoch", e))?;
    }
    tx.commit().map_err(|e| pg_err("finishing the open", e))?;
    Ok(Opened { tables, epoch })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_postgres_identifiers_and_passwords_stay_out_of_messages() {
        let long = "a".repeat(64);
        assert_eq!(relname("chunkl0"), "chunkl0");
        assert_eq!(relname(&long).len(), 63);
        assert_ne!(relname(&long), relname(&format!("{}b", "a".repeat(63))));
        assert_eq!(qualified("w", "a\"b"), "\"w\".\"a\"\"b\"");
        assert_eq!(redact("postgres://me:secret@db/world"), "postgres://me:***@db/world");
        assert_eq!(redact("host=/tmp password=x dbname=w"), "host=/tmp password=*** dbname=w");
        assert_eq!(lock_key("w") & 1, 0);
    }
}
