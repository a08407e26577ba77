//! The tenant store on the Durable Object's SQLite API (`ctx.storage.sql`).
//!
//! One table holds the op log, the snapshot chunks, the head and the
//! encryption header under the store's key names (`store::keys`), so
//! recovery and the sweep keep their meaning:
//!
//! ```sql
//! em_kv (k TEXT PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID
//! em_meta (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID  -- 'format'
//! ```
//!
//! `WITHOUT ROWID` makes the key the B-tree itself: one row written per put,
//! no second index row. Listings read keys only; a range is deleted by one
//! statement; a snapshot's head swap and the deletes it retires commit in one
//! `transactionSync` ([`Backend::commit_head`]).
//!
//! **Upgrade.** Objects written by earlier releases kept the store on the
//! key-value API (workerd's hidden `_cf_KV` table). The first open copies
//! those keys over a bounded page at a time, then writes the `format` marker,
//! then deletes the copies. The source is untouched until the marker exists,
//! so a crash mid-copy copies again.
//!
//! **Erasure** ([`Backend::replace_all`]). SQLite keeps deleted bytes in free
//! pages and its write-ahead log, and workerd allows neither `secure_delete`
//! nor `VACUUM`: only `deleteAll()`, which deletes the database file, drops
//! them. It commits on its own, before the writes after it (workerd
//! `ActorSqlite::deleteAll`, see docs/plans/workerd-deleteall.md), so a
//! crash between the two would lose the tenant. The replacement is
//! therefore first stashed in a sibling object (`__stash/{namespace}`); the
//! marker is written with the replacement, and an open that finds no marker
//! and no key-value data asks the stash before it treats the object as new.
//!
//! **Meters.** Every statement's cursor is consumed at once and its
//! `rowsRead` / `rowsWritten` summed into a [`Meter`]: Cloudflare bills
//! SQLite-backed objects by row.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Array, Function, Map, Uint8Array};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use worker::{ListOptions, SqlStorage, SqlStorageValue, Storage};

use crate::core::error::{Error, Result};
use crate::core::limits;
use crate::store::{Backend, KeyRange};

#[wasm_bindgen]
extern "C" {
    /// A `DurableObjectStorage`, seen for the one method workers-rs 0.8
    /// does not bind.
    type SyncStorage;
    /// `storage.transactionSync(fn)`: runs `fn` in a savepoint, rolled back
    /// if it throws.
    #[wasm_bindgen(method, catch, js_name = transactionSync)]
    fn transaction_sync(this: &SyncStorage, body: &Function) -> std::result::Result<JsValue, JsValue>;
}

fn sql_err(what: &str, e: impl std::fmt::Debug) -> Error {
    Error::storage(format!("sql {what}: {e:?}"))
}

/// Rows and statements counted since the object started: what Cloudflare
/// bills a SQLite-backed object for (rows read, rows written).
#[derive(Debug, Default)]
pub struct Meter {
    rows_read: Cell<u64>,
    rows_written: Cell<u64>,
    statements: Cell<u64>,
    /// Calls this object made to other Durable Objects (its stash).
    object_calls: Cell<u64>,
}

/// One reading of a [`Meter`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reading {
    pub rows_read: u64,
    pub rows_written: u64,
    pub statements: u64,
    pub object_calls: u64,
}

impl Meter {
    pub fn read(&self) -> Reading {
        Reading { rows_read: self.rows_read.get(), rows_written: self.rows_written.get(), statements: self.statements.get(), object_calls: self.object_calls.get() }
    }

    /// Counts one call this object made to another.
    pub fn count_call(&self) {
        self.object_calls.set(self.object_calls.get().saturating_add(1));
    }

    fn add(&self, read: usize, written: usize) {
        self.rows_read.set(self.rows_read.get().saturating_add(read as u64));
        self.rows_written.set(self.rows_written.get().saturating_add(written as u64));
        self.statements.set(self.statements.get().saturating_add(1));
    }
}

