//! [`Dimension`]: the three dimensions the plugin serves, each a Valence layer of its own and a
//! terrane dimension (the numbers imports give them).

use std::ops::Range;

use terrane::worldgen::Terrain;
use valence::prelude::bevy_ecs;
use valence::prelude::{Component, Ident, ident};

/// A dimension of the served world. The plugin spawns one chunk and entity layer per
/// dimension, marked with it ([`TerraneLayer`](crate::TerraneLayer) and this component).
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dimension {
    /// The Overworld: terrane dimension 0, y −64..320.
    Overworld,
    /// The Nether: terrane dimension 1, y 0..256.
    Nether,
    /// The End: terrane dimension 2, y 0..256.
    End,
}

impl Dimension {
    /// Every dimension served, in terrane's order.
    pub const ALL: [Dimension; 3] = [Dimension::Overworld, Dimension::Nether, Dimension::End];

    /// terrane's number of the dimension (0, 1, 2: as `terrane import` numbers the Overworld,
    /// the Nether and the End of a Java or Bedrock world).
    pub fn id(self) -> u64 {
        self as u64
    }

    /// The dimension of terrane's number `id`, `None` for one the plugin does not serve (a
    /// datapack's).
    pub fn from_id(id: u64) -> Option<Self> {
        Self::ALL.get(usize::try_from(id).ok()?).copied()
    }

    /// Minecraft's name of its dimension type (`overworld`, `the_nether`, `the_end`), which
    /// the client is told.
    pub fn type_name(self) -> &'static str {
        terrane::anvil::folder::VANILLA[self as usize]
    }

    /// The dimension type's identifier (`minecraft:the_nether`): the layer's, and what a
    /// client respawning there is told.
    pub(crate) fn ident(self) -> Ident<&'static str> {
        match self {
            Dimension::Overworld => ident!("minecraft:overworld"),
            Dimension::Nether => ident!("minecraft:the_nether"),
            Dimension::End => ident!("minecraft:the_end"),
        }
    }

    /// The lowest block's y.
    pub fn min_y(self) -> i32 {
        match self {
            Dimension::Overworld => terrane::worldgen::flat::MIN_Y,
            Dimension::Nether | Dimension::End => 0,
        }
    }

    /// Blocks in a column, from [`min_y`](Self::min_y).
    pub fn height(self) -> u32 {
        match self {
            Dimension::Overworld => terrane::worldgen::flat::HEIGHT,
            Dimension::Nether | Dimension::End => 256,
        }
    }

    /// The cubic chunk ys of a column.
    pub fn chunk_ys(self) -> Range<i64> {
        let min = i64::from(self.min_y()).div_euclid(16);
        min..min + i64::from(self.height()) / 16
    }

    /// The terrain of the columns the world does not hold: `overworld` (the server's) in the
    /// Overworld, the Nether's cavern of the same seed in the Nether, the End's island in the
    /// End.
    pub fn terrain(self, overworld: Terrain) -> Terrain {
        match self {
            Dimension::Overworld => overworld,
            Dimension::Nether => match overworld {
                Terrain::Hills { seed } | Terrain::Nether { seed } => Terrain::Nether { seed },
                _ => Terrain::Nether { seed: 0 },
            },
            Dimension::End => Terrain::End,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_names_and_heights_are_the_games() {
        for d in Dimension::ALL {
            assert_eq!(Dimension::from_id(d.id()), Some(d));
        }
        assert_eq!(Dimension::from_id(3), None);
        assert_eq!(Dimension::Nether.id(), 1);
        assert_eq!(Dimension::End.type_name(), "the_end");
        assert_eq!(Dimension::Overworld.chunk_ys(), -4..20);
        assert_eq!(Dimension::Nether.chunk_ys(), 0..16);
        assert_eq!(
            Dimension::Nether.terrain(Terrain::Hills { seed: 9 }),
            Terrain::Nether { seed: 9 }
        );
    }
}
