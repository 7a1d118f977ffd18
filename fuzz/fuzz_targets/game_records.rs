//! Player and container records (`docs/format/game-records.md`), read back from stores:
//! any bytes either fail with a typed error or decode to a record that encodes to the same
//! bytes. The first byte picks the decoder: even, a player record; odd, a container record.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane::game;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode % 2 == 0 {
        if let Ok(p) = game::decode_player(rest) {
            assert_eq!(game::encode_player(&p), rest, "encode(decode(b)) == b");
        }
    } else if let Ok(c) = game::decode_container(rest) {
        assert_eq!(game::encode_container(&c), rest, "encode(decode(b)) == b");
    }
});
