//! Background extraction (AMS's `long_term_memory_strategy`): passes over
//! the sessions whose new turns await extraction. They run on the host's
//! wake-up (the Durable Object's alarm, the npm package's queue), never
//! inside a request, so no request waits for the extractor hook.
//!
//! A pass reads a session's turns after its watermark, extracts candidates
//! (the host's hook, else the offline rules or, for the summary strategy,
//! the summarizer), scrubs and embeds them, and commits records and the new
//! watermark as one op ([`crate::core::engine::ExtractionOp`]). A failed
//! pass commits nothing and is retried with a doubling delay; when its
//! attempts run out the failure is recorded as an episode (and so a feed
//! event) and the session waits for its next write.

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::longterm::embed_texts;
use super::services::Services;
use crate::core::budget::Estimator;
use crate::core::engine::{Applied, Committed, ExtractionOp, Op, Pending, Watermark};
use crate::core::episodes::Episode;
use crate::core::error::{Error, Result};
use crate::core::extract::{rules, Candidate, CandidateKind, Strategy, Turn};
use crate::core::ids::ulid;
use crate::core::limits;
use crate::core::longterm::NewRecord;
use crate::core::longterm::SearchRequest;
use crate::core::retrieval::filter::{Filter, TagFilter};
use crate::core::retrieval::record::{MemoryRecord, MemoryType};
use crate::core::time::Millis;
use crate::store::{Backend, Store};

/// What one wake-up's passes did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Sessions whose pass committed.
    pub sessions: usize,
    pub created: usize,
    /// Candidates skipped because a live record has the same hash.
    pub duplicates: usize,
    /// Older records that a new one about the same subject superseded.
    pub superseded: usize,
    /// Passes that failed (and will be retried, or were given up).
    pub failed: usize,
    /// Passes whose user has not consented (under `require_consent`): the
    /// turns are passed over and nothing is stored.
    pub without_consent: usize,
}

impl PassReport {
    /// As JSON, for `flushExtraction` and tests.
    pub fn to_json(&self) -> Value {
        json!({ "sessions": self.sessions, "created": self.created, "duplicates": self.duplicates, "superseded": self.superseded, "failed": self.failed, "without_consent": self.without_consent })
    }
}

/// When the next pass is due, retry delays included; `None` when nothing waits.
pub async fn next_due<B: Backend>(store: &Store<B>, now: Millis) -> Result<Option<Millis>> {
    let waiting = store.read(|e| e.extraction_waiting(now, limits::EXTRACT_DEBOUNCE_MS)).await?;
    let retries = store.counters().extraction_retries();
    Ok(waiting.iter().filter_map(|(id, at, updated)| retries.run_at(id, *at, *updated)).min())
}

/// Runs the passes due at `now`, at most [`limits::EXTRACT_SESSIONS_PER_PASS_MAX`].
/// With `flush`, every waiting session runs at once, debounce and retry
/// delays ignored (a session given up still waits for its next write).
pub async fn run_due<B: Backend>(store: &Store<B>, services: &dyn Services, now: Millis, flush: bool) -> Result<PassReport> {
    let waiting = store.read(|e| e.extraction_waiting(now, limits::EXTRACT_DEBOUNCE_MS)).await?;
    let due: Vec<String> = {
        let retries = store.counters().extraction_retries();
        waiting
            .into_iter()
            .filter(|(id, at, updated)| match retries.run_at(id, *at, *updated) {
                None => false,
                Some(t) => flush || t <= now,
            })
            .take(limits::EXTRACT_SESSIONS_PER_PASS_MAX)
            .map(|(id, _, _)| id)
            .collect()
    };
    let mut report = PassReport::default();
    for id in due {
        let Some((pending, updated_at)) = store.read(|e| e.extraction_pending(&id, now).zip(e.session(&id, now).map(|s| s.updated_at))).await? else {
            continue;
        };
        match pass(store, services, &pending, now).await {
            Ok(Outcome::Committed(c, near_duplicates)) => {
                store.counters().extraction_retries().succeeded(&id);
                report.sessions += 1;
                report.created += c.created.len();
                report.duplicates += c.duplicates.len() + near_duplicates;
                report.superseded += c.superseded.len();
            }
            Ok(Outcome::WithoutConsent) => report.without_consent += 1,
            // Another pass committed first: its watermark stands.
            Err(e) if e.code() == "extraction_stale" => {}
            Err(e) => {
                report.failed += 1;
                let (attempts, gave_up) = store.counters().extraction_retries().failed(&id, now, updated_at);
                if gave_up {
                    surface_failure(store, &id, attempts, &e, now).await?;
                }
            }
        }
    }
    Ok(report)
}

