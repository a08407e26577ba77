"""The working-memory part: sessions, summarization on PUT, the context
gauges and `memory_prompt` with a session, through agent-memory-client."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from agent_memory_client import MemoryAPIClient, MemoryNotFoundError
from agent_memory_client.filters import UserId
from agent_memory_client.models import ClientMemoryRecord, MemoryMessage, MemoryStrategyConfig, WorkingMemory

from harness import RUN, Runner, ago, close_in_time, conversation, eq, msg_text

# AMS's default `summarization_threshold`: context_percentage_until_summarization
# is tokens / (window * threshold).
AMS_SUMMARIZATION_THRESHOLD = 0.7
# A window small enough that the conversation below crosses the threshold.
SMALL_WINDOW_TOKENS = 500
SUMMARIZED_TURNS = 30
# The debounce (EXTRACT_DEBOUNCE_MS) plus the alarm's pass, with room for a loaded machine.
EXTRACTION_WAIT_S = 20.0


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

    async def extraction_strategy() -> None:
        # AMS extracts long-term memories from a session in the background,
        # per its `long_term_memory_strategy`; a client then finds them by
        # searching. edgemem does it on the Durable Object's alarm.
        esid, euser = f"extract-{RUN}", f"extract-user-{RUN}"
        turns = [
            MemoryMessage(role="user", content="Hello!"),
            MemoryMessage(role="user", content="I prefer aisle seats on long flights."),
            MemoryMessage(role="assistant", content="Noted, aisle seats from now on."),
        ]
        wm = WorkingMemory(session_id=esid, messages=turns, user_id=euser, long_term_memory_strategy=MemoryStrategyConfig(strategy="discrete"))
        await c.put_working_memory(esid, wm, user_id=euser)
        deadline = time.time() + EXTRACTION_WAIT_S
        while True:
            res = await c.search_long_term_memory(text="which seats does the user like", user_id=UserId(eq=euser), limit=10)
            if res.memories or time.time() > deadline:
                break
            await asyncio.sleep(0.25)
        texts = [m.text for m in res.memories]
        assert any("aisle" in t.lower() for t in texts), f"no extracted memory about aisle seats within {EXTRACTION_WAIT_S} s: {texts}"
        assert not any("hello" in t.lower() for t in texts), f"a greeting was extracted: {texts}"
        m = next(m for m in res.memories if "aisle" in m.text.lower())
        eq(m.session_id, esid, "session_id")
        eq(m.user_id, euser, "user_id")
        eq(m.extracted_from, [turns[1].id], "extracted_from")

    async def promote() -> None:
        # The client promotes a session's memories by reading the session and
        # creating them in long-term memory.
        psid, puser, pid = f"promote-{RUN}", f"promote-user-{RUN}", f"promo-{RUN}"
        held = ClientMemoryRecord(id=pid, text="The user keeps a sourdough starter called Clint.", user_id=puser, memory_type="semantic", topics=["baking"])
        await c.put_working_memory(psid, WorkingMemory(session_id=psid, messages=[], memories=[held], user_id=puser), user_id=puser)
        ack = await c.promote_working_memories_to_long_term(psid)
        eq(ack.status, "ok", "status")
        got = await c.get_long_term_memory(pid)
        assert "sourdough" in got.text, got.text
        eq(got.user_id, puser, "user_id")
        eq(got.topics, ["baking"], "topics")

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
        ("working/long_term_memory_strategy extracts memories a search finds", extraction_strategy),
        ("working/promote_working_memories_to_long_term", promote),
    ]:
        await r.check(name, fn)

