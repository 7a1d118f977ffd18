//! The settings both Minecraft editions keep in a world's `level.dat`: what a conversion
//! carries from one edition's `level.dat` to the other's. Each edition's crate reads and
//! writes its own file (`terrane_anvil::level_dat`, `terrane_bedrock::level_dat`); this is
//! the one type they share.

/// The settings both editions' `level.dat` keep; `None` where the file holds none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LevelSettings {
    /// The world's name (`LevelName`).
    pub name: Option<String>,
    /// The world spawn (x, y, z).
    pub spawn: Option<(i32, i32, i32)>,
    /// The world-generation seed.
    pub seed: Option<i64>,
    /// The game mode (0 survival, 1 creative, 2 adventure, 3 spectator).
    pub game_type: Option<i32>,
    /// The difficulty (0 peaceful to 3 hard).
    pub difficulty: Option<i32>,
    /// When the world was last played, in seconds since the epoch.
    pub last_played: Option<i64>,
    /// A flat world (superflat).
    pub flat: bool,
}
