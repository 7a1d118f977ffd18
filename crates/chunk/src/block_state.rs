//! Java Edition block-state strings (`minecraft:oak_stairs[facing=east,half=top]`): the one
//! parser and the one canonical form every Java importer registers states under.
//!
//! A world's block registry ([`Schema::blocks`](crate::Schema::blocks)) names each block by a
//! string; two spellings of one state would get two ids. Importers of Java data (region
//! palettes, schematics, lists of states) therefore register [`canonical`] strings only:
//!
//! - the name gets the `minecraft:` namespace when it has none;
//! - spaces around the name, the keys and the values are dropped;
//! - properties are sorted by key (a repeated key keeps its last value), and an empty `[]`
//!   is dropped.
//!
//! ```
//! use terrane_chunk::block_state::{canonical, is_canonical, parse};
//!
//! let c = "minecraft:oak_stairs[facing=north,half=bottom,waterlogged=false]";
//! assert_eq!(canonical("oak_stairs[waterlogged=false,half=bottom,facing=north]"), c);
//! assert_eq!(canonical("minecraft:oak_stairs[ facing = north ,half=bottom,waterlogged=false]"), c);
//! assert_eq!(canonical("stone[]"), "minecraft:stone");
//! assert!(is_canonical(c) && !is_canonical("stone"));
//!
//! let (name, props) = parse("chest[facing=west]")?;
//! assert_eq!(name, "minecraft:chest");
//! assert_eq!(props, [("facing".to_string(), "west".to_string())]);
//! assert!(parse("minecraft:chest[facing]").is_err());
//! # Ok::<(), terrane_chunk::Error>(())
//! ```
//!
//! Bedrock registry names (terrane-bedrock's `names`) are another format, with typed and
//! quoted values and `@version`; nothing here applies to them.

use crate::{Error, Result};

/// The namespace a name without one belongs to.
pub const DEFAULT_NAMESPACE: &str = "minecraft";

/// Splits a block-state string into its namespaced name and its properties, trimmed of
/// spaces and sorted by key: the parts of its [`canonical`] form.
///
/// Accepted: `name`, `name[]`, `name[k=v,...]`, with or without a namespace, with spaces
/// around any part. Refused with [`Error::InvalidBlockState`]: an empty name, a `[` without
/// a closing `]` at the very end, an empty property (`[a=1,,b=2]`), a property without `=` or
/// with an empty key, a key given twice, and `[`, `]` or `=` inside a name, key or value
/// (`,` cannot be in one).
pub fn parse(s: &str) -> Result<(String, Vec<(String, String)>)> {
    let (name, props) = split(s)?;
    let props = props.into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
    let name =
        if name.contains(':') { name.to_owned() } else { format!("{DEFAULT_NAMESPACE}:{name}") };
    Ok((name, props))
}

/// The canonical form of a block-state string (see the [module docs](self)). A string that
/// does not [`parse`] is its own canonical form: it is returned unchanged, so nothing a file
/// holds is lost.
pub fn canonical(s: &str) -> String {
    match split(s) {
        Ok((name, props)) => canonical_from_parts(name, props),
        Err(_) => s.to_owned(),
    }
}

/// Whether `s` is its own [`canonical`] form (a string that does not parse is). Answered
/// without allocating for the strings importers see most, already canonical ASCII.
pub fn is_canonical(s: &str) -> bool {
    certainly_canonical(s) || canonical(s) == s
}

