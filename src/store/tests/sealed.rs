//! Encryption at rest on the in-memory backend: no plaintext in any stored
//! byte, typed errors for a missing or wrong key and for tampering, and
//! rotation (and the encryption of a plaintext store) surviving a crash
//! after every write.

use super::*;
use crate::store::{Key, Sealed, TestCipher};

const SENTINEL: &str = "zebra-sentinel-7731";

fn key(id: &str, seed: u8) -> Key<TestCipher> {
    Key { id: id.into(), cipher: TestCipher::new(seed), kdf: None }
}

type Sealedstore = Store<Sealed<MemoryBackend, TestCipher>>;

fn open(backend: &MemoryBackend, keys: Vec<Key<TestCipher>>, chunk: usize) -> Result<Sealedstore> {
    run(async {
        let sealed = Sealed::open(backend.clone(), "t/", keys).await?;
        Store::open_sealed(sealed, cfg(20, chunk)).await
    })
}

/// A session op whose text carries the sentinel.
fn secret_op(i: u64) -> Op {
    let mut s = Session::new(format!("s{}", i % 5), 0);
    s.context = Some(format!("{SENTINEL} note {i} ").repeat(1 + (i % 3) as usize));
    Op::SessionPut { session: s }
}

fn holds(backend: &MemoryBackend, needle: &[u8]) -> Vec<String> {
    backend.dump().into_iter().filter(|(_, v)| v.windows(needle.len()).any(|w| w == needle)).map(|(k, _)| k).collect()
}

/// The key ids named by stored envelopes.
fn envelope_ids(backend: &MemoryBackend) -> std::collections::BTreeSet<String> {
    backend
        .dump()
        .into_iter()
        .filter(|(k, _)| k.starts_with("t/log/") || k.starts_with("t/snap/"))
        .map(|(_, v)| {
            assert_eq!(&v[..4], b"EMX1", "every log record and chunk is sealed");
            String::from_utf8(v[5..5 + v[4] as usize].to_vec()).unwrap()
        })
        .collect()
}

#[test]
fn no_plaintext_reaches_storage_and_reopen_gives_the_same_state() {
    let backend = MemoryBackend::new();
    let store = open(&backend, vec![key("k1", 1)], 64).unwrap();
    let mut reference = Engine::new();
    for i in 0..60 {
        run(store.apply(secret_op(i), now(i))).unwrap();
        reference.apply(&secret_op(i), now(i)).unwrap();
    }
    assert!(run(store.stats()).snapshot_gen > 0, "snapshots were taken, in several chunks");
    assert!(holds(&backend, SENTINEL.as_bytes()).is_empty(), "plaintext in {:?}", holds(&backend, SENTINEL.as_bytes()));
    assert_eq!(envelope_ids(&backend), ["k1".to_owned()].into());
    let chunks: Vec<usize> = backend.dump().into_iter().filter(|(k, _)| k.starts_with("t/snap/")).map(|(_, v)| v.len()).collect();
    assert!(chunks.len() > 1 && chunks.iter().all(|&n| n <= 64 + limits::CRYPT_ENVELOPE_BYTES_MAX), "{chunks:?}");
    drop(store);
    let reopened = open(&backend, vec![key("k1", 1)], 64).unwrap();
    assert_eq!(run(reopened.read(|e| e.clone())).unwrap(), reference);
    assert_eq!(run(reopened.key_id()), Some("k1".into()));
}

#[test]
fn a_missing_or_wrong_key_is_typed_and_writes_nothing() {
    let backend = MemoryBackend::new();
    let store = open(&backend, vec![key("k1", 1)], 1 << 20).unwrap();
    run(store.apply(secret_op(1), now(1))).unwrap();
    drop(store);
    let before = backend.dump();
    let missing = open(&backend, vec![], 1 << 20).err().unwrap();
    assert_eq!(missing, Error::KeyRequired { key_id: Some("k1".into()) });
    let wrong = open(&backend, vec![key("k1", 9)], 1 << 20).err().unwrap();
    assert_eq!(wrong.code(), "decryption_failed", "{wrong}");
    let other_id = open(&backend, vec![key("k2", 1)], 1 << 20).err().unwrap();
    assert_eq!(other_id.code(), "decryption_failed", "{other_id}");
    assert!(other_id.to_string().contains("\"k1\""), "names the store's key: {other_id}");
    assert_eq!(backend.dump(), before, "refused opens wrote nothing");
}

