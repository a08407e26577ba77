"""Drives an edgemem Worker through Redis Agent Memory Server's own Python
client, agent-memory-client 0.14.0, used exactly as its users call it.

    python client_test.py --url http://127.0.0.1:8787 --part working|long-term|all

Each check prints `ok <name>` or `FAIL <name>: <reason>`; a failure is
followed by indented lines with the HTTP exchanges of that check. The exit
status is 1 if any check failed.

The expectations are AMS's own behaviour (server 0.15, the version this
client talks to), read from its source. Where 0.14.0 cannot express a request
(search modes, an explicit `dry_run=false`), the check sends the exact request
the next client (0.14.1) sends, through the client's own HTTP session, and
parses the answer with the client's models; those checks say so in their name.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import traceback
import uuid
import warnings
from datetime import datetime, timedelta, timezone
from typing import Any, Awaitable, Callable

from agent_memory_client import (
    ForgetPolicy,
    ForgetResponse,
    MemoryAPIClient,
    MemoryClientConfig,
    MemoryNotFoundError,
    __version__ as CLIENT_VERSION,
)
from agent_memory_client.filters import CreatedAt, MemoryType, Topics, UserId
from agent_memory_client.models import (
    ClientMemoryRecord,
    MemoryMessage,
    MemoryRecordResults,
    WorkingMemory,
)

# get_working_memory is deprecated in favour of get_or_create, but it is the
# client's only call that reports a missing session as MemoryNotFoundError.
warnings.filterwarnings("ignore", category=DeprecationWarning)

EXPECTED_CLIENT_VERSION = "0.14.0"
# AMS's default `summarization_threshold`: context_percentage_until_summarization
# is tokens / (window * threshold).
AMS_SUMMARIZATION_THRESHOLD = 0.7
# A window small enough that the conversation below crosses the threshold.
SMALL_WINDOW_TOKENS = 500
SUMMARIZED_TURNS = 30
# AMS indexes long-term memories in a background task; a reader may wait this long.
INDEX_WAIT_S = 5.0
# How much of each HTTP body a failure report shows.
TRACE_BODY_CHARS = 700

NOW = datetime.now(timezone.utc)
RUN = uuid.uuid4().hex[:8]


def ago(**kw: float) -> datetime:
    return NOW - timedelta(**kw)


class Trace:
    """Records the HTTP exchanges of the current check, for failure reports."""

    def __init__(self) -> None:
        self.exchanges: list[list[str]] = []

    async def on_request(self, request: Any) -> None:
        body = request.content.decode("utf-8", "replace") if request.content else ""
        self.exchanges.append([f"> {request.method} {request.url}", f"> {body[:TRACE_BODY_CHARS]}"])

    async def on_response(self, response: Any) -> None:
        await response.aread()
        if self.exchanges:
            self.exchanges[-1].append(f"< {response.status_code} {response.text[:TRACE_BODY_CHARS]}")

    def attach(self, client: MemoryAPIClient) -> None:
        # Instrumentation only: the hooks observe the client's own requests.
        client._client.event_hooks = {"request": [self.on_request], "response": [self.on_response]}


class Runner:
    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.failed = 0
        self.passed = 0

    async def check(self, name: str, fn: Callable[[], Awaitable[None]]) -> bool:
        assert ": " not in name, f"check names must not hold ': ' (the reason separator): {name}"
        self.trace.exchanges = []
        try:
            await fn()
        except AssertionError as e:
            self.fail(name, str(e) or "assertion failed")
            return False
        except Exception as e:  # noqa: BLE001 - every error is a failed check
            self.fail(name, f"{type(e).__name__}: {e}")
            if not isinstance(e, MemoryNotFoundError) and getattr(e, "status_code", None) is None:
                tb = traceback.extract_tb(e.__traceback__)
                here = [f for f in tb if f.filename.endswith("client_test.py")]
                if here:
                    print(f"    at line {here[-1].lineno}: {here[-1].line}")
            return False
        self.passed += 1
        print(f"ok {name}", flush=True)
        return True

    def fail(self, name: str, reason: str) -> None:
        self.failed += 1
        print(f"FAIL {name}: {' '.join(reason.split())}", flush=True)
        for ex in self.trace.exchanges[-3:]:
            for line in ex:
                print(f"    {line}")
        sys.stdout.flush()


def eq(actual: Any, expected: Any, what: str) -> None:
    assert actual == expected, f"{what}: expected {expected!r}, got {actual!r}"


def msg_text(m: dict[str, Any]) -> str:
    """The text of a prompt message, in AMS's MCP shape or as a plain string."""
    c = m.get("content")
    if isinstance(c, dict):
        return str(c.get("text"))
    return str(c)


