//! The facade's own error, passed through terrane-anvil's import sinks and export sources,
//! and recovered typed when it comes back out.

use crate::Error;

/// A failure of one of the facade's sinks or sources, as terrane-anvil's `Error::Sink`
/// carries it: the facade's error, which [`from_anvil`] takes back out.
#[derive(Debug)]
pub(crate) struct SinkError(Box<Error>);

impl From<Error> for SinkError {
    fn from(e: Error) -> Self {
        SinkError(Box::new(e))
    }
}

impl std::fmt::Display for SinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for SinkError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// terrane-anvil's error as the facade's: a failure of the facade's own source or sink comes
/// back as the error it was.
pub(crate) fn from_anvil(e: terrane_anvil::Error) -> Error {
    match e {
        terrane_anvil::Error::Sink(b) => match b.downcast::<SinkError>() {
            Ok(s) => *s.0,
            Err(b) => Error::Anvil(terrane_anvil::Error::Sink(b)),
        },
        e => Error::Anvil(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::refusal::Refusal;

    #[test]
    fn the_facades_error_comes_back_out_typed() {
        let refused = || Error::Refused(Refusal::ReadOnly("imported"));
        let anvil = terrane_anvil::Error::Sink(Box::new(SinkError::from(refused())));
        assert!(matches!(from_anvil(anvil), Error::Refused(Refusal::ReadOnly(_))));
        let other = terrane_anvil::Error::Convert("x".into());
        assert!(matches!(from_anvil(other), Error::Anvil(terrane_anvil::Error::Convert(_))));
    }
}
