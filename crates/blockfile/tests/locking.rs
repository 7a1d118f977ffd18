//! One writer at a time: a second writer or a reader beside a writer (in this process or
//! another) gets `Error::Locked` naming the holder; readers share; a killed writer leaves no
//! stale lock; concurrent creators never clobber each other.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::{build, config, state};
use terrane_blockfile::BlockFile;
use terrane_section::testdata::ChildGuard;
use terrane_store::{Error, OpenMode, ReadView, Store, tables};

const CHILD_ENV: &str = "TERRANE_BLOCKFILE_LOCK_CHILD";

/// The tests of this file run one at a time: a child process spawned by one test holds a
/// copy of every open file of this process between its fork and its exec (with their locks:
/// `flock` belongs to the open file, not the descriptor), which would make another test's
/// just-closed store look locked for a moment.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn holder(r: Result<BlockFile, Error>) -> Option<u32> {
    match r {
        Err(Error::Locked { holder, .. }) => holder,
        Err(e) => panic!("expected Locked, got {e}"),
        Ok(_) => panic!("expected Locked, the open succeeded"),
    }
}

#[test]
fn a_second_handle_in_this_process_is_refused() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.tbf");
    let model = build(&path);
    let ro = config().read_only(true);
    let w = BlockFile::open(&path, &config()).unwrap();
    let me = Some(std::process::id());
    assert_eq!(holder(BlockFile::open(&path, &config())), me);
    assert_eq!(holder(BlockFile::open(&path, &ro)), me);
    let err = BlockFile::open(&path, &config()).unwrap_err().to_string();
    assert!(err.contains("already open in this process"), "{err}");
    drop(w);
    let r1 = BlockFile::open(&path, &ro).unwrap();
    let r2 = BlockFile::open(&path, &ro).unwrap();
    assert_eq!(state(&r1), model);
    assert_eq!(state(&r2), model);
    assert_eq!(holder(BlockFile::open(&path, &config())), me);
    drop((r1, r2));
    BlockFile::open(&path, &config()).unwrap();
}

#[test]
fn a_writer_in_another_process_excludes_us_until_it_is_killed() {
    if let Some(path) = std::env::var_os(CHILD_ENV) {
        let s = BlockFile::open(&path, &config()).unwrap();
        s.put(tables::ENTITY, b"child", 1, b"was here").unwrap();
        println!("READY");
        std::thread::sleep(std::time::Duration::from_secs(60));
        std::process::exit(0);
    }
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.tbf");
    let model = build(&path);
    let mut child = ChildGuard::spawn(
        Command::new(std::env::current_exe().unwrap())
            .args([
                "a_writer_in_another_process_excludes_us_until_it_is_killed",
                "--exact",
                "--nocapture",
                "--test-threads",
                "1",
            ])
            .env(CHILD_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    )
    .unwrap();
    let out = BufReader::new(child.stdout.take().unwrap());
    let ready = out.lines().map_while(Result::ok).any(|l| l.contains("READY"));
    assert!(ready, "the child did not open the store");
    let pid = child.id();
    assert_eq!(holder(BlockFile::open(&path, &config())), Some(pid));
    assert_eq!(holder(BlockFile::open(&path, &config().read_only(true))), Some(pid));
    let err = BlockFile::open(&path, &config()).unwrap_err().to_string();
    assert!(err.contains(&format!("pid {pid}")), "{err}");
    child.kill().unwrap();
    child.wait().unwrap();
    let s = BlockFile::open(&path, &config()).unwrap();
    assert!(s.verify().unwrap().is_empty());
    assert_eq!(s.get(tables::ENTITY, b"child").unwrap().unwrap().data, b"was here");
    let mut got = state(&s);
    got.remove(&(tables::ENTITY.to_string(), b"child".to_vec()));
    assert_eq!(got, model);
}

#[test]
fn concurrent_creators_never_clobber_each_other() {
    let _serial = serial();
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.tbf");
        let results: Vec<Result<BlockFile, Error>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..6)
                .map(|_| {
                    scope.spawn(|| {
                        let mode =
                            if round % 2 == 0 { OpenMode::Create } else { OpenMode::OpenOrCreate };
                        BlockFile::open(&path, &config().mode(mode))
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut opened = 0;
        for r in &results {
            match r {
                Ok(s) => {
                    opened += 1;
                    s.put(tables::ENTITY, b"k", 1, b"v").unwrap();
                }
                Err(Error::AlreadyExists(_) | Error::Locked { .. }) => {}
                Err(e) => panic!("round {round}: {e}"),
            }
        }
        assert_eq!(opened, 1, "round {round}: {opened} handles opened the new store");
        drop(results);
        let s = BlockFile::open(&path, &config()).unwrap();
        assert_eq!(s.get(tables::ENTITY, b"k").unwrap().unwrap().data, b"v");
        assert!(!dir.path().join("w.tbf.creating").exists());
    }
}
