//! [`ReadPlayerAhead`]: a joining player's record is read while Valence logs them in, off the
//! tick, so that the tick they join in restores them from memory.

use std::sync::Arc;

use terrane::store::Store;
use terrane::{game, tables};
use valence::network::{
    CleanupFn, NetworkCallbacks, NewClientInfo, SharedNetworkState, async_trait,
};
use valence::prelude::Text;

/// Valence's network callbacks with one addition: at login, the player's record is read
/// from the world's store, a store with saves in flight whose cache keeps what it read
/// (`WorldBuilder::saves_in_flight`). The read runs on a blocking thread of Valence's network
/// runtime, so it delays only this player's login, by a round trip; a read that fails costs
/// the join tick its own read, nothing else. Everything else is Valence's default (the
/// player count against the server's maximum).
pub(crate) struct ReadPlayerAhead {
    pub(crate) store: Arc<dyn Store>,
}

#[async_trait]
impl NetworkCallbacks for ReadPlayerAhead {
    async fn login(
        &self,
        shared: &SharedNetworkState,
        info: &NewClientInfo,
    ) -> Result<CleanupFn, Text> {
        let store = Arc::clone(&self.store);
        let key = game::player_key(game::offline_player_id(&info.username));
        let read = tokio::task::spawn_blocking(move || {
            let _ = store.get(tables::WORLD_PROPERTIES, &key);
        });
        let _ = read.await;
        <() as NetworkCallbacks>::login(&(), shared, info).await
    }
}
