//! The replay tool: runs a text log of regionizer operations and prints the state after each
//! one as a line of JSON. Format: `docs/format/regionizer-replay.md` (and the crate docs).

use std::io::{BufRead, Write};

use terrane_section::{ChunkPos, ColumnPos, GridPos};

use crate::{Error, NoCallbacks, Regionizer, RegionizerConfig, RegionizerSnapshot, Result};

/// Options of a replay: the regionizer parameters, the dimension and the output mode.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplayOptions {
    /// Regionizer parameters (default: [`RegionizerConfig::folia_shift4`]).
    pub config: RegionizerConfig,
    /// 2 for column positions `(x, z)`, 3 for cubic positions `(x, y, z)` (default 2).
    pub dims: u8,
    /// Print only the state after the last operation.
    pub final_only: bool,
    /// Parse the whole log first, then run the operations back to back and measure the time
    /// spent inside the regionizer's calls alone ([`ReplayStats::call_time`]); prints only the
    /// final state.
    pub time: bool,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        Self { config: RegionizerConfig::folia_shift4(), dims: 2, final_only: false, time: false }
    }
}

/// Usage text of the replay command.
pub const USAGE: &str = "\
usage: terrane-regionizer-replay [flags] < ops.txt
  --shift N           section shift (default 4; other parameters default to Folia's formulas for it)
  --create-radius N   empty-section create radius C, >= 1
  --merge-radius N    merge radius M, >= 1
  --recalc-count N    minimum sections before the dead-fraction purge
  --max-dead F        max dead fraction, a number (0.1667) or a fraction (1/6)
  --dim 2|3           column (x z) or cubic (x y z) positions (default 2)
  --final-only        print only the state after the last operation
  --time              parse everything first, then time the regionizer calls alone (parsing
                      and printing excluded); prints only the final state
input lines: add X Z | remove X Z | tick SX SZ | release SX SZ   (3D: X Y Z)";

impl ReplayOptions {
    /// Parses command-line flags (without the program name). Flags take their value as the
    /// next argument or after `=`.
    ///
    /// # Errors
    /// [`Error::ReplayArgs`] for an unknown flag or bad value; [`Error::InvalidConfig`].
    pub fn from_args<I: IntoIterator<Item = String>>(args: I) -> Result<Self> {
        let mut shift = None;
        let (mut c, mut m, mut rc, mut md) = (None, None, None, None);
        let mut dims = 2u8;
        let mut final_only = false;
        let mut time = false;
        let mut it = args.into_iter();
        while let Some(a) = it.next() {
            let (flag, inline) = match a.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
                _ => (a.clone(), None),
            };
            if flag == "--final-only" {
                final_only = true;
                continue;
            }
            if flag == "--time" {
                time = true;
                continue;
            }
            let mut value = || -> Result<String> {
                inline
                    .clone()
                    .or_else(|| it.next())
                    .ok_or_else(|| Error::ReplayArgs(format!("{flag} needs a value")))
            };
            let num = |v: String| -> Result<u64> {
                v.parse::<u64>().map_err(|_| Error::ReplayArgs(format!("{flag}: bad number {v:?}")))
            };
            match flag.as_str() {
                "--shift" => shift = Some(num(value()?)?),
                "--create-radius" => c = Some(num(value()?)?),
                "--merge-radius" => m = Some(num(value()?)?),
                "--recalc-count" => rc = Some(num(value()?)?),
                "--max-dead" => md = Some(parse_fraction(&value()?)?),
                "--dim" => {
                    dims = match value()?.as_str() {
                        "2" => 2,
                        "3" => 3,
                        v => {
                            return Err(Error::ReplayArgs(format!(
                                "--dim must be 2 or 3, not {v:?}"
                            )));
                        }
                    }
                }
                "-h" | "--help" => return Err(Error::ReplayArgs(USAGE.into())),
                _ => return Err(Error::ReplayArgs(format!("unknown flag {a:?}\n{USAGE}"))),
            }
        }
        let small = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        let mut b = RegionizerConfig::folia_formulas(4).to_builder();
        if let Some(s) = shift {
            b = RegionizerConfig::folia_formulas(small(s).min(crate::MAX_SHIFT))
                .to_builder()
                .shift(small(s));
        }
        if let Some(v) = c {
            b = b.create_radius(small(v));
        }
        if let Some(v) = m {
            b = b.merge_radius(small(v));
        }
        if let Some(v) = rc {
            b = b.recalc_count(usize::try_from(v).unwrap_or(usize::MAX));
        }
        if let Some(v) = md {
            b = b.max_dead_fraction(v);
        }
        Ok(Self { config: b.build()?, dims, final_only, time })
    }
}