enum Outcome {
    /// With the candidates dropped as near duplicates.
    Committed(Committed, usize),
    WithoutConsent,
}

/// One pass over one session.
async fn pass<B: Backend>(store: &Store<B>, services: &dyn Services, p: &Pending, now: Millis) -> Result<Outcome> {
    let strategy = Strategy::parse(Some(&p.strategy))?;
    let last = p.turns.last().ok_or_else(|| Error::Internal { detail: "a pending pass with no turns".into() })?;
    let through = Watermark { id: last.id.clone(), at: last.created_at };
    let mut candidates = match services.extract(&strategy, &p.turns) {
        Some(hook) => hook.await?,
        None => offline(store, services, &strategy, p).await?,
    };
    candidates.truncate(limits::EXTRACT_RECORDS_PER_PASS_MAX);
    let config = p.strategy.get("config").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut records = candidates.iter().enumerate().map(|(i, c)| record(p, &strategy, &config, &through, i, c, now)).collect::<Result<Vec<_>>>()?;
    // AMS's message memories: the turns themselves, searchable from later
    // sessions, when the strategy's config asks for them.
    if config.get("index_messages").and_then(Value::as_bool) == Some(true) {
        for m in p.turns.iter().filter(|m| matches!(m.role.as_str(), "user" | "assistant") && !m.content.trim().is_empty()) {
            records.push(message_record(p, &strategy, &config, m, now)?);
        }
        records.truncate(limits::EXTRACT_RECORDS_PER_PASS_MAX);
    }
    let mut op = Op::Extraction(ExtractionOp::Commit { session_id: p.session_id.clone(), from: p.from.clone(), through: through.clone(), records, embedder: None });
    // Scrubbed before embedding, as a direct create is.
    store.scrub(&mut op).await?;
    let Op::Extraction(ExtractionOp::Commit { records: mut new, .. }) = op else { return Err(Error::Internal { detail: "scrub changed the op".into() }) };
    let mut near_duplicates = 0;
    let mut embedder = None;
    if !new.is_empty() {
        let e = embed_texts(store, services, &new.iter().map(|r| r.record.text.clone()).collect::<Vec<_>>()).await?;
        embedder = Some(e.embedder);
        for (r, v) in new.iter_mut().zip(e.vectors) {
            r.vector = v;
        }
        let before = new.len();
        new = drop_near_duplicates(store, new, now).await?;
        near_duplicates = before - new.len();
    }
    let commit = |records| Op::Extraction(ExtractionOp::Commit { session_id: p.session_id.clone(), from: p.from.clone(), through: through.clone(), records, embedder: embedder.clone() });
    match store.apply(commit(new), now).await {
        Ok(Applied::Extracted(c)) => {
            store.maintain(|e| e.compact_vectors(limits::LTM_COMPACT_WORK_POINTS_PER_WRITE)).await??;
            Ok(Outcome::Committed(c, near_duplicates))
        }
        // Consent is not retroactive: the turns said without it are passed
        // over (the watermark moves, nothing is stored).
        Err(e) if e.code() == "consent_required" => match store.apply(commit(Vec::new()), now).await? {
            Applied::Extracted(_) => Ok(Outcome::WithoutConsent),
            other => Err(Error::Internal { detail: format!("extraction commit returned {other:?}") }),
        },
        Ok(other) => Err(Error::Internal { detail: format!("extraction commit returned {other:?}") }),
        Err(e) => Err(e),
    }
}

