"""The long-term part: create, get, search in the three modes with filters,
edit, delete, forget, and `memory_prompt` with `long_term_search`."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from agent_memory_client import ForgetPolicy, ForgetResponse, MemoryAPIClient, MemoryNotFoundError
from agent_memory_client.filters import CreatedAt, MemoryType, Topics, UserId
from agent_memory_client.models import ClientMemoryRecord, MemoryMessage, MemoryRecordResults, WorkingMemory

from harness import RUN, Runner, ago, close_in_time, eq, msg_text

# AMS indexes long-term memories in a background task; a reader may wait this long.
INDEX_WAIT_S = 5.0


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
        # A known id first, so that a missing route cannot pass for a missing record.
        await c.get_long_term_memory(kitchen.id)
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
        assert res.total >= len(ids), f"total {res.total} < {len(ids)} returned"

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

