//! The facade's own error, passed through terrane-anvil's import sinks and export sources
//! and terrane-bedrock's callbacks, and recovered typed when it comes back out.

use crate::Error;

/// A failure of one of the facade's sinks, sources or callbacks, as terrane-anvil's
/// `Error::Sink` and terrane-bedrock's `Error::Callback` carry it: the facade's error, which
/// [`from_anvil`] and [`from_bedrock`] take back out.
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

/// terrane-bedrock's error as the facade's: a failure of the facade's own callback comes
/// back as the error it was.
pub(crate) fn from_bedrock(e: terrane_bedrock::Error) -> Error {
    match e {
        terrane_bedrock::Error::Callback(b) => match b.downcast::<SinkError>() {
            Ok(s) => *s.0,
            Err(b) => Error::Bedrock(terrane_bedrock::Error::Callback(b)),
        },
        e => Error::Bedrock(e),
    }
}

/// The facade's error as terrane-bedrock's, for a callback to return.
pub(crate) fn to_bedrock(e: Error) -> terrane_bedrock::Error {
    terrane_bedrock::Error::Callback(Box::new(SinkError::from(e)))
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
        assert!(matches!(
            from_bedrock(to_bedrock(refused())),
            Error::Refused(Refusal::ReadOnly(_))
        ));
        let other = terrane_bedrock::Error::LevelDat("short".into());
        assert!(matches!(from_bedrock(other), Error::Bedrock(terrane_bedrock::Error::LevelDat(_))));
    }
}
