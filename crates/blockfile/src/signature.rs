//! The signature line: the first line of every block file, `terrane-blockfile/2 <yours>`,
//! read without understanding anything else of the file.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::format::{BLOCK, SIGNATURE_PREFIX, SIGNATURE_PREFIX_V1};
use crate::{Error, Result};

/// Reads the format signature of a block file: the application's part of its first line.
/// Reads at most the first 4 KiB and nothing else (the SeaOfMemes `getFormat`).
pub fn read_signature(path: impl AsRef<Path>) -> Result<String> {
    let path = path.as_ref();
    let mut f = File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound(path.into()),
        _ => Error::Io(e),
    })?;
    let mut head = Vec::with_capacity(BLOCK);
    Read::by_ref(&mut f).take(BLOCK as u64).read_to_end(&mut head)?;
    parse_signature_line(&head).map(|(s, ..)| s)
}

/// Parses `terrane-blockfile/<version> <sig>\n` at the start of `head`: the signature, the
/// line's length and the format version (1 or 2).
pub(crate) fn parse_signature_line(head: &[u8]) -> Result<(String, usize, u8)> {
    let not_ours =
        |detail: &str| Error::NotAStore { backend: "terrane-blockfile", detail: detail.into() };
    let limit = head.len().min(SIGNATURE_PREFIX.len() + terrane_store::MAX_SIGNATURE_LEN + 1);
    let nl = head[..limit]
        .iter()
        .position(|b| *b == b'\n')
        .ok_or_else(|| not_ours("no signature line in the first bytes"))?;
    let line = &head[..nl];
    let (sig, version) = match line.strip_prefix(SIGNATURE_PREFIX.as_bytes()) {
        Some(sig) => (sig, 2),
        None => match line.strip_prefix(SIGNATURE_PREFIX_V1.as_bytes()) {
            Some(sig) => (sig, 1),
            None => {
                return Err(not_ours(
                    "the first line does not start with `terrane-blockfile/2 ` (or `/1 `)",
                ));
            }
        },
    };
    let sig = std::str::from_utf8(sig).map_err(|_| not_ours("the signature is not UTF-8"))?;
    terrane_store::check_signature(sig)
        .map_err(|_| not_ours("the signature is not printable ASCII"))?;
    Ok((sig.to_string(), nl + 1, version))
}

pub(crate) fn signature_line(sig: &str) -> Vec<u8> {
    format!("{SIGNATURE_PREFIX}{sig}\n").into_bytes()
}