#[test]
fn tampering_and_moved_values_fail_authentication() {
    let backend = MemoryBackend::new();
    let store = open(&backend, vec![key("k1", 1)], 1 << 20).unwrap();
    run(store.apply(secret_op(1), now(1))).unwrap();
    run(store.apply(secret_op(2), now(2))).unwrap();
    drop(store);
    let dump = backend.dump();
    let (k1, k2) = ("t/log/0000000000000001", "t/log/0000000000000002");
    // A flipped bit.
    let mut flipped = dump[k1].clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    backend.poke(k1, flipped);
    assert_eq!(open(&backend, vec![key("k1", 1)], 1 << 20).err().unwrap().code(), "decryption_failed");
    // A valid value moved to another key (the AAD names the key).
    backend.poke(k1, dump[k2].clone());
    assert_eq!(open(&backend, vec![key("k1", 1)], 1 << 20).err().unwrap().code(), "decryption_failed");
    // A header from a future edgemem.
    backend.poke(k1, dump[k1].clone());
    let mut header = dump["t/crypt"].clone();
    header[4] = 9;
    backend.poke("t/crypt", header);
    assert_eq!(open(&backend, vec![key("k1", 1)], 1 << 20).err().unwrap().code(), "schema_version_unsupported");
    backend.poke("t/crypt", b"EMCR\x01\0\0\0{not json".to_vec());
    assert_eq!(open(&backend, vec![key("k1", 1)], 1 << 20).err().unwrap().code(), "snapshot_corrupt");
}

#[test]
fn rotation_reseals_every_live_value_and_retires_the_old_key() {
    let backend = MemoryBackend::new();
    let store = open(&backend, vec![key("k1", 1)], 64).unwrap();
    for i in 0..30 {
        run(store.apply(secret_op(i), now(i))).unwrap();
    }
    let state = run(store.read(|e| e.clone())).unwrap();
    let r = run(store.rotate_key(key("k2", 2))).unwrap();
    assert_eq!((r.key_id.as_str(), r.leftovers), ("k2", false));
    assert_eq!(envelope_ids(&backend), ["k2".to_owned()].into(), "no value under k1 remains");
    let dup = run(store.rotate_key(key("k2", 3))).err().unwrap();
    assert_eq!(dup.code(), "invalid_input", "a new key needs a new id");
    drop(store);
    assert_eq!(open(&backend, vec![key("k1", 1)], 64).err().unwrap().code(), "decryption_failed");
    let reopened = open(&backend, vec![key("k2", 2)], 64).unwrap();
    assert_eq!(run(reopened.read(|e| e.clone())).unwrap(), state);
    assert!(holds(&backend, SENTINEL.as_bytes()).is_empty());
}

#[test]
fn a_key_given_to_a_plaintext_store_encrypts_it() {
    let backend = MemoryBackend::new();
    let plain = open(&backend, vec![], 64).unwrap();
    for i in 0..30 {
        run(plain.apply(secret_op(i), now(i))).unwrap();
    }
    let state = run(plain.read(|e| e.clone())).unwrap();
    drop(plain);
    assert!(!holds(&backend, SENTINEL.as_bytes()).is_empty(), "a plaintext store holds plaintext");
    let sealed = open(&backend, vec![key("k1", 1)], 64).unwrap();
    assert!(holds(&backend, SENTINEL.as_bytes()).is_empty(), "plaintext left in {:?}", holds(&backend, SENTINEL.as_bytes()));
    assert_eq!(run(sealed.read(|e| e.clone())).unwrap(), state);
    drop(sealed);
    assert_eq!(open(&backend, vec![], 64).err().unwrap(), Error::KeyRequired { key_id: Some("k1".into()) });
}

