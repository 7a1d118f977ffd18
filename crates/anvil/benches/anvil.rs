//! Benchmarks (placeholder until the real ones land).
fn main() {}
