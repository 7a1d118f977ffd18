//! `terrane demo --server N --servers M --store postgres://…`: one of M game servers running
//! one world together (terrane-sim's shared-world server), a status line each second, and
//! its summary.

use terrane_sim::Event;
use terrane_sim::shared_server::SharedServerSummary;

use crate::Fail;
use crate::demo::DemoArgs;

/// Runs server `--server N` of `--servers M` on the world at `--store`.
pub fn run(args: &DemoArgs, n: usize) -> Result<SharedServerSummary, Fail> {
    let Some(conninfo) = args.store.as_deref() else {
        return Err(Fail::usage(
            "--server needs --store CONNECTION: a shared world lives on PostgreSQL",
        ));
    };
    let servers = args.shared.servers.max(1);
    if n >= servers {
        return Err(Fail::usage(format!("--server {n} must be below --servers {servers}")));
    }
    let summary = terrane_sim::shared_server::run(conninfo, n, &args.shared_config(), |event| {
        match event {
            Event::Status(s) => {
                let areas: Vec<String> =
                    s.areas.iter().map(|(a, epoch)| format!("({},{})@{epoch}", a.x, a.z)).collect();
                let line = format!(
                    "[{}] {:5.1} s tick {}: areas {} | {} walkers, {} regions, {} chunks | {} saves/s | hand-offs out {} in {} | refused {}",
                    s.server,
                    s.seconds,
                    s.tick,
                    if areas.is_empty() { "none".to_string() } else { areas.join(" ") },
                    s.walkers,
                    s.regions,
                    s.chunks,
                    s.saves_last_second,
                    s.hand_offs_out,
                    s.arrivals,
                    s.saves_refused,
                );
                if args.json { eprintln!("{line}") } else { outln!("{line}") }
            }
            Event::AreasLost { server, areas } => eprintln!(
                "[{server}] save refused: {} area(s) taken over by another server, no longer ticked: {areas:?}",
                areas.len()
            ),
            Event::TickFailed { server, tick, error } => {
                eprintln!("[{server}] tick {tick}: {error}")
            }
            _ => {}
        }
    });
    Ok(summary?)
}

/// Prints the summary for people.
pub fn print_human(s: &SharedServerSummary) {
    outln!(
        "{}: {:.1} s, {} ticks; saves {} acknowledged ({:.1}/s, p50 {:.2} ms, p99 {:.2} ms), {} refused, {} failed",
        s.server,
        s.seconds,
        s.ticks,
        s.saves_acknowledged,
        s.saves_per_second,
        s.save_p50_ms,
        s.save_p99_ms,
        s.saves_refused,
        s.saves_failed
    );
    outln!(
        "hand-offs: {} out (p50 {:.2} ms), {} in; areas: {} acquired, {} handed over, {} lost",
        s.hand_offs_out,
        s.hand_off_p50_ms,
        s.arrivals,
        s.areas_acquired,
        s.areas_handed_over,
        s.areas_lost
    );
}
