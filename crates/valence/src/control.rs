//! The control socket: another process on the same machine asks a running server to
//! restore from a backup (`terrane restore` does, when the world it is given is served).
//!
//! A Unix domain socket, by default `serve.sock` in the world's folder, so that only users
//! who may write the world may use it. One request per connection: a JSON line in, a JSON
//! line out. The protocol is specified in `docs/format/control-socket.md`.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::restores::{LiveRestoreHandle, LiveRestoreReport, LiveRestoreRequest};
use crate::{Error, Result};

/// The control socket's file in a world's folder.
pub const SOCKET_NAME: &str = "serve.sock";

/// The answer line.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Answer {
    /// LiveRestored.
    Ok(LiveRestoreReport),
    /// Refused: the world is unchanged.
    Error(String),
    /// The server failed during the restore and stops.
    Failed(String),
}

/// How long a connection may take to send its request line.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest request line read.
const REQUEST_BYTES: usize = 64 * 1024;

/// How long a client waits for the answer (a restore runs between two ticks: seconds at
/// most, unless the server hangs).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(300);

/// How often the listener looks at its stop flag.
const POLL: Duration = Duration::from_millis(50);

/// Asks the server listening on `socket` to restore `request`, and waits for its answer.
///
/// Errors: [`Error::Control`] when no server listens there (or it does not answer within
/// five minutes), [`Error::RestoreRefused`] when it restored nothing (the message says why),
/// [`Error::ServerFailed`] when it failed during the restore, [`Error::ServerGone`] when it
/// stopped first.
pub fn request_restore(socket: &Path, request: &LiveRestoreRequest) -> Result<LiveRestoreReport> {
    let io = |source| Error::Control { path: socket.to_path_buf(), source };
    let protocol = |why: String| Error::Protocol { path: socket.to_path_buf(), why };
    let mut stream = UnixStream::connect(socket).map_err(io)?;
    let mut line = serde_json::to_string(request).map_err(|e| protocol(e.to_string()))?;
    line.push('\n');
    stream.write_all(line.as_bytes()).map_err(io)?;
    stream.set_read_timeout(Some(ANSWER_TIMEOUT)).map_err(io)?;
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer).map_err(io)?;
    if answer.is_empty() {
        return Err(Error::ServerGone);
    }
    match serde_json::from_str(&answer) {
        Ok(Answer::Ok(report)) => Ok(report),
        Ok(Answer::Error(why)) => Err(Error::RestoreRefused(why)),
        Ok(Answer::Failed(why)) => Err(Error::ServerFailed(why)),
        Err(e) => Err(protocol(format!("an answer that is not the protocol's: {e}"))),
    }
}

