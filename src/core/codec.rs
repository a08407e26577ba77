//! Byte envelopes for everything edgemem persists.
//!
//! Three record kinds, each self-checking so that a store adapter can be a
//! dumb key-value map:
//!
//! * a **snapshot**: `magic "EDGEMEM\0" | schema u32 | flags u32 | body_len u64 |
//!   body_crc32 u32 | header_crc32 u32 | body` (little-endian, 32-byte header),
//!   stored split into chunks of at most [`limits::SNAPSHOT_CHUNK_BYTES_MAX`];
//! * a **head**: which snapshot generation is current and which log sequence
//!   it covers; swapping it is the single-key commit point of a snapshot;
//! * a **log record**: one op with its sequence number and the time it was
//!   applied;
//! * an **export head**: the commit point of a replica in export form (a
//!   sharded tenant's, whose state no one object holds): its chunks are the
//!   NDJSON export, under the same keys as a snapshot's.
//!
//! Checks run in an order that makes errors honest: a damaged header is
//! reported as corruption, never misread as a "future version".

use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::core::error::{Error, Result};
use crate::core::limits;

/// The schema version this build writes. Older versions are migrated on load
/// (see [`crate::core::engine::migrate`]); newer ones are refused.
pub const SCHEMA_VERSION: u32 = 1;

const SNAPSHOT_MAGIC: &[u8; 8] = b"EDGEMEM\0";
const SNAPSHOT_HEADER_BYTES: usize = 32;
const HEAD_MAGIC: &[u8; 4] = b"EMHD";
const HEAD_BYTES: usize = 4 + 4 + 8 + 4 + 8 + 8 + 4;
const LOG_MAGIC: &[u8; 4] = b"EMLG";
const EXPORT_HEAD_MAGIC: &[u8; 4] = b"EMXH";
const EXPORT_HEAD_BYTES: usize = 4 + 4 + 8 + 4 + 8 + 8 + 4 + 4;
const LOG_HEADER_BYTES: usize = 4 + 4 + 8 + 4 + 4;