fn parse_fraction(v: &str) -> Result<f64> {
    let bad = || Error::ReplayArgs(format!("--max-dead: bad fraction {v:?}"));
    match v.split_once('/') {
        Some((a, b)) => {
            let a: f64 = a.trim().parse().map_err(|_| bad())?;
            let b: f64 = b.trim().parse().map_err(|_| bad())?;
            if b == 0.0 {
                return Err(bad());
            }
            Ok(a / b)
        }
        None => v.trim().parse().map_err(|_| bad()),
    }
}

/// The line the replay commands print for [`ReplayStats::call_time`] (on stderr).
pub fn time_line(stats: &ReplayStats) -> Option<String> {
    let t = stats.call_time?;
    Some(format!(
        "regionizer calls: {} operations in {:.3} ms, {:.1} ns per operation (parsing and printing excluded)",
        stats.ops,
        t.as_secs_f64() * 1e3,
        t.as_secs_f64() * 1e9 / stats.ops.max(1) as f64
    ))
}

/// What a replay did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplayStats {
    /// Operations executed.
    pub ops: u64,
    /// Operations whose result was `"error"`.
    pub errors: u64,
    /// With [`ReplayOptions::time`]: the time spent inside the regionizer's calls.
    pub call_time: Option<std::time::Duration>,
}

#[derive(Clone, Copy)]
enum Ret {
    Null,
    Bool(bool),
    Error,
}

/// Replays the operation log read from `reader`, writing one JSON line per operation (or
/// only the final state) to `writer`, flushed per line. Blank lines and `#` comments are
/// skipped and not counted. A misused operation (duplicate add, absent remove, tick or
/// release of a section no region owns, release of a region that is not ticking) prints
/// `"ret":"error"` and leaves the state unchanged.
///
/// # Errors
/// [`Error::ReplayParse`] for a malformed line (nothing is printed for it);
/// [`Error::Io`].
pub fn replay<R: BufRead, W: Write>(
    reader: R,
    writer: W,
    options: &ReplayOptions,
) -> Result<ReplayStats> {
    match options.dims {
        3 => run::<ChunkPos, R, W>(reader, writer, options),
        _ => run::<ColumnPos, R, W>(reader, writer, options),
    }
}

/// The final state of a replayed log, typed: each live region's sections as coordinates
/// (`[x, z]` for 2D logs, `[x, y, z]` for 3D ones), regions in the order of the JSON state
/// (by smallest section), sections ascending. What `--final-only` prints, without the text:
/// for tools that draw or check a partition.
///
/// # Errors
/// As [`replay`].
pub fn final_regions<R: BufRead>(reader: R, options: &ReplayOptions) -> Result<Vec<Vec<Vec<i64>>>> {
    match options.dims {
        3 => final_regions_of::<ChunkPos, R>(reader, options),
        _ => final_regions_of::<ColumnPos, R>(reader, options),
    }
}