def close_in_time(a: datetime, b: datetime, tolerance_s: float = 1.0) -> bool:
    if a.tzinfo is None:
        a = a.replace(tzinfo=timezone.utc)
    if b.tzinfo is None:
        b = b.replace(tzinfo=timezone.utc)
    return abs((a - b).total_seconds()) <= tolerance_s


def conversation(n: int, start: datetime, words: int) -> list[MemoryMessage]:
    """n alternating turns with distinct content, `words` words each."""
    out = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        filler = " ".join(f"w{i}x{j}" for j in range(words))
        out.append(
            MemoryMessage(
                role=role,
                content=f"Turn {i} about the warehouse in Ohio: {filler}.",
                created_at=start + timedelta(seconds=i),
            )
        )
    return out


# ---------------------------------------------------------------- working


async def working_part(c: MemoryAPIClient, r: Runner, ns: str) -> None:
    user = f"user-{RUN}"
    sid = f"chat-{RUN}"
    sessions_in_ns: set[str] = set()
    first_turns = [
        MemoryMessage(role="user", content="Hi, I am planning a trip to Lisbon.", created_at=ago(seconds=30)),
        MemoryMessage(role="assistant", content="Great! When are you travelling?", created_at=ago(seconds=20)),
        MemoryMessage(role="user", content="In March, for a conference.", created_at=ago(seconds=10)),
    ]
    data = {"trip": {"city": "Lisbon", "nights": 4}, "budget_eur": 900, "tags": ["work", "conference"]}

    async def health() -> None:
        h = await c.health_check()
        skew_ms = abs(h.now - time.time() * 1000)
        assert skew_ms < 300_000, f"now={h.now} is not the current time in milliseconds (off by {skew_ms:.0f} ms)"

    async def create_new() -> None:
        created, mem = await c.get_or_create_working_memory(sid, user_id=user)
        sessions_in_ns.add(sid)
        eq(created, True, "created")
        eq(mem.session_id, sid, "session_id")
        eq(mem.messages, [], "messages")
        eq(mem.namespace, ns, "namespace")
        eq(mem.user_id, user, "user_id")

    async def create_again() -> None:
        created, mem = await c.get_or_create_working_memory(sid, user_id=user)
        eq(created, False, "created")
        eq(mem.session_id, sid, "session_id")

    async def put() -> None:
        wm = WorkingMemory(session_id=sid, messages=first_turns, data=data, user_id=user)
        resp = await c.put_working_memory(sid, wm, user_id=user)
        eq([(m.role, m.content) for m in resp.messages], [(m.role, m.content) for m in first_turns], "messages")
        eq([m.id for m in resp.messages], [m.id for m in first_turns], "message ids")
        eq(resp.data, data, "data")
        eq(resp.namespace, ns, "namespace")
        eq(resp.user_id, user, "user_id")
        assert not resp.context, f"context should be empty, got {resp.context!r}"

    async def put_percentages_null_without_model() -> None:
        # AMS: both fields are null unless model_name or context_window_max is given.
        wm = WorkingMemory(session_id=sid, messages=first_turns, data=data, user_id=user)
        resp = await c.put_working_memory(sid, wm, user_id=user)
        eq(resp.context_percentage_total_used, None, "context_percentage_total_used")
        eq(resp.context_percentage_until_summarization, None, "context_percentage_until_summarization")

    async def get() -> None:
        created, mem = await c.get_or_create_working_memory(sid, user_id=user)
        eq(created, False, "created")
        eq([(m.role, m.content, m.id) for m in mem.messages], [(m.role, m.content, m.id) for m in first_turns], "messages")
        for got, sent in zip(mem.messages, first_turns):
            assert close_in_time(got.created_at, sent.created_at, 0.001), f"created_at {got.created_at} != sent {sent.created_at}"
        eq(mem.data, data, "data")

    async def list_sessions() -> None:
        page = await c.list_sessions()  # the client adds its default namespace
        eq(set(page.sessions), sessions_in_ns, "sessions in the client's namespace")
        eq(page.total, len(sessions_in_ns), "total")

    async def list_other_namespace() -> None:
        page = await c.list_sessions(namespace=f"{ns}-other")
        assert sid not in page.sessions, f"{sid} listed under another namespace: {page.sessions}"
        eq(page.total, 0, "total in an unused namespace")

    async def list_by_user() -> None:
        mine = await c.list_sessions(user_id=user)
        assert sid in mine.sessions, f"{sid} not listed for user_id={user}: {mine.sessions}"
        other = await c.list_sessions(user_id=f"nobody-{RUN}")
        assert sid not in other.sessions, f"{sid} listed for another user_id: {other.sessions}"

    async def prompt_session() -> None:
        query = "Which city am I going to?"
        p = await c.memory_prompt(query=query, session_id=sid, user_id=user)
        msgs = p["messages"]
        got = [(m["role"], msg_text(m)) for m in msgs]
        want = [(m.role, m.content) for m in first_turns] + [("user", query)]
        eq(got, want, "prompt messages (session turns in order, then the query)")

    async def prompt_shape() -> None:
        p = await c.memory_prompt(query="shape?", session_id=sid, user_id=user)
        for m in p["messages"]:
            content = m.get("content")
            assert isinstance(content, dict) and content.get("type") == "text" and isinstance(content.get("text"), str), (
                f"AMS sends MCP content objects {{type: 'text', text}}; got {content!r}"
            )

    async def prompt_unknown_session() -> None:
        # AMS answers with an empty history (and stores nothing).
        p = await c.memory_prompt(query="Anyone there?", session_id=f"never-{RUN}")
        eq([(m["role"], msg_text(m)) for m in p["messages"]], [("user", "Anyone there?")], "messages")

    async def put_with_model_name() -> None:
        msid = f"model-{RUN}"
        sessions_in_ns.add(msid)
        turns = conversation(4, ago(minutes=5), 10)
        resp = await c.put_working_memory(msid, WorkingMemory(session_id=msid, messages=turns), model_name="gpt-4o-mini")
        eq(len(resp.messages), 4, "messages kept (far below a 128k window)")
        assert not resp.context, f"no summary expected, got {resp.context!r}"
        total, until = resp.context_percentage_total_used, resp.context_percentage_until_summarization
        assert total is not None and until is not None, f"percentages missing: total={total} until={until}"
        assert 0 < total < 1, f"4 short turns in gpt-4o-mini's 128k window should be under 1%, got {total}"
        assert total < until < 2, f"until_summarization={until} should be total/{AMS_SUMMARIZATION_THRESHOLD}"

    ssid = f"long-{RUN}"
    turns = conversation(SUMMARIZED_TURNS, ago(hours=1), 10)
    summarized: dict[str, Any] = {}

    async def summarize_on_put() -> None:
        sessions_in_ns.add(ssid)
        wm = WorkingMemory(session_id=ssid, messages=turns, user_id=user)
        resp = await c.put_working_memory(ssid, wm, user_id=user, context_window_max=SMALL_WINDOW_TOKENS)
        summarized["resp"] = resp
        assert resp.context and resp.context.strip(), f"no running summary (context={resp.context!r})"
        n = len(resp.messages)
        assert 0 < n < SUMMARIZED_TURNS, f"{n} of {SUMMARIZED_TURNS} messages kept"
        # The newest turns stay verbatim, in order.
        eq([m.id for m in resp.messages], [m.id for m in turns[-n:]], "kept messages are the newest, in order")
        eq([m.content for m in resp.messages], [m.content for m in turns[-n:]], "kept messages verbatim")

    async def summarize_percentages() -> None:
        resp = summarized.get("resp")
        assert resp is not None, "no summarized PUT to inspect"
        total, until = resp.context_percentage_total_used, resp.context_percentage_until_summarization
        assert total is not None and until is not None, f"percentages missing: total={total} until={until}"
        assert 0 < total <= 100 and 0 < until <= 100, f"out of range: total={total} until={until}"
        # After compaction the history is back under the threshold.
        assert until < 100, f"until_summarization={until}: history still at the threshold after summarizing"
        ratio = total / until
        assert abs(ratio - AMS_SUMMARIZATION_THRESHOLD) < 0.01, (
            f"total/until = {ratio:.3f}, AMS's threshold is {AMS_SUMMARIZATION_THRESHOLD} (total={total}, until={until})"
        )

    async def get_after_summarize() -> None:
        resp = summarized.get("resp")
        assert resp is not None, "no summarized PUT to compare with"
        created, mem = await c.get_or_create_working_memory(ssid, user_id=user, context_window_max=SMALL_WINDOW_TOKENS)
        eq(created, False, "created")
        eq(mem.context, resp.context, "context (running summary) persisted")
        eq([m.id for m in mem.messages], [m.id for m in resp.messages], "messages persisted after summarization")
        total = getattr(mem, "context_percentage_total_used", None)
        until = getattr(mem, "context_percentage_until_summarization", None)
        assert total is not None and until is not None, f"GET with context_window_max lacks percentages: total={total} until={until}"
        assert abs(total - resp.context_percentage_total_used) < 1e-6, f"GET total={total} != PUT total={resp.context_percentage_total_used}"

    async def prompt_summary_first() -> None:
        resp = summarized.get("resp")
        assert resp is not None and resp.context, "no summarized session"
        p = await c.memory_prompt(query="What about Ohio?", session_id=ssid, user_id=user)
        msgs = p["messages"]
        assert msgs and msgs[0]["role"] == "system", f"first message should be the summary (system), got {msgs[:1]}"
        assert resp.context in msg_text(msgs[0]), f"summary message does not hold the context: {msg_text(msgs[0])[:200]!r}"
        eq([msg_text(m) for m in msgs[1:-1]], [m.content for m in resp.messages], "kept turns after the summary")
        eq((msgs[-1]["role"], msg_text(msgs[-1])), ("user", "What about Ohio?"), "last message")

    async def delete() -> None:
        ack = await c.delete_working_memory(sid, user_id=user)
        eq(ack.status, "ok", "status")
        sessions_in_ns.discard(sid)
        try:
            await c.get_working_memory(sid, user_id=user)
        except MemoryNotFoundError:
            pass
        else:
            raise AssertionError("session still readable after delete")
        page = await c.list_sessions()
        assert sid not in page.sessions, f"deleted session still listed: {page.sessions}"

    async def missing_404() -> None:
        try:
            await c.get_working_memory(f"missing-{RUN}")
        except MemoryNotFoundError:
            return
        raise AssertionError("no MemoryNotFoundError for a missing session")

    for name, fn in [
        ("working/health", health),
        ("working/get_or_create creates a new session", create_new),
        ("working/get_or_create finds it again", create_again),
        ("working/put messages and data", put),
        ("working/put without model info leaves context_percentage_* null", put_percentages_null_without_model),
        ("working/get returns messages in order and data", get),
        ("working/list sessions in the client's namespace", list_sessions),
        ("working/list sessions of another namespace excludes it", list_other_namespace),
        ("working/list sessions filtered by user_id", list_by_user),
        ("working/memory_prompt with a session has its turns in order, query last", prompt_session),
        ("working/memory_prompt messages in AMS's shape", prompt_shape),
        ("working/memory_prompt of an unknown session is only the query", prompt_unknown_session),
        ("working/put with model_name reports percentages, no summary", put_with_model_name),
        ("working/put over the window summarizes", summarize_on_put),
        ("working/put over the window reports plausible context_percentage_*", summarize_percentages),
        ("working/get after summarization", get_after_summarize),
        ("working/memory_prompt puts the summary first", prompt_summary_first),
        ("working/delete", delete),
        ("working/missing session raises MemoryNotFoundError", missing_404),
    ]:
        await r.check(name, fn)