fn crc(parts: &[&[u8]]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    for p in parts {
        h.update(p);
    }
    h.finalize()
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Wraps a snapshot body in its envelope.
pub fn encode_snapshot(schema: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(SNAPSHOT_HEADER_BYTES + body.len());
    out.extend_from_slice(SNAPSHOT_MAGIC);
    out.extend_from_slice(&schema.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc(&[body]).to_le_bytes());
    let header_crc = crc(&[&out]);
    out.extend_from_slice(&header_crc.to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// Checks a snapshot envelope and returns its schema version and body.
pub fn decode_snapshot(bytes: &[u8]) -> Result<(u32, &[u8])> {
    let corrupt = |reason: String| Error::SnapshotCorrupt { reason };
    if bytes.len() > limits::SNAPSHOT_BYTES_MAX + SNAPSHOT_HEADER_BYTES {
        return Err(Error::too_large("snapshot", bytes.len(), limits::SNAPSHOT_BYTES_MAX));
    }
    if bytes.len() < SNAPSHOT_HEADER_BYTES {
        return Err(corrupt(format!("{} bytes is shorter than the header", bytes.len())));
    }
    if &bytes[..8] != SNAPSHOT_MAGIC {
        return Err(corrupt("bad magic bytes: not an edgemem snapshot".into()));
    }
    if crc(&[&bytes[..28]]) != u32_at(bytes, 28) {
        return Err(corrupt("header checksum mismatch".into()));
    }
    let schema = u32_at(bytes, 8);
    if schema > SCHEMA_VERSION {
        return Err(Error::SchemaVersionUnsupported { found: schema, supported_max: SCHEMA_VERSION, input: false });
    }
    let body_len = u64_at(bytes, 16);
    let body = &bytes[SNAPSHOT_HEADER_BYTES..];
    if body.len() as u64 != body_len {
        return Err(corrupt(format!("length mismatch: header says {body_len} bytes, found {}", body.len())));
    }
    if crc(&[body]) != u32_at(bytes, 24) {
        return Err(corrupt("body checksum mismatch".into()));
    }
    Ok((schema, body))
}

/// Splits bytes into chunks of at most `chunk_bytes` (which the caller has
/// validated against the limits).
pub fn chunks(bytes: &[u8], chunk_bytes: usize) -> impl Iterator<Item = &[u8]> {
    bytes.chunks(chunk_bytes.max(1))
}

/// The commit point of a snapshot: generation `gen` is current, made of
/// `chunk_count` chunks totalling `snapshot_bytes`, and it includes every log
/// record up to and including `last_seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub gen: u64,
    pub chunk_count: u32,
    pub snapshot_bytes: u64,
    pub last_seq: u64,
}

impl Head {
    /// Encodes the head record.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEAD_BYTES);
        out.extend_from_slice(HEAD_MAGIC);
        out.extend_from_slice(&SCHEMA_VERSION.to_le_bytes());
        out.extend_from_slice(&self.gen.to_le_bytes());
        out.extend_from_slice(&self.chunk_count.to_le_bytes());
        out.extend_from_slice(&self.snapshot_bytes.to_le_bytes());
        out.extend_from_slice(&self.last_seq.to_le_bytes());
        let c = crc(&[&out]);
        out.extend_from_slice(&c.to_le_bytes());
        out
    }

    /// Decodes and checks a head record.
    pub fn decode(bytes: &[u8]) -> Result<Head> {
        let corrupt = |reason: &str| Error::SnapshotCorrupt { reason: format!("head record: {reason}") };
        if bytes.len() != HEAD_BYTES || &bytes[..4] != HEAD_MAGIC {
            return Err(corrupt("bad length or magic"));
        }
        if crc(&[&bytes[..HEAD_BYTES - 4]]) != u32_at(bytes, HEAD_BYTES - 4) {
            return Err(corrupt("checksum mismatch"));
        }
        let schema = u32_at(bytes, 4);
        if schema > SCHEMA_VERSION {
            return Err(Error::SchemaVersionUnsupported { found: schema, supported_max: SCHEMA_VERSION, input: false });
        }
        let head = Head {
            gen: u64_at(bytes, 8),
            chunk_count: u32_at(bytes, 16),
            snapshot_bytes: u64_at(bytes, 20),
            last_seq: u64_at(bytes, 28),
        };
        if head.chunk_count as usize > limits::SNAPSHOT_CHUNKS_MAX
            || head.snapshot_bytes as usize > limits::SNAPSHOT_BYTES_MAX + SNAPSHOT_HEADER_BYTES
        {
            return Err(corrupt("chunk count or size past the limits"));
        }
        Ok(head)
    }
}

/// The commit point of a replica in export form: generation `gen` is
/// current, `chunk_count` chunks of the NDJSON export totalling `bytes`,
/// whose CRC-32 is `content_crc` (a sealed replica's chunks are each
/// authenticated too), of state up to `last_seq`. It sits at the head's key,
/// so a reader that knows only snapshots refuses it as not a head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportHead {
    pub gen: u64,
    pub chunk_count: u32,
    pub bytes: u64,
    pub last_seq: u64,
    pub content_crc: u32,
}

impl ExportHead {
    /// Encodes the head record.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(EXPORT_HEAD_BYTES);
        out.extend_from_slice(EXPORT_HEAD_MAGIC);
        out.extend_from_slice(&SCHEMA_VERSION.to_le_bytes());
        out.extend_from_slice(&self.gen.to_le_bytes());
        out.extend_from_slice(&self.chunk_count.to_le_bytes());
        out.extend_from_slice(&self.bytes.to_le_bytes());
        out.extend_from_slice(&self.last_seq.to_le_bytes());
        out.extend_from_slice(&self.content_crc.to_le_bytes());
        let c = crc(&[&out]);
        out.extend_from_slice(&c.to_le_bytes());
        out
    }

    /// Decodes and checks a head record of this form (`None`: another
    /// form, a snapshot's [`Head`]).
    pub fn decode(bytes: &[u8]) -> Result<Option<ExportHead>> {
        if bytes.get(..4) != Some(EXPORT_HEAD_MAGIC) {
            return Ok(None);
        }
        let corrupt = |reason: &str| Error::SnapshotCorrupt { reason: format!("export head: {reason}") };
        if bytes.len() != EXPORT_HEAD_BYTES || crc(&[&bytes[..EXPORT_HEAD_BYTES - 4]]) != u32_at(bytes, EXPORT_HEAD_BYTES - 4) {
            return Err(corrupt("bad length or checksum"));
        }
        let schema = u32_at(bytes, 4);
        if schema > SCHEMA_VERSION {
            return Err(Error::SchemaVersionUnsupported { found: schema, supported_max: SCHEMA_VERSION, input: false });
        }
        let head = ExportHead { gen: u64_at(bytes, 8), chunk_count: u32_at(bytes, 16), bytes: u64_at(bytes, 20), last_seq: u64_at(bytes, 28), content_crc: u32_at(bytes, 36) };
        if head.chunk_count as usize > limits::REPLICA_EXPORT_CHUNKS_MAX || head.bytes > limits::REPLICA_EXPORT_BYTES_MAX as u64 {
            return Err(corrupt("chunk count or size past the limits"));
        }
        Ok(Some(head))
    }

    /// The chunks it names, as a snapshot head names them (for the sweep).
    pub fn as_head(&self) -> Head {
        Head { gen: self.gen, chunk_count: self.chunk_count, snapshot_bytes: self.bytes, last_seq: self.last_seq }
    }
}