/// Semantic deduplication: an extracted memory as similar as
/// [`limits::EXTRACT_DEDUP_SIMILARITY_MIN`] to a current memory of the same
/// user, or to one kept earlier in this pass, is dropped (a paraphrase of
/// what is known is not news). Message memories and the rolling summary
/// are kept as they are, and so is a statement about the same subject as
/// the near record: that is a restatement or a contradiction, which
/// superseding settles.
async fn drop_near_duplicates<B: Backend>(store: &Store<B>, records: Vec<NewRecord>, now: Millis) -> Result<Vec<NewRecord>> {
    let mut kept: Vec<NewRecord> = Vec::with_capacity(records.len());
    for r in records {
        if r.record.memory_type == MemoryType::Message || r.record.id.starts_with("summary:") {
            kept.push(r);
            continue;
        }
        let subject = |x: &MemoryRecord| x.metadata.get(crate::core::longterm::SUBJECT).and_then(Value::as_str).map(str::to_owned);
        let mine = subject(&r.record);
        // Near and not about the same subject (or about none).
        let near = |x: &MemoryRecord| x.user_id == r.record.user_id && x.memory_type != MemoryType::Message && (mine.is_none() || subject(x) != mine);
        let in_pass = kept.iter().any(|k| near(&k.record) && cosine(&k.vector, &r.vector) >= limits::EXTRACT_DEDUP_SIMILARITY_MIN);
        let filter = Filter { user_id: r.record.user_id.clone().map(|u| TagFilter { eq: Some(u), ..TagFilter::default() }), ..Filter::default() };
        let stored = store
            .read(|e| {
                let lt = e.longterm();
                let req = SearchRequest { vector: Some(&r.vector), limit: 1, ..SearchRequest::new("", &filter) };
                lt.search(&req, now).map(|found| {
                    found.hits.first().and_then(|h| lt.record_by_key(h.key).map(|x| (h.score, x.id != r.record.id && near(x))))
                })
            })
            .await??;
        let known = stored.is_some_and(|(score, other)| other && score >= limits::EXTRACT_DEDUP_SIMILARITY_MIN);
        if !(in_pass || known) {
            kept.push(r);
        }
    }
    Ok(kept)
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        dot += f64::from(*x) * f64::from(*y);
        na += f64::from(*x) * f64::from(*x);
        nb += f64::from(*y) * f64::from(*y);
    }
    if na == 0.0 || nb == 0.0 { 0.0 } else { dot / (na.sqrt() * nb.sqrt()) }
}

/// The offline default: the rules for facts, preferences and events; the
/// summarizer (the host's hook, else extractive) for the summary strategy.
async fn offline<B: Backend>(store: &Store<B>, services: &dyn Services, strategy: &Strategy, p: &Pending) -> Result<Vec<Candidate>> {
    if *strategy == Strategy::Summary {
        let id = summary_id(&p.session_id);
        let previous = store.read(|e| e.longterm().get(&id).map(|r| r.text.clone())).await?;
        let tokens_max = limits::EXTRACT_SUMMARY_TOKENS_MAX;
        let text = match services.summarize(&p.turns, previous.as_deref(), tokens_max) {
            Some(hook) => hook.await?,
            None => crate::core::history::extractive::summarize(&Estimator, previous.as_deref(), &p.turns, tokens_max),
        };
        if text.trim().is_empty() {
            return Ok(Vec::new());
        }
        let extracted_from = p.turns.iter().map(|m| m.id.clone()).collect();
        return Ok(vec![Candidate { text, kind: CandidateKind::Summary, topics: Vec::new(), entities: Vec::new(), event_date: None, extracted_from, subject: None }]);
    }
    let turns: Vec<Turn<'_>> = p.turns.iter().map(|m| Turn { id: &m.id, role: &m.role, content: &m.content, created_at: m.created_at }).collect();
    let mut out = Vec::new();
    rules::extract(strategy, &turns, &mut out);
    Ok(out)
}

