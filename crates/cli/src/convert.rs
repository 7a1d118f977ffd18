//! `terrane convert`: a Java world folder to a Bedrock world folder, or back. The work is
//! terrane-convert's; this file shows progress and prints the report. It names no crate that
//! RocksDB comes with, so that `terrane-convert` (`convert_main.rs`) runs it without RocksDB.

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};
use serde_json::json;
use terrane_bedrock::block_entity::BlockEntityReport;
use terrane_convert::{self as convert, ConvertProgress, ConvertSummary};

use crate::Fail;
use crate::out::{LISTED, listed, mib};
use crate::progress::bar;

/// The edition `terrane convert` writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Edition {
    /// A Bedrock world folder (level.dat, levelname.txt, db/).
    Bedrock,
    /// A Java world folder (region/, DIM-1/region, DIM1/region).
    Java,
}

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// The world to convert: a Java world folder (to Bedrock) or a Bedrock world folder (to
    /// Java).
    pub src: PathBuf,
    /// The new world folder: must not exist, or be empty.
    pub dst: PathBuf,
    /// The edition to write.
    #[arg(long, value_enum)]
    pub to: Edition,
    /// Print JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// How many approximated and dropped states to list by name (most cells first).
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// When the source's level.dat does not read, write a new one from defaults (name from
    /// the folder, spawn at 0,0, no seed) instead of refusing.
    #[arg(long)]
    pub force: bool,
}

pub fn run(a: &ConvertArgs) -> Result<(), Fail> {
    let t = Instant::now();
    let pb = bar(a.json, " columns");
    pb.set_message("convert");
    let mut progress = |p: &ConvertProgress| {
        if let Some(n) = p.columns_total {
            pb.set_length(n);
        } else {
            pb.set_length(p.columns_done);
        }
        pb.set_position(p.columns_done);
    };
    let options = convert::ConvertOptions::new().rebuild_level_dat(a.force);
    let s = match a.to {
        Edition::Bedrock => {
            if !terrane_anvil::folder::is_java_world(&a.src) {
                return Err(Fail::usage(format!(
                    "{} is not a Java world folder (it holds level.dat and region/); --to \
                     bedrock converts one",
                    a.src.display()
                )));
            }
            convert::java_to_bedrock_with(&a.src, &a.dst, &options, &mut progress)?
        }
        Edition::Java => {
            if !terrane_bedrock::is_bedrock_world(&a.src) {
                return Err(Fail::usage(format!(
                    "{} is not a Bedrock world folder (it holds level.dat and db/); --to java \
                     converts one",
                    a.src.display()
                )));
            }
            convert::bedrock_to_java_with(&a.src, &a.dst, &options, &mut progress)?
        }
    };
    pb.finish_and_clear();
    let secs = t.elapsed().as_secs_f64();
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&as_json(&s, secs))?);
    } else {
        print_human(a, &s, secs);
        let damaged = s.damaged.len();
        if damaged > 0 {
            outln!(
                "partial conversion: {damaged} damaged records skipped ({})",
                listed(damaged, false)
            );
        }
    }
    Ok(())
}

fn top(m: &std::collections::BTreeMap<String, u64>, n: usize) -> Vec<(&str, u64)> {
    let mut v: Vec<(&str, u64)> = m.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    v.truncate(n);
    v
}

