//! The control socket: another process on the same machine asks a running server to
//! restore from a backup (`terrane restore` does, when the world it is given is served).
//!
//! A Unix domain socket, by default `serve.sock` in the world's folder, so that only users
//! who may write the world may use it. One request per connection: a JSON line in, a JSON
//! line out. The protocol is specified in `docs/format/control-socket.md`.

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::restores::{RestoreHandle, RestoreReport, RestoreRequest};
use crate::{Error, Result};

/// The control socket's file in a world's folder.
pub const SOCKET_NAME: &str = "serve.sock";

/// The answer line.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Answer {
    Ok(RestoreReport),
    Error(String),
}

/// How long a connection may take to send its request line.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// How often the listener looks at its stop flag.
const POLL: Duration = Duration::from_millis(50);

/// Asks the server listening on `socket` to restore `request`, and waits for its answer.
///
/// Errors: [`Error::Control`] when no server listens there, [`Error::RestoreRefused`] when
/// it restored nothing (the message says why), [`Error::ServerGone`] when it stopped first.
pub fn request_restore(socket: &Path, request: &RestoreRequest) -> Result<RestoreReport> {
    let io = |source| Error::Control { path: socket.to_path_buf(), source };
    let protocol = |why: String| Error::Protocol { path: socket.to_path_buf(), why };
    let mut stream = UnixStream::connect(socket).map_err(io)?;
    let mut line = serde_json::to_string(request).map_err(|e| protocol(e.to_string()))?;
    line.push('\n');
    stream.write_all(line.as_bytes()).map_err(io)?;
    let mut answer = String::new();
    BufReader::new(stream).read_line(&mut answer).map_err(io)?;
    if answer.is_empty() {
        return Err(Error::ServerGone);
    }
    match serde_json::from_str(&answer) {
        Ok(Answer::Ok(report)) => Ok(report),
        Ok(Answer::Error(why)) => Err(Error::RestoreRefused(why)),
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
    pub(crate) fn bind(path: &Path, handle: RestoreHandle) -> Result<Listener> {
        let io = |source| Error::Control { path: path.to_path_buf(), source };
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_socket() => {
                // The world's writer lock is ours: whoever made that socket is gone.
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

fn accept(listener: &UnixListener, handle: &RestoreHandle, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => {
                if let Err(e) = answer(stream, handle) {
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

/// Decodes a request line (untrusted bytes from another process): the request, or why it is
/// not one.
fn decode_request(line: &[u8]) -> std::result::Result<RestoreRequest, String> {
    serde_json::from_slice(line)
        .map_err(|e| format!("not a request of this server's protocol (control-socket.md): {e}"))
}

/// Reads one request from `stream`, has the server carry it out, writes the answer.
fn answer(stream: UnixStream, handle: &RestoreHandle) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    let mut line = String::new();
    BufReader::new(&stream).read_line(&mut line)?;
    let answer = match decode_request(line.as_bytes()) {
        Err(why) => Answer::Error(why),
        Ok(request) => match handle.restore(request) {
            Ok(report) => Answer::Ok(report),
            Err(Error::RestoreRefused(why)) => Answer::Error(why),
            Err(e) => Answer::Error(e.to_string()),
        },
    };
    let mut out = serde_json::to_string(&answer).map_err(std::io::Error::other)?;
    out.push('\n');
    (&stream).write_all(out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every cut of a request, every byte of it flipped, and random bytes decode to a
    /// request or an error, never a panic; the request itself round-trips.
    #[test]
    fn requests_decode_or_are_refused() {
        let request =
            RestoreRequest::Area { repo: "/srv/backups".into(), at: Some(12), dim: 0, x: 0, z: -1 };
        let line = serde_json::to_vec(&request).unwrap();
        assert_eq!(decode_request(&line).unwrap(), request);
        assert_eq!(
            decode_request(
                br#"{"restore":"box","repo":"/r","at":null,"from":[0,1,2],"to":[3,4,5]}"#
            )
            .unwrap(),
            RestoreRequest::Box { repo: "/r".into(), at: None, from: [0, 1, 2], to: [3, 4, 5] }
        );
        for i in 0..line.len() {
            let _ = decode_request(&line[..i]);
            for bit in 0..8 {
                let mut bad = line.clone();
                bad[i] ^= 1 << bit;
                let _ = decode_request(&bad);
            }
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            let bytes: Vec<u8> = (0..(x % 97))
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            assert!(decode_request(&bytes).is_err());
        }
        assert!(
            decode_request(br#"{"restore":"area","repo":"/r","at":1,"dim":0,"x":1e99,"z":0}"#)
                .is_err()
        );
    }
}