/// The summary strategy's one record per session: a fixed id, so each pass
/// replaces it.
fn summary_id(session_id: &str) -> String {
    let id = format!("summary:{session_id}");
    if id.len() <= limits::ID_BYTES_MAX {
        return id;
    }
    let digest = Sha256::digest(session_id.as_bytes());
    format!("summary:{}", digest.iter().take(16).map(|b| format!("{b:02x}")).collect::<String>())
}

/// A candidate as a record. Ids are derived from the session, the pass's
/// last turn and the candidate's place: a pass run again after a crash
/// names its records as the first run did.
fn record(p: &Pending, strategy: &Strategy, config: &Map<String, Value>, through: &Watermark, i: usize, c: &Candidate, now: Millis) -> Result<NewRecord> {
    let id = if c.kind == CandidateKind::Summary {
        summary_id(&p.session_id)
    } else {
        let digest = Sha256::new().chain_update(p.session_id.as_bytes()).chain_update([0]).chain_update(through.id.as_bytes()).chain_update((i as u64).to_le_bytes()).finalize();
        let mut random = [0u8; 10];
        random.copy_from_slice(&digest[..10]);
        ulid(through.at, random)
    };
    let memory_type = if c.kind == CandidateKind::Event { MemoryType::Episodic } else { MemoryType::Semantic };
    let mut r = MemoryRecord::new(id, c.text.clone(), memory_type, now);
    r.session_id = Some(p.session_id.clone());
    r.user_id = p.user_id.clone();
    r.namespace = p.namespace.clone();
    r.topics = c.topics.clone();
    r.entities = c.entities.clone();
    r.event_date = c.event_date;
    r.extracted_from = c.extracted_from.clone();
    r.extraction_strategy = strategy.name().to_owned();
    r.extraction_strategy_config = config.clone();
    r.discrete_memory_extracted = true;
    r.persisted_at = Some(now);
    if let Some(s) = &c.subject {
        r.metadata.insert("subject".into(), Value::String(s.clone()));
        // The subject is the fact: a later statement about it supersedes
        // this one through the fact chain (issue 20).
        if crate::core::retrieval::record::validate_fact_key(s).is_ok() {
            r.fact_key = Some(s.clone());
        }
    }
    r.refresh_hash();
    r.validate()?;
    Ok(NewRecord { record: r, vector: Vec::new() })
}

/// One turn as a message memory (`memory_type: "message"`), named after
/// the turn so a pass run again names it the same.
fn message_record(p: &Pending, strategy: &Strategy, config: &Map<String, Value>, m: &crate::core::session::Message, now: Millis) -> Result<NewRecord> {
    let digest = Sha256::new().chain_update(p.session_id.as_bytes()).chain_update([1]).chain_update(m.id.as_bytes()).finalize();
    let mut random = [0u8; 10];
    random.copy_from_slice(&digest[..10]);
    let mut r = MemoryRecord::new(ulid(m.created_at, random), m.content.clone(), MemoryType::Message, now);
    r.created_at = m.created_at;
    r.session_id = Some(p.session_id.clone());
    r.user_id = p.user_id.clone();
    r.namespace = p.namespace.clone();
    r.extracted_from = vec![m.id.clone()];
    r.extraction_strategy = strategy.name().to_owned();
    r.extraction_strategy_config = config.clone();
    r.persisted_at = Some(now);
    r.metadata.insert("role".into(), Value::String(m.role.clone()));
    r.refresh_hash();
    r.validate()?;
    Ok(NewRecord { record: r, vector: Vec::new() })
}

