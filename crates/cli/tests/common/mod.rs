//! Helpers the command's integration tests share.

pub mod minecraft;
pub mod players;
