//! The fuzz targets of the codecs and the API beside the store's own
//! decoders: MessagePack and the JSON API, the ledger's columns, the vector
//! index, the rank asset, the scalar parsers.

use super::*;

/// A typed decode followed by a re-encode and a second decode that must
/// agree byte for byte.
fn msgpack_round_trip<T: DeserializeOwned + Serialize + std::fmt::Debug>(b: &[u8]) -> bool {
    let Ok(v) = crate::core::msgpack::from_slice::<T>(b) else { return false };
    let once = rmp_serde::to_vec(&v).unwrap_or_else(|e| panic!("a decoded value does not encode: {e}"));
    let back: T = match crate::core::msgpack::from_slice(&once) {
        Ok(back) => back,
        Err(_) if known_number_key_bug(&v) => return false,
        Err(e) => panic!("a re-encoded value does not decode: {e}"),
    };
    let twice = rmp_serde::to_vec(&back).unwrap();
    assert_eq!(once, twice, "re-encoding is not stable");
    true
}

/// The MessagePack reader, for every persisted type, named and positional.
#[test]
fn fuzz_msgpack() {
    let c = corpus();
    // (type, bytes): 0 Value, 1 LogEntry, 2 Op, 3 Session, 4 MemoryRecord,
    // 5 LedgerSnapshot, 6 LongTermSnapshot, 7 HistoryState, 8 SessionV0.
    let mut inputs: Vec<(usize, Vec<u8>)> = Vec::new();
    let values = [
        json!({"a": [1, -2, 3.5, "x", null, true, {"b": {"c": []}}], "n": 12345678901234567890u64, "s": "ünï"}),
        json!([[[[[[1]]]]], {}, [], "", -9223372036854775808i64]),
        serde_json::from_str::<Value>(r#"{"exact": 1234.567890123456789, "big": 123456789012345678901234567890}"#).unwrap(),
    ];
    for v in &values {
        inputs.push((0, rmp_serde::to_vec(&Exact(v)).unwrap()));
        inputs.push((0, rmp_serde::to_vec_named(v).unwrap()));
    }
    for (seq, r) in &c.records {
        let entry = decode_log_entry(*seq, r).unwrap();
        inputs.push((1, r[LOG_HEADER_BYTES + 1..].to_vec()));
        inputs.push((1, rmp_serde::to_vec_named(&entry).unwrap()));
        inputs.push((2, rmp_serde::to_vec(&entry.op).unwrap()));
    }
    for s in &c.snapshots {
        let e = Engine::decode_snapshot(s).unwrap();
        for id in e.list_sessions(0, None, 0, 100).sessions {
            if let Some(session) = e.session(&id, 0) {
                inputs.push((3, rmp_serde::to_vec(session).unwrap()));
                inputs.push((3, rmp_serde::to_vec_named(session).unwrap()));
            }
        }
        for r in e.longterm().records() {
            inputs.push((4, rmp_serde::to_vec(r).unwrap()));
        }
        inputs.push((5, rmp_serde::to_vec(&e.ledger().to_snapshot()).unwrap()));
        inputs.push((5, rmp_serde::to_vec_named(&e.ledger().to_snapshot()).unwrap()));
        inputs.push((6, rmp_serde::to_vec(&e.longterm().to_snapshot()).unwrap()));
        // The whole body too, read as a JSON value: it walks every marker.
        inputs.push((0, s[SNAPSHOT_HEADER_BYTES..].to_vec()));
    }
    inputs.push((7, rmp_serde::to_vec(&HistoryState::default()).unwrap()));
    for b in &c.v0_snapshots {
        inputs.push((8, b.clone()));
    }
    let all: Vec<Vec<u8>> = inputs.iter().map(|(_, b)| b.clone()).collect();
    drive("msgpack", |rng, input| {
        let (ty, b) = &inputs[rng.below(inputs.len())];
        let (mut ty, mut b) = (*ty, b.clone());
        mutate(rng, &mut b, &all, MSGPACK_TOKENS);
        if rng.chance(0.1) {
            ty = rng.below(9);
        }
        *input.borrow_mut() = b.clone();
        let accepted = match ty {
            0 => {
                // A stored value comes back exactly, numbers included.
                let Ok(v) = crate::core::msgpack::from_slice::<Value>(&b) else { return false };
                let once = rmp_serde::to_vec(&Exact(&v)).unwrap();
                match crate::core::msgpack::from_slice::<Value>(&once) {
                    Err(_) if known_number_key_bug(&v) => return false,
                    back => assert_eq!(back.unwrap_or_else(|e| panic!("a written value does not read back: {e}")), v, "a value read back differs"),
                }
                true
            }
            1 => msgpack_round_trip::<crate::core::engine::LogEntry>(&b),
            2 => msgpack_round_trip::<Op>(&b),
            3 => msgpack_round_trip::<Session>(&b),
            4 => msgpack_round_trip::<MemoryRecord>(&b),
            5 => msgpack_round_trip::<LedgerSnapshot>(&b),
            // The long-term snapshot form is not serializable back as read
            // (its index is a blob): decode, then load.
            6 => crate::core::msgpack::from_slice::<LongTermSnapshot>(&b).map(crate::core::longterm::LongTerm::from_snapshot).is_ok(),
            7 => msgpack_round_trip::<HistoryState>(&b),
            _ => crate::core::msgpack::from_slice::<SnapshotV0>(&b).is_ok(),
        };
        if ty == 5 {
            if let Ok(s) = crate::core::msgpack::from_slice::<LedgerSnapshot>(&b) {
                if let Ok(l) = crate::core::ledger::Ledger::from_snapshot(s) {
                    assert!(l.reconcile().is_empty(), "a loaded ledger balances");
                }
            }
        }
        accepted
    });
}

/// JSON request bodies, paths and queries through `api::handle`: every
/// answer is JSON with an honest status, never a 500, and every op the API
/// logged replays to the same state.
#[test]
fn fuzz_json_api() {
    // No snapshot: the replay check below compares the live state with the
    // log alone (a snapshot restore is checked by the `snapshot` target and
    // the simulation; see `episode_seqs_continue_after_a_restart`).
    let config = StoreConfig { snapshot_every_ops: limits::SNAPSHOT_EVERY_OPS_MAX, chunk_bytes: 4096, key_prefix: String::new(), ..StoreConfig::default() };
    let mut api = Api::new(config.clone());
    let bodies: Vec<Vec<u8>> = REQUESTS.iter().map(|(_, _, b)| b.as_bytes().to_vec()).filter(|b| !b.is_empty()).collect();
    let mut interesting: Vec<Value> = JSON_TOKENS.iter().filter_map(|t| serde_json::from_slice(t).ok()).chain([json!("x".repeat(70_000)), Value::Array(vec![json!(1); 2_000]), json!({"k": "v"}), json!(u64::MAX), json!(i64::MIN)]).collect();
    let mut tokens = JSON_TOKENS.to_vec();
    let number_key = format!("\"{NUMBER_KEY}\"");
    if NUMBER_KEY_FIXED {
        tokens.push(number_key.as_bytes());
        let mut m = serde_json::Map::new();
        m.insert("a".into(), json!(1));
        m.insert(NUMBER_KEY.into(), json!("7"));
        interesting.push(Value::Object(m));
    }
    let long = "z".repeat(300);
    let ids: Vec<&str> = vec!["s", "chat-1", "a%2Fb", "..", "%00", "x", "", "é", "agent", "h1", "kitchen", "bot", &long];
    let mut count = 0u64;
    drive("json_api", |rng, input| {
        count += 1;
        if count % 2_000 == 0 {
            api = Api::new(config.clone());
        }
        api.now += rng.below(5_000) as Millis;
        let (method, target, body) = REQUESTS[rng.below(REQUESTS.len())];
        let mut method = method.to_owned();
        let mut target = target.to_owned();
        let mut body = body.as_bytes().to_vec();
        match rng.below(20) {
            0..=10 => mutate(rng, &mut body, &bodies, &tokens),
            11..=15 => {
                // Replace one node of the JSON with an interesting value.
                if let Ok(mut v) = serde_json::from_slice::<Value>(&body) {
                    for _ in 0..rng.range(1, 3) {
                        replace_node(rng, &mut v, &interesting);
                    }
                    body = serde_json::to_vec(&v).unwrap();
                }
            }
            16..=17 => {
                let mut segs: Vec<String> = target.split('/').map(str::to_owned).collect();
                let i = rng.range(2, segs.len().max(3) as u64 - 1) as usize;
                if i < segs.len() {
                    // Keep the query of the last segment.
                    let query = segs[i].split_once('?').map(|(_, q)| format!("?{q}")).unwrap_or_default();
                    segs[i] = format!("{}{query}", rng.pick(&ids));
                }
                target = segs.join("/");
                if rng.chance(0.5) {
                    let q = rng.pick(&["limit=-1", "limit=0", "offset=18446744073709551616", "since=abc", "n=99999999", "recent_messages_limit=x", "user_id=", "dry_run=maybe", "memory_ids=", "format=xml", "cursor=4294967296", "agent_id=%ff", "kinds=nope", "model_name=gpt-4o"]);
                    target.push(if target.contains('?') { '&' } else { '?' });
                    target.push_str(q);
                }
            }
            18 => method = rng.pick(&["GET", "PUT", "POST", "PATCH", "DELETE", "HEAD", ""]).to_owned(),
            _ => {}
        }
        *input.borrow_mut() = format!("{method} {target}\n{}", String::from_utf8_lossy(&body)).into_bytes();
        let r = api.call(&method, &target, &body);
        let bytes = r.clone().into_bytes().unwrap_or_else(|e| panic!("the answer does not encode: {e}"));
        // A stored object may hold serde_json's private number key; the
        // answer is valid JSON, but this crate's own parser (built with
        // arbitrary_precision) reads that key specially when it comes
        // first, as sorted keys put it. Read such an answer with the key
        // renamed; storage itself is proven by the restart test below.
        let readable = if bytes.windows(NUMBER_KEY.len()).any(|w| w == NUMBER_KEY.as_bytes()) {
            String::from_utf8_lossy(&bytes).replace(NUMBER_KEY, "number-key").into_bytes()
        } else {
            bytes.clone()
        };
        let answer: Value = serde_json::from_slice(&readable).unwrap_or_else(|e| panic!("the answer is not JSON: {e}: {}", String::from_utf8_lossy(&bytes)));
        if r.status >= 400 {
            let code = answer["code"].as_str().unwrap_or_else(|| panic!("an error without a code: {answer}"));
            assert!(answer["detail"].is_string(), "an error without a detail: {answer}");
            assert!(crate::core::error::Error::codes().contains(&code), "unknown code {code}");
        }
        assert!(
            [200, 400, 404, 405, 409, 413, 415, 422, 503].contains(&r.status),
            "status {} for {method} {target}: {answer}",
            r.status
        );
        if r.status == 503 {
            assert_eq!(answer["code"], "encoding_not_loaded", "{answer}");
        }
        if count % 100 == 0 {
            run(api::wake(&api.store, &api::services::Offline, api.now)).unwrap_or_else(|e| panic!("wake: {e}"));
        }
        if count % 250 == 0 {
            // Every logged op replays to the live state.
            let reopened = run(Store::open(api.backend.clone(), config.clone())).unwrap_or_else(|e| panic!("reopen: {e}"));
            let live = run(api.store.read(|e| e.clone())).unwrap();
            let differs = run(reopened.read(|e| (e != &live).then(|| super::sim::diff(e, &live)))).unwrap();
            assert!(differs.is_none(), "the replayed state differs from the live one: {}", differs.unwrap_or_default());
        }
        r.status == 200
    });
}

/// Replaces one random node of `v` (or `v` itself) with an interesting value.
fn replace_node(rng: &mut Rng, v: &mut Value, interesting: &[Value]) {
    let depth = rng.below(4);
    replace_at(rng, v, interesting, depth);
}

fn replace_at(rng: &mut Rng, node: &mut Value, interesting: &[Value], depth: usize) {
    if depth > 0 {
        match node {
            Value::Object(m) if !m.is_empty() => {
                let k = m.keys().nth(rng.below(m.len())).cloned().unwrap();
                return replace_at(rng, m.get_mut(&k).unwrap(), interesting, depth - 1);
            }
            Value::Array(a) if !a.is_empty() => {
                let i = rng.below(a.len());
                return replace_at(rng, &mut a[i], interesting, depth - 1);
            }
            _ => {}
        }
    }
    let value = interesting[rng.below(interesting.len())].clone();
    if let (Value::Object(m), true) = (&mut *node, rng.chance(0.2)) {
        let key = rng.pick(&["id", "amount", "session_id", "ttl_seconds", "pending", "messages", "text", "vector", "limit", "unknown"]);
        m.insert(key.into(), value);
        return;
    }
    *node = value;
}

/// The typed transfer batch: byte columns checked whole before anything
/// applies; what applies balances, logs and replays the same.
#[test]
fn fuzz_ledger_columns() {
    let c = corpus();
    let base = &c.base;
    let accounts = base.ledger().accounts().len() as u32;
    let valid = |rng: &mut Rng| {
        let n = rng.range(1, 6) as usize;
        let mut cols = TransferColumns {
            ids: crate::core::codec::Bytes(Vec::new()),
            debit: crate::core::codec::Bytes(Vec::new()),
            credit: crate::core::codec::Bytes(Vec::new()),
            amounts: Amounts::Units(crate::core::codec::Bytes(Vec::new())),
            flags: crate::core::codec::Bytes(Vec::new()),
            timeouts: crate::core::codec::Bytes(Vec::new()),
        };
        let mut decimal = Vec::new();
        for i in 0..n {
            cols.ids.0.extend_from_slice(&(1_000 + rng.below(20) as u128 + i as u128 * 100).to_le_bytes());
            let d = rng.below(accounts as usize) as u32;
            cols.debit.0.extend_from_slice(&d.to_le_bytes());
            cols.credit.0.extend_from_slice(&((d + 1 + rng.below(accounts as usize - 1) as u32) % accounts).to_le_bytes());
            let units = rng.range(1, 5_000_000) as i64;
            if let Amounts::Units(b) = &mut cols.amounts {
                b.0.extend_from_slice(&units.to_le_bytes());
            }
            decimal.push(format!("{}.{:06}", units / 1_000_000, units % 1_000_000));
            let pending = rng.chance(0.3);
            cols.flags.0.push(u8::from(pending) | if rng.chance(0.2) { 2 } else { 0 });
            let timeout: u32 = if pending && rng.chance(0.5) { rng.range(1, 60) as u32 } else { 0 };
            cols.timeouts.0.extend_from_slice(&timeout.to_le_bytes());
        }
        if rng.chance(0.3) {
            cols.amounts = Amounts::Decimal(decimal.join(","));
        }
        cols
    };
    drive("ledger_columns", |rng, input| {
        let mut cols = valid(rng);
        for _ in 0..rng.range(0, 3) {
            let col: &mut Vec<u8> = match rng.below(7) {
                0 => &mut cols.ids.0,
                1 => &mut cols.debit.0,
                2 => &mut cols.credit.0,
                3 => &mut cols.flags.0,
                4 => &mut cols.timeouts.0,
                _ => match &mut cols.amounts {
                    Amounts::Units(b) => &mut b.0,
                    Amounts::Decimal(s) => {
                        let mut b = std::mem::take(s).into_bytes();
                        mutate(rng, &mut b, &[], JSON_TOKENS);
                        *s = String::from_utf8_lossy(&b).into_owned();
                        continue;
                    }
                },
            };
            mutate(rng, col, &[], &[]);
        }
        *input.borrow_mut() = rmp_serde::to_vec(&cols).unwrap();
        let op = Op::Ledger(LedgerOp::CreateTransferColumns(cols));
        let now = 1_700_000_100_000;
        let mut e = base.clone();
        match e.apply(&op, now) {
            Err(_) => {
                assert!(e == *base, "a refused batch changed the state");
                false
            }
            Ok(_) => {
                assert!(e.ledger().reconcile().is_empty(), "books balance");
                // Logged and replayed, the batch gives the same state.
                let seq = base.last_seq() + 1;
                let entry = decode_log_entry(seq, &encode_log_entry(seq, &crate::core::engine::LogEntry { now_ms: now, op }).unwrap()).unwrap();
                let mut replayed = base.clone();
                replayed.apply(&entry.op, entry.now_ms).unwrap();
                assert!(replayed == e, "the replayed batch differs");
                true
            }
        }
    });
}

/// The vector index blob: lengths and checksum sealed again after the
/// mutation; what loads re-encodes the same, and searches without a panic.
#[test]
fn fuzz_vector_index() {
    let mut rng0 = Rng::new(5);
    let mut blobs = Vec::new();
    for (dim, q, n, seal) in [(4usize, Quantization::None, 40u64, false), (8, Quantization::Int8, 150, true), (3, Quantization::None, 140, true)] {
        let config = Config::new(dim, Metric::Cosine).quantization(q).seal_points(limits::VECTOR_SEAL_POINTS_MIN).seed(7);
        let mut idx = VectorIndex::new(config).unwrap();
        for k in 0..n {
            let v: Vec<f32> = (0..dim).map(|i| if i == 0 { 1.0 } else { (rng0.below(2001) as f32 - 1000.0) / 1000.0 }).collect();
            idx.add(k, &v).unwrap();
        }
        if seal {
            idx.compact(10_000).unwrap();
        }
        for k in (0..n).step_by(7) {
            idx.remove(k);
        }
        blobs.push(idx.encode());
    }
    drive("vector_index", |rng, input| {
        let mut b = pick_mutated(rng, &blobs, &[]);
        if rng.chance(0.8) && b.len() >= 20 {
            let n = b.len() as u64;
            b[8..16].copy_from_slice(&n.to_le_bytes());
            let len = b.len();
            let c = crc(&b[..len - 4]).to_le_bytes();
            b[len - 4..].copy_from_slice(&c);
        }
        *input.borrow_mut() = b.clone();
        let Ok(mut idx) = VectorIndex::decode(&b) else { return false };
        let again = idx.encode();
        let back = VectorIndex::decode(&again).unwrap_or_else(|e| panic!("a re-encoded index does not load: {e}"));
        assert_eq!(back.encode(), again, "re-encoding is not stable");
        assert!(back.live_entries() == idx.live_entries() || idx.live_entries().iter().any(|(_, v)| v.iter().any(|x| x.is_nan())), "a re-encoded index holds other vectors");
        let dim = idx.config().dim;
        let query: Vec<f32> = (0..dim).map(|i| if i == 0 { 1.0 } else { 0.5 }).collect();
        let params = SearchParams { k: rng.range(1, 20) as usize, ef: if rng.chance(0.5) { Some(rng.range(1, 100) as usize) } else { None } };
        let (mut scratch, mut out) = (Scratch::default(), Vec::new());
        let _ = idx.search(&query, &params, &Eligible::All, &mut scratch, &mut out);
        let _ = idx.search_exact(&query, &params, &Eligible::All, &mut scratch, &mut out);
        let keys = [0u64, 1, 2, 3, 1_000];
        let _ = idx.search(&query, &params, &Eligible::Keys(&keys), &mut scratch, &mut out);
        if rng.chance(0.2) {
            let _ = idx.compact(1_000);
            let _ = idx.add(1_000_000, &query);
            let _ = idx.search(&query, &params, &Eligible::All, &mut scratch, &mut out);
        }
        true
    });
}

/// BPE rank assets: checksum sealed again; what loads writes the same
/// asset and finds every token at its rank.
#[test]
fn fuzz_rank_asset() {
    use crate::core::tokenizer::ranks::Ranks;
    let mut tokens: Vec<Vec<u8>> = (0u8..=255).map(|b| vec![b]).collect();
    for w in ["th", "he", "the", " the", "in", "ing", "er", " a", "an", "and", " and", "édition", "👍"] {
        tokens.push(w.as_bytes().to_vec());
    }
    let asset = Ranks::from_tokens(tokens.iter().map(Vec::as_slice)).unwrap().to_asset();
    let n = tokens.len();
    let corpus = vec![asset];
    drive("rank_asset", |rng, input| {
        let mut b = pick_mutated(rng, &corpus, &[]);
        if b.len() >= 24 {
            if rng.chance(0.5) {
                let body = (b.len() - 24).saturating_sub(u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize) as u32;
                b[12..16].copy_from_slice(&body.to_le_bytes());
            }
            if rng.chance(0.8) {
                let c = crc(&b[24..]).to_le_bytes();
                b[16..20].copy_from_slice(&c);
            }
        }
        *input.borrow_mut() = b.clone();
        let expected = if rng.chance(0.9) { n } else if b.len() >= 12 { u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize } else { 0 };
        if let Ok(r) = Ranks::from_asset(&b, expected) {
            // All but the reserved word (bytes 20..24), which is not read.
            let again = r.to_asset();
            assert!(again.len() == b.len() && again[..20] == b[..20] && again[24..] == b[24..], "a loaded asset writes itself");
            for rank in 0..r.len() as u32 {
                assert_eq!(r.get(r.token(rank)), Some(rank), "token {rank} is found at its rank");
            }
            return true;
        }
        false
    });
}

/// Decimal amounts, RFC 3339 times and transfer ids, as they arrive in
/// JSON strings.
#[test]
fn fuzz_scalars() {
    use crate::core::ledger::amount::{format_units, parse_amount};
    use crate::core::time::{format_rfc3339, parse_rfc3339};
    let amounts: Vec<Vec<u8>> = ["0", "1", "12.50", "0.000001", "100.26", "99999999999999999999999999999999999999", "340282366920938463463374607431768211455", "1.5e3", "-1", "+1", ".5", "5."].iter().map(|s| s.as_bytes().to_vec()).collect();
    let times: Vec<Vec<u8>> = ["2026-11-18T11:00:00Z", "2026-11-18T11:00:00.123+02:00", "1970-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "2024-02-29T00:00:00-00:30", "2026-11-18 11:00:00", "2026-11-18T11:00:00.123456789Z"].iter().map(|s| s.as_bytes().to_vec()).collect();
    drive("scalars", |rng, input| {
        if rng.chance(0.5) {
            let b = pick_mutated(rng, &amounts, JSON_TOKENS);
            *input.borrow_mut() = b.clone();
            let s = String::from_utf8_lossy(&b);
            let scale = rng.pick(&[0u32, 2, 6, 18, limits::ASSET_SCALE_MAX, limits::ASSET_SCALE_MAX + 1, u32::MAX]);
            let id = crate::core::ledger::TransferId::parse(&s);
            assert_eq!(crate::core::ledger::TransferId::parse(&id.to_string()), id, "a transfer id parses back from its text");
            let Ok(u) = parse_amount("amount", &s, scale) else { return false };
            assert_eq!(parse_amount("amount", &format_units(u, scale), scale).unwrap(), u, "{s} at scale {scale}");
            true
        } else {
            let b = pick_mutated(rng, &times, JSON_TOKENS);
            *input.borrow_mut() = b.clone();
            let s = String::from_utf8_lossy(&b);
            let Ok(ms) = parse_rfc3339("t", &s) else { return false };
            assert_eq!(parse_rfc3339("t", &format_rfc3339(ms)).unwrap(), ms, "{s}");
            true
        }
    });
}
