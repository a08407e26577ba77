//! A replica in export form (a sharded tenant's): published a line at a
//! time, read back a chunk at a time, alternating with snapshot-form
//! publishes under one prefix; damage, a cut publish and a missing chunk.

use super::*;
use crate::store::{publish_export, ExportSource};

/// An export's chunks as a source, cut with an error after `fail_after`.
pub(super) struct Lines {
    pub chunks: std::vec::IntoIter<String>,
    pub fail_after: Option<usize>,
}

impl ExportSource for Lines {
    async fn next_chunk(&mut self) -> Result<Option<String>> {
        if let Some(n) = self.fail_after.as_mut() {
            if *n == 0 {
                return Err(Error::Internal { detail: "the export was cut".into() });
            }
            *n -= 1;
        }
        Ok(self.chunks.next())
    }
}

/// `store`'s export as a source: the first chunk (the header line) and a
/// chunk per line after it, as the exporter sends them.
pub(super) fn lines_of<B: Backend>(store: &Store<B>, fail_after: Option<usize>) -> (String, Lines) {
    let lines = run(store.read(|e| e.export_lines(true, 0))).unwrap().unwrap();
    let mut chunks = lines.into_iter().map(|l| format!("{l}\n"));
    let first = chunks.next().unwrap();
    (first, Lines { chunks: chunks.collect::<Vec<_>>().into_iter(), fail_after })
}

fn exported<B: Backend>(store: &Store<B>) -> Vec<String> {
    run(store.read(|e| e.export_lines(true, 0))).unwrap().unwrap()
}

fn filled(ops: u64) -> Store<MemoryBackend> {
    let store = run(Store::open(MemoryBackend::new(), cfg(1_000, 1024))).unwrap();
    for i in 0..ops {
        let _ = run(store.apply(op(i), now(i)));
    }
    store
}

fn only_generation(mirror: &MemoryBackend, gen: u64) -> bool {
    mirror.dump().keys().all(|k| k == "kv/head" || k.starts_with(&format!("kv/snap/{gen:016x}/")))
}

#[test]
fn an_export_replica_reads_back_a_chunk_at_a_time_and_either_form_retires_the_other() {
    let store = filled(60);
    let mirror = MemoryBackend::new();
    // Chunks of 64 bytes: lines go on across chunks.
    let pub_cfg = StoreConfig { key_prefix: "kv/".into(), chunk_bytes: 64, ..StoreConfig::default() };
    let snap = run(store.publish(&mirror, &pub_cfg)).unwrap();
    let (first, mut rest) = lines_of(&store, None);
    let bytes: usize = exported(&store).iter().map(|l| l.len() + 1).sum();
    let stats = run(publish_export(&mirror, &pub_cfg, first, &mut rest)).unwrap();
    assert_eq!((stats.snapshot_gen, stats.snapshot_bytes, stats.last_seq), (snap.snapshot_gen + 1, bytes as u64, run(store.stats()).last_seq));
    assert!(only_generation(&mirror, stats.snapshot_gen), "the snapshot's generation is retired");
    assert!(mirror.dump().keys().filter(|k| k.starts_with("kv/snap/")).count() > 10, "many chunks");
    let replica = run(Store::open_published(&mirror, "kv/")).unwrap();
    assert_eq!(exported(&replica), exported(&store));
    // One object publishing after it: a snapshot again, the export retired.
    let _ = run(store.apply(op(60), now(60)));
    let again = run(store.publish(&mirror, &pub_cfg)).unwrap();
    assert_eq!(again.snapshot_gen, stats.snapshot_gen + 1);
    assert!(only_generation(&mirror, again.snapshot_gen));
    assert_eq!(run(run(Store::open_published(&mirror, "kv/")).unwrap().read(|e| e.clone())).unwrap(), run(store.read(|e| e.clone())).unwrap());
}

