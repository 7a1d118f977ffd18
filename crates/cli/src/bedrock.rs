//! `terrane import bedrock` / `terrane export bedrock`: Minecraft Bedrock world folders in and
//! out of a world. The work is the facade's (`terrane::bedrock`); this file shows progress
//! and prints the summary.

use std::path::Path;
use std::time::Instant;

use serde_json::json;
use terrane::bedrock::{self, BedrockProgress};
use terrane::{Backend, World};

use crate::Fail;
use crate::anvil::open_for_import;
use crate::out::{LISTED, listed, mib};
use crate::progress::bar;

pub fn import(
    source: &Path,
    world: &Path,
    backend: Option<Backend>,
    json: bool,
    merge: bool,
) -> Result<(), Fail> {
    if !bedrock::is_bedrock_world(source) {
        return Err(Fail::usage(format!(
            "{} is not a Bedrock world folder (it holds level.dat and db/, as in \
             com.mojang/minecraftWorlds/<id>)",
            source.display()
        )));
    }
    let mut w = open_for_import(world, backend)?;
    if !merge {
        bedrock::refuse_overwrite(&w)?;
    }
    let t = Instant::now();
    let pb = bar(json, " columns");
    pb.set_message("import");
    let s = bedrock::import_bedrock_world(&mut w, source, &mut |p: &BedrockProgress| {
        pb.set_position(p.columns_done);
        pb.set_length(p.columns_done);
    })?;
    pb.finish();
    w.close()?;
    let secs = t.elapsed().as_secs_f64();
    let disk = World::open_read_only(world)?.disk_bytes();
    if json {
        let v = json!({
            "columns": s.columns,
            "columns_skipped": s.skipped,
            "dimensions": s.per_dimension.iter().map(|(d, n)| (d.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
            "chunks": s.chunks,
            "blocks": s.blocks,
            "entities": s.entities,
            "block_entities": s.block_entities,
            "world_records": s.world_records,
            "bytes_in": s.bytes_in,
            "disk_bytes": disk,
            "seconds": secs,
            "damaged": s.damaged,
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!(
            "imported {} columns ({} already there) into {} in {:.2} s ({:.0} columns/s)",
            s.columns,
            s.skipped,
            world.display(),
            secs,
            s.columns as f64 / secs.max(1e-9)
        );
        let names = ["overworld", "the_nether", "the_end"];
        for (d, n) in &s.per_dimension {
            outln!("  {}: {n} columns", names.get(*d as usize).unwrap_or(&"?"));
        }
        outln!(
            "  {} cubic chunks, {} non-air blocks, {} block entities, {} entities, {} other records",
            s.chunks,
            s.blocks,
            s.block_entities,
            s.entities,
            s.world_records
        );
        outln!("  db/ {:.2} MiB -> world on disk {:.2} MiB", mib(s.bytes_in), mib(disk));
        if !s.damaged.is_empty() {
            outln!("  {} damaged records kept as stored, not converted:", s.damaged.len());
            for d in s.damaged.iter().take(LISTED) {
                outln!("    {d}");
            }
        }
    }
    let damaged = s.damaged.len();
    if damaged > 0 && s.chunks == 0 && s.skipped == 0 {
        return Err(Fail::other(format!(
            "nothing was converted from {}: no chunk decoded ({damaged} damaged records kept as \
             stored, {})",
            source.display(),
            listed(damaged, json)
        )));
    }
    if damaged > 0 && !json {
        outln!(
            "partial import: {damaged} damaged records kept as stored, not converted ({})",
            listed(damaged, false)
        );
    }
    Ok(())
}

pub fn export(
    world: &Path,
    dest: &Path,
    overwrite: terrane::export::Overwrite,
    json: bool,
) -> Result<(), Fail> {
    let t = Instant::now();
    let w = crate::open_one_pass(world)?;
    let pb = bar(json, " columns");
    pb.set_message("export");
    let s = bedrock::export_bedrock_world(&w, dest, overwrite, &mut |p: &BedrockProgress| {
        pb.set_length(p.columns_total.unwrap_or(0));
        pb.set_position(p.columns_done);
    })?;
    pb.finish();
    for d in &s.skipped_dimensions {
        tracing::warn!("dimension {d} is not one of Bedrock's three: left out");
    }
    let secs = t.elapsed().as_secs_f64();
    if json {
        let v = json!({
            "columns": s.columns,
            "sub_chunks": s.sub_chunks,
            "entities": s.entities,
            "world_records": s.world_records,
            "bytes_out": s.bytes_out,
            "seconds": secs,
            "translated_from_java": s.translated.as_ref().map(|r| json!({
                "cells": r.cells,
                "approximated": r.approximated,
                "dropped": r.dropped,
                "block_entities": crate::convert::block_entities_json(&s.block_entities),
                "entities": crate::convert::block_entities_json(&s.entity_translation),
            })),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!(
            "exported {} columns ({} sub-chunks, {} entities, {} other records) to {} in {:.2} s",
            s.columns,
            s.sub_chunks,
            s.entities,
            s.world_records,
            dest.display(),
            secs
        );
        outln!("  db/ {:.2} MiB", mib(s.bytes_out));
        if let Some(r) = &s.translated {
            outln!(
                "  Java block states translated to Bedrock's: {} cells, {} approximated in {} \
                 states, {} dropped in {} states",
                r.cells,
                r.approximated_cells(),
                r.approximated.len(),
                r.dropped_cells(),
                r.dropped.len(),
            );
            crate::convert::print_block_entities("block entities", &s.block_entities, 10);
            crate::convert::print_block_entities("entities", &s.entity_translation, 10);
        }
    }
    Ok(())
}