/// A listening control socket; [`stop`](Self::stop) ends it and removes its file.
#[derive(Debug)]
pub(crate) struct Listener {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Listener {
    /// Listens on `path` (a socket file left by a server that was killed is replaced; any
    /// other file there is refused), handing each request to `handle`.
    pub(crate) fn bind(path: &Path, handle: LiveRestoreHandle) -> Result<Listener> {
        let io = |source| Error::Control { path: path.to_path_buf(), source };
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_socket() => {
                if UnixStream::connect(path).is_ok() {
                    return Err(io(std::io::Error::new(
                        ErrorKind::AddrInUse,
                        "another server listens on it: give this one another path",
                    )));
                }
                // Nobody answers there: a server that was killed left it.
                std::fs::remove_file(path).map_err(io)?;
            }
            Ok(_) => {
                return Err(io(std::io::Error::new(
                    ErrorKind::AlreadyExists,
                    "a file that is not a socket is in the way: move it",
                )));
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
        let listener = UnixListener::bind(path).map_err(io)?;
        // Only the user running the server may ask it.
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
        listener.set_nonblocking(true).map_err(io)?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("terrane-control".into())
            .spawn(move || accept(&listener, &handle, &flag))
            .map_err(io)?;
        Ok(Listener { path: path.to_path_buf(), stop, thread: Some(thread) })
    }

    /// Stops listening and removes the socket's file.
    pub(crate) fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

fn accept(listener: &UnixListener, handle: &LiveRestoreHandle, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => {
                // Its own thread: a slow client holds up nobody, and the server stops
                // without waiting for it.
                let handle = handle.clone();
                let spawned = std::thread::Builder::new()
                    .name("terrane-control-conn".into())
                    .spawn(move || {
                        if let Err(e) = answer(stream, &handle) {
                            tracing::warn!("control socket: {e}");
                        }
                    });
                if let Err(e) = spawned {
                    tracing::warn!("control socket: {e}");
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(POLL),
            Err(e) => {
                tracing::warn!("control socket: {e}");
                std::thread::sleep(POLL);
            }
        }
    }
}

/// Reads one request line from `stream`: at most [`REQUEST_BYTES`], all of it within
/// [`REQUEST_TIMEOUT`] of the call.
fn read_request(mut stream: &UnixStream) -> std::io::Result<Vec<u8>> {
    let deadline = std::time::Instant::now() + REQUEST_TIMEOUT;
    let mut line = Vec::new();
    let mut buf = [0u8; 4096];
    while !line.contains(&b'\n') {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() || line.len() > REQUEST_BYTES {
            return Err(std::io::Error::new(ErrorKind::TimedOut, "no whole request line in time"));
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(&mut buf)? {
            0 => break,
            n => line.extend_from_slice(&buf[..n]),
        }
    }
    Ok(line)
}

/// Decodes a request line (untrusted bytes from another process): the request, or why it is
/// not one.
fn decode_request(line: &[u8]) -> std::result::Result<LiveRestoreRequest, String> {
    serde_json::from_slice(line)
        .map_err(|e| format!("not a request of this server's protocol (control-socket.md): {e}"))
}

/// Reads one request from `stream`, has the server carry it out, writes the answer (none
/// when the server stopped first: the connection closes).
fn answer(stream: UnixStream, handle: &LiveRestoreHandle) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    let line = read_request(&stream)?;
    let answer = match decode_request(&line) {
        Err(why) => Answer::Error(why),
        Ok(request) => match handle.restore(request) {
            Ok(report) => Answer::Ok(report),
            Err(Error::RestoreRefused(why)) => Answer::Error(why),
            Err(Error::ServerFailed(why)) => Answer::Failed(why),
            Err(_) => return Ok(()),
        },
    };
    let mut out = serde_json::to_string(&answer).map_err(std::io::Error::other)?;
    out.push('\n');
    (&stream).write_all(out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second listener on a live socket is refused; a silent client holds up nobody; a
    /// bad line is answered with an error; stopping removes the file, and a socket left
    /// behind is replaced.
    #[test]
    fn one_listener_per_socket_and_no_client_holds_it_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SOCKET_NAME);
        let (handle, _queue) = crate::restores::queue();
        let first = Listener::bind(&path, handle.clone()).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        match Listener::bind(&path, handle.clone()) {
            Err(Error::Control { source, .. }) => assert_eq!(source.kind(), ErrorKind::AddrInUse),
            other => panic!("a second listener on a live socket: {other:?}"),
        }
        let _silent = UnixStream::connect(&path).unwrap();
        let started = std::time::Instant::now();
        let mut bad = UnixStream::connect(&path).unwrap();
        bad.write_all(b"{\"restore\":\"everything\"}\n").unwrap();
        let mut answer = String::new();
        BufReader::new(bad).read_line(&mut answer).unwrap();
        assert!(answer.starts_with("{\"error\""), "{answer}");
        assert!(started.elapsed() < REQUEST_TIMEOUT, "held up by the silent client");
        // A line past 64 KiB is not read to its end: the connection closes unanswered.
        let mut long = UnixStream::connect(&path).unwrap();
        let _ = long.write_all(&vec![b' '; REQUEST_BYTES + 8192]);
        let mut answer = String::new();
        let _ = BufReader::new(long).read_line(&mut answer);
        assert!(answer.is_empty(), "{answer}");
        assert!(started.elapsed() < REQUEST_TIMEOUT, "read to the deadline, not to the cap");
        first.stop();
        assert!(!path.exists(), "a stop removes the socket");
        // A socket nobody answers on (a killed server's) is replaced.
        let left = UnixListener::bind(&path).unwrap();
        drop(left);
        Listener::bind(&path, handle).unwrap().stop();
    }

    /// Every cut of a request, every byte of it flipped, and random bytes decode to a
    /// request or an error, never a panic; the request itself round-trips.
    #[test]
    fn requests_decode_or_are_refused() {
        let request = LiveRestoreRequest::Area {
            repo: "/srv/backups".into(),
            at: Some(12),
            dim: 0,
            x: 0,
            z: -1,
        };
        let line = serde_json::to_vec(&request).unwrap();
        assert_eq!(decode_request(&line).unwrap(), request);
        assert_eq!(
            decode_request(
                br#"{"restore":"box","repo":"/r","at":null,"from":[0,1,2],"to":[3,4,5]}"#
            )
            .unwrap(),
            LiveRestoreRequest::Box { repo: "/r".into(), at: None, from: [0, 1, 2], to: [3, 4, 5] }
        );
        for i in 0..line.len() {
            let _ = decode_request(&line[..i]);
            for bit in 0..8 {
                let mut bad = line.clone();
                bad[i] ^= 1 << bit;
                let _ = decode_request(&bad);
            }
        }
        let mut rng = terrane_store::conformance::Rng::new(0x2545_f491);
        for _ in 0..2000 {
            let n = rng.below(97) as usize;
            assert!(decode_request(&rng.bytes(n)).is_err());
        }
        assert!(
            decode_request(br#"{"restore":"area","repo":"/r","at":1,"dim":0,"x":1e99,"z":0}"#)
                .is_err()
        );
    }
}
