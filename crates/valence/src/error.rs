//! The crate's one error type.

/// What went wrong serving a world.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// terrane refused a read or a save; the message says why (a full disk, a damaged
    /// chunk). Saves acknowledged before it are kept: fix the cause and start the server
    /// again.
    #[error("the world: {0}")]
    World(#[from] terrane::Error),
    /// The address to listen on is taken or not ours: pick another `--port` or `--bind`.
    #[error("cannot listen on {address}: {source} (is another server using the port?)")]
    Bind {
        /// The address asked for.
        address: std::net::SocketAddr,
        /// The operating system's answer.
        source: std::io::Error,
    },
    /// A setting is out of range; the message names it.
    #[error("invalid setting: {0}")]
    Setting(String),
    /// The server refused a restore and changed nothing; the message says why (no such
    /// backup, a damaged one, an area another server leases).
    #[error("the server did not restore: {0}")]
    RestoreRefused(String),
    /// The server failed during a restore and stops; the message says why. The world's
    /// restore is one atomic batch: the area is as before or as backed up.
    #[error("the server failed during the restore and stops: {0}")]
    ServerFailed(String),
    /// The server stopped before answering.
    #[error("the server stopped before it answered")]
    ServerGone,
    /// The server's control socket cannot be used: no server runs there, or its file is in
    /// the way.
    #[error("control socket {}: {source}", path.display())]
    Control {
        /// The socket's path.
        path: std::path::PathBuf,
        /// The operating system's answer.
        source: std::io::Error,
    },
    /// The control socket's peer sent something that is not this crate's protocol
    /// (`docs/format/control-socket.md`).
    #[error("control socket {}: {why}", path.display())]
    Protocol {
        /// The socket's path.
        path: std::path::PathBuf,
        /// What was wrong.
        why: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