impl Reading {
    /// What happened between `before` and this reading.
    pub fn since(self, before: Reading) -> Reading {
        Reading {
            rows_read: self.rows_read.saturating_sub(before.rows_read),
            rows_written: self.rows_written.saturating_sub(before.rows_written),
            statements: self.statements.saturating_sub(before.statements),
            object_calls: self.object_calls.saturating_sub(before.object_calls),
        }
    }
}

/// Statements over one object's database, metered. Cheap to clone (handles).
#[derive(Clone)]
struct Sql {
    sql: SqlStorage,
    meter: Rc<Meter>,
}

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS em_kv (k TEXT PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID; \
                      CREATE TABLE IF NOT EXISTS em_meta (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID";
const PUT: &str = "INSERT INTO em_kv (k, v) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v";
/// The store lives here (format 1); written with the first data it holds.
const MARK: &str = "INSERT INTO em_meta (k, v) VALUES ('format', '1') ON CONFLICT(k) DO UPDATE SET v = excluded.v";
/// No store key is left on the key-value API.
const MARK_CLEARED: &str = "INSERT INTO em_meta (k, v) VALUES ('kv_cleared', '1') ON CONFLICT(k) DO UPDATE SET v = excluded.v";

impl Sql {
    /// Runs one statement and consumes its rows (a cursor must not outlive
    /// an await), adding its row counts to the meter.
    fn run(&self, query: &str, binds: Vec<JsValue>) -> Result<Vec<Vec<SqlStorageValue>>> {
        let cursor = self.sql.exec_raw(query, binds).map_err(|e| sql_err("exec", e))?;
        let rows = cursor.raw().collect::<worker::Result<Vec<_>>>().map_err(|e| sql_err("read", e))?;
        self.meter.add(cursor.rows_read(), cursor.rows_written());
        Ok(rows)
    }

    fn put(&self, key: &str, value: &[u8]) -> Result<()> {
        self.run(PUT, vec![key.into(), Uint8Array::from(value).into()]).map(drop)
    }

    /// Deletes every key of `range` (its limit ignored) in one statement.
    fn delete_range(&self, range: &KeyRange<'_>) -> Result<()> {
        let (lo, hi) = range.bounds()?;
        match hi {
            Some(hi) => self.run("DELETE FROM em_kv WHERE k >= ? AND k < ?", vec![lo.into(), hi.into()]),
            None => self.run("DELETE FROM em_kv WHERE k >= ?", vec![lo.into()]),
        }
        .map(drop)
    }

    /// Keys (and values, if `values`) of `range`, ascending, at most its limit.
    fn select(&self, range: &KeyRange<'_>, values: bool) -> Result<Vec<Vec<SqlStorageValue>>> {
        let (lo, hi) = range.bounds()?;
        let cols = if values { "k, v" } else { "k" };
        let limit = JsValue::from(range.limit as f64);
        match hi {
            Some(hi) => self.run(&format!("SELECT {cols} FROM em_kv WHERE k >= ? AND k < ? ORDER BY k LIMIT ?"), vec![lo.into(), hi.into(), limit]),
            None => self.run(&format!("SELECT {cols} FROM em_kv WHERE k >= ? ORDER BY k LIMIT ?"), vec![lo.into(), limit]),
        }
    }

    /// Whether the `format` and `kv_cleared` marks are set.
    fn marks(&self) -> Result<(bool, bool)> {
        let names: Vec<String> = self.run("SELECT k FROM em_meta", vec![])?.iter().filter_map(|r| r.first().and_then(|v| text(v).ok())).collect();
        Ok((names.iter().any(|k| k == "format"), names.iter().any(|k| k == "kv_cleared")))
    }

    fn mark_all(&self) -> Result<()> {
        self.run(MARK, vec![])?;
        self.run(MARK_CLEARED, vec![]).map(drop)
    }
}

fn text(v: &SqlStorageValue) -> Result<String> {
    match v {
        SqlStorageValue::String(s) => Ok(s.clone()),
        other => Err(sql_err("key", other)),
    }
}

fn blob(v: SqlStorageValue) -> Result<Vec<u8>> {
    match v {
        SqlStorageValue::Blob(b) => Ok(b),
        other => Err(sql_err("value", other)),
    }
}

/// Where an object stashes a replacement before `deleteAll()`: a sibling
/// Durable Object of the same class, addressed by name.
pub struct Stash {
    pub stub: worker::Stub,
    pub meter: Rc<Meter>,
}

/// The internal path of the stash calls (never routed from outside).
pub const STASH_PATH: &str = "/__stash";

impl Stash {
    async fn call(&self, op: &str, body: Option<Vec<u8>>) -> Result<Vec<u8>> {
        let mut init = worker::RequestInit::new();
        init.with_method(worker::Method::Post);
        if let Some(body) = body {
            init.with_body(Some(Uint8Array::from(body.as_slice()).into()));
        }
        let req = worker::Request::new_with_init(&format!("https://stash{STASH_PATH}/{op}"), &init).map_err(|e| sql_err("stash", e))?;
        self.meter.object_calls.set(self.meter.object_calls.get().saturating_add(1));
        let mut resp = self.stub.fetch_with_request(req).await.map_err(|e| sql_err("stash", e))?;
        let bytes = resp.bytes().await.map_err(|e| sql_err("stash", e))?;
        if resp.status_code() != 200 {
            return Err(Error::storage(format!("stash {op}: status {}: {}", resp.status_code(), String::from_utf8_lossy(&bytes))));
        }
        Ok(bytes)
    }
}

/// The tenant store's backend: the object's SQLite database.
pub struct SqlBackend {
    sql: Sql,
    storage: Storage,
    stash: Option<Stash>,
    /// Set when a replacement failed after `deleteAll()`: the database is
    /// empty and the stash holds the state. Every call then fails until the
    /// object drops this backend and opens again, which restores it.
    wiped: Rc<Cell<bool>>,
    /// A test fault (local dev mode only): fail right after `deleteAll()`.
    fail_after_delete_all: bool,
}

impl SqlBackend {
    /// Opens the object's database: creates the tables, and on the first
    /// open after an upgrade copies a store kept on the key-value API (or
    /// restores a replacement that a crash interrupted, from `stash`).
    /// Without a stash (an alarm, which knows no namespace), an object that
    /// may need one is `Ok(None)`: it waits for a request.
    pub async fn open(storage: Storage, meter: Rc<Meter>, stash: Option<Stash>, wiped: Rc<Cell<bool>>, fail_after_delete_all: bool) -> Result<Option<SqlBackend>> {
        let sql = Sql { sql: storage.sql(), meter };
        sql.run(SCHEMA, vec![])?;
        wiped.set(false);
        let backend = SqlBackend { sql, storage, stash, wiped, fail_after_delete_all };
        match backend.sql.marks()? {
            (true, true) => return Ok(Some(backend)),
            // A crash interrupted the clean-up after a copy.
            (true, false) => {
                backend.clear_kv().await?;
                return Ok(Some(backend));
            }
            (false, _) => {}
        }
        if backend.copy_from_kv().await? {
            backend.sql.run(MARK, vec![])?;
            backend.clear_kv().await?;
            return Ok(Some(backend));
        }
        // No marker and nothing on the key-value API: a new object, or one
        // whose replacement died between `deleteAll()` and its writes.
        let Some(stash) = &backend.stash else { return Ok(None) };
        let stashed = decode_entries(&stash.call("get", None).await?)?;
        let restored = !stashed.is_empty();
        backend.transaction(move |sql| {
            for (key, value) in &stashed {
                sql.put(key, value)?;
            }
            sql.mark_all()
        })?;
        if restored {
            stash.call("clear", None).await?;
        }
        Ok(Some(backend))
    }

    /// Runs `body` in one `transactionSync`: all of its statements commit,
    /// or none (an error rolls back).
    fn transaction<T: 'static>(&self, body: impl FnOnce(&Sql) -> Result<T> + 'static) -> Result<T> {
        let out: Rc<RefCell<Option<Result<T>>>> = Rc::new(RefCell::new(None));
        let (sql, slot) = (self.sql.clone(), out.clone());
        let f = Closure::once(move || -> std::result::Result<JsValue, JsValue> {
            let r = body(&sql);
            let failed = r.is_err();
            *slot.borrow_mut() = Some(r);
            if failed {
                Err(JsValue::from_str("edgemem: rolled back"))
            } else {
                Ok(JsValue::UNDEFINED)
            }
        });
        let called = self.storage.as_raw().unchecked_ref::<SyncStorage>().transaction_sync(f.as_ref().unchecked_ref());
        let r = out.borrow_mut().take();
        match (r, called) {
            (Some(Ok(v)), Ok(_)) => Ok(v),
            (Some(Err(e)), _) => Err(e),
            (_, Err(e)) => Err(sql_err("transaction", e)),
            (None, Ok(_)) => Err(Error::Internal { detail: "transactionSync did not run its body".into() }),
        }
    }

    /// One page of the key-value API's listing, with values.
    async fn kv_page(&self, prefix: &str, start: &str, limit: usize) -> Result<Vec<(String, Vec<u8>)>> {
        let mut opts = ListOptions::new().prefix(prefix).limit(limit);
        if !start.is_empty() {
            opts = opts.start(start);
        }
        let map: Map = self.storage.list_with_options(opts).await.map_err(|e| sql_err("kv list", e))?;
        let mut out = Vec::with_capacity(map.size() as usize);
        for pair in Array::from(&map.entries()).iter() {
            let pair = Array::from(&pair);
            let Some(key) = pair.get(0).as_string() else { continue };
            let bytes = pair.get(1).dyn_into::<Uint8Array>().map_err(|_| sql_err("kv list", format!("{key} does not hold bytes")))?;
            out.push((key, bytes.to_vec()));
        }
        Ok(out)
    }

    /// Hands the store's keys on the key-value API to `each`, a page at a
    /// time (the listing carries values: pages stay small).
    async fn for_each_kv_page(&self, mut each: impl AsyncFnMut(Vec<(String, Vec<u8>)>) -> Result<()>) -> Result<()> {
        for prefix in STORE_KV_PREFIXES {
            let mut start = String::new();
            loop {
                let page = self.kv_page(prefix, &start, limits::RECOVERY_LOG_PAGE_RECORDS).await?;
                let Some((last, _)) = page.last() else { break };
                start = format!("{last}\0");
                let page: Vec<_> = page.into_iter().filter(|(k, _)| is_store_key(k)).collect();
                if !page.is_empty() {
                    each(page).await?;
                }
            }
        }
        Ok(())
    }

    /// Copies the store's keys from the key-value API, each page in one
    /// transaction. Answers whether there were any.
    async fn copy_from_kv(&self) -> Result<bool> {
        let mut copied = false;
        self.for_each_kv_page(async |page| {
            copied = true;
            self.transaction(move |sql| page.iter().try_for_each(|(k, v)| sql.put(k, v)))
        })
        .await?;
        Ok(copied)
    }

    /// Deletes the copied keys from the key-value API (after the marker, so
    /// a crash here leaves garbage, never a second source).
    async fn clear_kv(&self) -> Result<()> {
        self.for_each_kv_page(async |page| {
            let keys: Vec<String> = page.into_iter().map(|(k, _)| k).collect();
            self.storage.delete_multiple(keys).await.map(drop).map_err(|e| sql_err("kv delete", e))
        })
        .await?;
        self.sql.run(MARK_CLEARED, vec![]).map(drop)
    }
}

/// The store's key names on the key-value API of earlier releases (the
/// object's other subsystems keep theirs there).
const STORE_KV_PREFIXES: [&str; 4] = ["head", "crypt", "log/", "snap/"];

fn is_store_key(key: &str) -> bool {
    key == "head" || key == "crypt" || key.starts_with("log/") || key.starts_with("snap/")
}

impl SqlBackend {
    /// Whether the object holds a tenant store, on either API, without
    /// opening it (no key needed): a tenant that already has data when
    /// sharding is turned on keeps it all in this, its home object.
    pub async fn holds_data(storage: &Storage, meter: Rc<Meter>) -> Result<bool> {
        let sql = Sql { sql: storage.sql(), meter };
        let tables = sql.run("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'em_kv'", vec![])?;
        if !tables.is_empty() && !sql.run("SELECT 1 FROM em_kv LIMIT 1", vec![])?.is_empty() {
            return Ok(true);
        }
        for prefix in STORE_KV_PREFIXES {
            let map: Map = storage.list_with_options(ListOptions::new().prefix(prefix).limit(1)).await.map_err(|e| sql_err("kv list", e))?;
            if map.size() > 0 {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Bytes of the object's SQLite database (Cloudflare caps an object at
    /// 10 GB).
    pub fn database_bytes(storage: &Storage) -> u64 {
        storage.sql().database_size() as u64
    }

    fn whole(&self) -> Result<()> {
        if self.wiped.get() {
            return Err(Error::storage("an erasure was interrupted after deleteAll(); the object reopens from its stash"));
        }
        Ok(())
    }
}

impl Backend for SqlBackend {
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.whole()?;
        let mut rows = self.sql.run("SELECT v FROM em_kv WHERE k = ?", vec![key.into()])?;
        match rows.pop().and_then(|mut r| r.pop()) {
            Some(v) => blob(v).map(Some),
            None => Ok(None),
        }
    }

    async fn put(&self, key: &str, value: Vec<u8>) -> Result<()> {
        self.whole()?;
        self.sql.put(key, &value)
    }

    async fn delete(&self, keys: &[String]) -> Result<()> {
        self.whole()?;
        for batch in keys.chunks(limits::SQL_BINDINGS_MAX) {
            let marks = vec!["?"; batch.len()].join(", ");
            self.sql.run(&format!("DELETE FROM em_kv WHERE k IN ({marks})"), batch.iter().map(|k| JsValue::from_str(k)).collect())?;
        }
        Ok(())
    }

    async fn list(&self, range: KeyRange<'_>) -> Result<Vec<String>> {
        self.whole()?;
        self.sql.select(&range, false)?.iter().map(|r| r.first().ok_or_else(|| sql_err("list", "no column")).and_then(text)).collect()
    }

    async fn get_range(&self, range: KeyRange<'_>) -> Result<Vec<(String, Vec<u8>)>> {
        self.whole()?;
        let rows = self.sql.select(&range, true)?;
        rows.into_iter()
            .map(|mut r| {
                let v = r.pop().ok_or_else(|| sql_err("get_range", "no value"))?;
                let k = r.pop().ok_or_else(|| sql_err("get_range", "no key"))?;
                Ok((text(&k)?, blob(v)?))
            })
            .collect()
    }

    /// SQLite keeps deleted bytes in free pages and its write-ahead log.
    fn deletes_leave_bytes(&self) -> bool {
        true
    }

    async fn commit_head(&self, key: &str, value: &[u8], retire: &[KeyRange<'_>]) -> Result<bool> {
        self.whole()?;
        let ranges: Vec<(String, String, Option<String>)> = retire.iter().map(|r| (r.prefix.to_owned(), r.start.to_owned(), r.end.map(str::to_owned))).collect();
        let (key, value) = (key.to_owned(), value.to_vec());
        self.transaction(move |sql| {
            for (prefix, start, end) in &ranges {
                sql.delete_range(&KeyRange { prefix, start, end: end.as_deref(), limit: usize::MAX })?;
            }
            sql.put(&key, &value)
        })?;
        Ok(true)
    }

    /// Stash, then `deleteAll()` (the only call that drops deleted bytes),
    /// then the replacement and the marker in one transaction, then clear
    /// the stash. A crash after `deleteAll()` leaves an object with no
    /// marker, which the next open restores from the stash.
    async fn replace_all(&self, entries: Vec<(String, Vec<u8>)>) -> Result<()> {
        let stash = self.stash.as_ref().ok_or_else(|| Error::StoreUnsuitable { detail: "an erasure needs the tenant's stash (a request names it)".into() })?;
        self.whole()?;
        stash.call("put", Some(encode_entries(&entries)?)).await?;
        let wiped = self.storage.as_raw().delete_all().map_err(|e| sql_err("deleteAll", e))?;
        // From here until the commit, only the stash holds the state.
        self.wiped.set(true);
        wasm_bindgen_futures::JsFuture::from(wiped).await.map_err(|e| sql_err("deleteAll", e))?;
        if self.fail_after_delete_all {
            return Err(Error::storage("injected fault after deleteAll()"));
        }
        self.sql.run(SCHEMA, vec![])?;
        self.transaction(move |sql| {
            for (key, value) in &entries {
                sql.put(key, value)?;
            }
            // `deleteAll()` also emptied the key-value API.
            sql.mark_all()
        })?;
        self.wiped.set(false);
        stash.call("clear", None).await.map(drop)
    }
}

/// `[u32 key length][key][u32 value length][value]`, repeated: a
/// replacement on its way to the stash.
fn encode_entries(entries: &[(String, Vec<u8>)]) -> Result<Vec<u8>> {
    let total: usize = entries.iter().map(|(k, v)| 8 + k.len() + v.len()).sum();
    if total > limits::STASH_BYTES_MAX {
        return Err(Error::PayloadTooLarge { what: "stashed replacement".into(), bytes: total as u64, bytes_max: limits::STASH_BYTES_MAX as u64 });
    }
    let mut out = Vec::with_capacity(total);
    for (k, v) in entries {
        out.extend_from_slice(&(k.len() as u32).to_be_bytes());
        out.extend_from_slice(k.as_bytes());
        out.extend_from_slice(&(v.len() as u32).to_be_bytes());
        out.extend_from_slice(v);
    }
    Ok(out)
}

fn decode_entries(mut bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>> {
    let corrupt = || Error::SnapshotCorrupt { reason: "the stash holds a malformed replacement".into() };
    let take = |bytes: &mut &[u8]| -> Result<Vec<u8>> {
        let (len, rest) = bytes.split_first_chunk::<4>().ok_or_else(corrupt)?;
        let len = u32::from_be_bytes(*len) as usize;
        let (v, rest) = rest.split_at_checked(len).ok_or_else(corrupt)?;
        *bytes = rest;
        Ok(v.to_vec())
    };
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let key = String::from_utf8(take(&mut bytes)?).map_err(|_| corrupt())?;
        out.push((key, take(&mut bytes)?));
    }
    Ok(out)
}

/// The stash object's side: `put` replaces what it holds, `get` returns
/// it (empty when nothing is stashed), `clear` drops it with `deleteAll()`,
/// so no replacement outlives the erasure it served.
pub async fn serve_stash(state: &worker::State, op: &str, body: Vec<u8>) -> Result<Vec<u8>> {
    let storage = state.storage();
    let sql = Sql { sql: storage.sql(), meter: Rc::new(Meter::default()) };
    match op {
        "put" => {
            decode_entries(&body)?;
            let wiped = storage.as_raw().delete_all().map_err(|e| sql_err("deleteAll", e))?;
            wasm_bindgen_futures::JsFuture::from(wiped).await.map_err(|e| sql_err("deleteAll", e))?;
            sql.run("CREATE TABLE IF NOT EXISTS em_stash (part INTEGER PRIMARY KEY, v BLOB NOT NULL)", vec![])?;
            // Rows hold at most 2 MB: the encoding goes in parts.
            for (i, part) in body.chunks(limits::SNAPSHOT_CHUNK_BYTES_DEFAULT).enumerate() {
                sql.run("INSERT INTO em_stash (part, v) VALUES (?, ?)", vec![JsValue::from(i as f64), Uint8Array::from(part).into()])?;
            }
            Ok(Vec::new())
        }
        "get" => {
            // Asked once by every new tenant: reads only, so no stash object
            // is stored for tenants that never erased anything.
            if sql.run("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'em_stash'", vec![])?.is_empty() {
                return Ok(Vec::new());
            }
            let mut out = Vec::new();
            for mut row in sql.run("SELECT v FROM em_stash ORDER BY part", vec![])? {
                out.extend(blob(row.pop().ok_or_else(|| sql_err("stash", "no value"))?)?);
            }
            Ok(out)
        }
        "clear" => {
            let wiped = storage.as_raw().delete_all().map_err(|e| sql_err("deleteAll", e))?;
            wasm_bindgen_futures::JsFuture::from(wiped).await.map_err(|e| sql_err("deleteAll", e))?;
            Ok(Vec::new())
        }
        _ => Err(Error::not_found("stash op", op)),
    }
}

/// A sharded import's part, staged in this shard's database a chunk at a
/// time (issue 21) so that neither the front nor the shard holds a file
/// past [`limits::IMPORT_BYTES_MAX`]; the part itself is at most that.
/// One import is staged at a time: chunk 0 of another drops the last.
pub mod staged {
    use super::*;

    const TABLE: &str = "CREATE TABLE IF NOT EXISTS em_import (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, v BLOB NOT NULL)";

    /// Stores chunk `seq` of import `id` (its rows counted by `meter`).
    pub fn put(state: &worker::State, meter: Rc<Meter>, id: &str, seq: u64, chunk: &[u8]) -> Result<()> {
        let sql = Sql { sql: state.storage().sql(), meter };
        sql.run(TABLE, vec![])?;
        if seq == 0 {
            sql.run("DELETE FROM em_import", vec![])?;
        }
        let held = sql.run("SELECT count(*), coalesce(sum(length(v)), 0), coalesce(min(id), ?) FROM em_import", vec![id.into()])?;
        let row = held.first().ok_or_else(|| sql_err("staged import", "no row"))?;
        let number = |v: &SqlStorageValue| match v {
            SqlStorageValue::Integer(n) => *n as u64,
            SqlStorageValue::Float(f) => *f as u64,
            _ => 0,
        };
        let (count, bytes) = (number(&row[0]), number(&row[1]));
        if !matches!(&row[2], SqlStorageValue::String(s) if s == id) || count != seq {
            // Another import began here meanwhile: one at a time.
            return Err(Error::Overloaded { what: "imports staged in one shard at once".into(), limit: 1 });
        }
        let total = bytes.saturating_add(chunk.len() as u64);
        if total > limits::IMPORT_BYTES_MAX as u64 {
            sql.run("DELETE FROM em_import", vec![])?;
            return Err(Error::PayloadTooLarge { what: "one shard's part of an import".into(), bytes: total, bytes_max: limits::IMPORT_BYTES_MAX as u64 });
        }
        sql.run("INSERT INTO em_import (seq, id, v) VALUES (?, ?, ?)", vec![JsValue::from(seq as f64), id.into(), Uint8Array::from(chunk).into()]).map(drop)
    }

    /// Import `id`'s part, its `chunks` chunks in order (refused if this
    /// shard holds another import or fewer chunks).
    pub fn get(state: &worker::State, meter: Rc<Meter>, id: &str, chunks: u64) -> Result<Vec<u8>> {
        let sql = Sql { sql: state.storage().sql(), meter };
        sql.run(TABLE, vec![])?;
        let rows = sql.run("SELECT v FROM em_import WHERE id = ? ORDER BY seq", vec![id.into()])?;
        if rows.len() as u64 != chunks {
            // Another import replaced this one's part.
            return Err(Error::Overloaded { what: "imports staged in one shard at once".into(), limit: 1 });
        }
        let mut out = Vec::new();
        for mut row in rows {
            out.extend(blob(row.pop().ok_or_else(|| sql_err("staged import", "no value"))?)?);
        }
        Ok(out)
    }

    /// Drops what is staged.
    pub fn clear(state: &worker::State, meter: Rc<Meter>) -> Result<()> {
        let sql = Sql { sql: state.storage().sql(), meter };
        sql.run("DROP TABLE IF EXISTS em_import", vec![]).map(drop)
    }
}
