//! The JS face of the vector index: a thin newtype over
//! [`crate::core::vector::VectorIndex`]. Vectors, keys and results cross as
//! typed arrays (one copy each way, no per-element conversion); options and
//! reports as plain objects.

use std::cell::RefCell;

use js_sys::{Float32Array, Object, Reflect, Uint32Array};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use super::to_js_error;
use crate::core::error::Error;
use crate::core::vector::{self as core, Config, Eligible, Metric, Quantization, Scratch, SearchParams, SegmentKind};

/// Options of `new VectorIndex(...)`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Options {
    dim: usize,
    /// Cosine unless named: what embedding models are trained for, and the
    /// metric long-term memory uses.
    #[serde(default)]
    metric: Option<String>,
    #[serde(default)]
    quantization: Option<String>,
    #[serde(default)]
    seal_points: Option<usize>,
    #[serde(default)]
    ef_construction: Option<usize>,
    #[serde(default)]
    ef_search: Option<usize>,
    #[serde(default)]
    links_max: Option<usize>,
    #[serde(default)]
    seed: Option<u32>,
}

fn js_err(e: &Error) -> JsValue {
    to_js_error(e)
}

/// Through JSON text: serde_json keeps numbers as text (`arbitrary_precision`),
/// which serde-wasm-bindgen would hand to JS as a private one-field object.
fn to_object<T: Serialize>(v: &T) -> Result<JsValue, JsValue> {
    let text = serde_json::to_string(v).map_err(|e| js_err(&Error::Internal { detail: e.to_string() }))?;
    js_sys::JSON::parse(&text)
}

const OPTION_NAMES: [&str; 8] = ["dim", "metric", "quantization", "sealPoints", "efConstruction", "efSearch", "linksMax", "seed"];

fn config_from(options: JsValue) -> Result<Config, JsValue> {
    // serde-wasm-bindgen reads only the fields it knows, so a misspelled
    // option would pass silently: refuse unknown names here.
    if let Some(obj) = options.dyn_ref::<Object>() {
        for name in Object::keys(obj).iter() {
            let name = name.as_string().unwrap_or_default();
            if !OPTION_NAMES.contains(&name.as_str()) {
                return Err(js_err(&Error::invalid("options", format!("unknown option {name:?}"))));
            }
        }
    }
    let o: Options = serde_wasm_bindgen::from_value(options).map_err(|e| js_err(&Error::invalid("options", e.to_string())))?;
    let metric = match o.metric.as_deref().unwrap_or("cosine") {
        "cosine" => Metric::Cosine,
        "dot" => Metric::Dot,
        other => return Err(js_err(&Error::invalid("metric", format!("must be \"cosine\" or \"dot\", got {other:?}")))),
    };
    let quantization = match o.quantization.as_deref() {
        None | Some("none") => Quantization::None,
        Some("int8") => Quantization::Int8,
        Some(other) => return Err(js_err(&Error::invalid("quantization", format!("must be \"int8\" or \"none\", got {other:?}")))),
    };
    let d = Config::new(o.dim, metric);
    Ok(Config {
        quantization,
        seal_points: o.seal_points.unwrap_or(d.seal_points),
        ef_construction: o.ef_construction.unwrap_or(d.ef_construction),
        ef_search: o.ef_search.unwrap_or(d.ef_search),
        links_max: o.links_max.unwrap_or(d.links_max),
        seed: o.seed.map_or(d.seed, u64::from),
        ..d
    })
}

fn set(obj: &Object, key: &str, value: &JsValue) -> Result<(), JsValue> {
    Reflect::set(obj, &key.into(), value).map(|_| ())
}

/// A vector index over `u32` keys (see the core type for the design).
#[wasm_bindgen(js_name = VectorIndex)]
pub struct VectorIndexJs {
    inner: core::VectorIndex,
    scratch: RefCell<Scratch>,
    hits: RefCell<Vec<core::Hit>>,
}

impl VectorIndexJs {
    fn wrap(inner: core::VectorIndex) -> VectorIndexJs {
        VectorIndexJs { inner, scratch: RefCell::new(Scratch::default()), hits: RefCell::new(Vec::new()) }
    }
}

#[wasm_bindgen(js_class = VectorIndex)]
impl VectorIndexJs {
    /// `{dim, metric?: "cosine"|"dot", quantization?: "int8"|"none",
    /// sealPoints?, efConstruction?, efSearch?, linksMax?, seed?}`; every
    /// optional field defaults as `index.d.ts` documents (from `Config::new`).
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<VectorIndexJs, JsValue> {
        let config = config_from(options)?;
        core::VectorIndex::new(config).map(VectorIndexJs::wrap).map_err(|e| js_err(&e))
    }

    /// Inserts or replaces `keys.length` points; `vectors` holds their rows
    /// back to back. All rows are checked before any is inserted.
    #[wasm_bindgen(js_name = addBatch)]
    pub fn add_batch(&mut self, keys: &[u32], vectors: &[f32]) -> Result<(), JsValue> {
        let keys: Vec<u64> = keys.iter().map(|k| u64::from(*k)).collect();
        self.inner.add_batch(&keys, vectors).map_err(|e| js_err(&e))
    }

