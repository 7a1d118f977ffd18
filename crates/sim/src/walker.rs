//! A walker of the shared-world server: a player or mob wandering across the strip of
//! areas, stored in the entity table under the area it stands in.
//!
//! Its record: `steps u64 | x f64 | z f64 | heading f64 | epoch i64 | seq u64 | server
//! length u8 | server`, little-endian; epoch and seq are those of the save that wrote it.

use terrane::lease::AreaId;
use terrane::{BlockPos, Uuid};

/// Walkers live at block y 64 (chunk y 4).
pub(crate) const WALK_Y: i64 = 64;

/// A walker.
#[derive(Clone, Debug)]
pub(crate) struct Walker {
    pub(crate) uuid: Uuid,
    pub(crate) x: f64,
    pub(crate) z: f64,
    pub(crate) heading: f64,
    pub(crate) steps: u64,
    /// The area whose key holds the walker in the store (as last saved or loaded).
    pub(crate) stored_in: AreaId,
}

impl Walker {
    /// The area it stands in.
    pub(crate) fn area(&self) -> AreaId {
        AreaId::of_chunk(self.block().chunk())
    }

    /// The block it stands on.
    pub(crate) fn block(&self) -> BlockPos {
        BlockPos::new(self.x.floor() as i64, WALK_Y, self.z.floor() as i64)
    }

    /// Its record, as written by save `seq` of `server` fenced on `epoch`.
    pub(crate) fn encode(&self, epoch: i64, seq: u64, server: &str) -> Vec<u8> {
        let mut v = Vec::with_capacity(49 + server.len());
        v.extend(self.steps.to_le_bytes());
        for f in [self.x, self.z, self.heading] {
            v.extend(f.to_le_bytes());
        }
        v.extend(epoch.to_le_bytes());
        v.extend(seq.to_le_bytes());
        v.push(server.len() as u8);
        v.extend(server.as_bytes());
        v
    }

    /// The walker a record holds; `None` when the record is too short.
    pub(crate) fn decode(uuid: Uuid, stored_in: AreaId, b: &[u8]) -> Option<Walker> {
        let f = |i: usize| Some(f64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?));
        let steps = u64::from_le_bytes(b.get(0..8)?.try_into().ok()?);
        Some(Walker { uuid, x: f(8)?, z: f(16)?, heading: f(24)?, steps, stored_in })
    }

    /// One step: straight on, turning now and then, bouncing off the strip's edges.
    pub(crate) fn step(&mut self, speed: f64, width: f64) {
        self.steps += 1;
        let h = mix(u64::from_le_bytes(self.uuid[..8].try_into().expect("8 bytes")), self.steps);
        if h.is_multiple_of(40) {
            self.heading += (h >> 8) as f64 / (1u64 << 56) as f64 * 3.0 - 1.5;
        }
        self.x += self.heading.cos() * speed;
        self.z += self.heading.sin() * speed;
        if self.x < 1.0 || self.x > width - 1.0 {
            self.heading = std::f64::consts::PI - self.heading;
            self.x = self.x.clamp(1.0, width - 1.0);
        }
        if self.z < 1.0 || self.z > 255.0 {
            self.heading = -self.heading;
            self.z = self.z.clamp(1.0, 255.0);
        }
    }
}

/// A hash of two numbers (the walkers' turns).
fn mix(a: u64, b: u64) -> u64 {
    let mut h = (a ^ 0x2545_F491_4F6C_DD1D).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= b.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 31;
    h.wrapping_mul(0x94D0_49BB_1331_11EB) ^ (h >> 29)
}
