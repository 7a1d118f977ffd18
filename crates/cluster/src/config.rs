//! Configuration of the tiered store.

use std::fmt;
use std::sync::Arc;

use terrane_chunk::Schema;
use terrane_store::Store;

use crate::error::Result;
use crate::tiered::TieredStore;

/// Decides from a block's registry name whether it is opaque (for the opacity map).
pub type OpacityFn = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// The default opacity rule: every block is opaque except those whose name (after any
/// `namespace:`) ends in `air` (`air`, `minecraft:cave_air`, `void_air`, ...).
pub fn default_opacity(name: &str) -> bool {
    let path = name.rsplit(':').next().unwrap_or(name);
    !path.ends_with("air")
}

/// Tuning of a [`TieredStore`], built by [`TieredStoreBuilder`]. Times are in game ticks.
#[derive(Clone)]
pub struct TierConfig {
    /// Game ticks per minute (default 1200: 20 ticks per second).
    pub ticks_per_minute: u64,
    /// `x`: an L0 chunk unloaded for this many ticks moves to L1 (default 5 minutes).
    pub l0_idle_ticks: u64,
    /// `y`: an L1 cluster none of whose chunks was loaded for this many ticks moves to L2
    /// (default 30 minutes).
    pub l1_idle_ticks: u64,
    /// `z`: an L1 cluster farther than this many blocks (Euclidean, to the nearest block of
    /// the cluster) from every player of its dimension moves to L2 (default 1024).
    pub l1_distance_blocks: u64,
    /// Whether each tick save is synced to stable storage (default `true`).
    pub sync_saves: bool,
    /// Whether a tick save checks that every UUID listed by a saved chunk is an entity of the
    /// save or of the store (default `true`).
    pub check_entity_refs: bool,
    /// How many chunks below a removed top block the opacity map searches for the next opaque
    /// block before recording "none" (default 64 chunks = 1024 blocks).
    pub opacity_search_chunks: u32,
    /// Which blocks are opaque (default [`default_opacity`]).
    pub opaque: OpacityFn,
    /// This server's id in a world shared by several servers (default `None`: the world's
    /// only server). It keeps its game tick under its own `worldMeta` key
    /// (`gameTick/<id>`, see [`crate::tick_key`]) so that no two servers write one key.
    pub server: Option<String>,
}

impl Default for TierConfig {
    fn default() -> Self {
        Self {
            ticks_per_minute: 1200,
            l0_idle_ticks: 5 * 1200,
            l1_idle_ticks: 30 * 1200,
            l1_distance_blocks: 1024,
            sync_saves: true,
            check_entity_refs: true,
            opacity_search_chunks: 64,
            opaque: Arc::new(default_opacity),
            server: None,
        }
    }
}

impl fmt::Debug for TierConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TierConfig")
            .field("ticks_per_minute", &self.ticks_per_minute)
            .field("l0_idle_ticks", &self.l0_idle_ticks)
            .field("l1_idle_ticks", &self.l1_idle_ticks)
            .field("l1_distance_blocks", &self.l1_distance_blocks)
            .field("sync_saves", &self.sync_saves)
            .field("check_entity_refs", &self.check_entity_refs)
            .field("opacity_search_chunks", &self.opacity_search_chunks)
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// Builds a [`TieredStore`]: the world's schema, then the tuning; every setting has a
/// documented default (see [`TierConfig`]).
///
/// Minutes are game minutes: `ticks_per_minute` ticks each. An idle time given in minutes
/// (or left at its default, which is in minutes) follows
/// [`ticks_per_minute`](TieredStoreBuilder::ticks_per_minute) whenever it is set, before or
/// after; one given in ticks stays as given.
#[derive(Clone, Debug)]
pub struct TieredStoreBuilder {
    pub(crate) schema: Schema,
    pub(crate) config: TierConfig,
    /// `x` and `y` when they were given in minutes (or are the defaults): rescaled by
    /// `ticks_per_minute`.
    idle_minutes: [Option<u64>; 2],
}

