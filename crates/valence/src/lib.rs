//! terrane-valence: a Minecraft Java 1.20.1 server ([Valence]) playing on a terrane world.
//!
//! [Valence]: https://valence.rs
//!
//! # Overview
//!
//! [`TerranePlugin`] is a Bevy plugin for a Valence app. It owns a terrane
//! [`World`](terrane::World) (opened by the caller) as the [`TerraneWorld`] resource and:
//!
//! - spawns a chunk and entity layer per [`Dimension`] of Minecraft 1.20.1, marked
//!   [`TerraneLayer`]: the Overworld (y −64..320, terrane dimension 0), the Nether (y 0..256,
//!   dimension 1) and the End (y 0..256, dimension 2), as imports number them; puts every
//!   joining player in the one they left (the Overworld at [`Settings::spawn`] the first
//!   time, raised to stand on the world's blocks there, or on the generator's ground where
//!   the world holds none), with the health update a vanilla server sends, a tick after
//!   their position and items (a client that has its health has both);
//! - takes players through Nether and End portals as the game does: a Nether portal to the
//!   other of the Overworld and the Nether at the place scaled by 8 (at once in creative, after
//!   4 seconds otherwise), arriving in a portal found there or built (a lit obsidian frame on
//!   an obsidian ledge); an End portal onto the End's obsidian platform at (100, 48, 0), and
//!   from the End back to the spawn; flint and steel lights an obsidian frame (2–21 wide,
//!   3–21 high). What a portal builds or lights is saved with the tick;
//! - loads the columns players see (their view distance, capped at
//!   [`Settings::max_view_distance`]) from terrane, nearest first: a column is the cubic 16³
//!   chunks of its dimension's height (24 in the Overworld, from chunk y −4), loaded with
//!   [`World::load_chunks_in`](terrane::World::load_chunks_in) (the tiered store keeps them
//!   hot, the dimension's regionizer adds them); block states go by name (`minecraft:name[k=v,...]`) through
//!   Valence's block registry; a state of a later Java release is shown as its nearest
//!   1.20.1 state ([`blocks::nearest_state`]: `short_grass` as `grass`, a new block as the
//!   1.20.1 block a table generated from minecraft-data names), and one no release has as
//!   [`Settings::stand_in`], reported once with `tracing::warn` (the stored chunk keeps
//!   either). A column the world has never held is generated with [`Settings::terrain`]
//!   in the Overworld (terrane-worldgen: hills by default, or flat ground), the Nether's
//!   cavern and the End's island in theirs ([`Dimension::terrain`]), and saved with the next
//!   tick;
//! - unloads the columns nobody sees any more;
//! - puts each joining player back where the world's record of them says, with its game
//!   mode and inventory ([`terrane::game::PlayerRecord`], keyed by the game's offline id of
//!   their name, [`terrane::game::offline_player_id`]: Valence gives clients an id of its
//!   own, a hash of the name, under which worlds served before kept them, and a record found
//!   only there moves to the game's id in the next save); a player of an imported Java world
//!   the game never saw starts where their Java file says, with its inventory
//!   ([`terrane::java::imported_player`]);
//! - opens container blocks (chests, barrels, furnaces, …: [`container_window`]) players
//!   use, with the contents the world holds ([`Containers`]): the game's record, or, for a chest the game never opened, the
//!   items a Java world's import kept in its block entity, with their data (the components
//!   of 1.20.5 and later in 1.20.1's form, those with none left out:
//!   `terrane::anvil::item_data`);
//! - gives each player their own ender chest, which every ender chest block opens, saved
//!   with their record;
//! - sends with each column what clients draw of imported block entities: sign text (the
//!   layout before 1.20 turned into 1.20's), banner patterns, heads' owners;
//! - decides every window click itself ([`ServerClicks`]): the result is computed from the
//!   server's own view of the window by the game's rules ([`terrane::window`]), never taken
//!   from the slots a client claims, and a client whose claim differs gets the window again,
//!   so no click changes an item's kind or makes one, whatever a client sends and however
//!   many players share a chest; a window opens with the player's inventory in it;
//! - places blocks from the hotbar slot the player holds ([`SelectedSlot`], read from the
//!   packet's two bytes: Valence 0.2 reads one and keeps the first slot);
//! - applies [`SetBlock`] events (the plugin's own digging and placing send them) to the
//!   layer and to its terrane chunks, and saves the changed chunks, players and containers
//!   as one atomic [`TickSave`](terrane::TickSave) per tick (or every
//!   [`Settings::save_every`] ticks), sending [`Saved`] once the world acknowledged it (on a
//!   world opened with `saves_in_flight`, once the save landed while later ticks ran:
//!   [`TerraneWorld::take_landed`]): an item moved between a chest and a player is in
//!   exactly one of them after any crash;
//! - restores an area or a box from a backup ([`LiveRestoreRequest`], through
//!   [`TerranePlugin::restore_handle`] or the [`control`] socket) between two ticks: it saves
//!   first, unloads the loaded columns of the areas written, has the world restore them
//!   ([`TerraneWorld::restore`]) and sends them again to the players viewing them;
//! - shows the last durable tick in the tab list's footer (`saved <tick>`, at most once a
//!   second), so clients know what is saved without a line of chat.
//!
//! A state placed for the first time is registered in the world's schema (registries only
//! grow) before the save that uses it.
//!
//! [`ServerBuilder`] runs a whole server around the plugin: offline mode, an address, a
//! stop flag for a signal handler, and [`ServerEvent`]s (saves, a status each second) for
//! the caller to print, and a control socket where `terrane restore` asks for restores
//! (protocol: `docs/format/control-socket.md`). `terrane serve` is a thin shell over it.
//!
//! # Example
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::sync::atomic::AtomicBool;
//!
//! use terrane_valence::{ServerBuilder, ServerEvent};
//!
//! let world = terrane::World::open("worlds/lobby")?;
//! let stop = Arc::new(AtomicBool::new(false)); // set it from a Ctrl-C handler
//! let last = ServerBuilder::new().save_every(1).run(world, stop, |event| {
//!     if let ServerEvent::Saved { tick } = event {
//!         println!("saved {tick}");
//!     }
//! })?;
//! println!("stopped; durable up to tick {last}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! None of its own. It builds Valence with `network`, `inventory` and `player_list`, and
//! terrane with the backends its dependents enable.
//!
//! # What it does not guarantee
//!
//! - Saved: blocks, players (position, look, game mode, inventory, ender chest, cursor
//!   stack) and container blocks' contents (chests, trapped chests, barrels, shulker boxes,
//!   dispensers, droppers, hoppers, furnaces, smokers, blast furnaces, brewing stands:
//!   [`container_window`]), as
//!   [`terrane::game`] records, every item with its data (names, enchantments, damage,
//!   books, a shulker box's items; a shulker box placed holds what its item held), the signs
//!   players write (both sides), and the patterns of banners and the owners of heads players
//!   place, with their blocks. Not saved: entities and lighting. Hoppers, dispensers,
//!   droppers, furnaces and brewing stands keep items and do nothing else (Valence 0.2 runs
//!   none of their logic; which items burn or brew is the game's code, and what smelts its
//!   recipes, which ship inside the game): a furnace keeps the progress its import held,
//!   unchanged.
//! - Breaking a container deletes its contents (Valence has no dropped items).
//! - The Overworld, the Nether and the End are served; a datapack's dimension is not (its
//!   players join at the Overworld's spawn). Portals are found in the 3 × 3 columns around
//!   the place scaled (the game looks 128 blocks around in the Overworld); an End portal
//!   frame is not filled by eyes of ender, and the End has no dragon (no entities).
//! - A box restore ([`LiveRestoreRequest::Box`]) is the Overworld's; an area restore is of
//!   any dimension.
//! - Changes made with `ChunkLayer::set_block` directly, instead of [`SetBlock`], are shown
//!   but never saved.
//! - Columns load on the server's thread: up to [`Settings::columns_per_tick`] a tick, nearest
//!   to a player first. On a world with saves in flight they are read ahead off it first
//!   (the view and [`Settings::read_ahead`] columns beyond,
//!   [`TerraneWorld::read_ahead_columns`]) and load from memory; without, a tick's columns
//!   are read together ([`TerraneWorld::load_columns`], a few round trips on a networked
//!   store) in the tick. Generating the columns the world does not hold, and a joining
//!   player's record, still cost the tick (about 1 ms of CPU a column; one round trip).
//! - The chunk layer does not follow the tiered store's demotion: `World::maintain` is not
//!   called.
//! - A restore runs on the server's thread: the tick waits for it (an area restore reads and
//!   writes up to a few MiB). It is an administrator's undo: items players took out of a
//!   restored chest stay with them, and the chest holds them again.
//! - The control socket is Unix only, and any local user who may write the world's folder
//!   may use it.
//! - Offline mode only: players are not authenticated, so serve on a trusted network.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
// Bevy system parameters (`Query`, `Res`, `EventReader`) are written without their lifetimes,
// as Bevy's own code and documentation write them.
#![allow(elided_lifetimes_in_paths)]

