//! Reads ahead: jobs run in order off the caller's thread, a ticket is done once its job and
//! every earlier one finished, and a failed or panicking job is counted, not fatal.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use terrane_store::ReadAhead;

#[test]
fn jobs_run_in_order_and_a_ticket_is_done_when_its_job_and_those_before_it_are() {
    let ahead = ReadAhead::new().unwrap();
    let gate = Arc::new(AtomicBool::new(false));
    let order = Arc::new(Mutex::new(Vec::new()));
    let first = {
        let (gate, order) = (Arc::clone(&gate), Arc::clone(&order));
        ahead.submit(move || {
            while !gate.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            order.lock().unwrap().push(1);
            Ok(())
        })
    };
    let second = {
        let order = Arc::clone(&order);
        ahead.submit(move || {
            order.lock().unwrap().push(2);
            Ok(())
        })
    };
    std::thread::sleep(Duration::from_millis(20));
    assert!(!ahead.is_done(first) && !ahead.is_done(second), "the first job is held");
    assert_eq!(ahead.pending(), 2);
    gate.store(true, Ordering::SeqCst);
    ahead.wait();
    assert!(ahead.is_done(first) && ahead.is_done(second));
    assert_eq!(*order.lock().unwrap(), [1, 2]);
    assert_eq!(ahead.failed(), 0);
}

#[test]
fn a_failed_or_panicking_job_is_counted_and_the_next_one_runs() {
    let ahead = ReadAhead::new().unwrap();
    ahead.submit(|| Err("the link is cut".into()));
    ahead.submit(|| panic!("a job with a bug"));
    let ran = Arc::new(AtomicBool::new(false));
    let last = {
        let ran = Arc::clone(&ran);
        ahead.submit(move || {
            ran.store(true, Ordering::SeqCst);
            Ok(())
        })
    };
    ahead.wait();
    assert!(ahead.is_done(last) && ran.load(Ordering::SeqCst));
    assert_eq!(ahead.failed(), 2);
    assert_eq!(ahead.last_error().as_deref(), Some("a read ahead panicked"));
}
