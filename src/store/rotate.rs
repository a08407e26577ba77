//! Opening a sealed store, and rotating its key (or encrypting a plaintext
//! store) in crash-safe steps on the snapshot protocol:
//!
//! 1. **A:** the header names the new key as current and the old one as
//!    previous (or the plaintext generations and seqs). New writes are
//!    sealed under the new key from here on.
//! 2. **B:** a snapshot under the new key; its head swap retires every value
//!    under the old key from the live set (the sweep deletes them by name,
//!    a bounded page at a time; when plaintext is being encrypted, a Durable
//!    Object's storage is rewritten so no plaintext stays in its files).
//! 3. **C:** the header drops the previous key.
//!
//! A crash before A leaves the old key current; between A and C the store
//! opens with both keys (and with the new one alone once B landed), and the
//! open with the new key first finishes the rotation. Each step is one
//! single-key put, so the crash harnesses cover every point.

use super::sealed::{Cipher, Key, Sealed};
use super::{Backend, Inner, Store, StoreConfig};
use crate::core::error::{Error, Result};

/// What a finished rotation reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotation {
    /// The key every live value is now sealed under.
    pub key_id: String,
    /// Whether old-key values may remain as garbage (never read): the sweep
    /// reached its bound, and the next snapshots finish it.
    pub leftovers: bool,
}

impl<B: Backend, C: Cipher> Store<Sealed<B, C>> {
    /// Opens a sealed store ([`Store::open`] over a [`Sealed`] backend),
    /// then finishes a due rotation: the first key given is not yet the
    /// only live one (an interrupted rotation, or a key given to a
    /// plaintext store that holds data, which is encrypted now).
    pub async fn open_sealed(backend: Sealed<B, C>, config: StoreConfig) -> Result<Store<Sealed<B, C>>> {
        let store = Store::open(backend, config).await?;
        {
            let mut inner = store.inner.lock().await;
            if inner.backend.rotation_due() {
                inner.rotate().await?;
            }
        }
        Ok(store)
    }

    /// Re-encrypts the store under `key`, which becomes current: every live
    /// value is sealed under it when this resolves. Also encrypts a
    /// plaintext store. `key.id` must be new to the store.
    pub async fn rotate_key(&self, key: Key<C>) -> Result<Rotation> {
        let mut inner = self.inner.lock().await;
        inner.heal().await?;
        if inner.backend.unfinished() {
            // An earlier rotation must end before this one names a new
            // previous key: live values may still be under its old key.
            inner.rotate().await?;
        }
        inner.backend.set_target(key)?;
        inner.rotate().await
    }

    /// [`Store::publish`] to a sealed `target` (a KV replica): the replica
    /// is sealed under the target's first key from this generation on (its
    /// older, plaintext or other-key generation is retired by the publish).
    pub async fn publish_sealed<T: Backend, D: Cipher>(&self, target: &Sealed<T, D>, config: &StoreConfig) -> Result<super::StoreStats> {
        sealed_publish(target, config, self.publish(target, config)).await
    }

    /// A key like the current one (`None`: a plaintext store).
    pub async fn current_key(&self) -> Option<Key<C>>
    where
        C: Clone,
    {
        self.inner.lock().await.backend.current_key()
    }

    /// Whether values no head names (old-key ones after a rotation) may
    /// still be stored; the next snapshots delete them.
    pub async fn leftovers(&self) -> bool {
        self.inner.lock().await.repair_due
    }

    /// The current key's id (`None`: a plaintext store).
    pub async fn key_id(&self) -> Option<String> {
        self.inner.lock().await.backend.key_id()
    }
}

impl<B: Backend, C: Cipher> Inner<Sealed<B, C>> {
    async fn rotate(&mut self) -> Result<Rotation> {
        let head_gen = self.head.map(|h| h.gen);
        self.backend.begin_rotation(self.engine.last_seq(), head_gen).await?;
        let plaintext = self.backend.plaintext_ranges();
        self.snapshot().await?;
        // Only plaintext must leave a backend whose deletes leave bytes (a
        // Durable Object's SQLite): old-key values are ciphertext, and the
        // rewrite's deleteAll is not atomic with the puts after it under a
        // kill in local workerd (the rotation chaos test lost a tenant
        // there), so a key-to-key rotation never takes that risk.
        if plaintext && self.backend.deletes_leave_bytes() {
            self.rewrite_storage().await?;
        }
        self.backend.end_rotation().await?;
        let key_id = self.backend.key_id().ok_or_else(|| Error::Internal { detail: "no key after a rotation".into() })?;
        Ok(Rotation { key_id, leftovers: self.repair_due })
    }
}

/// Runs `publish` to a sealed `target` with the target's key switch
/// around it (see [`Store::publish_sealed`]).
async fn sealed_publish<T: Backend, D: Cipher>(target: &Sealed<T, D>, config: &StoreConfig, publish: impl std::future::Future<Output = Result<super::StoreStats>>) -> Result<super::StoreStats> {
    if target.rotation_due() {
        let gen = match target.inner().get(&super::keys::head_key(&config.key_prefix)).await? {
            Some(bytes) => crate::core::codec::any_head(&bytes).map(|h| h.gen),
            None => None,
        };
        target.begin_rotation(0, gen).await?;
    }
    let stats = publish.await?;
    target.end_rotation().await?;
    Ok(stats)
}

/// [`super::publish_export`] to a sealed `target` (a sharded tenant's
/// replica, sealed under the key its requests carry), with the key switch
/// a publish makes (see [`Store::publish_sealed`]).
pub async fn publish_export_sealed<T: Backend, D: Cipher>(target: &Sealed<T, D>, config: &StoreConfig, first: String, source: &mut impl super::ExportSource) -> Result<super::StoreStats> {
    sealed_publish(target, config, super::publish_export(target, config, first, source)).await
}