/// The crash harness of `crash_test` with a rotation in the run: the store
/// dies after every possible number of writes (rotation steps included),
/// and reopening must give exactly the acknowledged ops, with no plaintext
/// stored. Reopening with the new key alone works once the rotation's
/// snapshot landed, and otherwise names the old key; both keys always work.
#[test]
fn rotation_survives_a_crash_after_every_write() {
    const OPS: u64 = 120;
    const ROTATE_AT: u64 = 70;
    let workload = |backend: &MemoryBackend, crash_after: Option<u64>| -> (Engine, bool) {
        let store = open(backend, vec![key("k1", 1)], 96).unwrap();
        backend.fail_writes_after(crash_after);
        let mut reference = Engine::new();
        let mut rotated = false;
        for i in 0..OPS {
            if i == ROTATE_AT {
                match run(store.rotate_key(key("k2", 2))) {
                    Ok(_) => rotated = true,
                    Err(e) if e.code() == "storage_error" => return (reference, false),
                    Err(e) => panic!("rotation: {e}"),
                }
            }
            match run(store.apply(secret_op(i), now(i))) {
                Ok(_) => reference.apply(&secret_op(i), now(i)).map(|_| ()).unwrap(),
                Err(e) if e.code() == "storage_error" => break,
                Err(e) => panic!("op {i}: {e}"),
            }
        }
        (reference, rotated)
    };
    let total_writes = {
        let backend = MemoryBackend::new();
        backend.fail_writes_after(Some(u64::MAX));
        workload(&backend, Some(u64::MAX));
        u64::MAX - backend.writes_left.get().unwrap()
    };
    let mut by_outcome = [0u32; 2];
    for crash_after in (0..total_writes).chain([total_writes]) {
        let backend = MemoryBackend::new();
        let (reference, rotated) = workload(&backend, Some(crash_after));
        backend.fail_writes_after(None);
        assert!(holds(&backend, SENTINEL.as_bytes()).is_empty(), "crash after {crash_after}: plaintext stored");
        // The new key alone: fine after the rotation's snapshot landed,
        // else typed and harmless (nothing written).
        let before = backend.dump();
        match open(&backend, vec![key("k2", 2)], 96) {
            Ok(s) => {
                by_outcome[0] += 1;
                assert_eq!(run(s.read(|e| e.clone())).unwrap(), reference, "crash after {crash_after}, k2 alone");
            }
            Err(e) => {
                by_outcome[1] += 1;
                assert!(matches!(e.code(), "key_required" | "decryption_failed"), "crash after {crash_after}: {e}");
                assert_eq!(backend.dump(), before, "a refused open writes nothing");
            }
        }
        // Both keys, new first: always opens, and finishes the rotation.
        let store = open(&backend, vec![key("k2", 2), key("k1", 1)], 96).unwrap();
        assert_eq!(run(store.read(|e| e.clone())).unwrap(), reference, "crash after {crash_after}");
        if rotated || crash_after >= total_writes {
            assert_eq!(run(store.key_id()), Some("k2".into()));
        }
        let ids = envelope_ids(&backend);
        assert!(ids.iter().all(|id| id == "k2"), "crash after {crash_after}: the reopen finished the rotation: {ids:?}");
    }
    assert!(by_outcome[0] > 0 && by_outcome[1] > 0, "both windows were hit: {by_outcome:?}");
}

/// A store sealed under k1 holding secrets, and a target it published to
/// in plaintext (as before encryption), under `r/`.
fn published_plaintext() -> (Sealedstore, MemoryBackend, StoreConfig) {
    let backend = MemoryBackend::new();
    let store = open(&backend, vec![key("k1", 1)], 64).unwrap();
    for i in 0..25 {
        run(store.apply(secret_op(i), now(i))).unwrap();
    }
    let target = MemoryBackend::new();
    let config = StoreConfig { key_prefix: "r/".into(), chunk_bytes: 64, ..StoreConfig::default() };
    run(store.publish(&target, &config)).unwrap();
    assert!(!holds(&target, SENTINEL.as_bytes()).is_empty());
    (store, target, config)
}