fn final_regions_of<P: GridPos, R: BufRead>(
    reader: R,
    o: &ReplayOptions,
) -> Result<Vec<Vec<Vec<i64>>>> {
    let rz: Regionizer<P, ()> = Regionizer::new(o.config, NoCallbacks);
    for (lineno, line) in reader.lines().enumerate() {
        if let Some(op) = parse_line::<P>(lineno, &line?)? {
            apply(&rz, op)?;
        }
    }
    let regions = rz.snapshot()?.regions;
    Ok(regions
        .into_iter()
        .map(|r| r.sections.into_iter().map(|p| p.coords().as_ref().to_vec()).collect())
        .collect())
}

fn run<P: GridPos, R: BufRead, W: Write>(
    reader: R,
    mut w: W,
    o: &ReplayOptions,
) -> Result<ReplayStats> {
    let rz: Regionizer<P, ()> = Regionizer::new(o.config, NoCallbacks);
    let mut stats = ReplayStats::default();
    let mut last = Ret::Null;
    let mut out = String::new();
    if o.time {
        return timed::<P, R, W>(reader, w, &rz);
    }
    for (lineno, line) in reader.lines().enumerate() {
        let Some(op) = parse_line::<P>(lineno, &line?)? else { continue };
        let ret = apply(&rz, op)?;
        stats.ops += 1;
        if matches!(ret, Ret::Error) {
            stats.errors += 1;
        }
        last = ret;
        if !o.final_only {
            out.clear();
            write_state(&mut out, stats.ops, ret, &rz.snapshot()?);
            w.write_all(out.as_bytes())?;
            w.flush()?;
        }
    }
    if o.final_only {
        out.clear();
        write_state(&mut out, stats.ops, last, &rz.snapshot()?);
        w.write_all(out.as_bytes())?;
        w.flush()?;
    }
    Ok(stats)
}

/// One parsed operation of a log.
#[derive(Clone, Copy)]
enum Op<P> {
    Add(P),
    Remove(P),
    Tick(P),
    Release(P),
}

/// Parses one line: `None` for blank lines and comments.
fn parse_line<P: GridPos>(lineno: usize, line: &str) -> Result<Option<Op<P>>> {
    let line = line.split('#').next().unwrap_or("");
    let mut words = line.split_whitespace();
    let Some(op) = words.next() else { return Ok(None) };
    let perr = |message: String| Error::ReplayParse { line: lineno as u64 + 1, message };
    let nums: Vec<i64> = words
        .map(|t| t.parse::<i64>().map_err(|_| perr(format!("bad coordinate {t:?}"))))
        .collect::<Result<_>>()?;
    let pos = P::from_coords(&nums).ok_or_else(|| {
        perr(format!("{op} needs {} coordinates in range, got {:?}", P::DIMS, nums))
    })?;
    Ok(Some(match op {
        "add" => Op::Add(pos),
        "remove" => Op::Remove(pos),
        "tick" => Op::Tick(pos),
        "release" => Op::Release(pos),
        _ => return Err(perr(format!("unknown operation {op:?} (add, remove, tick, release)"))),
    }))
}

/// Runs one operation; a misuse is `Ret::Error`, the state unchanged.
#[inline]
fn apply<P: GridPos>(rz: &Regionizer<P, ()>, op: Op<P>) -> Result<Ret> {
    Ok(match op {
        Op::Add(p) => rz.add_chunk(p).map_or(Ret::Error, |()| Ret::Null),
        Op::Remove(p) => rz.remove_chunk(p).map_or(Ret::Error, |()| Ret::Null),
        Op::Tick(p) => match rz.owner_of_section_exact(p)? {
            Some(id) => rz.try_mark_ticking(id).map_or(Ret::Error, Ret::Bool),
            None => Ret::Error,
        },
        Op::Release(p) => match rz.owner_of_section_exact(p)? {
            Some(id) => rz.mark_not_ticking(id).map_or(Ret::Error, Ret::Bool),
            None => Ret::Error,
        },
    })
}

