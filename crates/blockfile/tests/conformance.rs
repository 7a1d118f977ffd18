//! The conformance suite of terrane-store, unmodified, on the block file.

use terrane_blockfile::BlockFile;
use terrane_store::conformance;

#[test]
fn blockfile_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    conformance::run_all(|| {
        n += 1;
        BlockFile::open(dir.path().join(format!("s{n}.tbf")), &conformance::config("conformance"))
            .unwrap()
    });
}

#[test]
fn blockfile_conforms_across_reopens() {
    conformance::run_persistent(|dir, config| BlockFile::open(dir.join("world.tbf"), config));
}