# ---------------------------------------------------------------- long-term


async def long_term_part(c: MemoryAPIClient, r: Runner, ns: str) -> None:
    user, other = f"lt-user-{RUN}", f"lt-other-{RUN}"

    def rec(key: str, text: str, **kw: Any) -> ClientMemoryRecord:
        return ClientMemoryRecord(id=f"{key}-{RUN}", text=text, **kw)

    kitchen = rec("kitchen", "The user painted the kitchen teal last spring; teal is their favourite colour.",
                  topics=["preferences", "home"], entities=["kitchen"], user_id=user, memory_type="semantic",
                  created_at=ago(days=2), last_accessed=ago(days=2))
    peanuts = rec("peanuts", "The user is allergic to peanuts and avoids satay dishes.",
                  topics=["health", "food"], entities=["peanuts"], user_id=user, memory_type="semantic",
                  created_at=ago(days=10), last_accessed=ago(days=10))
    lisbon = rec("lisbon", "The user flew to Lisbon for a conference about distributed databases.",
                 topics=["travel", "work"], entities=["Lisbon"], user_id=user, memory_type="episodic",
                 created_at=ago(days=40), last_accessed=ago(days=40), event_date=ago(days=41))
    darkmode = rec("darkmode", "The user prefers dark mode in every code editor.",
                   topics=["preferences", "ui"], entities=["editor"], user_id=other, memory_type="semantic",
                   created_at=ago(days=1), last_accessed=ago(days=1))
    bicycle = rec("bicycle", "The user once owned a red bicycle.",
                  topics=["misc"], user_id=user, memory_type="semantic",
                  created_at=ago(days=400), last_accessed=ago(days=400))
    dog = rec("dog", "The user's childhood dog was called Biscuit.",
              topics=["misc"], user_id=user, memory_type="semantic",
              created_at=ago(days=400), last_accessed=ago(days=400))
    records = [kitchen, peanuts, lisbon, darkmode, bicycle, dog]

    async def get_or_none(mid: str) -> Any:
        try:
            return await c.get_long_term_memory(mid)
        except MemoryNotFoundError:
            return None

    async def search_ids(text: str, **kw: Any) -> list[str]:
        res = await c.search_long_term_memory(text=text, limit=10, **kw)
        return [m.id for m in res.memories]

    async def search_as_0_14_1(text: str, mode: str, **extra: Any) -> tuple[MemoryRecordResults, dict[str, Any]]:
        # 0.14.0 has no search_mode; this is the body 0.14.1's search_long_term_memory sends.
        body = {"text": text, "limit": 10, "offset": 0, "namespace": {"eq": ns}, "search_mode": mode, **extra}
        resp = await c._client.post("/v1/long-term-memory/search", json=body, params={"optimize_query": "false"})
        if resp.status_code >= 400:
            c._handle_http_error(resp)
        raw = resp.json()
        return MemoryRecordResults(**raw), raw

    async def create() -> None:
        ack = await c.create_long_term_memory(records)
        eq(ack.status, "ok", "status")
        deadline = time.monotonic() + INDEX_WAIT_S
        missing = [m.id for m in records]
        while missing and time.monotonic() < deadline:
            missing = [mid for mid in missing if await get_or_none(mid) is None]
            if missing:
                await asyncio.sleep(0.2)
        assert not missing, f"not readable {INDEX_WAIT_S}s after create: {missing}"

    async def get_by_id() -> None:
        m = await c.get_long_term_memory(lisbon.id)
        eq(m.id, lisbon.id, "id")
        eq(m.text, lisbon.text, "text")
        eq(sorted(m.topics or []), sorted(lisbon.topics or []), "topics")
        eq(sorted(m.entities or []), sorted(lisbon.entities or []), "entities")
        eq(m.user_id, user, "user_id")
        eq(m.namespace, ns, "namespace")
        eq(m.memory_type.value, "episodic", "memory_type")
        assert close_in_time(m.created_at, lisbon.created_at), f"created_at {m.created_at} != sent {lisbon.created_at}"
        assert m.event_date and close_in_time(m.event_date, lisbon.event_date), f"event_date {m.event_date}"

    async def get_missing() -> None:
        try:
            await c.get_long_term_memory(f"nope-{RUN}")
        except MemoryNotFoundError:
            return
        raise AssertionError("no MemoryNotFoundError for a missing memory id")

    async def semantic_obvious() -> None:
        res = await c.search_long_term_memory(text="what colour did they paint the kitchen", limit=10)
        ids = [m.id for m in res.memories]
        assert ids and ids[0] == kitchen.id, f"expected {kitchen.id} first, got {ids}"
        assert all(isinstance(m.dist, float) for m in res.memories), "dist missing"
        eq(res.total >= len(ids), True, f"total {res.total} >= {len(ids)} returned")

    async def semantic_user_filter() -> None:
        ids = await search_ids("code editor colour scheme preferences", user_id=UserId(eq=other))
        eq(ids, [darkmode.id], "only the other user's memory")

    async def semantic_topics_any() -> None:
        ids = await search_ids("preferences", topics=Topics(any=["preferences"]))
        eq(set(ids), {kitchen.id, darkmode.id}, "records with topic 'preferences'")

    async def semantic_type_eq() -> None:
        ids = await search_ids("trip", memory_type=MemoryType(eq="episodic"))
        eq(ids, [lisbon.id], "episodic records")

    async def semantic_created_range() -> None:
        ids = await search_ids("user", created_at=CreatedAt(gte=ago(days=15), lte=ago(hours=36)))
        eq(set(ids), {kitchen.id, peanuts.id}, "records created between 15 and 1.5 days ago")

    async def semantic_combined() -> None:
        ids = await search_ids("peanut allergy", topics=Topics(any=["health", "preferences"]), user_id=UserId(eq=user))
        eq(set(ids), {kitchen.id, peanuts.id}, "topics any [health, preferences] and user_id")
        eq(ids[0], peanuts.id, "the allergy record first")

    async def keyword() -> None:
        res, raw = await search_as_0_14_1("peanuts satay", "keyword")
        eq([m.id for m in res.memories], [peanuts.id], "only the record holding the words")
        first = raw["memories"][0]
        assert isinstance(first.get("score"), (int, float)), f"no score field: {sorted(first)}"
        eq(first.get("score_type"), "keyword", "score_type")

    async def keyword_filtered() -> None:
        res, _ = await search_as_0_14_1("user", "keyword", user_id={"eq": other})
        eq([m.id for m in res.memories], [darkmode.id], "keyword hits of the other user only")

    async def hybrid() -> None:
        res, raw = await search_as_0_14_1("Lisbon conference", "hybrid", hybrid_alpha=0.5)
        ids = [m.id for m in res.memories]
        assert ids and ids[0] == lisbon.id, f"expected {lisbon.id} first, got {ids}"
        eq(raw["memories"][0].get("score_type"), "hybrid", "score_type")

    async def hybrid_filtered() -> None:
        res, _ = await search_as_0_14_1("user preferences", "hybrid", topics={"any": ["preferences"]},
                                        user_id={"eq": user})
        eq([m.id for m in res.memories], [kitchen.id], "hybrid with topics and user_id filters")

    async def edit() -> None:
        new_text = "The user repainted the kitchen sage green; sage is now their favourite colour."
        m = await c.edit_long_term_memory(kitchen.id, {"text": new_text, "topics": ["preferences", "home", "colour"]})
        eq(m.id, kitchen.id, "id")
        eq(m.text, new_text, "text")
        eq(sorted(m.topics or []), ["colour", "home", "preferences"], "topics")
        assert m.updated_at > m.created_at, f"updated_at {m.updated_at} not after created_at {m.created_at}"
        again = await c.get_long_term_memory(kitchen.id)
        eq(again.text, new_text, "text read back")
        ids = await search_ids("sage green kitchen", topics=Topics(any=["colour"]))
        eq(ids, [kitchen.id], "the edit is searchable by its new topic")

    async def delete() -> None:
        ack = await c.delete_long_term_memories([peanuts.id])
        assert ack.status.startswith("ok"), f"status {ack.status!r}"
        assert await get_or_none(peanuts.id) is None, "still readable after delete"
        ids = await search_ids("peanuts satay allergy")
        assert peanuts.id not in ids, f"deleted record still found: {ids}"

    policy = ForgetPolicy(max_age_days=365)
    # After the delete above, this user's live records: kitchen, lisbon, bicycle, dog.
    scanned_expected = 4

    async def forget_dry_run() -> None:
        # The client sends no namespace of its own here; edgemem's tenant is the namespace.
        res = await c.forget_long_term_memories(policy, namespace=ns, user_id=user, dry_run=True, pinned_ids=[dog.id])
        eq(res.dry_run, True, "dry_run")
        eq(set(res.deleted_ids), {bicycle.id}, "would delete the old, unpinned record")
        eq(res.scanned, scanned_expected, "scanned (this user's records)")
        assert await get_or_none(bicycle.id) is not None, "a dry run deleted the record"

    async def forget_without_dry_run_param() -> None:
        # 0.14.0 sends `dry_run` only when true; AMS's server default is true.
        res = await c.forget_long_term_memories(policy, namespace=ns, user_id=user, dry_run=False, pinned_ids=[dog.id])
        eq(res.dry_run, True, "dry_run (AMS defaults to a dry run when the parameter is absent)")
        assert await get_or_none(bicycle.id) is not None, "deleted although the server default is a dry run"

    async def forget_real() -> None:
        # The request 0.14.1 sends for dry_run=False.
        params = {"namespace": ns, "user_id": user, "dry_run": "false"}
        body = {"policy": policy.model_dump(exclude_none=True), "pinned_ids": [dog.id]}
        resp = await c._client.post("/v1/long-term-memory/forget", params=params, json=body)
        if resp.status_code >= 400:
            c._handle_http_error(resp)
        res = ForgetResponse(**resp.json())
        eq(res.dry_run, False, "dry_run")
        eq(res.deleted_ids, [bicycle.id], "deleted_ids")
        eq(res.deleted, 1, "deleted")
        assert await get_or_none(bicycle.id) is None, "forgotten record still readable"
        assert await get_or_none(dog.id) is not None, "pinned record was forgotten"

    async def prompt_long_term() -> None:
        query = "Where did the user fly for the conference?"
        p = await c.memory_prompt(query=query, long_term_search={"user_id": {"eq": user}, "limit": 3})
        msgs = p["messages"]
        eq((msgs[-1]["role"], msg_text(msgs[-1])), ("user", query), "last message")
        system = [msg_text(m) for m in msgs if m["role"] == "system"]
        assert len(system) == 1, f"expected one long-term system message, got {len(system)}"
        assert lisbon.text in system[0] and lisbon.id in system[0], f"Lisbon memory missing: {system[0][:300]!r}"
        assert darkmode.text not in system[0], "another user's memory leaked into the prompt"
        ltm = p.get("long_term_memories") or []
        assert ltm and ltm[0]["id"] == lisbon.id, f"long_term_memories should rank {lisbon.id} first: {[m.get('id') for m in ltm]}"

    async def prompt_session_and_long_term() -> None:
        sid = f"lt-chat-{RUN}"
        turns = [
            MemoryMessage(role="user", content="I need a restaurant tonight.", created_at=ago(seconds=20)),
            MemoryMessage(role="assistant", content="Any dietary needs?", created_at=ago(seconds=10)),
        ]
        await c.put_working_memory(sid, WorkingMemory(session_id=sid, messages=turns, user_id=user), user_id=user)
        query = "Remind me about my trip to Lisbon"
        p = await c.memory_prompt(query=query, session_id=sid, user_id=user,
                                  long_term_search={"topics": {"any": ["travel"]}, "limit": 5})
        got = [(m["role"], msg_text(m)) for m in p["messages"]]
        eq(got[:2], [(t.role, t.content) for t in turns], "session turns first")
        eq(got[-1], ("user", query), "query last")
        eq(len(got), 4, "turns, one long-term system message, query")
        eq(got[2][0], "system", "long-term memories as a system message")
        assert lisbon.text in got[2][1], f"Lisbon memory missing: {got[2][1][:300]!r}"
        await c.delete_working_memory(sid)

    async def prompt_keyword_mode() -> None:
        # long_term_search is AMS's SearchRequest, so 0.14.0 can pick the mode here.
        p = await c.memory_prompt(query="Biscuit", long_term_search={"search_mode": "keyword", "user_id": {"eq": user}})
        ltm = p.get("long_term_memories") or []
        eq([m["id"] for m in ltm], [dog.id], "keyword hits in the prompt")

    for name, fn in [
        ("long-term/create", create),
        ("long-term/get by id", get_by_id),
        ("long-term/get missing raises MemoryNotFoundError", get_missing),
        ("long-term/search semantic ranks the obvious record first", semantic_obvious),
        ("long-term/search semantic with user_id eq", semantic_user_filter),
        ("long-term/search semantic with topics any", semantic_topics_any),
        ("long-term/search semantic with memory_type eq", semantic_type_eq),
        ("long-term/search semantic with a created_at range", semantic_created_range),
        ("long-term/search semantic with topics and user_id together", semantic_combined),
        ("long-term/search keyword (0.14.1 request)", keyword),
        ("long-term/search keyword with user_id filter (0.14.1 request)", keyword_filtered),
        ("long-term/search hybrid (0.14.1 request)", hybrid),
        ("long-term/search hybrid with filters (0.14.1 request)", hybrid_filtered),
        ("long-term/memory_prompt with long_term_search", prompt_long_term),
        ("long-term/memory_prompt with a session and long_term_search", prompt_session_and_long_term),
        ("long-term/memory_prompt long_term_search in keyword mode", prompt_keyword_mode),
        ("long-term/edit", edit),
        ("long-term/delete", delete),
        ("long-term/forget dry run", forget_dry_run),
        ("long-term/forget dry_run=False via 0.14.0 is a dry run (AMS default)", forget_without_dry_run_param),
        ("long-term/forget for real (0.14.1 request)", forget_real),
    ]:
        await r.check(name, fn)


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="the Worker's base URL, e.g. http://127.0.0.1:8787")
    ap.add_argument("--part", choices=["working", "long-term", "all"], default="all")
    args = ap.parse_args()
    if CLIENT_VERSION != EXPECTED_CLIENT_VERSION:
        print(f"FAIL setup: agent-memory-client {CLIENT_VERSION} installed, {EXPECTED_CLIENT_VERSION} expected")
        return 1

    ns = f"ams-{RUN}"
    trace = Trace()
    runner = Runner(trace)
    config = MemoryClientConfig(base_url=args.url.rstrip("/"), timeout=20.0, default_namespace=ns)
    async with MemoryAPIClient(config) as client:
        trace.attach(client)
        if args.part in ("working", "all"):
            await working_part(client, runner, ns)
        if args.part in ("long-term", "all"):
            await long_term_part(client, runner, ns)
    print(f"{runner.passed} passed, {runner.failed} failed")
    return 1 if runner.failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
