"""mcp-tasks interoperability client for hosts that do not speak tasks: the official Python SDK
(``mcp``, pinned by run.sh), declaring neither tasks nor elicitation, with a request timeout
(4 s) shorter than the tools it calls, against a server run with ``--sync-budget 2s
--progress-interval 1s``. A plain call that outlasts the budget must come back as a handle before
the client gives up, and the task tools (task_wait, task_status, task_answer, task_cancel,
task_list) must lead to the real result.

    python hosts.py --stdio "mcp-tasks serve --demo --stdio --sync-budget 2s --progress-interval 1s ..."
    python hosts.py --url http://127.0.0.1:PORT/mcp
    HOSTS_UPSTREAM=everything python hosts.py --stdio "mcp-tasks wrap --sync-budget 2s ... -- node .../index.js stdio"

With ``--url``, ``HOSTS_TOKEN`` and ``HOSTS_OTHER_TOKEN`` (bearer tokens of two principals of a
server run with ``--auth-tokens``), the demo checks also connect as the other principal, who must
not see the first one's task. (Without authentication a task id is the capability: any session
holding it may read the task, and only listing is per session.) Prints ``PASS name`` / ``FAIL name: detail`` and
``N passed, M failed``; exits 1 on a failure.
"""

from __future__ import annotations

import argparse
import os
import time
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta
from typing import Any, AsyncIterator, Callable

import anyio
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from common import R, group, open_transport, related, run, text_of, within_deadline

# The client's request timeout: longer than the server's sync budget (2 s), shorter than the
# tools (8 s), as a host's would be.
TIMEOUT = timedelta(seconds=4)
DEADLINE = 60.0
MAX_WAITS = 10  # task_wait calls before giving up on a result
TASK_TOOLS = ["task_wait", "task_status", "task_answer", "task_cancel", "task_list"]
UPSTREAM = os.environ.get("HOSTS_UPSTREAM", "demo")
LONG = "trigger-long-running-operation"
TOKEN = os.environ.get("HOSTS_TOKEN")
OTHER_TOKEN = os.environ.get("HOSTS_OTHER_TOKEN")


@asynccontextmanager
async def connect(args: argparse.Namespace, token: str | None) -> AsyncIterator[tuple[Any, Any]]:
    """The transport; over HTTP with the bearer token given, if any."""
    if args.url and token:
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
            async with streamable_http_client(args.url, http_client=http) as (r, w, _get_session_id):
                yield r, w
    else:
        async with open_transport(args) as (r, w):
            yield r, w


async def call(session: ClientSession, name: str, args: dict[str, Any], **kw: Any) -> types.CallToolResult:
    return await session.call_tool(name, args, read_timeout_seconds=TIMEOUT, **kw)


class Handle:
    """A plain call that outlasted the budget: its result, task id and how long it took."""

    def __init__(self, r: types.CallToolResult, seconds: float) -> None:
        self.r = r
        self.id = related(r)
        self.seconds = seconds


async def handle_of(session: ClientSession, name: str, args: dict[str, Any]) -> Handle:
    started = time.monotonic()
    r = await call(session, name, args)
    return Handle(r, time.monotonic() - started)


def check_handle(label: str, h: Handle, has_output_schema: bool, want_status: str) -> None:
    """The handle's shape: text that says what to do, the id in _meta, and, since a client
    offered the task tools is shown no outputSchema, no error: the status as structuredContent
    (an outputSchema listed would make it isError with no structuredContent)."""
    text = text_of(h.r)
    R.check(f"{label}: the handle came back before the client's 4 s timeout, and the SDK accepted it",
            h.seconds < 4, h.seconds)
    R.check(f"{label}: the handle names its task in _meta (related-task)", bool(h.id), h.r)
    R.check(f"{label}: the handle's text names the task and the task tools",
            bool(h.id) and h.id in text and all(t in text for t in ("task_wait", "task_status", "task_cancel")), text)
    sc = h.r.structuredContent
    if has_output_schema:
        R.check(f"{label}: a tool with an outputSchema answers isError with no structuredContent",
                h.r.isError is True and sc is None, h.r)
    else:
        R.check(f"{label}: with no outputSchema listed, the handle is no error, the status as structuredContent",
                not h.r.isError and sc is not None and sc.get("taskId") == h.id and sc.get("status") == want_status, h.r)


