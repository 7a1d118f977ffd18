//! The `terrane` command.
fn main() {}
