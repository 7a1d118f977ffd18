//! Hostile files: inputs under 1 MB crafted to make a decoder allocate as
//! much as it can, each decoded in a child process (this test binary, re-executed) that
//! reports its peak resident memory (`VmHWM`). The parent checks each peak against the bound
//! the decoder states, above the peak of a child that decodes nothing. The field sweeps set
//! every 4-byte window of a valid chunk, cluster, distance graph and block-file index to a
//! huge count; a crafted block file's commit record claims 2^31 blocks.

use std::io::Write;
use std::process::Command;

use terrane::BlockId;

const CASE_ENV: &str = "TERRANE_HOSTILE_CASE";

/// NBT: a root compound holding a list of `n` empty compounds (1 byte each on the wire, a
/// tree node each in memory).
fn nbt_compound_list(n: usize) -> Vec<u8> {
    let mut b = vec![10, 0, 0, 9, 0, 1, b'l', 10];
    b.extend_from_slice(&(n as i32).to_be_bytes());
    b.extend(std::iter::repeat_n(0u8, n));
    b.push(0);
    b
}

/// A zlib stream of `raw`, at the best compression.
fn zlib(raw: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(raw).unwrap();
    e.finish().unwrap()
}

/// A region file whose one chunk inflates to the chunk NBT bomb of `n` empty compounds.
fn region_bomb(n: usize) -> Vec<u8> {
    let data = zlib(&nbt_compound_list(n));
    let mut w = terrane::anvil::region::RegionWriter::new(0, 0);
    w.insert_compressed(0, data, terrane::anvil::region::Compression::Zlib, 1);
    w.finish().unwrap().0
}

/// The cases: name and the bound on the growth of the decoder's peak memory (above the idle
/// child's), with the reason.
const CASES: [(&str, u64); 8] = [
    ("idle", 0),
    // Every 4-byte window of a valid encoding set to a huge count (both byte orders), each
    // decoded: a declared size never allocates beyond the bytes present. Bound: 64 MiB for
    // the whole sweep.
    ("chunk_fields", 64 << 20),
    ("cluster_fields", 64 << 20),
    ("distance_fields", 64 << 20),
    // The same over the index block of a block file (its checksum recomputed, so the index
    // is parsed, not just rejected), each variant opened read-only and scanned: the index's
    // counts and runs are checked against the file's blocks before allocating.
    ("blockfile_index_fields", 64 << 20),
    // A block file whose index is damaged (so the open scans) and whose commit record, its
    // checksum valid, says its one object spans 2^31 - 1 blocks: the recovery scan checks
    // the runs against the file's length before listing their blocks (8 GiB before).
    ("blockfile_commit_runs", 64 << 20),
    // 1 MB on the wire, 1 M tree nodes of 32 bytes, the list's vector growing to twice that.
    ("nbt_compound_list", 80 << 20),
    // A region file under 1 MB whose chunk inflates to 60 MiB of empty compounds: the
    // decompressed-chunk limit (64 MiB) plus terrane-nbt's tree budget (256 MiB) and the
    // vectors' growth (twice it).
    ("region_chunk_bomb", 640 << 20),
];

/// A case's input, built only in the child that decodes it.
fn input(name: &str) -> Vec<u8> {
    match name {
        "idle" => Vec::new(),
        "nbt_compound_list" => nbt_compound_list((1 << 20) - 16),
        "region_chunk_bomb" => region_bomb(60 << 20),
        "chunk_fields" => sample_chunk(),
        "cluster_fields" => {
            let mut b = terrane::cluster::ClusterBuilder::new(terrane::cluster::Scale::Cube4);
            for i in 0..8u16 {
                b.insert(i * 7, sample_chunk()).unwrap();
            }
            b.build().unwrap()
        }
        "blockfile_index_fields" => {
            use terrane::store::{Batch, Store};
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("w.tbf");
            let s = terrane::blockfile::BlockFile::open(&path, &blockfile_config(false)).unwrap();
            for v in 0..3i64 {
                let mut b = Batch::new();
                for i in 0..12u8 {
                    b.put(
                        terrane::tables::CHUNK_L0,
                        vec![b'k', i],
                        v,
                        vec![i; 100 + 700 * i as usize],
                    );
                }
                s.write(&b.synced()).unwrap();
            }
            drop(s);
            std::fs::read(&path).unwrap()
        }
        "blockfile_commit_runs" => {
            use terrane::store::{Batch, Store};
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("w.tbf");
            let s = terrane::blockfile::BlockFile::open(&path, &blockfile_config(false)).unwrap();
            let mut b = Batch::new();
            b.put(terrane::tables::CHUNK_L0, b"k".to_vec(), 1, vec![0xAB; 3000]);
            s.write(&b.synced()).unwrap();
            drop(s);
            let mut file = std::fs::read(&path).unwrap();
            // The put in the commit record: its length (3000), one run, then start, length.
            // (Past block 0, the index, which lists the same put.)
            let block = terrane::blockfile::BLOCK_SIZE;
            let mut pat = 3000u64.to_le_bytes().to_vec();
            pat.extend_from_slice(&1u32.to_le_bytes());
            let at = block
                + file[block..]
                    .windows(pat.len())
                    .position(|w| w == pat)
                    .expect("the commit record");
            file[at + 16..at + 20].copy_from_slice(&0x7FFF_FFFFu32.to_le_bytes());
            let first = at / block * block;
            let crc = crc32c::crc32c(&file[first..first + block - 4]);
            file[first + block - 4..first + block].copy_from_slice(&crc.to_le_bytes());
            file[100] ^= 0xFF; // the index no longer passes its checksum: the open scans
            file
        }
        "distance_fields" => {
            let mut g = terrane::DistanceGraph::new();
            for x in -40..40 {
                for z in (-40..40).step_by(3) {
                    g.insert(terrane::ColumnPos::new(x * 5, z * 7)).unwrap();
                }
            }
            g.to_bytes()
        }
        other => panic!("unknown case {other}"),
    }
}