mod block_entities;
pub mod blocks;
mod clicks;
mod containers;
#[cfg(unix)]
pub mod control;
mod dimension;
mod edits;
mod ender_chests;
mod error;
mod hotbar;
mod login;
mod players;
mod plugin;
mod portals;
mod restores;
mod server;
mod signs;
mod world;

pub use clicks::ServerClicks;
pub use containers::{Containers, container_window, is_container, is_shulker_box};
pub use dimension::Dimension;
pub use edits::SetBlock;
pub use error::{Error, Result};
pub use hotbar::{HotbarSlots, SelectedSlot};
pub use plugin::{Saved, Settings, TerraneLayer, TerranePlugin, TerraneSet};
pub use restores::{
    LiveRestoreHandle, LiveRestoreReport, LiveRestoreRequest, LiveRestored, MAX_BOX_CHUNKS,
};

/// The former name of [`LiveRestoreRequest`] (`terrane_backup::RestoreReport` is a whole
/// store's restore; these restore part of a world a server is playing).
#[deprecated(since = "0.1.1", note = "renamed `LiveRestoreRequest`")]
pub type RestoreRequest = LiveRestoreRequest;
/// The former name of [`LiveRestoreReport`].
#[deprecated(since = "0.1.1", note = "renamed `LiveRestoreReport`")]
pub type RestoreReport = LiveRestoreReport;
/// The former name of [`LiveRestoreHandle`].
#[deprecated(since = "0.1.1", note = "renamed `LiveRestoreHandle`")]
pub type RestoreHandle = LiveRestoreHandle;
/// The former name of [`LiveRestored`].
#[deprecated(since = "0.1.1", note = "renamed `LiveRestored`")]
pub type Restored = LiveRestored;
pub use server::{ServerBuilder, ServerEvent, Status};
pub use world::{Applied, SaveParts, TerraneWorld};

/// Valence, as this crate builds it: use its types in systems beside the plugin.
pub use valence;
