//! `terrane render`: a top-down PNG map of a world's dimension, optionally coloured by the
//! regions of a replayed regionizer history. The world is read a row of column tiles at a
//! time (`TieredStore::top_blocks`) and the PNG written row by row: memory holds one stripe
//! of the map, not the world.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::{BufReader, Write as _};
use std::path::{Path, PathBuf};

use terrane::cluster::{ColumnTile, MIN_TILE_SHIFT};
use terrane::regionizer::replay::{self, ReplayOptions};

use crate::Fail;
use crate::progress::bar;

/// Flags of `terrane render`.
#[derive(clap::Args, Debug)]
pub struct RenderArgs {
    /// The world directory (optional with --regions LOG).
    #[arg(long, short)]
    pub world: Option<PathBuf>,
    /// The PNG to write.
    pub out: PathBuf,
    /// Colour by the regionizer's partition after replaying an operation log: --log, or
    /// the world's `regions.log` (written by `terrane demo`).
    #[arg(long)]
    pub regions: bool,
    /// The operation log for --regions (implies --regions).
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Replay flags for --regions (e.g. "--dim 3 --shift 2"); default: those named in the
    /// log's first comment line, else 2D with shift 4.
    #[arg(long, allow_hyphen_values = true)]
    pub replay_flags: Option<String>,
    /// The dimension to draw (terrane's number: 0 is the Overworld of an imported world).
    #[arg(long, default_value_t = 0)]
    pub dim: u64,
    /// Pixels per block (1..=8).
    #[arg(long, default_value_t = 1)]
    pub scale: u32,
    /// Blocks per pixel along each side (1..=64): a large world drawn smaller, each pixel
    /// the top block of the first column of its square. A map is 16,384 pixels per side at
    /// most: 2 draws a world of 32,768 blocks.
    #[arg(long, default_value_t = 1)]
    pub blocks_per_pixel: u32,
}

/// Colour of a block by its registry name.
fn colour(name: &str) -> [u8; 3] {
    let path = name.rsplit(':').next().unwrap_or(name);
    let base = path.split('[').next().unwrap_or(path);
    let known: [(&str, [u8; 3]); 14] = [
        ("grass", [95, 159, 53]),
        ("water", [52, 90, 210]),
        ("sand", [219, 207, 163]),
        ("snow", [240, 244, 250]),
        ("ice", [160, 190, 250]),
        ("gravel", [136, 126, 126]),
        ("cobblestone", [110, 110, 110]),
        ("stone", [128, 128, 128]),
        ("dirt", [134, 96, 67]),
        ("bedrock", [50, 50, 50]),
        ("leaves", [60, 120, 40]),
        ("log", [102, 81, 51]),
        ("lava", [220, 100, 20]),
        ("planks", [162, 130, 78]),
    ];
    for (k, c) in known {
        if base.contains(k) {
            return c;
        }
    }
    let h = base
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    [(h >> 8) as u8 | 0x40, (h >> 24) as u8 | 0x40, (h >> 40) as u8 | 0x40]
}

fn region_colour(i: usize) -> [u8; 3] {
    const C: [[u8; 3]; 10] = [
        [230, 25, 75],
        [60, 180, 75],
        [255, 225, 25],
        [0, 130, 200],
        [245, 130, 48],
        [145, 30, 180],
        [70, 240, 240],
        [240, 50, 230],
        [210, 245, 60],
        [250, 190, 212],
    ];
    C[i % C.len()]
}

/// Regions as lists of section `(x, z)`, and the section shift.
type Partition = (Vec<Vec<(i64, i64)>>, u32);

/// Block rows drawn at a time: one row of the smallest column tiles (16 chunk columns).
const STRIPE: i64 = 16 << MIN_TILE_SHIFT;

/// The final partition of a replayed log: for each region, its sections as (x, z) and the
/// section shift.
fn replay_regions(log: &Path, flags: Option<&str>) -> Result<Partition, Fail> {
    let text =
        fs::read_to_string(log).map_err(|e| Fail::usage(format!("{}: {e}", log.display())))?;
    let header_flags = text
        .lines()
        .next()
        .filter(|l| l.starts_with('#'))
        .and_then(|l| l.rsplit("replay").next())
        .map(|s| s.trim_end_matches(')').to_string());
    let flags = flags.map(str::to_string).or(header_flags).unwrap_or_default();
    let mut args: Vec<String> = flags.split_whitespace().map(str::to_string).collect();
    args.push("--final-only".into());
    let opts = ReplayOptions::from_args(args)
        .map_err(|e| Fail::usage(format!("replay flags {flags:?}: {e}")))?;
    let file = fs::File::open(log).map_err(|e| Fail::io(log, e))?;
    let regions = replay::final_regions(BufReader::new(file), &opts)
        .map_err(|e| Fail::usage(format!("{}: {e}", log.display())))?;
    // Top-down: x and z, whatever the log's dimensions.
    let regions = regions
        .into_iter()
        .map(|secs| secs.into_iter().map(|c| (c[0], c[c.len() - 1])).collect())
        .collect();
    Ok((regions, opts.config.shift()))
}

