"""The summary-views part: create, list, get and delete views, run one (a
task, polled with get_task), run and list partitions, a run that fails, and
a continuous view refreshed by the Worker's alarm.

AMS's summary-view calls name no namespace; edgemem's tenants are
namespaces, so the client that makes them carries `?namespace=` on its HTTP
session, as it carries its key (client_test.py)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from agent_memory_client import MemoryAPIClient, MemoryNotFoundError
from agent_memory_client.exceptions import MemoryServerError
from agent_memory_client.models import ClientMemoryRecord, CreateSummaryViewRequest

from harness import RUN, Runner, ago, eq

# AMS indexes long-term memories in a background task; a reader may wait this long.
INDEX_WAIT_S = 5.0
# A continuous view is refreshed a few quiet seconds after a change
# (SUMMARY_VIEW_REFRESH_DELAY_MS) by the Durable Object's alarm.
REFRESH_WAIT_S = 20.0
# More groups than one run summarizes (SUMMARY_VIEW_PARTITIONS_PER_RUN_MAX).
PARTITIONS_PER_RUN_MAX = 32


async def summary_views_part(c: MemoryAPIClient, r: Runner, ns: str) -> None:
    user, other = f"sv-user-{RUN}", f"sv-other-{RUN}"

    def rec(key: str, text: str, who: str, kind: str, days: float) -> ClientMemoryRecord:
        return ClientMemoryRecord(id=f"sv-{key}-{RUN}", text=text, user_id=who, memory_type=kind,
                                  namespace=ns, created_at=ago(days=days), last_accessed=ago(days=days))

    records = [
        rec("tea", "The user drinks green tea every morning.", user, "semantic", 1),
        rec("rust", "The user writes Rust at work on weekdays.", user, "semantic", 2),
        rec("oslo", "The user flew to Oslo for a meetup.", user, "episodic", 3),
        rec("bicycle", "The user once owned a red bicycle.", user, "semantic", 400),
        rec("cello", "The user plays the cello on Sundays.", other, "semantic", 1),
    ]
    state: dict[str, Any] = {}

    def by_user_request(**kw: Any) -> CreateSummaryViewRequest:
        return CreateSummaryViewRequest(name=f"by-user-{RUN}", source="long_term", group_by=["user_id"],
                                        filters={"namespace": ns, "memory_type": "semantic"}, time_window_days=30, **kw)

    async def refused(call: Any, status: int) -> str:
        try:
            await call
        except MemoryServerError as e:
            eq(e.status_code, status, "status")
            return str(e)
        raise AssertionError(f"no error (expected HTTP {status})")

    async def setup() -> None:
        ack = await c.create_long_term_memory(records)
        eq(ack.status, "ok", "status")
        deadline = time.monotonic() + INDEX_WAIT_S
        missing = [m.id for m in records]
        while missing and time.monotonic() < deadline:
            missing = [m for m in missing if await get_or_none(m) is None]
            if missing:
                await asyncio.sleep(0.2)
        assert not missing, f"not readable {INDEX_WAIT_S}s after create: {missing}"

    async def get_or_none(mid: str) -> Any:
        try:
            return await c.get_long_term_memory(mid)
        except MemoryNotFoundError:
            return None

    async def create() -> None:
        v = await c.create_summary_view(by_user_request(prompt="Summarize what the user likes."))
        assert v.id and len(v.id) == 26, f"a ULID id, got {v.id!r}"
        eq((v.name, v.source, v.group_by, v.time_window_days, v.continuous), (f"by-user-{RUN}", "long_term", ["user_id"], 30, False), "fields")
        eq(v.filters, {"namespace": ns, "memory_type": "semantic"}, "filters")
        eq(v.prompt, "Summarize what the user likes.", "prompt")
        state["view"] = v.id

    async def create_refuses_unknown_fields() -> None:
        bad = CreateSummaryViewRequest(source="long_term", group_by=["user_id", "invalid"], filters={"namespace": ns})
        detail = await refused(c.create_summary_view(bad), 400)
        assert "invalid" in detail, f"the detail names the field: {detail!r}"
        bad_filter = CreateSummaryViewRequest(source="long_term", group_by=["user_id"], filters={"namespace": ns, "topics": "x"})
        await refused(c.create_summary_view(bad_filter), 400)
        await refused(c.create_summary_view(CreateSummaryViewRequest(source="working_memory", group_by=[], filters={"namespace": ns})), 400)
        await refused(c.create_summary_view(by_user_request().model_copy(update={"time_window_days": 0})), 422)

    async def get_and_list() -> None:
        v = await c.get_summary_view(state["view"])
        assert v is not None, "the view is not found"
        eq(v.id, state["view"], "id")
        eq(v.group_by, ["user_id"], "group_by")
        views = await c.list_summary_views()
        assert state["view"] in [x.id for x in views], f"not listed: {[x.id for x in views]}"
        eq(await c.get_summary_view(f"nope-{RUN}"), None, "a missing view is None")

    async def run_is_a_task() -> None:
        task = await c.run_summary_view(state["view"])
        eq((task.type, task.view_id), ("summary_view_full_run", state["view"]), "type and view_id")
        # The run executes within the request; poll as AMS clients do.
        deadline = time.monotonic() + 10
        while task.status in ("pending", "running") and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            task = await c.get_task(task.id)
            assert task is not None, "the task vanished"
        eq(task.status, "success", "status")
        assert task.created_at and task.started_at and task.completed_at, f"times: {task}"
        eq(task.error_message, None, "error_message")
        again = await c.get_task(task.id)
        eq(again, task, "get_task reads the same record")
        eq(await c.get_task(f"nope-{RUN}"), None, "a missing task is None")
        forced = await c.run_summary_view(state["view"], force=True)
        eq(forced.status, "success", "a forced run")

    async def partitions_after_run() -> None:
        parts = await c.list_summary_view_partitions(state["view"])
        eq(sorted(p.group["user_id"] for p in parts), sorted([user, other]), "one partition per user")
        mine = next(p for p in parts if p.group["user_id"] == user)
        eq((mine.view_id, mine.memory_count), (state["view"], 2), "semantic memories within 30 days")
        assert "green tea" in mine.summary and "Rust" in mine.summary, f"summary: {mine.summary!r}"
        assert "bicycle" not in mine.summary and "Oslo" not in mine.summary, f"outside the window or filter: {mine.summary!r}"
        assert mine.computed_at, "computed_at"
        only = await c.list_summary_view_partitions(state["view"], user_id=other)
        eq([(p.group, p.memory_count) for p in only], [({"user_id": other}, 1)], "filtered by user_id")
        assert "cello" in only[0].summary, only[0].summary
        eq(await c.list_summary_view_partitions(state["view"], namespace=ns, user_id=user, session_id="none"), [], "a group field the view lacks matches nothing")

    async def run_one_partition() -> None:
        v = await c.create_summary_view(CreateSummaryViewRequest(source="long_term", group_by=["user_id", "memory_type"], filters={"namespace": ns}))
        state["by_type"] = v.id
        p = await c.run_summary_view_partition(v.id, {"user_id": user, "memory_type": "episodic"})
        eq((p.view_id, p.group, p.memory_count), (v.id, {"user_id": user, "memory_type": "episodic"}, 1), "the partition")
        eq(p.summary, "The user flew to Oslo for a meetup.", "summary")
        listed = await c.list_summary_view_partitions(v.id, user_id=user)
        eq([x.group for x in listed], [{"user_id": user, "memory_type": "episodic"}], "stored, and only it")
        await refused(c.run_summary_view_partition(v.id, {"user_id": user}), 422)

    async def a_failed_run_reports_its_error() -> None:
        crowd = [rec(f"crowd{i}", "Likes tea.", f"sv-crowd{i}-{RUN}", "semantic", 1) for i in range(PARTITIONS_PER_RUN_MAX + 1)]
        await c.create_long_term_memory(crowd)
        v = await c.create_summary_view(CreateSummaryViewRequest(source="long_term", group_by=["user_id"], filters={"namespace": ns}))
        task = await c.run_summary_view(v.id)
        eq(task.status, "failed", "status")
        assert task.error_message and "partitions" in task.error_message, f"error_message: {task.error_message!r}"
        polled = await c.get_task(task.id)
        eq((polled.status, polled.error_message), ("failed", task.error_message), "the failure is kept")
        eq(await c.list_summary_view_partitions(v.id), [], "nothing stored")
        await c.delete_summary_view(v.id)
        # The crowd would be too many groups for the views below too.
        await c.delete_long_term_memories([m.id for m in crowd])

    async def continuous_view_refreshes() -> None:
        v = await c.create_summary_view(by_user_request(continuous=True))
        eq(v.continuous, True, "continuous")
        await c.create_long_term_memory([rec("kayak", "The user paddles a green kayak.", other, "semantic", 0)])
        deadline = time.monotonic() + REFRESH_WAIT_S
        got: list[Any] = []
        while time.monotonic() < deadline:
            got = await c.list_summary_view_partitions(v.id, user_id=other)
            if got and got[0].memory_count == 2:
                break
            await asyncio.sleep(0.5)
        assert got and got[0].memory_count == 2, f"not refreshed within {REFRESH_WAIT_S}s: {got}"
        assert "kayak" in got[0].summary, got[0].summary
        await c.delete_summary_view(v.id)

    async def delete() -> None:
        for vid in (state["view"], state["by_type"]):
            ack = await c.delete_summary_view(vid)
            eq(ack.status, "ok", "status")
            eq(await c.get_summary_view(vid), None, "gone")
        listed = [x.id for x in await c.list_summary_views()]
        assert state["view"] not in listed, f"still listed: {listed}"

    for name, fn in [
        ("summary-views/setup memories", setup),
        ("summary-views/create", create),
        ("summary-views/create refuses unknown fields and sources", create_refuses_unknown_fields),
        ("summary-views/get and list", get_and_list),
        ("summary-views/run is a task polled with get_task", run_is_a_task),
        ("summary-views/partitions after a run", partitions_after_run),
        ("summary-views/run one partition", run_one_partition),
        ("summary-views/a failed run reports its error in the task", a_failed_run_reports_its_error),
        ("summary-views/a continuous view is refreshed after a change", continuous_view_refreshes),
        ("summary-views/delete", delete),
    ]:
        await r.check(name, fn)