/// A chunk with a palette of 40, an extra layer, a component value and entities.
fn sample_chunk() -> Vec<u8> {
    let mut schema = terrane::Schema::new();
    for i in 0..40 {
        schema.add_block(&format!("t:b{i}"), &[]).unwrap();
    }
    let mut c = terrane::Chunk::new(BlockId(0));
    for i in 0..4096u16 {
        c.set_index(i, BlockId(u32::from(i % 40)));
    }
    c.push_layer(5, BlockId(3));
    c.add_entity([7; 16]);
    c.encode(&schema)
}

/// Decodes every variant of `bytes` with one 4-byte window set to a huge count.
fn sweep(bytes: &[u8], decode: impl Fn(&[u8])) {
    let mut b = bytes.to_vec();
    for i in 0..bytes.len().saturating_sub(3) {
        for pat in [[0xFF, 0xFF, 0xFF, 0x7F], [0x7F, 0xFF, 0xFF, 0xFF], [0, 0, 0, 0x10]] {
            b[i..i + 4].copy_from_slice(&pat);
            decode(&b);
            b[i..i + 4].copy_from_slice(&bytes[i..i + 4]);
        }
    }
}

fn decode(name: &str, bytes: &[u8]) {
    match name {
        "idle" => {}
        "nbt_compound_list" => drop(terrane::nbt::from_bytes(bytes)),
        "region_chunk_bomb" => {
            let r = terrane::anvil::region::RegionFile::new(bytes.to_vec()).unwrap();
            for e in r.entries().collect::<Vec<_>>() {
                if let Ok(raw) = r.read(&e) {
                    drop(terrane::anvil::Column::from_nbt(&raw.nbt, (0, 0)));
                }
            }
        }
        "chunk_fields" => sweep(bytes, |b| {
            if let Ok(v) = terrane::ChunkView::parse(b) {
                let mut n = 0u64;
                v.for_each_block(|_, id| n += u64::from(id.0));
                std::hint::black_box(n);
            }
        }),
        "cluster_fields" => sweep(bytes, |b| {
            if let Ok(v) = terrane::cluster::ClusterView::new(b) {
                std::hint::black_box(v.iter().count());
            }
        }),
        "distance_fields" => sweep(bytes, |b| drop(terrane::DistanceGraph::from_bytes(b))),
        "blockfile_commit_runs" => {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("v.tbf");
            std::fs::write(&path, bytes).unwrap();
            let opened = terrane::blockfile::BlockFile::open(&path, &blockfile_config(true));
            std::hint::black_box(opened.map(|_| ()).map_err(|e| e.to_string()).err());
        }
        "blockfile_index_fields" => {
            use terrane::store::{KeyRange, ReadView};
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("v.tbf");
            let block = terrane::blockfile::BLOCK_SIZE;
            // The index payload sits at the start of block 0, after the signature line.
            sweep(&bytes[..1536], |head| {
                let mut file = bytes.to_vec();
                file[..head.len()].copy_from_slice(head);
                let crc = crc32c::crc32c(&file[..block - 4]);
                file[block - 4..block].copy_from_slice(&crc.to_le_bytes());
                std::fs::write(&path, &file).unwrap();
                if let Ok(s) = terrane::blockfile::BlockFile::open(&path, &blockfile_config(true)) {
                    let n = s.scan(terrane::tables::CHUNK_L0, KeyRange::all()).map(Iterator::count);
                    std::hint::black_box(n.ok());
                }
            });
        }
        other => panic!("unknown case {other}"),
    }
}

/// The block file case's store configuration: created, or opened read-only.
fn blockfile_config(read_only: bool) -> terrane::StoreConfig {
    use terrane::store::OpenMode;
    let c = terrane::StoreConfig::new("terrane hostile test");
    if read_only { c.mode(OpenMode::Open).read_only(true) } else { c.mode(OpenMode::Create) }
}

fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn hostile_inputs_stay_within_their_memory_bounds() {
    if let Ok(name) = std::env::var(CASE_ENV) {
        let bytes = input(&name);
        assert!(bytes.len() < 1 << 20, "{name}: the input is {} bytes", bytes.len());
        let before = peak_kib();
        decode(&name, &bytes);
        println!("PEAK {} {} {}", bytes.len(), before, peak_kib());
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let mut idle = 0;
    for (name, bound) in CASES {
        let out = Command::new(&exe)
            .args(["--exact", "hostile_inputs_stay_within_their_memory_bounds", "--nocapture"])
            .env(CASE_ENV, name)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout.lines().find(|l| l.starts_with("PEAK ")).unwrap_or_else(|| {
            panic!("{name}: no peak ({}): {}", out.status, String::from_utf8_lossy(&out.stderr))
        });
        let f: Vec<u64> = line.split_whitespace().skip(1).map(|v| v.parse().unwrap()).collect();
        let (len, grew) = (f[0], f[2].saturating_sub(f[1]) * 1024);
        if name == "idle" {
            idle = grew;
        }
        eprintln!(
            "{name}: input {} KiB, peak grew by {} MiB (bound {} MiB)",
            len / 1024,
            grew >> 20,
            bound >> 20
        );
        assert!(grew <= idle + bound, "{name}: the decoder's peak grew by {grew} bytes");
    }
}