    /// Inserts or replaces one point; returns whether it replaced one.
    pub fn add(&mut self, key: u32, vector: &[f32]) -> Result<bool, JsValue> {
        self.inner.add(u64::from(key), vector).map_err(|e| js_err(&e))
    }

    /// Deletes a key; returns whether it was present.
    pub fn remove(&mut self, key: u32) -> bool {
        self.inner.remove(u64::from(key))
    }

    /// Whether a key is present.
    pub fn has(&self, key: u32) -> bool {
        self.inner.contains(u64::from(key))
    }

    /// The `k` nearest points: `{keys: Uint32Array, scores: Float32Array,
    /// segments: Uint32Array}`, best first; scores are similarities, segment
    /// 0 is the flat one. `filterKeys` restricts the answer to those keys
    /// (answered exactly when few).
    pub fn search(&self, query: &[f32], k: u32, ef: Option<u32>, filter_keys: Option<Vec<u32>>) -> Result<JsValue, JsValue> {
        let params = SearchParams { k: k as usize, ef: ef.map(|e| e as usize) };
        let subset: Option<Vec<u64>> = filter_keys.map(|ks| ks.into_iter().map(u64::from).collect());
        let filter = subset.as_deref().map_or(Eligible::All, Eligible::Keys);
        let (mut scratch, mut hits) = (self.scratch.borrow_mut(), self.hits.borrow_mut());
        self.inner.search(query, &params, &filter, &mut scratch, &mut hits).map_err(|e| js_err(&e))?;
        let keys: Vec<u32> = hits.iter().map(|h| h.key as u32).collect();
        let scores: Vec<f32> = hits.iter().map(|h| h.score).collect();
        let segments: Vec<u32> = hits.iter().map(|h| h.segment).collect();
        let out = Object::new();
        set(&out, "keys", &Uint32Array::from(&keys[..]))?;
        set(&out, "scores", &Float32Array::from(&scores[..]))?;
        set(&out, "segments", &Uint32Array::from(&segments[..]))?;
        Ok(out.into())
    }

    /// Runs due compaction, building graphs over at most `workPointsMax`
    /// points; returns the report.
    pub fn compact(&mut self, work_points_max: u32) -> Result<JsValue, JsValue> {
        let r = self.inner.compact(work_points_max as usize).map_err(|e| js_err(&e))?;
        to_object(&serde_json::json!({
            "workPoints": r.work_points,
            "sealedPoints": r.sealed_points,
            "mergedSegments": r.merged_segments,
            "droppedSegments": r.dropped_segments,
            "segmentsBuilt": r.segments_built,
            "pending": r.pending,
        }))
    }

    /// The whole index as bytes (graphs included; restore never rebuilds).
    pub fn serialize(&self) -> Vec<u8> {
        self.inner.encode()
    }

    /// Restores an index from `serialize()`'s bytes.
    pub fn deserialize(bytes: &[u8]) -> Result<VectorIndexJs, JsValue> {
        core::VectorIndex::decode(bytes).map(VectorIndexJs::wrap).map_err(|e| js_err(&e))
    }

    /// Live points.
    #[wasm_bindgen(getter)]
    pub fn len(&self) -> u32 {
        self.inner.len() as u32
    }

    /// Whether no point is present.
    #[wasm_bindgen(getter, js_name = isEmpty)]
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// The dimension.
    #[wasm_bindgen(getter)]
    pub fn dim(&self) -> u32 {
        self.inner.config().dim as u32
    }

    /// `{points, builds, memoryBytes, segments: [{id, kind, rows, tombstones, layers, memoryBytes}]}`.
    pub fn stats(&self) -> Result<JsValue, JsValue> {
        let s = self.inner.stats();
        let segments: Vec<serde_json::Value> = s
            .segments
            .iter()
            .map(|g| {
                serde_json::json!({
                    "id": g.id,
                    "kind": match g.kind { SegmentKind::Flat => "flat", SegmentKind::Hnsw => "hnsw" },
                    "rows": g.rows,
                    "tombstones": g.tombstones,
                    "layers": g.layers,
                    "memoryBytes": g.memory_bytes,
                })
            })
            .collect();
        let c = self.inner.config();
        // The effective options, named as the constructor takes them, so a
        // caller sees which defaults filled what it left out.
        let config = serde_json::json!({
            "dim": c.dim,
            "metric": match c.metric { Metric::Cosine => "cosine", Metric::Dot => "dot" },
            "quantization": match c.quantization { Quantization::None => "none", Quantization::Int8 => "int8" },
            "sealPoints": c.seal_points,
            "efConstruction": c.ef_construction,
            "efSearch": c.ef_search,
            "linksMax": c.links_max,
            "seed": c.seed,
        });
        to_object(&serde_json::json!({ "points": s.points, "builds": s.builds, "memoryBytes": s.memory_bytes, "segments": segments, "config": config }))
    }

    /// Bytes held by the index.
    #[wasm_bindgen(js_name = memoryBytes)]
    pub fn memory_bytes(&self) -> f64 {
        self.inner.memory_bytes() as f64
    }
}
