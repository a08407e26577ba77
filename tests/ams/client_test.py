"""Drives an edgemem Worker through Redis Agent Memory Server's own Python
client, agent-memory-client 0.14.0, used exactly as its users call it.

    python client_test.py --url http://127.0.0.1:8787 --part working|long-term|summary-views|all (or a comma list)

Each check prints `ok <name>` or `FAIL <name>: <reason>`; a failure is
followed by indented lines with the HTTP exchanges of that check. The last
line is `N passed, N failed`; the exit status is 1 if any check failed.

The expectations are AMS's own behaviour (server 0.15, the version this
client talks to), read from its source. Where 0.14.0 cannot express a request
(search modes, an explicit `dry_run=false`), the check sends the exact request
the next client (0.14.1) sends, through the client's own HTTP session, and
parses the answer with the client's models; those checks say so in their name.
"""

from __future__ import annotations

import sys

# The sibling modules are imported from tests/ams; keep it free of __pycache__.
sys.dont_write_bytecode = True

import argparse  # noqa: E402
import asyncio  # noqa: E402
import warnings  # noqa: E402

from agent_memory_client import MemoryAPIClient, MemoryClientConfig  # noqa: E402
from agent_memory_client import __version__ as CLIENT_VERSION  # noqa: E402

from harness import RUN, Runner, Trace  # noqa: E402
from long_term import long_term_part  # noqa: E402
from summary_views import summary_views_part  # noqa: E402
from working import working_part  # noqa: E402

# get_working_memory is deprecated in favour of get_or_create, but it is the
# client's only call that reports a missing session as MemoryNotFoundError.
warnings.filterwarnings("ignore", category=DeprecationWarning)

EXPECTED_CLIENT_VERSION = "0.14.0"


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="the Worker's base URL, e.g. http://127.0.0.1:8787")
    ap.add_argument("--part", default="all", help="working, long-term, summary-views or all; or a comma list")
    ap.add_argument("--bearer-token", default=None, help="an edgemem API key (sent as Authorization: Bearer)")
    args = ap.parse_args()
    parts = set(args.part.split(","))
    if not parts <= {"working", "long-term", "summary-views", "all"}:
        ap.error(f"unknown part in {args.part!r}")
    if "all" in parts:
        parts = {"working", "long-term", "summary-views"}
    if CLIENT_VERSION != EXPECTED_CLIENT_VERSION:
        print(f"FAIL setup: agent-memory-client {CLIENT_VERSION} installed, {EXPECTED_CLIENT_VERSION} expected")
        return 1

    ns = f"ams-{RUN}"
    trace = Trace()
    runner = Runner(trace)
    config = MemoryClientConfig(base_url=args.url.rstrip("/"), timeout=20.0, default_namespace=ns)
    async with MemoryAPIClient(config) as client:
        if args.bearer_token:
            # agent-memory-client 0.14.0's config has no auth setting; its
            # httpx client carries the header on every call.
            client._client.headers["Authorization"] = f"Bearer {args.bearer_token}"
        trace.attach(client)
        if "working" in parts:
            await working_part(client, runner, ns)
        if "long-term" in parts:
            await long_term_part(client, runner, ns)
    if "summary-views" in parts:
        # AMS's summary-view calls name no namespace, and edgemem's tenants
        # are namespaces: this client names its tenant on its HTTP session,
        # as it carries its key.
        sv_config = MemoryClientConfig(base_url=args.url.rstrip("/"), timeout=20.0, default_namespace=f"{ns}-sv")
        async with MemoryAPIClient(sv_config) as client:
            if args.bearer_token:
                client._client.headers["Authorization"] = f"Bearer {args.bearer_token}"
            client._client.params = {"namespace": f"{ns}-sv"}
            trace.attach(client)
            await summary_views_part(client, runner, f"{ns}-sv")
    print(f"{runner.passed} passed, {runner.failed} failed")
    return 1 if runner.failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
