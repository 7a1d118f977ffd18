//! NBT reader: arbitrary bytes never panic; whatever parses writes back to bytes that parse
//! to the same tree, skipping a value passes over exactly the bytes parsing consumed, and
//! copying it without a tree (`Writer::copy_payload`) writes what the tree writes, or fails
//! where parsing fails.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_nbt::{Reader, Writer, from_bytes, to_bytes};

fuzz_target!(|data: &[u8]| {
    let Ok((name, tag)) = from_bytes(data) else {
        let _ = Reader::new(data).skip(10, 0);
        // What does not parse does not copy (the root's name apart: the copy takes payloads).
        let mut r = Reader::new(data);
        if let (Ok(ty), Ok(_)) = (r.u8(), r.string()) {
            assert!(
                Writer::sorted().copy_payload(&mut r, ty, 0).is_err(),
                "copied what fails to parse"
            );
        }
        return;
    };
    // Skipping agrees with parsing on where the root ends.
    let mut parsed = Reader::new(data);
    let ty = parsed.u8().unwrap();
    parsed.string().unwrap();
    parsed.payload(ty, 0).unwrap();
    let mut skipped = Reader::new(data);
    skipped.u8().unwrap();
    skipped.raw_string().unwrap();
    skipped.skip(ty, 0).expect("what parses also skips");
    assert_eq!(parsed.position(), skipped.position());
    // Written back in both orders, it reads back the same (Debug text: NaN == NaN).
    let bytes = to_bytes(&name, &tag).expect("a parsed tree writes");
    let (n2, back) = from_bytes(&bytes).expect("written NBT reads back");
    assert_eq!(n2, name);
    assert_eq!(format!("{back:?}"), format!("{tag:?}"));
    let mut w = Writer::sorted();
    w.named(&name, &tag).expect("a parsed tree writes sorted");
    let (_, sorted) = from_bytes(&w.out).expect("sorted NBT reads back");
    assert_eq!(sorted.type_id(), tag.type_id());
    // Copied without a tree, in both orders: the tree's bytes.
    for mut copy in [Writer::new(), Writer::sorted()] {
        let mut tree = copy.clone();
        tree.payload(&tag, 0).expect("a parsed tree writes");
        let mut r = Reader::new(data);
        r.u8().unwrap();
        r.raw_string().unwrap();
        copy.copy_payload(&mut r, ty, 0).expect("what parses copies");
        assert_eq!(copy.out, tree.out);
    }
});