#[test]
fn a_published_replica_is_sealed_and_follows_rotation() {
    let (store, target, config) = published_plaintext();
    // An older plaintext publication is replaced by a sealed one.
    let publish = |store: &Sealedstore| {
        let sealed = run(Sealed::for_publish(target.clone(), "r/", run(store.current_key()).unwrap())).unwrap();
        run(store.publish_sealed(&sealed, &config)).unwrap();
    };
    publish(&store);
    assert!(holds(&target, SENTINEL.as_bytes()).is_empty(), "plaintext in {:?}", holds(&target, SENTINEL.as_bytes()));
    let replica = |keys: Vec<Key<TestCipher>>| run(async { Store::open_published(&Sealed::open(target.clone(), "r/", keys).await?, "r/").await });
    let state = run(store.read(|e| e.clone())).unwrap();
    assert_eq!(run(replica(vec![key("k1", 1)]).unwrap().read(|e| e.clone())).unwrap(), state);
    assert_eq!(replica(vec![]).err().unwrap().code(), "key_required");
    run(store.rotate_key(key("k2", 2))).unwrap();
    publish(&store);
    assert_eq!(replica(vec![key("k1", 1)]).err().unwrap().code(), "decryption_failed");
    assert_eq!(run(replica(vec![key("k2", 2)]).unwrap().read(|e| e.clone())).unwrap(), state);
    let ids: std::collections::BTreeSet<String> = target
        .dump()
        .into_iter()
        .filter(|(k, _)| k.starts_with("r/snap/"))
        .map(|(_, v)| String::from_utf8(v[5..5 + v[4] as usize].to_vec()).unwrap())
        .collect();
    assert_eq!(ids, ["k2".to_owned()].into());
}

#[test]
fn a_plaintext_instance_refuses_to_write_once_another_encrypted_the_store() {
    let backend = MemoryBackend::new();
    let plain = open(&backend, vec![], 1 << 20).unwrap();
    run(plain.apply(secret_op(1), now(1))).unwrap();
    // A second process (tab) encrypts the same storage.
    drop(open(&backend, vec![key("k1", 1)], 1 << 20).unwrap());
    let err = run(plain.apply(secret_op(2), now(2))).err().unwrap();
    assert_eq!(err, Error::KeyRequired { key_id: Some("k1".into()) });
    assert!(holds(&backend, SENTINEL.as_bytes()).is_empty(), "no plaintext record was written");
}

#[test]
fn an_export_replica_is_sealed_under_the_key_given() {
    let (store, target, config) = published_plaintext();
    // An older plaintext publication is replaced by a sealed export.
    let (first, mut rest) = super::export_replica::lines_of(&store, None);
    let sealed = run(Sealed::for_publish(target.clone(), "r/", key("k1", 1))).unwrap();
    run(crate::store::publish_export_sealed(&sealed, &config, first, &mut rest)).unwrap();
    assert!(holds(&target, SENTINEL.as_bytes()).is_empty(), "plaintext in {:?}", holds(&target, SENTINEL.as_bytes()));
    let chunks: Vec<Vec<u8>> = target.dump().into_iter().filter(|(k, _)| k.starts_with("r/snap/")).map(|(_, v)| v).collect();
    assert!(chunks.len() > 10 && chunks.iter().all(|v| v.starts_with(b"EMX1\x02k1")), "every chunk sealed under k1");
    let replica = |keys: Vec<Key<TestCipher>>| run(async { Store::open_published(&Sealed::open(target.clone(), "r/", keys).await?, "r/").await });
    let lines = |s: &Store<MemoryBackend>| run(s.read(|e| e.export_lines(true, 0))).unwrap().unwrap();
    assert_eq!(lines(&replica(vec![key("k1", 1)]).unwrap()), run(store.read(|e| e.export_lines(true, 0))).unwrap().unwrap());
    assert_eq!(replica(vec![]).err().unwrap().code(), "key_required");
    assert_eq!(replica(vec![key("k2", 2)]).err().unwrap().code(), "decryption_failed");
}
