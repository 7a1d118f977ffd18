//! A Bedrock world folder read column by column (`docs/format/bedrock.md`).

use std::collections::HashMap;
use std::path::Path;

use crate::db::ReadDb;
use crate::error::{Error, Result};
use crate::key::{ACTOR_PREFIX, BedrockColumnPos, DIGP_PREFIX, DbKey, tag};

/// Everything a Bedrock world holds for one column of one dimension, as stored.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawColumn {
    /// The column.
    pub pos: BedrockColumnPos,
    /// Sub-chunk records by `y` index, ascending.
    pub sub_chunks: Vec<(i8, Vec<u8>)>,
    /// Every other chunk record (`Data3D`, `Version`, `BlockEntity`, the old `Entity` list,
    /// ...) by tag, ascending.
    pub records: Vec<(u8, Vec<u8>)>,
    /// Whether the world has a `digp` entity list for the column.
    pub digp: bool,
    /// The entities the `digp` list names, in its order: unique id and NBT.
    pub actors: Vec<(i64, Vec<u8>)>,
    /// Ids the `digp` list names that have no `actorprefix` record.
    pub missing_actors: Vec<i64>,
}

impl RawColumn {
    /// The generation stage Bedrock saved the column at when it is not finished (its
    /// `FinalizedState` record, 0 or 1): `needs_instaticking` or `needs_population`; `None`
    /// for a finished column (2) or one without the record (older worlds, finished).
    pub fn unfinished_stage(&self) -> Option<&'static str> {
        let (_, v) = self.records.iter().find(|(t, _)| *t == crate::key::tag::FINALIZED_STATE)?;
        // An `i32`; some old worlds wrote one byte.
        let state = match v.len() {
            1 => i32::from(v[0]),
            4 => i32::from_le_bytes([v[0], v[1], v[2], v[3]]),
            _ => return None,
        };
        match state {
            0 => Some("needs_instaticking"),
            1 => Some("needs_population"),
            _ => None,
        }
    }
}

/// Reads a world's database: every column (to `column`, in key order; the three dimensions of
/// one `x`, `z` together) and every other record (to `other`, with its key).
pub fn read_db(
    db: &mut ReadDb,
    mut column: impl FnMut(RawColumn) -> Result<()>,
    mut other: impl FnMut(&[u8], &[u8]) -> Result<()>,
) -> Result<()> {
    // Entities first: they live under their own keys, and the columns that list them come in
    // any order. (No chunk key is as long as an entity's or a list's: a prefix scan finds
    // exactly them.)
    let mut actors: HashMap<i64, Vec<u8>> = HashMap::new();
    let mut digps: HashMap<BedrockColumnPos, Vec<u8>> = HashMap::new();
    for prefix in [ACTOR_PREFIX, DIGP_PREFIX] {
        db.for_each_prefix(prefix, |k, v| {
            match DbKey::parse(k) {
                DbKey::Actor(id) => drop(actors.insert(id, v.to_vec())),
                DbKey::Digp(p) => drop(digps.insert(p, v.to_vec())),
                _ => {}
            }
            Ok(())
        })?;
    }
    let mut group: Vec<RawColumn> = Vec::new();
    let mut prefix: Option<[u8; 8]> = None;
    db.for_each(|k, v| {
        let (pos, t, y) = match DbKey::parse(k) {
            DbKey::Chunk { pos, tag, y } => (pos, tag, y),
            DbKey::Actor(_) | DbKey::Digp(_) => return Ok(()),
            DbKey::Other => return other(k, v),
        };
        let p: [u8; 8] = k[..8].try_into().expect("chunk keys are longer than 8 bytes");
        if prefix != Some(p) {
            emit(&mut group, &mut column, &mut actors, &mut digps)?;
            prefix = Some(p);
        }
        let i = match group.iter().position(|c| c.pos == pos) {
            Some(i) => i,
            None => {
                group.push(RawColumn { pos, ..RawColumn::default() });
                group.len() - 1
            }
        };
        let c = &mut group[i];
        match y {
            Some(y) if t == tag::SUB_CHUNK => c.sub_chunks.push((y, v.to_vec())),
            _ => c.records.push((t, v.to_vec())),
        }
        Ok(())
    })?;
    emit(&mut group, &mut column, &mut actors, &mut digps)?;
    // Columns that have entities and no other record.
    let mut rest: Vec<BedrockColumnPos> = digps.keys().copied().collect();
    rest.sort();
    for pos in rest {
        let mut c = RawColumn { pos, ..RawColumn::default() };
        attach(&mut c, &mut actors, &mut digps);
        column(c)?;
    }
    // Entities no column lists: kept as world records.
    let mut left: Vec<(i64, Vec<u8>)> = actors.into_iter().collect();
    left.sort_by_key(|a| a.0);
    for (id, v) in left {
        other(&crate::key::actor_key(id), &v)?;
    }
    Ok(())
}

/// Hands the columns of one `x`, `z` to `column`, dimension by dimension, with their
/// entities and their sub-chunks in `y` order.
fn emit(
    group: &mut Vec<RawColumn>,
    column: &mut impl FnMut(RawColumn) -> Result<()>,
    actors: &mut HashMap<i64, Vec<u8>>,
    digps: &mut HashMap<BedrockColumnPos, Vec<u8>>,
) -> Result<()> {
    group.sort_by_key(|c| c.pos.dim);
    for mut c in group.drain(..) {
        attach(&mut c, actors, digps);
        c.sub_chunks.sort_by_key(|s| s.0);
        column(c)?;
    }
    Ok(())
}

/// Moves the column's `digp` list and the entities it names into the column.
fn attach(
    c: &mut RawColumn,
    actors: &mut HashMap<i64, Vec<u8>>,
    digps: &mut HashMap<BedrockColumnPos, Vec<u8>>,
) {
    let Some(list) = digps.remove(&c.pos) else { return };
    c.digp = true;
    for id in list.chunks_exact(8) {
        let id = i64::from_le_bytes(id.try_into().expect("8 bytes"));
        match actors.remove(&id) {
            Some(v) => c.actors.push((id, v)),
            None => c.missing_actors.push(id),
        }
    }
}

/// The `db/` folder of a world folder, checked to be there.
pub fn db_dir(world_dir: &Path) -> Result<std::path::PathBuf> {
    let db = world_dir.join("db");
    if !db.join("CURRENT").is_file() {
        return Err(Error::Db {
            path: world_dir.to_path_buf(),
            message: "no db/CURRENT: not a Bedrock world folder (it holds level.dat and db/)"
                .into(),
        });
    }
    Ok(db)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_is_unfinished_at_finalized_states_0_and_1_in_either_width() {
        let with = |state: Option<&[u8]>| RawColumn {
            pos: BedrockColumnPos::default(),
            sub_chunks: Vec::new(),
            records: state
                .map(|v| (crate::key::tag::FINALIZED_STATE, v.to_vec()))
                .into_iter()
                .collect(),
            digp: false,
            actors: Vec::new(),
            missing_actors: Vec::new(),
        };
        assert_eq!(with(Some(&0i32.to_le_bytes())).unfinished_stage(), Some("needs_instaticking"));
        assert_eq!(with(Some(&1i32.to_le_bytes())).unfinished_stage(), Some("needs_population"));
        assert_eq!(with(Some(&[1])).unfinished_stage(), Some("needs_population"), "one byte");
        assert_eq!(with(Some(&2i32.to_le_bytes())).unfinished_stage(), None);
        assert_eq!(with(None).unfinished_stage(), None, "older worlds: finished");
    }
}
