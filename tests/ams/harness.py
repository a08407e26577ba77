"""The check harness shared by the working and long-term parts: the run's
identity, HTTP tracing for failure reports, and assertion helpers."""

from __future__ import annotations

import sys
import traceback
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, Awaitable, Callable

from agent_memory_client import MemoryAPIClient, MemoryNotFoundError
from agent_memory_client.models import MemoryMessage

# How much of each HTTP body a failure report shows.
TRACE_BODY_CHARS = 700

NOW = datetime.now(timezone.utc)
# Names sessions, users, namespaces and memory ids of this run, so that a run
# against a persistent Worker (`make demo`) never meets an earlier one.
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