/// A pass that ran out of attempts becomes an episode (and so a feed
/// event), where an operator looks for what went wrong.
async fn surface_failure<B: Backend>(store: &Store<B>, session_id: &str, attempts: u32, e: &Error, now: Millis) -> Result<()> {
    let mut payload = Map::new();
    payload.insert("session_id".into(), json!(session_id));
    payload.insert("attempts".into(), json!(attempts));
    payload.insert("code".into(), json!(e.code()));
    payload.insert("error".into(), json!(e.to_string().chars().take(limits::EXTRACT_ERROR_CHARS_MAX).collect::<String>()));
    let digest = Sha256::new().chain_update(session_id.as_bytes()).chain_update(now.to_le_bytes()).finalize();
    let mut random = [0u8; 10];
    random.copy_from_slice(&digest[..10]);
    let episode = Episode { id: ulid(now, random), agent_id: "edgemem".into(), kind: "extraction_failed".into(), at: now, payload, outcome: None, seq: 0 };
    store.apply(Op::EpisodeRecord { episode }, now).await.map(|_| ())
}

/// What an extractor hook is asked: `{"strategy", "prompt"?, "turns":
/// [{"id", "role", "content", "created_at"}]}` as JSON text.
pub fn hook_request_json(strategy: &Strategy, turns: &[crate::core::session::Message]) -> Result<String> {
    let mut v = json!({
        "strategy": strategy.name(),
        "turns": turns.iter().map(super::working_memory::message_json).collect::<Vec<_>>(),
    });
    if let Strategy::Custom { prompt } = strategy {
        v["prompt"] = json!(prompt);
    }
    serde_json::to_string(&v).map_err(|e| Error::Internal { detail: format!("extractor request: {e}") })
}

/// An extractor hook's answer: a JSON array of `{"text", "kind"?: "fact" |
/// "preference" | "event" | "summary", "topics"?, "entities"?,
/// "event_date"? (RFC 3339), "extracted_from"? (default: every turn),
/// "subject"?}`. Anything else is a `hook_failed` error, and the pass is
/// retried: nothing half-read is stored.
pub fn candidates_from_json(text: &str, turns: &[crate::core::session::Message]) -> Result<Vec<Candidate>> {
    let fail = |reason: String| Error::HookFailed { hook: "extractor".into(), reason };
    let v: Value = serde_json::from_str(text).map_err(|e| fail(format!("did not answer JSON: {e}")))?;
    let Value::Array(items) = v else { return Err(fail("must resolve to an array of memories".into())) };
    if items.len() > limits::EXTRACT_RECORDS_PER_PASS_MAX {
        return Err(fail(format!("returned {} memories, more than {}", items.len(), limits::EXTRACT_RECORDS_PER_PASS_MAX)));
    }
    let strings = |o: &Map<String, Value>, name: &str| -> Result<Vec<String>> {
        match o.get(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => a.iter().map(|s| s.as_str().map(str::to_owned).ok_or_else(|| fail(format!("{name} must be strings")))).collect(),
            Some(_) => Err(fail(format!("{name} must be an array of strings"))),
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let o = item.as_object().ok_or_else(|| fail(format!("memory {i} is not an object")))?;
            let text = o.get("text").and_then(Value::as_str).filter(|t| !t.trim().is_empty()).ok_or_else(|| fail(format!("memory {i} has no text")))?;
            let kind = match o.get("kind").and_then(Value::as_str) {
                None | Some("fact") => CandidateKind::Fact,
                Some("preference") => CandidateKind::Preference,
                Some("event") => CandidateKind::Event,
                Some("summary") => CandidateKind::Summary,
                Some(other) => return Err(fail(format!("memory {i}: unknown kind {other:?}"))),
            };
            let event_date = match o.get("event_date") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(crate::core::time::parse_rfc3339("event_date", s).map_err(|e| fail(format!("memory {i}: {e}")))?),
                Some(_) => return Err(fail(format!("memory {i}: event_date must be an RFC 3339 string"))),
            };
            let mut extracted_from = strings(o, "extracted_from")?;
            if extracted_from.is_empty() {
                extracted_from = turns.iter().map(|m| m.id.clone()).collect();
            }
            let subject = o.get("subject").and_then(Value::as_str).map(str::to_owned);
            Ok(Candidate { text: text.to_owned(), kind, topics: strings(o, "topics")?, entities: strings(o, "entities")?, event_date, extracted_from, subject })
        })
        .collect()
}
