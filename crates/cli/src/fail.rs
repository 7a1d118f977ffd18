//! A command's failure ([`Fail`]): the message for the user and the exit status, shared by
//! `terrane` and `terrane-convert`; and the library's option names in messages turned into
//! the command's flags ([`with_flags`]).

use std::fmt;

/// A command failure: a message for the user and the exit status.
#[derive(Debug)]
pub struct Fail {
    pub(crate) message: String,
    pub(crate) status: u8,
}

impl Fail {
    /// Bad input (arguments, files): exit status 2.
    pub fn usage(message: impl Into<String>) -> Self {
        Self { message: message.into(), status: 2 }
    }
    /// Anything else: exit status 1.
    pub fn other(message: impl Into<String>) -> Self {
        Self { message: message.into(), status: 1 }
    }
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<serde_json::Error> for Fail {
    fn from(e: serde_json::Error) -> Self {
        Fail::other(e.to_string())
    }
}

/// The library's names of options in its messages, and the command's flag for each.
pub(crate) const FLAGS: [(&str, &str); 3] = [
    ("`Overwrite::Replace`", "`--force`"),
    ("`Overwrite::Merge`", "`--merge`"),
    ("`ConvertOptions::rebuild_level_dat`", "`--force`"),
];

/// `message` with the command's flags in place of the library's option names ([`FLAGS`]).
pub(crate) fn with_flags(message: String) -> String {
    FLAGS.iter().fold(message, |m, (option, flag)| m.replace(option, flag))
}

impl From<terrane_convert::Error> for Fail {
    /// What the command was given is refused with status 2; a full disk says that the same
    /// command goes on where the conversion stopped.
    fn from(e: terrane_convert::Error) -> Self {
        use terrane_convert::Error as E;
        let message = with_flags(e.to_string());
        match e {
            E::Destination { .. }
            | E::NoFolderName(_)
            | E::NoRegionFiles(_)
            | E::NotABedrockWorld(_) => Fail::usage(message),
            _ if is_storage_full(&e) => Fail::other(format!(
                "{message}\n(the disk is full: free space, then run the same command again; it \
                 goes on where it stopped)"
            )),
            _ => Fail::other(message),
        }
    }
}

/// Whether an I/O error that says the disk is full is among `e`'s causes.
fn is_storage_full(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(e);
    while let Some(e) = next {
        if e.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::StorageFull)
        {
            return true;
        }
        next = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conversion_refused_is_bad_input_and_names_the_flag() {
        let f = Fail::from(terrane_convert::Error::NotABedrockWorld("w".into()));
        assert_eq!(f.status, 2, "{f}");
        let f = Fail::from(terrane_convert::Error::DamagedLevelDat("w/level.dat".into()));
        assert_eq!(f.status, 1, "{f}");
        assert!(f.message.contains("`--force`"), "{f}");
        assert!(!f.message.contains("ConvertOptions"), "{f}");
    }

    #[test]
    fn a_full_disk_during_a_conversion_says_to_run_it_again() {
        let full = std::io::Error::new(std::io::ErrorKind::StorageFull, "No space left");
        let f = Fail::from(terrane_convert::Error::Io { path: "w/db".into(), source: full });
        assert!(f.message.contains("run the same command again"), "{f}");
        let other = std::io::Error::other("No space left");
        let f = Fail::from(terrane_convert::Error::Io { path: "w/db".into(), source: other });
        assert!(!f.message.contains("the disk is full"), "{f}");
    }
}