async def wait_for(session: ClientSession, task_id: str | None,
                   done: Callable[[types.CallToolResult], bool]) -> tuple[types.CallToolResult | None, list[Any]]:
    """task_wait until the task's own result comes back, at most MAX_WAITS calls."""
    seen: list[Any] = []
    for _ in range(MAX_WAITS):
        r = await call(session, "task_wait", {"taskId": task_id, "seconds": 3})
        if done(r):
            return r, seen
        seen.append((r.structuredContent or {}).get("status") or text_of(r)[:80])
    return None, seen


def sc(r: types.CallToolResult | None) -> dict[str, Any]:
    return (r.structuredContent if r is not None else None) or {}


def is_no_task(r: types.CallToolResult) -> bool:
    return r.isError is True and text_of(r).startswith("no task")


async def status_until(session: ClientSession, task_id: str | None,
                       ok: Callable[[dict[str, Any]], bool]) -> types.CallToolResult:
    """task_status until ok(its structuredContent), at most 20 looks 0.1 s apart."""
    r = await call(session, "task_status", {"taskId": task_id})
    for _ in range(20):
        if ok(sc(r)):
            break
        await anyio.sleep(0.1)
        r = await call(session, "task_status", {"taskId": task_id})
    return r


async def everything_checks(session: ClientSession, tools: dict[str, types.Tool]) -> None:
    async with group("the upstream long-running operation without a task"):
        listed = tools.get(LONG)
        R.check(f"{LONG} is listed, task support optional",
                listed is not None and listed.execution is not None and listed.execution.taskSupport == "optional", listed)
        h = await handle_of(session, LONG, {"duration": 6, "steps": 6})
        check_handle(LONG, h, listed is not None and listed.outputSchema is not None, "working")
        tasks = sc(await call(session, "task_list", {})).get("tasks", [])
        R.check("task_list finds the task", any(t.get("taskId") == h.id and t.get("tool") == LONG for t in tasks), tasks)
        result, seen = await wait_for(session, h.id, lambda r: "Long running operation completed" in text_of(r))
        R.check("task_wait returns the upstream result", result is not None and not result.isError, seen)

    async with group("progress through the gateway"):
        progress: list[float] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            progress.append(p)

        await call(session, LONG, {"duration": 3, "steps": 6}, progress_callback=on_progress)
        R.check("a plain call with a progressToken receives progress (at least 2)", len(progress) >= 2, progress)