impl TieredStoreBuilder {
    /// A builder for a world with `schema` (checked against the stored one on open).
    pub fn new(schema: Schema) -> Self {
        Self { schema, config: TierConfig::default(), idle_minutes: [Some(5), Some(30)] }
    }

    /// A builder for a world with `schema` tuned by every field of `config`, the server id
    /// included: reopening a world with an extended schema keeps its tuning in one call
    /// (`TieredStoreBuilder::from_config(schema, store.config().clone())`). The idle times
    /// count as given in ticks: a later [`ticks_per_minute`](Self::ticks_per_minute) leaves
    /// them as they are. A `ticks_per_minute` of 0 counts as 1, as in that setter.
    pub fn from_config(schema: Schema, mut config: TierConfig) -> Self {
        config.ticks_per_minute = config.ticks_per_minute.max(1);
        Self { schema, config, idle_minutes: [None, None] }
    }

    /// Game ticks per minute (default 1200). Idle times in minutes follow it.
    pub fn ticks_per_minute(mut self, ticks: u64) -> Self {
        self.config.ticks_per_minute = ticks.max(1);
        self.rescale();
        self
    }

    /// The idle times given in minutes, in ticks at the current rate.
    fn rescale(&mut self) {
        let tpm = self.config.ticks_per_minute;
        if let Some(m) = self.idle_minutes[0] {
            self.config.l0_idle_ticks = m.saturating_mul(tpm);
        }
        if let Some(m) = self.idle_minutes[1] {
            self.config.l1_idle_ticks = m.saturating_mul(tpm);
        }
    }

    /// `x`: minutes unloaded before an L0 chunk moves to L1 (default 5).
    pub fn l0_idle_minutes(mut self, minutes: u64) -> Self {
        self.idle_minutes[0] = Some(minutes);
        self.rescale();
        self
    }

    /// `x` in ticks.
    pub fn l0_idle_ticks(mut self, ticks: u64) -> Self {
        self.idle_minutes[0] = None;
        self.config.l0_idle_ticks = ticks;
        self
    }

    /// `y`: minutes without a load before an L1 cluster moves to L2 (default 30).
    pub fn l1_idle_minutes(mut self, minutes: u64) -> Self {
        self.idle_minutes[1] = Some(minutes);
        self.rescale();
        self
    }

    /// `y` in ticks.
    pub fn l1_idle_ticks(mut self, ticks: u64) -> Self {
        self.idle_minutes[1] = None;
        self.config.l1_idle_ticks = ticks;
        self
    }

    /// `z`: blocks from every player beyond which an L1 cluster moves to L2 (default 1024).
    pub fn l1_distance_blocks(mut self, blocks: u64) -> Self {
        self.config.l1_distance_blocks = blocks;
        self
    }

    /// Whether tick saves are synced (default `true`).
    pub fn sync_saves(mut self, sync: bool) -> Self {
        self.config.sync_saves = sync;
        self
    }

    /// Whether tick saves check the entity UUIDs listed by saved chunks (default `true`).
    pub fn check_entity_refs(mut self, check: bool) -> Self {
        self.config.check_entity_refs = check;
        self
    }

    /// Chunks searched below a removed top block by the opacity map (default 64).
    pub fn opacity_search_chunks(mut self, chunks: u32) -> Self {
        self.config.opacity_search_chunks = chunks;
        self
    }

    /// Which blocks are opaque, by registry name (default [`default_opacity`]).
    pub fn opaque(mut self, f: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.config.opaque = Arc::new(f);
        self
    }

    /// This server's id in a shared world (default none; see [`TierConfig::server`]).
    pub fn server(mut self, id: impl Into<String>) -> Self {
        self.config.server = Some(id.into());
        self
    }

