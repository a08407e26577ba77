//! The index as one self-checking blob: the graphs are stored as they are,
//! so a restore is a bulk copy plus validation, never a rebuild. The
//! persistence layer chunks the blob into values of at most 2 MB.
//!
//! Layout (little-endian throughout):
//!
//! ```text
//! magic "EMVX" | version u32 | total length u64
//! dim u32 | metric u8 | quantization u8 | keep_pruned u8 | 0 u8
//! seal_points u32 | ef_construction u32 | ef_search u32 | links_max u32
//! seed u64 | next segment id u32 | segments u32
//! per segment (the flat one first, then sealed by id):
//!   id u32 | rows u32 | tombstones u32 | layers u32
//!   keys u64 × rows | tombstone bits u64 × ⌈rows/64⌉
//!   f32 rows: f32 × rows·dim | int8 rows: i8 × rows·dim, 0-3 zero bytes to
//!   a multiple of 4, scale f32 × rows
//!   per layer: nodes u32 | links u32 | offsets u32 × (nodes+1) | links u32 × links
//! CRC-32 of everything before it, u32
//! ```

use std::collections::HashMap;

use super::hnsw::{Graph, Layer};
use super::rows::Vectors;
use super::segment::Segment;
use super::{Config, Loc, Metric, Quantization, VectorIndex, FLAT_SEGMENT_ID};
use crate::core::error::{Error, Result};
use crate::core::limits;

const MAGIC: &[u8; 4] = b"EMVX";
/// The format version this build writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;
const HEADER_BYTES: usize = 16;
const TRAILER_BYTES: usize = 4;

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Bulk little-endian writes: one resize, then fixed-size stores that
/// compile to plain copies on little-endian targets.
fn put_le<T: Copy, const W: usize>(out: &mut Vec<u8>, v: &[T], to: fn(T) -> [u8; W]) {
    let start = out.len();
    out.resize(start + v.len() * W, 0);
    for (c, x) in out[start..].chunks_exact_mut(W).zip(v) {
        c.copy_from_slice(&to(*x));
    }
}

fn put_u32s(out: &mut Vec<u8>, v: &[u32]) {
    put_le(out, v, u32::to_le_bytes);
}

/// Bulk little-endian reads into a zeroed vector (no per-item push).
fn get_le<T: Copy + Default, const W: usize>(b: &[u8], from: fn([u8; W]) -> T) -> Vec<T> {
    let mut v = vec![T::default(); b.len() / W];
    for (x, c) in v.iter_mut().zip(b.chunks_exact(W)) {
        let mut a = [0u8; W];
        a.copy_from_slice(c);
        *x = from(a);
    }
    v
}

fn segment_bytes(s: &Segment) -> usize {
    let graph: usize = s.graph.as_ref().map_or(0, |g| g.layers.iter().map(|l| 8 + 4 * (l.offsets.len() + l.links.len())).sum());
    let rows = match &s.vectors {
        Vectors::F32 { data, .. } => 4 * data.len(),
        Vectors::I8 { codes, scales, .. } => codes.len().next_multiple_of(4) + 4 * scales.len(),
    };
    16 + 8 * s.keys.len() + 8 * s.len().div_ceil(64) + rows + graph
}

impl VectorIndex {
    /// The whole index as one blob (see the module documentation of the
    /// layout). Decoding it gives an equal index, graphs included.
    pub fn encode(&self) -> Vec<u8> {
        let c = &self.config;
        let segs: Vec<&Segment> = std::iter::once(&self.flat).chain(&self.sealed).collect();
        let total = HEADER_BYTES + 40 + segs.iter().map(|s| segment_bytes(s)).sum::<usize>() + TRAILER_BYTES;
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(MAGIC);
        put_u32(&mut out, FORMAT_VERSION);
        put_u64(&mut out, total as u64);
        put_u32(&mut out, c.dim as u32);
        out.push(match c.metric {
            Metric::Cosine => 0,
            Metric::Dot => 1,
        });
        out.push(match c.quantization {
            Quantization::None => 0,
            Quantization::Int8 => 1,
        });
        out.push(u8::from(c.keep_pruned));
        out.push(0);
        for v in [c.seal_points, c.ef_construction, c.ef_search, c.links_max] {
            put_u32(&mut out, v as u32);
        }
        put_u64(&mut out, c.seed);
        put_u32(&mut out, self.next_id);
        put_u32(&mut out, segs.len() as u32);
        for s in segs {
            let layers = s.graph.as_ref().map_or(&[][..], |g| &g.layers[..]);
            for v in [s.id, s.len() as u32, s.dead_count as u32, layers.len() as u32] {
                put_u32(&mut out, v);
            }
            put_le(&mut out, &s.keys, u64::to_le_bytes);
            let words = s.len().div_ceil(64);
            (0..words).for_each(|w| put_u64(&mut out, s.dead.get(w).copied().unwrap_or(0)));
            match &s.vectors {
                Vectors::F32 { data, .. } => put_le(&mut out, data, f32::to_le_bytes),
                Vectors::I8 { codes, scales, .. } => {
                    out.extend(codes.iter().map(|c| *c as u8));
                    out.resize(out.len() + (codes.len().next_multiple_of(4) - codes.len()), 0);
                    put_le(&mut out, scales, f32::to_le_bytes);
                }
            }
            for l in layers {
                put_u32(&mut out, l.nodes() as u32);
                put_u32(&mut out, l.links.len() as u32);
                put_u32s(&mut out, &l.offsets);
                put_u32s(&mut out, &l.links);
            }
        }
        let crc = crc32fast::hash(&out);
        put_u32(&mut out, crc);
        debug_assert_eq!(out.len(), total);
        out
    }

