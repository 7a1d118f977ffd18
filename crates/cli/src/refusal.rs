//! A refusal's message as the command says it: the library's words for its options become
//! the command's flags, and the flag that does what the message advises is named.

use terrane::refusal::{Holds, ImportedFrom, Refusal, Writes};

/// `e`'s message with the command's flags ([`crate::fail::FLAGS`]), and the hint of [`hint`].
pub fn with_flags(e: &terrane::Error) -> String {
    let message = crate::fail::with_flags(e.to_string());
    match e {
        terrane::Error::Refused(r) => match hint(r) {
            Some(h) => format!("{message}\n({h})"),
            None => message,
        },
        _ => message,
    }
}

/// The command that does what `r` advises, where one does.
fn hint(r: &Refusal) -> Option<&'static str> {
    Some(match r {
        Refusal::ImportOverChunks { import: ImportedFrom::Java, .. } => {
            "`terrane import anvil --merge` writes over them"
        }
        Refusal::ImportOverChunks { import: ImportedFrom::Bedrock, .. } => {
            "`terrane import bedrock --merge` writes over them"
        }
        Refusal::BedrockBlocks => "`terrane convert BEDROCK_WORLD NEW_FOLDER --to java` does that",
        Refusal::Destination { holds: Holds::JavaWorld, writes: Writes::RegionFiles, .. } => {
            "`--world-folder` exports the whole world"
        }
        Refusal::Destination { holds: Holds::RegionFiles, writes: Writes::JavaWorld, .. } => {
            "without `--world-folder`, the export writes region files"
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fail::FLAGS;

    /// Each library name [`FLAGS`] replaces is in the library's message: a rename there
    /// fails here rather than leaving the option's name in the command's words.
    #[test]
    fn every_option_replaced_is_in_the_library_message() {
        let e = terrane::Error::WouldOverwrite {
            path: "out".into(),
            holds: "region files".into(),
            merge: true,
        };
        let damaged =
            terrane::Error::from(terrane::convert::Error::DamagedLevelDat("w/level.dat".into()));
        let library = [e.to_string(), damaged.to_string()].join("\n");
        for (option, flag) in FLAGS {
            assert!(library.contains(option), "{option} not in {library}");
            assert!(with_flags(&e).contains(flag) || with_flags(&damaged).contains(flag));
        }
        assert!(!with_flags(&e).contains("Overwrite::"));
        assert!(!with_flags(&damaged).contains("ConvertOptions::"), "{}", with_flags(&damaged));
    }

    /// A refusal whose advice a command does gets that command; others keep their words.
    #[test]
    fn refusals_name_the_command_that_does_what_they_advise() {
        let destination = |holds, writes| Refusal::Destination { path: "d".into(), holds, writes };
        let cases = [
            (Refusal::BedrockBlocks, Some("`terrane convert BEDROCK_WORLD NEW_FOLDER --to java`")),
            (destination(Holds::JavaWorld, Writes::RegionFiles), Some("`--world-folder` exports")),
            (destination(Holds::RegionFiles, Writes::JavaWorld), Some("without `--world-folder`")),
            (destination(Holds::File, Writes::JavaWorld), None),
        ];
        // A conversion's refusals keep their words: each already says what to do.
        let converted = terrane::Error::from(terrane::convert::Error::Destination {
            path: "d".into(),
            holds: terrane::convert::Found::BedrockWorld,
        });
        assert_eq!(with_flags(&converted), converted.to_string());
        for (r, hinted) in cases {
            let said = with_flags(&terrane::Error::Refused(r.clone()));
            assert!(said.starts_with(&r.to_string()), "{said}");
            match hinted {
                Some(h) => assert!(said.contains(h), "{said}"),
                None => assert_eq!(said, r.to_string()),
            }
        }
    }
}