/// `--time`: parses the whole log, then runs it back to back, timing only the loop of
/// regionizer calls; prints the final state.
fn timed<P: GridPos, R: BufRead, W: Write>(
    reader: R,
    mut w: W,
    rz: &Regionizer<P, ()>,
) -> Result<ReplayStats> {
    let mut ops = Vec::new();
    for (lineno, line) in reader.lines().enumerate() {
        if let Some(op) = parse_line::<P>(lineno, &line?)? {
            ops.push(op);
        }
    }
    let mut errors = 0u64;
    let mut last = Ret::Null;
    let start = std::time::Instant::now();
    for op in &ops {
        last = apply(rz, *op)?;
        if matches!(last, Ret::Error) {
            errors += 1;
        }
    }
    let call_time = start.elapsed();
    let stats = ReplayStats { ops: ops.len() as u64, errors, call_time: Some(call_time) };
    let mut out = String::new();
    write_state(&mut out, stats.ops, last, &rz.snapshot()?);
    w.write_all(out.as_bytes())?;
    w.flush()?;
    Ok(stats)
}

fn push_pos<P: GridPos>(out: &mut String, p: P, extra: &[u32]) {
    out.push('[');
    for (i, &v) in p.coords().as_ref().iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_int(out, v);
    }
    for &v in extra {
        out.push(',');
        push_int(out, i64::from(v));
    }
    out.push(']');
}

/// Appends `v` in decimal, as `write!(out, "{v}")` does, without the formatting machinery
/// (which was a third of a replay that prints every state).
fn push_int(out: &mut String, v: i64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = v.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.push('-');
    }
    // ASCII digits: always UTF-8.
    out.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}

fn push_list<T: Copy>(out: &mut String, items: &[T], mut f: impl FnMut(&mut String, T)) {
    out.push('[');
    for (i, &x) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        f(out, x);
    }
    out.push(']');
}

fn write_state<P: GridPos>(out: &mut String, op: u64, ret: Ret, s: &RegionizerSnapshot<P>) {
    use std::fmt::Write as _;
    let ret = match ret {
        Ret::Null => "null",
        Ret::Bool(true) => "true",
        Ret::Bool(false) => "false",
        Ret::Error => "\"error\"",
    };
    let _ = write!(out, "{{\"op\":{op},\"ret\":{ret},\"regions\":[");
    let index = |id| s.regions.iter().position(|r| r.id == id).expect("live region");
    for (i, r) in s.regions.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{{\"state\":\"{}\",\"sections\":", r.state.name());
        push_list(out, &r.sections, |o, p| push_pos(o, p, &[]));
        out.push_str(",\"dead\":");
        push_list(out, &r.dead, |o, p| push_pos(o, p, &[]));
        let idx = |ids: &[crate::RegionId]| {
            let mut v: Vec<usize> = ids.iter().map(|&id| index(id)).collect();
            v.sort_unstable();
            v
        };
        let mil = idx(&r.merge_into_later);
        let emf = idx(&r.expecting_merge_from);
        out.push_str(",\"merge_into_later\":");
        push_list(out, &mil, |o, i| push_int(o, i as i64));
        out.push_str(",\"expecting_merge_from\":");
        push_list(out, &emf, |o, i| push_int(o, i as i64));
        out.push('}');
    }
    out.push_str("],\"sections\":");
    push_list(out, &s.sections, |o, sec| {
        push_pos(o, sec.pos, &[sec.chunk_count, sec.non_empty_neighbours])
    });
    out.push_str("}\n");
}

#[cfg(test)]
mod tests {
    /// `push_int` prints what `format!` prints, at the extremes and around every power of ten.
    #[test]
    fn push_int_is_format() {
        let mut cases = vec![0, 1, -1, 9, 10, -10, i64::MAX, i64::MIN, i64::MIN + 1];
        for k in 1..19 {
            let p = 10i64.pow(k);
            cases.extend([p - 1, p, p + 1, -p + 1, -p, -p - 1]);
        }
        for v in cases {
            let mut out = String::from("x");
            super::push_int(&mut out, v);
            assert_eq!(out, format!("x{v}"));
        }
    }
}