/// `true` only for canonical strings, checked without allocating: ASCII without whitespace,
/// a namespaced name, and no properties or a non-empty list of them whose keys strictly
/// ascend. (Anything else may be canonical too: [`is_canonical`] then compares.)
fn certainly_canonical(s: &str) -> bool {
    // What `split` trims: Unicode whitespace, which in ASCII includes the vertical tab that
    // `u8::is_ascii_whitespace` leaves out.
    if !s.is_ascii() || s.bytes().any(|b| char::from(b).is_whitespace()) {
        return false;
    }
    let (name, props) = match s.find('[') {
        Some(i) => match s[i + 1..].strip_suffix(']') {
            Some(p) if !p.is_empty() => (&s[..i], Some(p)),
            _ => return false,
        },
        None => (s, None),
    };
    if name.is_empty() || !name.contains(':') || name.contains([']', '=', ',']) {
        return false;
    }
    let mut prev: Option<&str> = None;
    for p in props.into_iter().flat_map(|p| p.split(',')) {
        let Some((k, v)) = p.split_once('=') else { return false };
        if k.is_empty() || k.contains(['[', ']']) || v.contains(['[', ']', '=']) {
            return false;
        }
        if prev.is_some_and(|q| q >= k) {
            return false;
        }
        prev = Some(k);
    }
    true
}

/// [`parse`] without the namespace and the copies: the trimmed name and the trimmed
/// properties sorted by key.
fn split(s: &str) -> Result<(&str, Vec<(&str, &str)>)> {
    let bad = |reason: String| Error::InvalidBlockState { state: s.to_owned(), reason };
    let t = s.trim();
    let (name, props) = match t.find('[') {
        Some(i) => {
            let inner = t[i + 1..].strip_suffix(']').ok_or_else(|| {
                bad("`[` opens properties but the string does not end with `]`".into())
            })?;
            (t[..i].trim_end(), inner)
        }
        None => (t, ""),
    };
    if name.is_empty() {
        return Err(bad("the block name is empty".into()));
    }
    if name.contains([']', '=', ',']) {
        return Err(bad(format!("the name {name:?} holds `]`, `=` or `,`")));
    }
    let mut kv: Vec<(&str, &str)> = Vec::new();
    if !props.trim().is_empty() {
        for p in props.split(',') {
            let p = p.trim();
            if p.is_empty() {
                return Err(bad("an empty property (two commas, or a comma before `]`)".into()));
            }
            let (k, v) =
                p.split_once('=').ok_or_else(|| bad(format!("property {p:?} has no `=value`")))?;
            let (k, v) = (k.trim(), v.trim());
            if k.is_empty() {
                return Err(bad(format!("property {p:?} has no key before `=`")));
            }
            if k.contains(['[', ']']) || v.contains(['[', ']', '=']) {
                return Err(bad(format!("property {p:?} holds `[`, `]` or a second `=`")));
            }
            if kv.iter().any(|(pk, _)| *pk == k) {
                return Err(bad(format!("property key {k:?} is given twice")));
            }
            kv.push((k, v));
        }
    }
    kv.sort_unstable_by_key(|p| p.0);
    Ok((name, kv))
}

/// The canonical string of a name and its properties, as a palette entry of a region file
/// gives them (`Name` and `Properties`): the `minecraft:` namespace added to a name without
/// one, spaces around name, keys and values dropped, properties sorted by key (a repeated key
/// keeps its last value) as `[k=v,...]`, nothing for none.
pub fn canonical_from_parts<'a>(
    name: &str,
    props: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> String {
    let mut kv: Vec<(&str, &str)> = props.into_iter().map(|(k, v)| (k.trim(), v.trim())).collect();
    // Stable: of equal keys, the last given stays last and wins below.
    kv.sort_by_key(|p| p.0);
    let name = name.trim();
    let mut s = String::with_capacity(name.len() + 10 + kv.len() * 16);
    if !name.contains(':') {
        s.push_str(DEFAULT_NAMESPACE);
        s.push(':');
    }
    s.push_str(name);
    let props_at = s.len();
    for (i, (k, v)) in kv.iter().enumerate() {
        if kv.get(i + 1).is_some_and(|next| next.0 == *k) {
            continue; // a later value of the same key wins
        }
        s.push(if s.len() == props_at { '[' } else { ',' });
        s.push_str(k);
        s.push('=');
        s.push_str(v);
    }
    if s.len() > props_at {
        s.push(']');
    }
    s
}
