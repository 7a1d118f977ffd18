//! Java block-state strings: one canonical form whatever the spelling, and typed errors for
//! strings that are not block states.

use proptest::prelude::*;
use terrane_chunk::Error;
use terrane_chunk::block_state::{canonical, canonical_from_parts, is_canonical, parse};

const STAIRS: &str =
    "minecraft:oak_stairs[facing=north,half=bottom,shape=straight,waterlogged=false]";

#[test]
fn every_spelling_of_a_state_has_one_canonical_form() {
    for s in [
        STAIRS,
        "minecraft:oak_stairs[waterlogged=false,shape=straight,half=bottom,facing=north]",
        "minecraft:oak_stairs[ facing = north ,half=bottom,shape=straight,waterlogged=false]",
        "oak_stairs[half=bottom,facing=north,waterlogged=false,shape=straight]",
        "  minecraft:oak_stairs [facing=north, half=bottom, shape=straight, waterlogged=false]  ",
    ] {
        assert_eq!(canonical(s), STAIRS, "{s:?}");
    }
    assert_eq!(canonical("stone"), "minecraft:stone");
    assert_eq!(canonical("mod:x[]"), "mod:x");
    assert_eq!(canonical("mod:x[ ]"), "mod:x");
    // Legacy ids of pre-1.13 chunks keep their two colons.
    assert_eq!(canonical("legacy:1:0"), "legacy:1:0");
    assert!(is_canonical(STAIRS) && is_canonical("legacy:1:0"));
    for s in ["stone", "a:b[]", "a:b[y=1,x=2]", "a:b[x=1,x=2]", " a:b", "a:b[x = 1]"] {
        assert!(!is_canonical(s) || canonical(s) == s, "{s:?}");
    }
    assert!(!is_canonical("a:b[y=1,x=2]") && !is_canonical("a:b[x = 1]"));
}

#[test]
fn parts_are_trimmed_sorted_and_the_last_value_of_a_key_wins() {
    assert_eq!(
        canonical_from_parts(" oak_stairs", [("half ", " top"), ("facing", "east")]),
        "minecraft:oak_stairs[facing=east,half=top]"
    );
    assert_eq!(canonical_from_parts("a:b", [("x", "1"), ("y", "2"), ("x", "3")]), "a:b[x=3,y=2]");
    assert_eq!(canonical_from_parts("a:b", []), "a:b");
}

#[test]
fn parse_gives_the_canonical_parts() {
    let (name, props) = parse("oak_stairs[ half = top ,facing=east]").unwrap();
    assert_eq!(name, "minecraft:oak_stairs");
    assert_eq!(props, [("facing".into(), "east".into()), ("half".into(), "top".into())]);
    assert_eq!(parse("mod:x[]").unwrap(), ("mod:x".to_string(), vec![]));
}

#[test]
fn malformed_strings_are_typed_errors_and_their_own_canonical_form() {
    for (s, reason) in [
        ("", "name is empty"),
        ("[a=b]", "name is empty"),
        ("a:b[x=1", "does not end with `]`"),
        ("a:b[x=1]]", "second `=`"),
        ("a:b[x]", "no `=value`"),
        ("a:b[=1]", "no key"),
        ("a:b[x=1,,y=2]", "empty property"),
        ("a:b[x=1,]", "empty property"),
        ("a:b[x=1,x=2]", "given twice"),
        ("a:b[x=1=2]", "second `=`"),
        ("a=b", "holds `]`, `=` or `,`"),
    ] {
        match parse(s) {
            Err(e @ Error::InvalidBlockState { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains(reason), "{s:?}: {msg}");
                assert!(msg.contains("namespace:name[key=value,...]"), "{msg}");
            }
            other => panic!("{s:?}: {other:?}"),
        }
        assert_eq!(canonical(s), s, "kept as it is");
    }
}

fn key() -> impl Strategy<Value = String> {
    "[a-z_]{1,8}"
}

proptest! {
    /// Any order of the properties, any spaces around the parts, with or without the
    /// namespace: one canonical string, which is its own canonical form and parses back to
    /// the same parts.
    #[test]
    fn canonical_ignores_order_spaces_and_the_default_namespace(
        name in "[a-z_]{1,12}",
        namespaced in any::<bool>(),
        props in proptest::collection::btree_map(key(), "[a-z0-9_]{0,6}", 0..6),
        order in any::<u64>(),
        pad in proptest::collection::vec(0usize..3, 64),
    ) {
        let sp = |i: usize| " ".repeat(pad[i % pad.len()]);
        let mut kv: Vec<(&String, &String)> = props.iter().collect();
        let n = kv.len();
        if n > 1 {
            kv.rotate_left((order as usize) % n);
            if order & 1 == 1 {
                kv.reverse();
            }
        }
        let full = format!("minecraft:{name}");
        let mut s = format!("{}{}", sp(0), if namespaced { &full } else { &name });
        if !kv.is_empty() || order & 2 == 2 {
            s.push_str(&sp(1));
            s.push('[');
            let body: Vec<String> = kv
                .iter()
                .enumerate()
                .map(|(i, (k, v))| format!("{}{k}{}={}{v}{}", sp(2 + 4 * i), sp(3 + 4 * i), sp(4 + 4 * i), sp(5 + 4 * i)))
                .collect();
            s.push_str(&body.join(","));
            s.push(']');
        }
        s.push_str(&sp(63));
        let c = canonical(&s);
        let want = canonical_from_parts(&full, props.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        prop_assert_eq!(&c, &want);
        prop_assert_eq!(canonical(&c), c.clone());
        let (pn, pp) = parse(&s).unwrap();
        prop_assert_eq!(pn, full);
        let expected: Vec<(String, String)> = props.into_iter().collect();
        prop_assert_eq!(pp, expected);
    }

    /// Any string: no panic, the canonical form is stable, and `is_canonical` (whose fast
    /// path answers without parsing) agrees with comparing.
    #[test]
    fn canonical_is_idempotent_on_any_string(
        s in prop_oneof![".{0,40}", "[a-z: \\[\\]=,_]{0,30}", "[a-z]{1,4}:[a-z]{1,4}\\[([a-c]=[0-2],){0,3}[a-c]=[0-2]\\]"],
    ) {
        let c = canonical(&s);
        prop_assert_eq!(canonical(&c), c.clone());
        prop_assert_eq!(is_canonical(&s), c == s, "{:?}", s);
        prop_assert!(is_canonical(&c));
    }
}

/// Every ASCII whitespace the parser trims (the vertical tab too) keeps a string from being
/// taken as canonical without comparing.
#[test]
fn whitespace_the_parser_trims_is_never_canonical() {
    for ws in [' ', '\t', '\n', '\u{b}', '\u{c}', '\r'] {
        let s = format!("minecraft:stone{ws}");
        assert!(!is_canonical(&s), "{s:?}");
        assert!(is_canonical(&canonical(&s)), "{s:?}");
        assert!(!is_canonical(&format!(":{ws}")), "{ws:?}");
    }
}
