//! The spill files of a Bedrock → Java conversion (`docs/format/convert-spill.md`): each
//! translated column framed (its length, CRC-32C and position) and appended to the file of
//! its region; what an interrupted run left checked on resume ([`Resumed`]: cut at the first
//! frame cut, damaged or of another region) and each column checked again when read back
//! ([`SpillSource`], terrane-anvil's export source).

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use terrane_anvil::ImportedColumn;
use terrane_anvil::folder::{JavaLayout, vanilla_dimensions};
use terrane_chunk::Schema;
use terrane_section::ColumnPos;

use crate::error::{Error, Result, io};

/// The file beside the spill files that holds the target schema's block names, one per
/// line, in id order.
pub(crate) const SPILL_SCHEMA: &str = "schema.txt";

/// The spill files of `spill_dir` (named `DIM.RX.RZ`).
pub(crate) fn spill_files(spill_dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in fs::read_dir(spill_dir).map_err(io(spill_dir))? {
        let p = e.map_err(io(spill_dir))?.path();
        // `schema.txt`, and what a kill inside its rewrite left (`write_whole`'s temporary
        // file), are not spill files.
        if spill_key(&p).is_some() {
            out.push(p);
        }
    }
    Ok(out)
}

/// What an interrupted Bedrock → Java run had done: the columns in its spill files, and the
/// regions it had written (their spill file gone).
#[derive(Default)]
pub(crate) struct Resumed {
    pub(crate) columns: HashSet<(u64, i32, i32)>,
    pub(crate) regions: HashSet<(u64, i32, i32)>,
}

impl Resumed {
    pub(crate) fn scan(tmp: &Path, spill_dir: &Path) -> Result<Resumed> {
        let mut r = Resumed::default();
        let mut spilled = HashSet::new();
        for path in spill_files(spill_dir)? {
            let Some(key) = spill_key(&path) else { continue };
            spilled.insert(key);
            // A crash may have cut the last column short: the file keeps the whole ones.
            let (columns, whole) = spill_index(&path, Check::Frames)?;
            let f = fs::OpenOptions::new().write(true).open(&path).map_err(io(&path))?;
            f.set_len(whole).map_err(io(&path))?;
            r.columns.extend(columns.into_iter().map(|(p, _)| (key.0, p.x, p.z)));
        }
        for (dim, d) in vanilla_dimensions(JavaLayout::Classic).iter().enumerate() {
            let dir = tmp.join(&d.region);
            for (x, z, _) in terrane_anvil::region::list_regions(&dir).unwrap_or_default() {
                if !spilled.contains(&(dim as u64, x, z)) {
                    r.regions.insert((dim as u64, x, z));
                }
            }
        }
        Ok(r)
    }
}

/// The dimension and region of a spill file's name (`DIM.RX.RZ`).
pub(crate) fn spill_key(path: &Path) -> Option<(u64, i32, i32)> {
    let name = path.file_name()?.to_str()?;
    let mut it = name.split('.');
    let key = (it.next()?.parse().ok()?, it.next()?.parse().ok()?, it.next()?.parse().ok()?);
    it.next().is_none().then_some(key)
}

/// The bytes in front of a spilled column's body (`docs/format/convert-spill.md`): its
/// length and CRC-32C, filled in by [`spill_frame_end`], then the column's position.
const SPILL_FRAME_HEAD: usize = 16;

/// A spilled column's frame, its position written and its length and checksum to come.
pub(crate) fn spill_frame_start(x: i32, z: i32) -> Vec<u8> {
    let mut buf = vec![0u8; 8];
    buf.extend_from_slice(&x.to_le_bytes());
    buf.extend_from_slice(&z.to_le_bytes());
    buf
}

/// Fills in the length and CRC-32C (of everything after them) of the frame in `buf`.
pub(crate) fn spill_frame_end(buf: &mut [u8]) -> Result<()> {
    let len = u32::try_from(buf.len() - 8)
        .map_err(|_| Error::Inconsistent("a spilled column of 4 GiB or more".into()))?;
    let crc = crc32c::crc32c(&buf[8..]);
    buf[..4].copy_from_slice(&len.to_le_bytes());
    buf[4..8].copy_from_slice(&crc.to_le_bytes());
    Ok(())
}