/// The chunks a head record of either form names (`None`: unreadable).
pub fn any_head(bytes: &[u8]) -> Option<Head> {
    match ExportHead::decode(bytes) {
        Ok(Some(h)) => Some(h.as_head()),
        Ok(None) => Head::decode(bytes).ok(),
        Err(_) => None,
    }
}

/// A running CRC-32 (an export replica's content, written and read a
/// chunk at a time).
#[derive(Default)]
pub struct Crc(crc32fast::Hasher);

impl Crc {
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    pub fn finish(self) -> u32 {
        self.0.finalize()
    }
}

/// Wraps one op-log record: `magic | schema u32 | seq u64 | body_len u32 | crc32 | body`.
pub fn encode_log_record(schema: u32, seq: u64, body: &[u8]) -> Result<Vec<u8>> {
    if body.len() + LOG_HEADER_BYTES > limits::LOG_RECORD_BYTES_MAX {
        return Err(Error::too_large("op", body.len() + LOG_HEADER_BYTES, limits::LOG_RECORD_BYTES_MAX));
    }
    let mut out = Vec::with_capacity(LOG_HEADER_BYTES + body.len());
    out.extend_from_slice(LOG_MAGIC);
    out.extend_from_slice(&schema.to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    let c = crc(&[&out[4..], body]);
    out.extend_from_slice(&c.to_le_bytes());
    out.extend_from_slice(body);
    Ok(out)
}

/// Checks one op-log record that was stored under sequence `seq` and returns
/// its schema version and body.
pub fn decode_log_record(seq: u64, bytes: &[u8]) -> Result<(u32, &[u8])> {
    let corrupt = |reason: String| Error::LogCorrupt { seq, reason };
    if bytes.len() < LOG_HEADER_BYTES || &bytes[..4] != LOG_MAGIC {
        return Err(corrupt("bad length or magic".into()));
    }
    let body = &bytes[LOG_HEADER_BYTES..];
    if u32_at(bytes, 16) as usize != body.len() {
        return Err(corrupt("length mismatch".into()));
    }
    if crc(&[&bytes[4..20], body]) != u32_at(bytes, 20) {
        return Err(corrupt("checksum mismatch".into()));
    }
    let schema = u32_at(bytes, 4);
    if schema > SCHEMA_VERSION {
        return Err(Error::SchemaVersionUnsupported { found: schema, supported_max: SCHEMA_VERSION, input: false });
    }
    if u64_at(bytes, 8) != seq {
        return Err(corrupt(format!("stored under {seq} but records {}", u64_at(bytes, 8))));
    }
    Ok((schema, body))
}

/// Raw bytes in a serde format: MessagePack `bin` (an array of bytes is
/// accepted too, for robustness). Columns and vectors travel as these.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bytes(pub Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Bytes, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Bytes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Bytes, E> {
                Ok(Bytes(v.to_vec()))
            }
            fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Bytes, E> {
                Ok(Bytes(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Bytes, A::Error> {
                let mut out = Vec::new();
                while let Some(b) = seq.next_element::<u8>()? {
                    out.push(b);
                }
                Ok(Bytes(out))
            }
        }
        d.deserialize_bytes(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_round_trip() {
        let env = encode_snapshot(SCHEMA_VERSION, b"hello");
        assert_eq!(decode_snapshot(&env).unwrap(), (SCHEMA_VERSION, &b"hello"[..]));
    }

    #[test]
    fn every_single_bit_flip_is_detected() {
        let env = encode_snapshot(SCHEMA_VERSION, b"some body bytes");
        for i in 0..env.len() * 8 {
            let mut bad = env.clone();
            bad[i / 8] ^= 1 << (i % 8);
            let err = decode_snapshot(&bad).unwrap_err();
            // A flipped version field is caught by the header checksum first.
            assert_eq!(err.code(), "snapshot_corrupt", "bit {i}");
        }
    }

    #[test]
    fn truncation_and_garbage_are_corrupt() {
        let env = encode_snapshot(SCHEMA_VERSION, &[7u8; 100]);
        for n in [0, 5, 31, 32, 64, env.len() - 1] {
            assert_eq!(decode_snapshot(&env[..n]).unwrap_err().code(), "snapshot_corrupt");
        }
        assert_eq!(decode_snapshot(b"{\"json\":true} not a snapshot at all").unwrap_err().code(), "snapshot_corrupt");
    }

    #[test]
    fn future_version_is_refused_not_corrupt() {
        let env = encode_snapshot(SCHEMA_VERSION + 1, b"from the future");
        assert_eq!(
            decode_snapshot(&env).unwrap_err(),
            Error::SchemaVersionUnsupported { found: SCHEMA_VERSION + 1, supported_max: SCHEMA_VERSION, input: false }
        );
        let rec = encode_log_record(SCHEMA_VERSION + 3, 1, b"op").unwrap();
        assert_eq!(decode_log_record(1, &rec).unwrap_err().code(), "schema_version_unsupported");
    }

    #[test]
    fn head_round_trip_and_damage() {
        let h = Head { gen: 3, chunk_count: 2, snapshot_bytes: 1500, last_seq: 99 };
        let b = h.encode();
        assert_eq!(Head::decode(&b).unwrap(), h);
        let mut bad = b.clone();
        bad[9] ^= 0x40;
        assert_eq!(Head::decode(&bad).unwrap_err().code(), "snapshot_corrupt");
    }

    #[test]
    fn export_head_round_trip_damage_and_form() {
        let h = ExportHead { gen: 4, chunk_count: 200, bytes: 200 << 20, last_seq: 7, content_crc: 0xdead_beef };
        let b = h.encode();
        assert_eq!(ExportHead::decode(&b).unwrap(), Some(h));
        assert_eq!(any_head(&b), Some(h.as_head()));
        // A snapshot's head is another form, read as such.
        let snap = Head { gen: 3, chunk_count: 2, snapshot_bytes: 1500, last_seq: 99 };
        assert_eq!(ExportHead::decode(&snap.encode()).unwrap(), None);
        assert_eq!(any_head(&snap.encode()), Some(snap));
        // An export head is not a snapshot's (an older reader refuses it).
        assert_eq!(Head::decode(&b).unwrap_err().code(), "snapshot_corrupt");
        let mut bad = b.clone();
        bad[21] ^= 1;
        assert_eq!(ExportHead::decode(&bad).unwrap_err().code(), "snapshot_corrupt");
        assert_eq!(any_head(&bad), None);
        let huge = ExportHead { bytes: limits::REPLICA_EXPORT_BYTES_MAX as u64 + 1, ..h };
        assert_eq!(ExportHead::decode(&huge.encode()).unwrap_err().code(), "snapshot_corrupt");
        let newer = { let mut n = b.clone(); n[4] = 9; let c = crc(&[&n[..EXPORT_HEAD_BYTES - 4]]); n[EXPORT_HEAD_BYTES - 4..].copy_from_slice(&c.to_le_bytes()); n };
        assert_eq!(ExportHead::decode(&newer).unwrap_err().code(), "schema_version_unsupported");
    }

    #[test]
    fn log_record_checks_seq_and_crc() {
        let rec = encode_log_record(SCHEMA_VERSION, 42, b"op body").unwrap();
        assert_eq!(decode_log_record(42, &rec).unwrap().1, b"op body");
        assert_eq!(decode_log_record(43, &rec).unwrap_err().code(), "log_corrupt");
        let mut bad = rec.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(decode_log_record(42, &bad).unwrap_err().code(), "log_corrupt");
        let huge = vec![0u8; limits::LOG_RECORD_BYTES_MAX];
        assert_eq!(encode_log_record(SCHEMA_VERSION, 1, &huge).unwrap_err().code(), "payload_too_large");
    }
}