    /// Restores an index from [`VectorIndex::encode`]'s bytes. Corrupt or
    /// truncated input gives `SnapshotCorrupt`, a newer format
    /// `SchemaVersionUnsupported`; nothing is rebuilt.
    pub fn decode(bytes: &[u8]) -> Result<VectorIndex> {
        let bad = |reason: &str| Error::SnapshotCorrupt { reason: format!("vector index: {reason}") };
        if bytes.len() < HEADER_BYTES + TRAILER_BYTES || &bytes[..4] != MAGIC {
            return Err(bad("not a vector index blob"));
        }
        let mut r = Reader { buf: bytes, pos: 4 };
        let version = r.u32()?;
        if version > FORMAT_VERSION {
            return Err(Error::SchemaVersionUnsupported { found: version, supported_max: FORMAT_VERSION, input: false });
        }
        if version == 0 {
            return Err(bad("format version 0"));
        }
        if r.u64()? != bytes.len() as u64 {
            return Err(bad("length does not match (truncated or padded)"));
        }
        let body = &bytes[..bytes.len() - TRAILER_BYTES];
        let stored = u32::from_le_bytes([bytes[body.len()], bytes[body.len() + 1], bytes[body.len() + 2], bytes[body.len() + 3]]);
        if crc32fast::hash(body) != stored {
            return Err(bad("checksum mismatch"));
        }
        let mut r = Reader { buf: body, pos: HEADER_BYTES };
        let dim = r.u32()? as usize;
        let (metric, quant, keep_pruned) = (r.u8()?, r.u8()?, r.u8()?);
        r.u8()?;
        let config = Config {
            dim,
            metric: match metric {
                0 => Metric::Cosine,
                1 => Metric::Dot,
                _ => return Err(bad("unknown metric")),
            },
            quantization: match quant {
                0 => Quantization::None,
                1 => Quantization::Int8,
                _ => return Err(bad("unknown quantization")),
            },
            seal_points: r.u32()? as usize,
            ef_construction: r.u32()? as usize,
            ef_search: r.u32()? as usize,
            links_max: r.u32()? as usize,
            keep_pruned: match keep_pruned {
                0 => false,
                1 => true,
                _ => return Err(bad("bad flag")),
            },
            seed: r.u64()?,
        };
        config.validate().map_err(|e| bad(&e.to_string()))?;
        let next_id = r.u32()?;
        let count = r.u32()? as usize;
        let mut index = VectorIndex::new(config)?;
        index.next_id = next_id;
        let int8 = index.config.quantization == Quantization::Int8;
        let mut locs: HashMap<u64, Loc> = HashMap::new();
        let mut rows_total = 0usize;
        for i in 0..count {
            let seg = read_segment(&mut r, dim, int8).map_err(|e| bad(&e))?;
            let flat = i == 0;
            if flat != (seg.id == FLAT_SEGMENT_ID) || flat != seg.graph.is_none() || (flat && seg.dead_count > 0) {
                return Err(bad("segment kinds out of order"));
            }
            if !flat && (seg.id >= next_id || index.sealed.last().is_some_and(|p| p.id >= seg.id)) {
                return Err(bad("segment ids out of order"));
            }
            rows_total += seg.len();
            if rows_total > limits::VECTOR_ROWS_MAX {
                return Err(bad("too many rows"));
            }
            for (slot, key) in seg.keys.iter().enumerate() {
                if !seg.is_dead(slot) && locs.insert(*key, Loc { segment: seg.id, slot: slot as u32 }).is_some() {
                    return Err(bad("a key is live twice"));
                }
            }
            if flat {
                index.flat = seg;
            } else {
                index.sealed.push(seg);
            }
        }
        if count == 0 || r.pos != body.len() {
            return Err(bad("segment data does not fill the blob"));
        }
        if locs.len() > limits::VECTOR_POINTS_MAX {
            return Err(bad("too many points"));
        }
        index.locs = locs;
        Ok(index)
    }
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len()).ok_or("truncated")?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8> {
        self.take(1).map(|b| b[0]).map_err(|e| Error::SnapshotCorrupt { reason: e })
    }

    fn u32(&mut self) -> Result<u32> {
        self.u32_raw().map_err(|e| Error::SnapshotCorrupt { reason: e })
    }

    fn u64(&mut self) -> Result<u64> {
        self.u64_raw().map_err(|e| Error::SnapshotCorrupt { reason: e })
    }

    fn u32_raw(&mut self) -> std::result::Result<u32, String> {
        self.take(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64_raw(&mut self) -> std::result::Result<u64, String> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }

    /// `count` items of `width` bytes, bounds-checked before allocating.
    fn array(&mut self, count: usize, width: usize) -> std::result::Result<&'a [u8], String> {
        self.take(count.checked_mul(width).ok_or("length overflows")?)
    }

    fn u32s(&mut self, count: usize) -> std::result::Result<Vec<u32>, String> {
        Ok(get_le(self.array(count, 4)?, u32::from_le_bytes))
    }

    fn f32s(&mut self, count: usize) -> std::result::Result<Vec<f32>, String> {
        Ok(get_le(self.array(count, 4)?, f32::from_le_bytes))
    }
}