fn as_json(s: &ConvertSummary, secs: f64) -> serde_json::Value {
    json!({
        "columns": s.columns,
        "columns_resumed": s.columns_resumed,
        "dimensions": s.per_dimension.iter().map(|(d, n)| (d.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
        "cells": s.blocks.cells,
        "approximated": s.blocks.approximated,
        "dropped": s.blocks.dropped,
        "block_entities": block_entities_json(&s.block_entities),
        "biomes_approximated": s.biomes_approximated,
        "columns_without_biomes": s.columns_without_biomes,
        "entities": block_entities_json(&s.entities),
        "players": s.players,
        "unfinished": s.unfinished,
        "skipped_dimensions": s.skipped_dimensions,
        "damaged": s.damaged,
        "bytes_out": s.bytes_out,
        "seconds": secs,
        "columns_per_second": s.columns as f64 / secs.max(1e-9),
        "table": s.table,
    })
}

fn print_human(a: &ConvertArgs, s: &ConvertSummary, secs: f64) {
    outln!(
        "converted {} columns to {} in {:.2} s ({:.0} columns/s), {:.2} MiB",
        s.columns,
        a.dst.display(),
        secs,
        s.columns as f64 / secs.max(1e-9),
        mib(s.bytes_out)
    );
    if s.columns_resumed > 0 {
        outln!(
            "  went on from an interrupted run: {} columns it had converted were kept (the report \
             counts this run's columns)",
            s.columns_resumed
        );
    }
    let b = &s.blocks;
    let pct = |n: u64| 100.0 * n as f64 / (b.cells.max(1)) as f64;
    outln!(
        "  blocks: {} cells; {} approximated ({:.3} %) in {} states, {} dropped ({:.3} %) in {} \
         states (table: {})",
        b.cells,
        b.approximated_cells(),
        pct(b.approximated_cells()),
        b.approximated.len(),
        b.dropped_cells(),
        pct(b.dropped_cells()),
        b.dropped.len(),
        s.table
    );
    for (name, n) in top(&b.approximated, a.top) {
        outln!("    approximated {n:>9}  {name}");
    }
    for (name, n) in top(&b.dropped, a.top) {
        outln!("    dropped      {n:>9}  {name}");
    }
    let biomes: u64 = s.biomes_approximated.values().sum();
    if biomes > 0 || s.columns_without_biomes > 0 {
        outln!(
            "  biomes: {biomes} biome cells approximated in {} biomes; {} columns had none to \
             convert (the dimension's default written)",
            s.biomes_approximated.len(),
            s.columns_without_biomes
        );
        for (name, n) in top(&s.biomes_approximated, a.top) {
            outln!("    approximated {n:>9}  {name}");
        }
    }
    print_block_entities("block entities", &s.block_entities, a.top);
    print_block_entities("entities", &s.entities, a.top);
    if s.players > 0 {
        outln!("  players: {} besides the single player's, under the same ids", s.players);
    }
    let unfinished: u64 = s.unfinished.values().sum();
    if unfinished > 0 {
        outln!(
            "  unfinished: {unfinished} columns Minecraft had not finished generating left out \
             (the game generates them)"
        );
        for (stage, n) in top(&s.unfinished, a.top) {
            outln!("    at stage     {n:>9}  {stage}");
        }
    }
    for d in &s.skipped_dimensions {
        outln!("  skipped: {d} (not the Overworld, the Nether or the End)");
    }
    if !s.damaged.is_empty() {
        outln!("  {} damaged records skipped:", s.damaged.len());
        for d in s.damaged.iter().take(LISTED) {
            outln!("    {d}");
        }
    }
}

/// A block-entity (or entity) report as JSON (`terrane convert --json`, `terrane export bedrock --json`).
pub(crate) fn block_entities_json(r: &BlockEntityReport) -> serde_json::Value {
    json!({
        "converted": r.converted,
        "left": r.left,
        "approximated": r.approximated,
        "items_dropped": r.items_dropped,
    })
}

/// A block-entity or entity report's lines (`what`: "block entities", "entities"), the
/// `top` largest of each list.
pub(crate) fn print_block_entities(what: &str, r: &BlockEntityReport, top_n: usize) {
    let (converted, left) = (r.converted_count(), r.left_count());
    if converted == 0 && left == 0 {
        return;
    }
    let dropped: u64 = r.items_dropped.values().sum();
    outln!(
        "  {what}: {converted} translated, {left} left out (no rule), {} parts approximated, \
         {dropped} items the other edition lacks left out",
        r.approximated.values().sum::<u64>()
    );
    for (name, n) in top(&r.left, top_n) {
        outln!("    left out     {n:>9}  {name}");
    }
    for (name, n) in top(&r.approximated, top_n) {
        outln!("    approximated {n:>9}  {name}");
    }
    for (name, n) in top(&r.items_dropped, top_n) {
        outln!("    item dropped {n:>9}  {name}");
    }
}
