//! Placeholder: the criterion benches follow.
fn main() {}
