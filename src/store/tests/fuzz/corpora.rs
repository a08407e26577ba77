//! The fuzzer's corpora: valid encodings from the real encoders (a store
//! driven through the HTTP API, the simulation's workload, older schemas).

use super::*;

// ---------------------------------------------------------------------------
// Corpora from the real encoders.

/// Requests that reach every route family with valid bodies, in an order
/// that makes most of them succeed.
pub(super) const REQUESTS: &[(&str, &str, &str)] = &[
    ("GET", "/v1/health", ""),
    ("PUT", "/v1/working-memory/chat-1", r#"{"messages":[{"role":"user","content":"hello"},{"role":"assistant","content":"hi","id":"m2","created_at":"2026-11-18T11:00:00Z"}],"data":{"cart":["apple"],"budget":"12.50","n":1234.567890123456789},"context":"earlier: greeted","user_id":"u1","ttl_seconds":60}"#),
    ("PUT", "/v1/working-memory/s", r#"{"messages":[{"role":"user","content":"Where does order 1079 ship?"},{"role":"assistant","content":"Ohio.","id":"a1"}],"data":{"balance":1234.567890123456789}}"#),
    ("PUT", "/v1/working-memory/keep", r#"{"messages":[{"role":"user","content":"original"}]}"#),
    ("POST", "/v1/working-memory/s/messages", r#"{"model_name":"gpt-4o","messages":[{"role":"user","content":"hello world"},{"role":"assistant","content":"ünïcödé ok"}]}"#),
    ("POST", "/v1/working-memory/chat-1/messages", r#"{"messages":[{"role":"tool","content":"{\"odds\":2.5}","id":"t1"}]}"#),
    ("GET", "/v1/working-memory/chat-1?recent_messages_limit=1", ""),
    ("GET", "/v1/working-memory/?limit=10&offset=0", ""),
    ("GET", "/v1/working-memory/s?model_name=gpt-4o", ""),
    ("POST", "/v1/working-memory/s/compact", r#"{"context_window_max": 1000, "keep_recent_tokens": 10}"#),
    ("GET", "/v1/working-memory/s/archive?limit=10", ""),
    ("GET", "/v1/working-memory/s/messages", ""),
    ("PUT", "/v1/working-memory/s/tool-cache", r#"{"tool":"wallet.balance","args":{"a":1,"b":2},"result":{"usd":"10.50"},"ttl_seconds":30}"#),
    ("GET", "/v1/working-memory/s/tool-cache?tool=wallet.balance&args=%7B%22a%22%3A1%2C%22b%22%3A2%7D", ""),
    ("DELETE", "/v1/working-memory/s/tool-cache?tool=wallet.balance", ""),
    ("PUT", "/v1/tool-ttls", r#"{"ttls": {"casino.odds": 5}}"#),
    ("PUT", "/v1/agents/bot/prompt", r#"{"text": "You are a careful logistics agent.", "note": "v1"}"#),
    ("POST", "/v1/agents/bot/patches", r#"{"text": "CRITICAL: Warehouse Ohio is closed."}"#),
    ("DELETE", "/v1/agents/bot/patches?glob=CRITICAL:%20Warehouse*", ""),
    ("POST", "/v1/agents/bot/prompt/rollback", r#"{"version": 1}"#),
    ("PUT", "/v1/agents/bot/tools", r#"{"tools": ["get_current_datetime"]}"#),
    ("GET", "/v1/agents/bot/config", ""),
    ("PUT", "/v1/agents/ag/profile", r#"{"fields":{"balance":"10.5","name":"ada"}}"#),
    ("POST", "/v1/agents/ag/profile/increment", r#"{"field":"spent","by":"0.2"}"#),
    ("PUT", "/v1/schemas/session_data", r#"{"version":2,"migrations":[{"from":1,"steps":[{"move":{"from":["balance"],"to":["portfolio","USD"]}}]}]}"#),
    ("POST", "/v1/working-memory/s/data/migrate", r#"{"from_version":1,"to_version":2}"#),
    ("POST", "/v1/ledger/assets", r#"{"code":"USDC","scale":6}"#),
    ("POST", "/v1/ledger/assets", r#"{"code":"USD","scale":2}"#),
    ("POST", "/v1/ledger/accounts", r#"{"id":"bank","asset":"USDC"}"#),
    ("POST", "/v1/ledger/accounts", r#"{"id":"agent","asset":"USDC","flags":{"debits_must_not_exceed_credits":true},"max_transfer":"50"}"#),
    ("POST", "/v1/ledger/accounts", r#"{"id":"casino","asset":"USDC"}"#),
    ("POST", "/v1/ledger/accounts", r#"{"id":"cash","asset":"USD"}"#),
    ("POST", "/v1/ledger/transfers", r#"{"transfers":[{"id":"fund","debit_account":"bank","credit_account":"agent","amount":"100.26"}]}"#),
    ("POST", "/v1/ledger/transfers", r#"{"transfers":[{"id":"h1","debit_account":"agent","credit_account":"casino","amount":"35","pending":true,"timeout_seconds":60},{"id":"h2","debit_account":"agent","credit_account":"casino","amount":"1.5","pending":true,"linked":true},{"id":"h3","debit_account":"agent","credit_account":"casino","amount":"2","metadata":{"bet":"red","odds":2.5}}]}"#),
    ("POST", "/v1/ledger/transfers/h1/post", r#"{"amount":"25.5"}"#),
    ("POST", "/v1/ledger/transfers/h2/void", ""),
    ("GET", "/v1/ledger/accounts/agent", ""),
    ("GET", "/v1/ledger/accounts/agent/history?limit=3", ""),
    ("GET", "/v1/ledger/transfers/h1", ""),
    ("POST", "/v1/ledger/reconcile", r#"{"statement":[{"account":"agent","balance":"14.5"},{"account":"casino","balance":"25"}]}"#),
    ("POST", "/v1/ledger/intents", r#"{"op":"place_bet","params":{"market":"m1","stake":"5.00"}}"#),
    ("GET", "/v1/ledger/intents", ""),
    ("POST", "/v1/long-term-memory/", r#"{"memories":[{"id":"kitchen","text":"The user painted the kitchen blue.","user_id":"ana","topics":["home"],"memory_type":"semantic"},{"id":"lisbon","text":"Ana flew to Lisbon for a conference.","user_id":"ana","memory_type":"episodic","event_date":"2026-05-01T10:00:00Z"}],"deduplicate":true}"#),
    ("POST", "/v1/long-term-memory/search", r#"{"text": "Lisbon conference", "search_mode": "hybrid", "fusion": "rrf", "user_id": {"eq": "ana"}}"#),
    ("POST", "/v1/long-term-memory/search", r#"{"text": "kitchen", "search_mode": "keyword", "limit": 3, "topics": {"any": ["home"]}}"#),
    ("PATCH", "/v1/long-term-memory/kitchen", r#"{"text": "The user repainted the kitchen sage green.", "topics": ["colour"]}"#),
    ("GET", "/v1/long-term-memory/kitchen", ""),
    ("POST", "/v1/long-term-memory/forget", r#"{"policy": {"max_age_days": 365}, "pinned_ids": ["kitchen"]}"#),
    ("DELETE", "/v1/long-term-memory?memory_ids=lisbon&memory_ids=nope", ""),
    ("POST", "/v1/episodes", r#"{"agent_id": "casino-bot", "kind": "bet", "payload": {"n": 1}, "outcome": "lost"}"#),
    ("PUT", "/v1/episodes/config", r#"{"per_agent_max": 3, "ttl_seconds": 60}"#),
    ("GET", "/v1/episodes?agent_id=casino-bot&n=10&kind=bet", ""),
    ("GET", "/v1/episodes/summary?agent_id=casino-bot", ""),
    ("PUT", "/v1/services/oracle", r#"{"ttl_seconds":5}"#),
    ("PUT", "/v1/services/escrow/state?agent_id=a", r#"{"state":{"open":2,"amount":1234.567890123456789}}"#),
    ("GET", "/v1/services/escrow/state?agent_id=a&allow_stale=true", ""),
    ("GET", "/v1/services/snapshot?agent_id=a", ""),
    ("POST", "/v1/memory/prompt", r#"{"query": "Where does order 1079 ship?", "session": {"session_id": "s", "model_name": "gpt-4o"}, "long_term_search": {"user_id": {"eq": "ana"}, "limit": 3}}"#),
    ("POST", "/v1/prompt", r#"{"query": "Status?", "session_id": "s", "agent_id": "bot", "model": "gpt-4o", "memories": ["The user is Ana."]}"#),
    ("GET", "/v1/tools/schemas?format=anthropic&agent_id=bot", ""),
    ("POST", "/v1/tools/call", r#"{"name": "add_messages_to_working_memory", "arguments": "{\"session_id\": \"s\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}"}"#),
    ("POST", "/v1/tools/call", r#"{"name": "update_working_memory_data", "arguments": {"session_id": "s", "data": {"k": "v"}}}"#),
    ("GET", "/v1/events?since=0&limit=5", ""),
    ("GET", "/v1/stats", ""),
    ("DELETE", "/v1/working-memory/keep", ""),
];

pub(super) const PREFIX: &str = "t/";

pub(super) struct Api {
    pub(super) backend: MemoryBackend,
    pub(super) store: Store<MemoryBackend>,
    pub(super) now: Millis,
    pub(super) counter: u64,
}

impl Api {
    pub(super) fn new(config: StoreConfig) -> Api {
        let backend = MemoryBackend::new();
        let store = run(Store::open(backend.clone(), config)).unwrap();
        let mut api = Api { backend, store, now: 1_795_000_000_000, counter: 0 };
        for (m, p, b) in REQUESTS {
            api.call(m, p, b.as_bytes());
        }
        api
    }

    pub(super) fn call(&mut self, method: &str, target: &str, body: &[u8]) -> api::Response {
        let (path, query) = api::split_target(target);
        let req = Request { method, path, query, body };
        let counter = &mut self.counter;
        let mut random = || {
            *counter += 1;
            let mut r = [0u8; 10];
            r[2..].copy_from_slice(&counter.to_be_bytes());
            r
        };
        let mut ctx = Ctx::new(self.now, &mut random, None, 1024 * 1024, &api::services::Offline);
        run(api::handle(&self.store, &req, &mut ctx))
    }
}

/// Log records (seq, bytes) of everything the API corpus and the
/// simulation's workload write, and snapshots of the states they reach.
pub(super) struct Corpus {
    pub(super) records: Vec<(u64, Vec<u8>)>,
    pub(super) v0_records: Vec<Vec<u8>>,
    pub(super) snapshots: Vec<Vec<u8>>,
    pub(super) v0_snapshots: Vec<Vec<u8>>,
    /// An engine with accounts, sessions, memories: ops are replayed on it.
    pub(super) base: Engine,
}

pub(super) fn v0_session(i: u64) -> SessionV0 {
    SessionV0 {
        id: format!("legacy{i}"),
        messages: vec![("user".into(), "hello".into()), ("assistant".into(), format!("hi there {i}"))],
        data: if i % 2 == 0 { Some(r#"{"cart":["apple"],"budget":"12.50"}"#.into()) } else { None },
        ttl_seconds: if i % 3 == 0 { Some(3600) } else { None },
        created_ms: 1_000 + i,
        updated_ms: 2_000 + i,
    }
}

pub(super) fn corpus() -> Corpus {
    let config = StoreConfig { snapshot_every_ops: limits::SNAPSHOT_EVERY_OPS_MAX, chunk_bytes: limits::SNAPSHOT_CHUNK_BYTES_DEFAULT, key_prefix: String::new(), ..StoreConfig::default() };
    let api = Api::new(config);
    let mut records: Vec<(u64, Vec<u8>)> = api.backend.dump().into_iter().filter_map(|(k, v)| Some((u64::from_str_radix(k.strip_prefix("log/")?, 16).ok()?, v))).collect();
    let mut snapshots = vec![Engine::new().encode_snapshot().unwrap(), run(api.store.read(|e| e.encode_snapshot())).unwrap().unwrap()];
    let mut base = Engine::new();
    for seed in 0..4 {
        let mut e = Engine::new();
        for (i, (op, now)) in sample_ops(seed, 60).into_iter().enumerate() {
            let seq = e.last_seq() + 1;
            if e.apply(&op, now).is_ok() {
                records.push((seq, encode_log_entry(seq, &crate::core::engine::LogEntry { now_ms: now, op }).unwrap()));
            }
            if i == 20 && seed == 0 {
                snapshots.push(e.encode_snapshot().unwrap());
            }
        }
        snapshots.push(e.encode_snapshot().unwrap());
        if seed == 0 {
            base = e;
        }
    }
    let v0_records = (0..4u64)
        .flat_map(|i| {
            let put = LogEntryV0 { now_ms: 5_000 + i, op: OpV0::Put(v0_session(i)) };
            let del = LogEntryV0 { now_ms: 6_000 + i, op: OpV0::Delete(format!("legacy{i}")) };
            [rmp_serde::to_vec_named(&put).unwrap(), rmp_serde::to_vec(&put).unwrap(), rmp_serde::to_vec_named(&del).unwrap()]
        })
        .collect();
    let v0 = SnapshotV0 { last_seq: 9, sessions: (0..4).map(v0_session).collect() };
    let v0_snapshots = vec![rmp_serde::to_vec_named(&v0).unwrap(), rmp_serde::to_vec(&v0).unwrap()];
    Corpus { records, v0_records, snapshots, v0_snapshots, base }
}

pub(super) const LOG_HEADER_BYTES: usize = 24;
pub(super) const SNAPSHOT_HEADER_BYTES: usize = 32;