#[test]
fn a_cut_publish_leaves_the_replica_before_and_the_next_one_sweeps_its_chunks() {
    let store = filled(60);
    let mirror = MemoryBackend::new();
    let pub_cfg = StoreConfig { key_prefix: "kv/".into(), chunk_bytes: 64, ..StoreConfig::default() };
    let (first, mut rest) = lines_of(&store, None);
    let before = run(publish_export(&mirror, &pub_cfg, first, &mut rest)).unwrap();
    let _ = run(store.apply(op(60), now(60)));
    let (first, mut cut) = lines_of(&store, Some(5));
    assert_eq!(run(publish_export(&mirror, &pub_cfg, first, &mut cut)).unwrap_err().code(), "internal");
    assert!(!only_generation(&mirror, before.snapshot_gen), "the cut publish left chunks");
    let replica = run(Store::open_published(&mirror, "kv/")).unwrap();
    assert_eq!(replica_seq(&replica), before.last_seq, "readers keep the replica before");
    let (first, mut rest) = lines_of(&store, None);
    let after = run(publish_export(&mirror, &pub_cfg, first, &mut rest)).unwrap();
    assert!(only_generation(&mirror, after.snapshot_gen), "the next publish swept the cut one's chunks");
    assert_eq!(exported(&run(Store::open_published(&mirror, "kv/")).unwrap()), exported(&store));
}

fn replica_seq(store: &Store<MemoryBackend>) -> u64 {
    run(store.read(|e| e.last_seq())).unwrap()
}

#[test]
fn a_damaged_export_replica_is_snapshot_corrupt() {
    let store = filled(60);
    let pub_cfg = StoreConfig { key_prefix: "kv/".into(), chunk_bytes: 64, ..StoreConfig::default() };
    let published = || {
        let mirror = MemoryBackend::new();
        let (first, mut rest) = lines_of(&store, None);
        run(publish_export(&mirror, &pub_cfg, first, &mut rest)).unwrap();
        let chunks: Vec<String> = mirror.dump().keys().filter(|k| k.starts_with("kv/snap/")).cloned().collect();
        (mirror, chunks)
    };
    let open = |m: &MemoryBackend| run(Store::open_published(m, "kv/")).err().map(|e| (e.code(), e.to_string()));
    // A byte changed inside a text (still JSON): the checksum finds it.
    let (mirror, chunks) = published();
    let key = &chunks[chunks.len() / 2];
    let mut v = run(mirror.get(key)).unwrap().unwrap();
    let at = v.iter().position(|b| b.is_ascii_digit()).expect("a digit to change");
    v[at] = if v[at] == b'1' { b'2' } else { b'1' };
    run(mirror.put(key, v)).unwrap();
    assert_eq!(open(&mirror).unwrap().0, "snapshot_corrupt");
    // A chunk gone.
    let (mirror, chunks) = published();
    run(mirror.delete(&chunks[1..2])).unwrap();
    let (code, text) = open(&mirror).unwrap();
    assert_eq!(code, "snapshot_corrupt");
    assert!(text.contains("missing"), "{text}");
    // The last chunk cut short (the end line lost with it).
    let (mirror, chunks) = published();
    let last = chunks.last().unwrap();
    let v = run(mirror.get(last)).unwrap().unwrap();
    run(mirror.put(last, v[..v.len() / 2].to_vec())).unwrap();
    assert_eq!(open(&mirror).unwrap().0, "snapshot_corrupt");
    // A head of a newer schema is refused as such, not misread.
    let (mirror, _) = published();
    let head = crate::core::codec::ExportHead::decode(&run(mirror.get("kv/head")).unwrap().unwrap()).unwrap().unwrap();
    assert!(head.chunk_count > 1);
    let mut newer = head.encode();
    newer[4] = 9;
    run(mirror.put("kv/head", newer)).unwrap();
    assert_eq!(open(&mirror).unwrap().0, "snapshot_corrupt", "a newer head with a stale checksum is damage");
}