/// How much of a spill file [`spill_index`] checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Each frame's length against the file's, reading its head only (the file this run
    /// wrote; each column's checksum is checked when it is read).
    Lengths,
    /// Each frame read whole: its checksum, and its position in the file's region (a file
    /// an earlier run left, where a crash may have left anything after the last whole frame).
    Frames,
}

/// The whole columns of a spill file, each with where it starts, and the length of that
/// whole part: it ends at the first frame that runs past the end of the file or, with
/// [`Check::Frames`], whose checksum or position is wrong.
fn spill_index(path: &Path, check: Check) -> Result<(Vec<(ColumnPos, u64)>, u64)> {
    let region = spill_key(path).map(|(_, rx, rz)| (rx, rz));
    let f = fs::File::open(path).map_err(io(path))?;
    let len = f.metadata().map_err(io(path))?.len();
    let mut r = BufReader::new(f);
    let (mut at, mut out, mut body) = (0u64, Vec::new(), Vec::new());
    while len - at >= SPILL_FRAME_HEAD as u64 {
        let mut head = [0u8; SPILL_FRAME_HEAD];
        r.read_exact(&mut head).map_err(io(path))?;
        let word = |i: usize| [head[i], head[i + 1], head[i + 2], head[i + 3]];
        let (size, crc) = (u32::from_le_bytes(word(0)), u32::from_le_bytes(word(4)));
        let pos = ColumnPos::new(i32::from_le_bytes(word(8)), i32::from_le_bytes(word(12)));
        // The position, and at least the three counts of a column without chunks.
        if size < 8 + 12 || at + 8 + u64::from(size) > len {
            break;
        }
        let rest = u64::from(size) - 8;
        if check == Check::Frames {
            body.resize(rest as usize, 0);
            r.read_exact(&mut body).map_err(io(path))?;
            let mut c = crc32c::crc32c(&head[8..]);
            c = crc32c::crc32c_append(c, &body);
            if c != crc || region != Some((pos.x >> 5, pos.z >> 5)) {
                break;
            }
        } else {
            r.seek_relative(rest as i64).map_err(io(path))?;
        }
        out.push((pos, at));
        at += 8 + u64::from(size);
    }
    Ok((out, at))
}