pub fn run(a: &RenderArgs) -> Result<(), Fail> {
    if !(1..=8).contains(&a.scale) {
        return Err(Fail::usage("--scale must be 1..=8"));
    }
    if !(1..=64).contains(&a.blocks_per_pixel) {
        return Err(Fail::usage("--blocks-per-pixel must be 1..=64"));
    }
    if a.scale > 1 && a.blocks_per_pixel > 1 {
        return Err(Fail::usage("--scale and --blocks-per-pixel: one or the other"));
    }
    let world = match &a.world {
        Some(w) => Some(crate::open_one_pass(w)?),
        None => None,
    };
    let log = match (&a.log, a.regions, &a.world) {
        (Some(p), _, _) => Some(p.clone()),
        (None, true, Some(w)) => Some(w.join("regions.log")),
        (None, true, None) => return Err(Fail::usage("--regions needs --log FILE or --world DIR")),
        (None, false, _) => None,
    };
    if world.is_none() && log.is_none() {
        return Err(Fail::usage("nothing to render: give --world DIR and/or --log LOG"));
    }
    let extent = match &world {
        Some(w) => w.tiered().stored_extent(a.dim)?,
        None => None,
    };
    let regions = match &log {
        Some(l) => Some(replay_regions(l, a.replay_flags.as_deref())?),
        None => None,
    };
    // Section (x, z) -> region index; blocks per section edge.
    let mut owner: HashMap<(i64, i64), usize> = HashMap::new();
    let mut edge = 16i64;
    if let Some((rs, shift)) = &regions {
        edge = 16i64 << shift;
        for (i, secs) in rs.iter().enumerate() {
            for s in secs {
                owner.insert(*s, i);
            }
        }
    }
    // Bounds in blocks: the stored chunks' and the regions'.
    let mut xs: Vec<i64> = Vec::new();
    let mut zs: Vec<i64> = Vec::new();
    if let Some(e) = &extent {
        xs.extend([e.x.0, e.x.1]);
        zs.extend([e.z.0, e.z.1]);
    }
    for (sx, sz) in owner.keys() {
        // Sections far out (a 3D log near the i64 domain edge) have no block coordinates.
        let (Some(x), Some(z)) = (sx.checked_mul(edge), sz.checked_mul(edge)) else {
            return Err(Fail::usage(format!(
                "section ({sx}, {sz}) is beyond the renderable block range"
            )));
        };
        xs.extend([x, x + (edge - 1)]);
        zs.extend([z, z + (edge - 1)]);
    }
    let (Some(&x0), Some(&x1), Some(&z0), Some(&z1)) =
        (xs.iter().min(), xs.iter().max(), zs.iter().min(), zs.iter().max())
    else {
        return Err(Fail::usage(format!(
            "nothing to render: dimension {} of the world has no chunks and no log has regions",
            a.dim
        )));
    };
    let span = |lo: i64, hi: i64| u64::try_from(i128::from(hi) - i128::from(lo) + 1).ok();
    let (w, h) = (span(x0, x1).unwrap_or(u64::MAX), span(z0, z1).unwrap_or(u64::MAX));
    let (scale, every) = (u64::from(a.scale), u64::from(a.blocks_per_pixel));
    let side = |blocks: u64| blocks.div_ceil(every).saturating_mul(scale);
    if side(w) > 16384 || side(h) > 16384 {
        let fits = w.max(h).div_ceil(16384);
        let hint = match fits {
            2..=64 if scale == 1 => format!("; --blocks-per-pixel {fits} draws it"),
            _ => String::new(),
        };
        return Err(Fail::usage(format!(
            "the map is {w} x {h} blocks: too big (16384 pixels per side at most){hint}"
        )));
    }
    // Shading by height over the stored chunks' blocks.
    let (ymin, ymax) = extent.as_ref().map_or((0, 0), |e| e.y);
    let colours: Vec<[u8; 3]> = match &world {
        Some(w) => w.schema().blocks().names().map(colour).collect(),
        None => Vec::new(),
    };
    let shade = |y: i64, block: terrane::BlockId| {
        let base = colours.get(block.0 as usize).copied().unwrap_or([255, 0, 255]);
        let t = if ymax > ymin {
            (i128::from(y) - i128::from(ymin)) as f64 / (i128::from(ymax) - i128::from(ymin)) as f64
        } else {
            1.0
        };
        let f = 0.55 + 0.45 * t;
        base.map(|v| (f64::from(v) * f) as u8)
    };
    // The world's tiles by row (tile z), drawn a row at a time.
    let mut tile_rows: BTreeMap<i64, Vec<ColumnTile>> = BTreeMap::new();
    if let Some(w) = &world {
        for tile in w.tiered().column_tiles(a.dim, MIN_TILE_SHIFT)? {
            tile_rows.entry(tile.z).or_default().push(tile);
        }
    }
    let pb = bar(false, " columns");
    pb.set_message("rendering");
    pb.set_length(extent.as_ref().map_or(0, |e| e.columns));
    let (pw, ph) = (side(w) as usize, side(h) as usize);
    let (w, scale, every) = (w as usize, scale as usize, every as usize);
    // A failure reading the world, kept while the file writer unwinds.
    let mut failed: Option<Fail> = None;
    let written = terrane::export::write_whole_with(&a.out, |out| {
        let png_err = |e: png::EncodingError| std::io::Error::other(format!("png: {e}"));
        let mut enc = png::Encoder::new(out, pw as u32, ph as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut wr = enc.write_header().map_err(png_err)?;
        let mut stream = wr.stream_writer().map_err(png_err)?;
        // One stripe of STRIPE block rows: each block column's colour, where it has a top.
        let mut stripe: Vec<Option<[u8; 3]>> = vec![None; w * STRIPE as usize];
        let mut row = vec![0u8; pw * 3];
        for tz in z0.div_euclid(STRIPE)..=z1.div_euclid(STRIPE) {
            let sz0 = tz * STRIPE;
            stripe.fill(None);
            for tile in tile_rows.get(&tz).into_iter().flatten() {
                let Some(world) = &world else { break };
                let tops = match world.tiered().top_blocks(tile) {
                    Ok(t) => t,
                    Err(e) => {
                        failed = Some(e.into());
                        return Err(std::io::Error::other("reading the world failed"));
                    }
                };
                let tx0 = tile.x * STRIPE;
                for x in tx0.max(x0)..=(tx0 + STRIPE - 1).min(x1) {
                    for z in sz0.max(z0)..=(sz0 + STRIPE - 1).min(z1) {
                        if let Some(t) = tops.get(x, z) {
                            stripe[(z - sz0) as usize * w + (x - x0) as usize] =
                                Some(shade(t.y, t.block));
                        }
                    }
                }
                pb.inc(tops.columns());
            }
            for z in sz0.max(z0)..=(sz0 + STRIPE - 1).min(z1) {
                if !((z - z0) as usize).is_multiple_of(every) {
                    continue;
                }
                for bx in (0..w).step_by(every) {
                    let x = x0 + bx as i64;
                    let top = stripe[(z - sz0) as usize * w + bx];
                    let mut c = top.unwrap_or([16, 16, 16]);
                    if let Some(&i) = owner.get(&(x.div_euclid(edge), z.div_euclid(edge))) {
                        let r = region_colour(i);
                        let border = x.rem_euclid(edge) == 0 || z.rem_euclid(edge) == 0;
                        c = if border {
                            r
                        } else if top.is_some() {
                            [0, 1, 2]
                                .map(|k| ((u16::from(c[k]) * 7 + u16::from(r[k]) * 3) / 10) as u8)
                        } else {
                            r.map(|v| v / 3)
                        };
                    }
                    for dx in 0..scale {
                        let px = (bx / every * scale + dx) * 3;
                        row[px..px + 3].copy_from_slice(&c);
                    }
                }
                for _ in 0..scale {
                    stream.write_all(&row)?;
                }
            }
        }
        stream.finish().map_err(png_err)
    });
    pb.finish_and_clear();
    if let Some(f) = failed {
        return Err(f);
    }
    written?;
    outln!(
        "wrote {} ({pw} x {ph} px; blocks x {x0}..={x1}, z {z0}..={z1}{})",
        a.out.display(),
        regions.map_or(String::new(), |(r, _)| format!("; {} regions", r.len()))
    );
    Ok(())
}
