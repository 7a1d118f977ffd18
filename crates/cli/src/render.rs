//! `terrane render`: a top-down PNG map of a world, optionally coloured by the regions of a
//! replayed regionizer history.

use std::collections::HashMap;
use std::fs;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use terrane::regionizer::replay::{self, ReplayOptions};
use terrane::{ChunkView, World};

use crate::Fail;

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
    /// Pixels per block (1..=8).
    #[arg(long, default_value_t = 1)]
    pub scale: u32,
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

/// Top block (y, block name index) per block column.
/// Top block `(y, block id)` per block column `(x, z)`.
type Tops = HashMap<(i64, i64), (i64, u32)>;
/// Regions as lists of section `(x, z)`, and the section shift.
type Partition = (Vec<Vec<(i64, i64)>>, u32);

fn top_blocks(world: &World) -> Result<(Tops, Vec<[u8; 3]>), Fail> {
    let names = world.schema().blocks();
    // See-through blocks by the world's own opacity rule (the one its opacity map uses).
    let air: Vec<bool> =
        (0..names.len() as u32).map(|i| !world.tiered().is_opaque(terrane::BlockId(i))).collect();
    let colours: Vec<[u8; 3]> = names.names().map(colour).collect();
    let mut top: Tops = HashMap::new();
    world.tiered().for_each_chunk(|(_, pos), _, bytes| -> Result<(), Fail> {
        let view = ChunkView::parse(bytes)?;
        for lx in 0..16u32 {
            for lz in 0..16u32 {
                for ly in (0..16u32).rev() {
                    let b = view.block_at(lx, ly, lz);
                    if air.get(b.0 as usize).copied().unwrap_or(false) {
                        continue;
                    }
                    let (x, y, z) = (
                        pos.x * 16 + i64::from(lx),
                        pos.y * 16 + i64::from(ly),
                        pos.z * 16 + i64::from(lz),
                    );
                    let e = top.entry((x, z)).or_insert((i64::MIN, 0));
                    if y > e.0 {
                        *e = (y, b.0);
                    }
                    break;
                }
            }
        }
        Ok(())
    })?;
    Ok((top, colours))
}

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
    let world = match &a.world {
        Some(w) => Some(World::open_read_only(w)?),
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
    let (top, colours) = match &world {
        Some(w) => top_blocks(w)?,
        None => (HashMap::new(), Vec::new()),
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
    // Bounds in blocks.
    let mut xs: Vec<i64> = top.keys().map(|k| k.0).collect();
    let mut zs: Vec<i64> = top.keys().map(|k| k.1).collect();
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
        return Err(Fail::usage(
            "nothing to render: the world has no chunks and the log no regions",
        ));
    };
    let span = |lo: i64, hi: i64| u64::try_from(i128::from(hi) - i128::from(lo) + 1).ok();
    let (w, h) = (span(x0, x1).unwrap_or(u64::MAX), span(z0, z1).unwrap_or(u64::MAX));
    let scale = u64::from(a.scale);
    if w.saturating_mul(scale) > 16384 || h.saturating_mul(scale) > 16384 {
        return Err(Fail::usage(format!(
            "the map is {w} x {h} blocks: too big (16384 pixels per side at most)"
        )));
    }
    let (ymin, ymax) =
        top.values().fold((i64::MAX, i64::MIN), |(lo, hi), (y, _)| (lo.min(*y), hi.max(*y)));
    let (pw, ph) = ((w * scale) as usize, (h * scale) as usize);
    let mut img = vec![0u8; pw * ph * 3];
    for bz in 0..h as i64 {
        for bx in 0..w as i64 {
            let (x, z) = (x0 + bx, z0 + bz);
            let mut c = match top.get(&(x, z)) {
                Some((y, b)) => {
                    let base = colours.get(*b as usize).copied().unwrap_or([255, 0, 255]);
                    let t =
                        if ymax > ymin { (y - ymin) as f64 / (ymax - ymin) as f64 } else { 1.0 };
                    let f = 0.55 + 0.45 * t;
                    base.map(|v| (f64::from(v) * f) as u8)
                }
                None => [16, 16, 16],
            };
            if let Some(&i) = owner.get(&(x.div_euclid(edge), z.div_euclid(edge))) {
                let r = region_colour(i);
                let border = x.rem_euclid(edge) == 0 || z.rem_euclid(edge) == 0;
                c = if border {
                    r
                } else if top.contains_key(&(x, z)) {
                    [0, 1, 2].map(|k| ((u16::from(c[k]) * 7 + u16::from(r[k]) * 3) / 10) as u8)
                } else {
                    r.map(|v| v / 3)
                };
            }
            for dy in 0..scale as usize {
                for dx in 0..scale as usize {
                    let px = (bz as usize * scale as usize + dy) * pw
                        + bx as usize * scale as usize
                        + dx;
                    img[px * 3..px * 3 + 3].copy_from_slice(&c);
                }
            }
        }
    }
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, pw as u32, ph as u32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut wr = enc.write_header().map_err(|e| Fail::other(format!("png: {e}")))?;
        wr.write_image_data(&img).map_err(|e| Fail::other(format!("png: {e}")))?;
        wr.finish().map_err(|e| Fail::other(format!("png: {e}")))?;
    }
    terrane::export::write_whole(&a.out, &bytes)?;
    outln!(
        "wrote {} ({pw} x {ph} px; blocks x {x0}..={x1}, z {z0}..={z1}{})",
        a.out.display(),
        regions.map_or(String::new(), |(r, _)| format!("; {} regions", r.len()))
    );
    Ok(())
}