async def demo_checks(args: argparse.Namespace, session: ClientSession, tools: dict[str, types.Tool]) -> None:
    long: Handle | None = None
    async with group("a long plain call"):
        listed = tools.get("slow_compute")
        # slow_compute has an outputSchema; a client offered the task tools is not shown it,
        # so that the handle of a long call is an ordinary result the SDK accepts.
        R.check("slow_compute is listed without its outputSchema to a client offered the task tools",
                listed is not None and listed.outputSchema is None, listed)
        long = await handle_of(session, "slow_compute", {"seconds": 8, "label": "long"})
        check_handle("slow_compute 8 s", long, False, "working")
        R.check("slow_compute 8 s: the handle is not an error (isError false)", long.r.isError is False, long.r)
        s = sc(await call(session, "task_status", {"taskId": long.id}))
        R.check("task_status: working, tool slow_compute", s.get("status") == "working" and s.get("tool") == "slow_compute", s)

    async with group("progress of a plain call"):
        progress: list[float] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            progress.append(p)

        await call(session, "slow_compute", {"seconds": 3, "label": "progress"}, progress_callback=on_progress)
        R.check("a plain call with a progressToken receives progress (at least 2)", len(progress) >= 2, progress)

    async with group("task_list and task_cancel"):
        tasks = sc(await call(session, "task_list", {})).get("tasks", [])
        R.check("task_list finds the long task",
                long is not None and any(t.get("taskId") == long.id and t.get("tool") == "slow_compute" for t in tasks), tasks)
        victim = await handle_of(session, "slow_compute", {"seconds": 60, "label": "victim"})
        c = await call(session, "task_cancel", {"taskId": victim.id})
        R.check("task_cancel answers without error", not c.isError, c)
        s = await status_until(session, victim.id, lambda x: x.get("status") == "cancelled")
        R.check("task_status then says cancelled", sc(s).get("status") == "cancelled", s)

    async with group("an unknown task, and another principal's"):
        r = await call(session, "task_status", {"taskId": "no-such-task-0000"})
        R.check('task_status of a made-up id: isError, "no task…"', is_no_task(r), r)
        if args.url and OTHER_TOKEN and long is not None and long.id:
            async with connect(args, OTHER_TOKEN) as (rr, ww), ClientSession(rr, ww) as other:
                await other.initialize()
                for name in ("task_status", "task_wait", "task_cancel"):
                    r = await call(other, name, {"taskId": long.id})
                    R.check(f"another principal's {name} of our id: isError, \"no task…\" (like an unknown id)",
                            is_no_task(r), r)
                theirs = sc(await call(other, "task_list", {})).get("tasks", [])
                R.check("another principal's task_list does not show our task",
                        not any(t.get("taskId") == long.id for t in theirs), theirs)

    async with group("a question the client cannot show"):
        h = await handle_of(session, "confirm_delete", {"filename": "x"})
        listed = tools.get("confirm_delete")
        check_handle("confirm_delete", h, listed is not None and listed.outputSchema is not None, "input_required")
        s = await status_until(session, h.id, lambda x: x.get("status") == "input_required" and bool(x.get("questions")))
        q = (sc(s).get("questions") or [{}])[0]
        confirm = ((q.get("requestedSchema") or {}).get("properties") or {}).get("confirm") or {}
        R.check("task_status: input_required with the question (key, elicitation, a boolean confirm)",
                sc(s).get("status") == "input_required" and isinstance(q.get("key"), str) and confirm.get("type") == "boolean", s)
        a = await call(session, "task_answer",
                       {"taskId": h.id, "answers": {q.get("key"): {"action": "accept", "content": {"confirm": True}}}})
        R.check("task_answer accepts the answer", not a.isError, a)
        result, seen = await wait_for(session, h.id, lambda r: "deleted" in sc(r))
        R.check('task_wait returns the result {filename: "x", deleted: true}',
                sc(result).get("filename") == "x" and sc(result).get("deleted") is True, result or seen)

    async with group("task_wait returns the long call's result"):
        result, seen = await wait_for(session, long.id if long else None, lambda r: "label" in sc(r))
        R.check("task_wait returns the real result, structuredContent {label, seconds}",
                sc(result).get("label") == "long" and sc(result).get("seconds") == 8, result or seen)


async def main(args: argparse.Namespace) -> int:
    async def body() -> None:
        async with AsyncExitStack() as stack:
            rr, ww = await stack.enter_async_context(connect(args, TOKEN))
            # A session as a host without tasks builds it: no callbacks, so no elicitation,
            # sampling or tasks capability.
            session = await stack.enter_async_context(ClientSession(rr, ww, read_timeout_seconds=TIMEOUT))
            await session.initialize()
            tools: dict[str, types.Tool] = {}
            async with group("tools/list"):
                tools = {t.name: t for t in (await session.list_tools()).tools}
                R.check("tools/list offers the five task tools to a client without tasks",
                        all(t in tools for t in TASK_TOOLS), sorted(tools))
            if UPSTREAM == "everything":
                await everything_checks(session, tools)
            else:
                await demo_checks(args, session, tools)

    await within_deadline(DEADLINE, body)
    return R.summary()


if __name__ == "__main__":
    run(main, __doc__)