    /// The configuration so far.
    pub fn config(&self) -> &TierConfig {
        &self.config
    }

    /// Opens the tiered store on `store`: checks the schema in `worldMeta` (the builder's must
    /// [extend](Schema::check_extends) the stored one; a new world stores it) and reads the
    /// last saved tick.
    pub fn open<S: Store>(self, store: S) -> Result<TieredStore<S>> {
        TieredStore::open_with(store, self.schema, self.config)
    }
}

#[cfg(test)]
mod tests {
    use terrane_store::MemStore;

    use super::*;

    #[test]
    fn idle_minutes_follow_ticks_per_minute_in_any_order() {
        let b = || TieredStoreBuilder::new(Schema::new());
        // The defaults are minutes: a server at 40 ticks per second keeps 5 and 30 minutes.
        let c = b().ticks_per_minute(2400).config().clone();
        assert_eq!((c.l0_idle_ticks, c.l1_idle_ticks), (5 * 2400, 30 * 2400));
        // Minutes given before the rate follow it; ticks stay as given.
        let c = b().l0_idle_minutes(2).l1_idle_ticks(77).ticks_per_minute(600).config().clone();
        assert_eq!((c.l0_idle_ticks, c.l1_idle_ticks), (2 * 600, 77));
        // And minutes given after the rate use it.
        let c = b().ticks_per_minute(10).l1_idle_minutes(3).config().clone();
        assert_eq!((c.l0_idle_ticks, c.l1_idle_ticks), (50, 30));
    }

    /// Every field of a `TierConfig` but the opacity rule, printed: the destructuring names
    /// them all, so a new field does not compile here until it is added.
    fn plain_fields(c: &TierConfig) -> [String; 8] {
        let TierConfig {
            ticks_per_minute,
            l0_idle_ticks,
            l1_idle_ticks,
            l1_distance_blocks,
            sync_saves,
            check_entity_refs,
            opacity_search_chunks,
            opaque: _,
            server,
        } = c;
        [
            format!("ticks_per_minute {ticks_per_minute}"),
            format!("l0_idle_ticks {l0_idle_ticks}"),
            format!("l1_idle_ticks {l1_idle_ticks}"),
            format!("l1_distance_blocks {l1_distance_blocks}"),
            format!("sync_saves {sync_saves}"),
            format!("check_entity_refs {check_entity_refs}"),
            format!("opacity_search_chunks {opacity_search_chunks}"),
            format!("server {server:?}"),
        ]
    }

    #[test]
    fn from_config_keeps_every_field_through_open() {
        let mut schema = Schema::new();
        schema.add_block("minecraft:air", &[]).unwrap();
        let glass = schema.add_block("minecraft:glass", &[]).unwrap();
        let stone = schema.add_block("minecraft:stone", &[]).unwrap();
        let opaque: OpacityFn = Arc::new(|name: &str| name.ends_with("stone"));
        let given = TierConfig {
            ticks_per_minute: 600,
            l0_idle_ticks: 7,
            l1_idle_ticks: 11,
            l1_distance_blocks: 13,
            sync_saves: false,
            check_entity_refs: false,
            opacity_search_chunks: 17,
            opaque: Arc::clone(&opaque),
            server: Some("east".to_string()),
        };
        // Every field differs from its default, so one dropped on the way shows.
        let defaults = TierConfig::default();
        for (g, d) in plain_fields(&given).iter().zip(plain_fields(&defaults)) {
            assert_ne!(*g, d, "the test config leaves a field at its default");
        }
        assert!((defaults.opaque)("minecraft:glass"));

        let world =
            TieredStoreBuilder::from_config(schema, given.clone()).open(MemStore::new()).unwrap();
        assert_eq!(plain_fields(world.config()), plain_fields(&given));
        assert!(Arc::ptr_eq(&world.config().opaque, &opaque));
        assert!(!world.is_opaque(glass) && world.is_opaque(stone));
    }
}
