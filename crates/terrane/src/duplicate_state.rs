//! [`DuplicateState`]: one Java block state that chunks store under more than one id, as
//! [`World::verify`](crate::World::verify) reports it and
//! [`Error::DuplicateStates`](crate::Error::DuplicateStates) words it
//! ([`block_states`](crate::block_states) finds and merges them).

use std::fmt;

use terrane_chunk::BlockId;

/// One block state that chunks store under more than one id.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DuplicateState {
    /// The canonical spelling ([`block_state::canonical`](terrane_chunk::block_state::canonical)).
    pub canonical: String,
    /// The canonical spelling's id; `None` when it is not registered yet (merging registers
    /// it).
    pub id: Option<BlockId>,
    /// The other spellings that chunks use, with their ids, ascending: merging moves their
    /// blocks to [`id`](Self::id).
    pub spellings: Vec<(BlockId, String)>,
}

impl fmt::Display for DuplicateState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.id {
            Some(id) => write!(f, "{} (id {}) is also stored as", self.canonical, id.0)?,
            None => write!(f, "{} is stored as", self.canonical)?,
        }
        for (i, (id, name)) in self.spellings.iter().enumerate() {
            let sep = match i {
                0 => " ",
                _ if i + 1 == self.spellings.len() => " and ",
                _ => ", ",
            };
            write!(f, "{sep}id {} {name:?}", id.0)?;
        }
        Ok(())
    }
}

/// `states` in a sentence: "2 block states stored under several ids: ..." with each
/// state's ids and spellings (the start of [`Error::DuplicateStates`](crate::Error::DuplicateStates)'s message).
pub fn describe(states: &[DuplicateState]) -> String {
    let list: Vec<String> = states.iter().map(ToString::to_string).collect();
    format!(
        "{} block state{} stored under several ids: {}",
        states.len(),
        if states.len() == 1 { "" } else { "s" },
        list.join("; ")
    )
}
