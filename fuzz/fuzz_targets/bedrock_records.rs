//! Bedrock's other decoders of outside bytes: the LevelDB table and log checks, `level.dat`, keys
//! and `Checksums` records, column records, block-state names, `Data3D` records and block
//! entities and entities translated to the other edition (`BlockEntity` records, entity
//! records and lists, read as both editions' entities and players). The first byte picks one;
//! none panics, and what parses round-trips.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_bedrock::block_entity::{self, BlockEntityReport};
use terrane_bedrock::checksums::Checksums;
use terrane_bedrock::data3d::Data3D;
use terrane_bedrock::{entity, player};
use terrane_bedrock::key::DbKey;
use terrane_bedrock::names::{parse_state_name, state_name};
use terrane_bedrock::log_check::check_log;
use terrane_bedrock::table_check::check_table;
use terrane_bedrock::{BedrockRecord, LevelDat};

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    match which % 8 {
        0 => drop(check_table(rest)),
        5 => drop(check_log(rest)),
        1 => drop(LevelDat::parse(rest)),
        2 => {
            drop(DbKey::parse(rest));
            if let Ok(c) = Checksums::decode(rest) {
                assert_eq!(c.encode(), rest, "a Checksums record re-encodes as it was");
            }
        }
        3 => {
            if let Ok(r) = BedrockRecord::decode(rest) {
                assert_eq!(BedrockRecord::decode(&r.encode()).expect("re-encoded"), r);
            }
        }
        4 => {
            let Ok(s) = std::str::from_utf8(rest) else { return };
            if let Ok(c) = parse_state_name(s, 7) {
                let n = state_name(&c, 7);
                assert_eq!(parse_state_name(&n, 7).expect("a written name parses"), c);
            }
        }
        6 => {
            if let Ok(d) = Data3D::decode(rest) {
                assert_eq!(Data3D::decode(&d.encode()).expect("re-encoded Data3D"), d);
            }
        }
        7 => {
            // A `BlockEntity` record: compounds back to back, each translated both ways.
            let mut r = terrane_nbt::Reader::little_endian(rest);
            let mut report = BlockEntityReport::default();
            while let Ok(c) = r.root_compound() {
                let state = "minecraft:chest[facing=north,type=single,waterlogged=false]";
                drop(block_entity::java_state(&c, state));
                drop(block_entity::bedrock_to_java(&c, state, &mut report));
                drop(block_entity::java_to_bedrock(&c, (0, 0, 0), state, Some(4671), &mut report));
                // The same compound as an entity of either edition.
                drop(entity::bedrock_to_java(&c, &mut report));
                drop(entity::java_to_bedrock(&c, Some(4671), &mut report));
                drop(player::bedrock_to_java(&c, &mut report));
                drop(player::java_to_bedrock(&c, &mut report));
            }
        }
        _ => unreachable!(),
    }
});