fn read_segment(r: &mut Reader<'_>, dim: usize, int8: bool) -> std::result::Result<Segment, String> {
    let (id, rows, dead_count, layers) = (r.u32_raw()?, r.u32_raw()? as usize, r.u32_raw()? as usize, r.u32_raw()? as usize);
    if rows > limits::VECTOR_ROWS_MAX || (id != FLAT_SEGMENT_ID && rows > limits::VECTOR_SEGMENT_POINTS_MAX) {
        return Err(format!("segment {id} has {rows} rows"));
    }
    let keys: Vec<u64> = get_le(r.array(rows, 8)?, u64::from_le_bytes);
    let dead: Vec<u64> = get_le(r.array(rows.div_ceil(64), 8)?, u64::from_le_bytes);
    let counted: usize = dead.iter().map(|w| w.count_ones() as usize).sum();
    let tail_clear = rows % 64 == 0 || dead.last().is_none_or(|w| w >> (rows % 64) == 0);
    if counted != dead_count || !tail_clear {
        return Err(format!("segment {id} tombstones do not add up"));
    }
    let n = rows.checked_mul(dim).ok_or("length overflows")?;
    let vectors = if int8 {
        let codes: Vec<i8> = r.array(n, 1)?.iter().map(|b| *b as i8).collect();
        r.take(n.next_multiple_of(4) - n)?;
        let scales = r.f32s(rows)?;
        if scales.iter().any(|s| !s.is_finite() || *s < 0.0 || *s > limits::VECTOR_COMPONENT_ABS_MAX) {
            return Err(format!("segment {id} has a bad scale"));
        }
        Vectors::I8 { dim, codes, scales }
    } else {
        let data = r.f32s(n)?;
        if data.iter().any(|x| !x.is_finite() || x.abs() > limits::VECTOR_COMPONENT_ABS_MAX) {
            return Err(format!("segment {id} has a non-finite component"));
        }
        Vectors::F32 { dim, data }
    };
    if layers > 64 {
        return Err(format!("segment {id} has {layers} layers"));
    }
    let mut graph = Graph::default();
    for _ in 0..layers {
        let (nodes, links) = (r.u32_raw()? as usize, r.u32_raw()? as usize);
        if nodes > rows || links > nodes.saturating_mul(limits::VECTOR_LINKS_MAX) {
            return Err(format!("segment {id} has an oversized layer"));
        }
        let offsets = r.u32s(nodes + 1)?;
        let links = r.u32s(links)?;
        graph.layers.push(Layer { offsets, links });
    }
    let graph = if layers == 0 {
        None
    } else {
        graph.validate(rows).map_err(|e| format!("segment {id}: {e}"))?;
        Some(graph)
    };
    Ok(Segment { id, keys, dead, dead_count, vectors, graph })
}