/// Reads the spilled column at the reader's position (`docs/format/convert-spill.md`),
/// checking its checksum: its position, the chunk count (`u32` LE), then each chunk's `y`
/// (`i64` LE), length (`u32` LE) and bytes, then the column record's length (`u32` LE) and
/// bytes, then the entity count (`u32` LE) and each entity's UUID (16 bytes), length
/// (`u32` LE) and NBT.
fn read_spilled_column(r: &mut impl Read, path: &Path) -> Result<ImportedColumn> {
    let damaged = |what: &'static str| Error::DamagedSpill { path: path.to_path_buf(), what };
    let mut head = [0u8; 8];
    r.read_exact(&mut head).map_err(io(path))?;
    let size = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
    let crc = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    let mut frame = vec![0u8; size];
    r.read_exact(&mut frame).map_err(io(path))?;
    if crc32c::crc32c(&frame) != crc {
        return Err(damaged("does not match its checksum"));
    }
    let mut b: &[u8] = &frame;
    let mut take = |n: usize| -> Result<&[u8]> {
        if b.len() < n {
            return Err(damaged("ends early"));
        }
        let (h, t) = b.split_at(n);
        b = t;
        Ok(h)
    };
    fn word(b: &[u8]) -> u32 {
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    let x = word(take(4)?) as i32;
    let z = word(take(4)?) as i32;
    let n = word(take(4)?);
    let mut chunks = Vec::with_capacity(n.min(64) as usize);
    for _ in 0..n {
        let y = i64::from_le_bytes(take(8)?.try_into().unwrap_or_default());
        let len = word(take(4)?) as usize;
        chunks.push((y, take(len)?.to_vec()));
    }
    let len = word(take(4)?) as usize;
    let record = take(len)?.to_vec();
    let n = word(take(4)?);
    let mut entities = Vec::with_capacity(n.min(256) as usize);
    for _ in 0..n {
        let uuid: [u8; 16] = take(16)?.try_into().unwrap_or_default();
        let len = word(take(4)?) as usize;
        entities.push((uuid, take(len)?.to_vec()));
    }
    Ok(ImportedColumn { pos: ColumnPos::new(x, z), chunks, entities, record })
}

/// One region's spill file as terrane-anvil's export source: each column read from the file
/// when the exporter asks for it, so that a region's columns are never all in memory.
pub(crate) struct SpillSource {
    path: PathBuf,
    file: fs::File,
    schema: Schema,
    /// Where each column starts in the file.
    offsets: BTreeMap<ColumnPos, u64>,
}

impl SpillSource {
    pub(crate) fn open(path: &Path, schema: Schema) -> Result<SpillSource> {
        let file = fs::File::open(path).map_err(io(path))?;
        let offsets = spill_index(path, Check::Lengths)?.0.into_iter().collect();
        Ok(SpillSource { path: path.to_path_buf(), file, schema, offsets })
    }
}

impl terrane_anvil::ExportSource for SpillSource {
    type Error = Error;
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn columns(&self) -> Result<Vec<ColumnPos>> {
        Ok(self.offsets.keys().copied().collect())
    }
    fn column(&self, pos: ColumnPos) -> Result<Option<ImportedColumn>> {
        use std::io::{Seek, SeekFrom};
        let Some(&at) = self.offsets.get(&pos) else { return Ok(None) };
        let mut f = &self.file;
        f.seek(SeekFrom::Start(at)).map_err(io(&self.path))?;
        read_spilled_column(&mut BufReader::new(f), &self.path).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spilled column's frame at (`x`, `z`) without chunks or entities.
    fn frame(x: i32, z: i32, record: &[u8]) -> Vec<u8> {
        let mut buf = spill_frame_start(x, z);
        buf.extend_from_slice(&0u32.to_le_bytes());
        buf.extend_from_slice(&(record.len() as u32).to_le_bytes());
        buf.extend_from_slice(record);
        buf.extend_from_slice(&0u32.to_le_bytes());
        spill_frame_end(&mut buf).unwrap();
        buf
    }

    /// A spill file of region (1, -1) holding `frames`, indexed both ways.
    fn index(frames: &[&[u8]]) -> [(Vec<i32>, u64); 2] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.1.-1");
        fs::write(&path, frames.concat()).unwrap();
        [Check::Lengths, Check::Frames].map(|c| {
            let (cols, whole) = spill_index(&path, c).unwrap();
            (cols.iter().map(|(p, _)| p.x).collect(), whole)
        })
    }

    #[test]
    fn a_spill_file_is_whole_up_to_the_first_frame_that_is_cut_damaged_or_astray() {
        let a = frame(32, -1, b"one");
        let b = frame(33, -2, b"two");
        let ab = (a.len() + b.len()) as u64;
        // Whole frames.
        assert_eq!(index(&[&a, &b]), [(vec![32, 33], ab), (vec![32, 33], ab)]);
        // A frame cut short (a kill inside the append).
        let cut = &b[..b.len() - 1];
        assert_eq!(index(&[&a, cut]), [(vec![32], a.len() as u64), (vec![32], a.len() as u64)]);
        // A damaged byte: only the checked index sees it (and reading the column refuses it).
        let mut bad = b.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(index(&[&a, &bad])[1], (vec![32], a.len() as u64));
        let err = read_spilled_column(&mut &bad[..], Path::new("0.1.-1")).unwrap_err();
        assert!(err.to_string().contains("checksum"), "{err}");
        // A column of another region (x 64 is region 2).
        let stray = frame(64, -1, b"three");
        assert_eq!(index(&[&a, &stray, &b])[1], (vec![32], a.len() as u64));
        // Zeros where a power loss left a length and nothing written.
        let zeros = [0u8; 64];
        assert_eq!(index(&[&a, &zeros]), [(vec![32], a.len() as u64), (vec![32], a.len() as u64)]);
        // What is read is what was framed.
        let col = read_spilled_column(&mut &b[..], Path::new("0.1.-1")).unwrap();
        assert_eq!((col.pos, col.record), (ColumnPos::new(33, -2), b"two".to_vec()));
    }

    #[test]
    fn only_names_of_a_region_are_spill_files() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["0.1.-1", "2.-3.4", SPILL_SCHEMA, "schema.txt.terrane-tmp", "0.1"] {
            fs::write(dir.path().join(n), b"").unwrap();
        }
        let mut names: Vec<String> = spill_files(dir.path())
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["0.1.-1", "2.-3.4"]);
    }
}
