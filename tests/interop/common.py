"""What the Python interoperability clients (client.py, hitl.py) share: PASS/FAIL reporting, check
groups and polling helpers, the wire recorder that relays a session's streams, the transport
(``--url`` Streamable HTTP or ``--stdio`` command) and the command line.

Both clients import it from their own folder (Python puts a script's folder first on sys.path),
so run.sh needs nothing more than it runs them with.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
import traceback
import warnings
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable

import anyio
import pydantic
from mcp import StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

# session.experimental (the tasks API) is deprecated in mcp 1.30 but is what we exercise.
warnings.filterwarnings("ignore", category=DeprecationWarning)

REQUEST_TIMEOUT = 10.0  # seconds, per request
RELATED = "io.modelcontextprotocol/related-task"


# --------------------------------------------------------------------------- reporting
class Report:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, ok: bool, detail: Any = None) -> bool:
        if ok:
            self.passed += 1
            print(f"PASS {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {name}" + ("" if detail is None else f": {_show(detail)}"), flush=True)
        return ok

    def note(self, msg: str) -> None:
        print(f"NOTE {msg}", flush=True)

    def summary(self) -> int:
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 1 if self.failed else 0


def _show(v: Any) -> str:
    if isinstance(v, BaseException):
        code = getattr(getattr(v, "error", None), "code", "")
        s = f"{type(v).__name__}({code}) {v}"
    elif isinstance(v, pydantic.BaseModel):
        s = v.model_dump_json(by_alias=True, exclude_none=True)
    elif isinstance(v, str):
        s = v
    else:
        try:
            s = json.dumps(v, default=str)
        except Exception:
            s = repr(v)
    return s if len(s) <= 600 else s[:600] + "…"


# The one report of this process: every check of the client that imports it counts here.
R = Report()


@asynccontextmanager
async def group(name: str) -> AsyncIterator[None]:
    """A group of checks; an exception fails the group, not the run."""
    try:
        yield
    except Exception as e:  # noqa: BLE001
        tb = traceback.extract_tb(e.__traceback__)
        where = f" @ line {tb[-1].lineno}" if tb else ""
        R.check(f"{name} (exception)", False, f"{_show(e)}{where}")


async def wait_for(pred: Callable[[], bool], seconds: float, step: float = 0.05) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pred():
            return True
        await anyio.sleep(step)
    return pred()


async def timed(coro: Awaitable[Any], seconds: float = REQUEST_TIMEOUT) -> Any:
    with anyio.fail_after(seconds):
        return await coro


# --------------------------------------------------------------------------- wire recorder
@dataclass
class Wire:
    """Every raw JSON-RPC message the server sent in one session, stamped by ``stamp`` (monotonic
    time unless a client orders its observations otherwise)."""

    stamp: Callable[[], Any] = time.monotonic
    method_by_id: dict[Any, str] = field(default_factory=dict)
    # (stamp, raw message as dict, method of the originating request for responses)
    received: list[tuple[Any, dict[str, Any], str | None]] = field(default_factory=list)

    def outgoing(self, m: SessionMessage) -> None:
        root = m.message.root
        if isinstance(root, types.JSONRPCRequest):
            self.method_by_id[root.id] = root.method

    def incoming(self, m: SessionMessage | Exception) -> None:
        if isinstance(m, Exception):
            return
        raw = m.message.root.model_dump(by_alias=True, mode="json", exclude_none=True)
        method = raw.get("method") or self.method_by_id.get(raw.get("id"))
        self.received.append((self.stamp(), raw, method))

    def results(self, method: str) -> list[dict[str, Any]]:
        """Results of successful responses to our requests of this method."""
        return [raw["result"] for _, raw, m in self.received if m == method and "id" in raw and "result" in raw]

    def notifications(self, method: str) -> list[dict[str, Any]]:
        return [raw for _, raw, _m in self.received if raw.get("method") == method and "id" not in raw]

    def requests(self, method: str) -> list[tuple[Any, dict[str, Any]]]:
        """Server->client requests of this method, with their stamps."""
        return [(s, raw) for s, raw, _m in self.received if raw.get("method") == method and "id" in raw]


@asynccontextmanager
async def recorded(read_stream: Any, write_stream: Any, wire: Wire) -> AsyncIterator[tuple[Any, Any]]:
    """Relays the transport's streams through the recorder."""
    in_send, in_recv = anyio.create_memory_object_stream[SessionMessage | Exception](64)
    out_send, out_recv = anyio.create_memory_object_stream[SessionMessage](64)

    async def pump_in() -> None:
        async with in_send:
            async for m in read_stream:
                wire.incoming(m)
                try:
                    await in_send.send(m)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return

    async def pump_out() -> None:
        async with out_recv:
            async for m in out_recv:
                wire.outgoing(m)
                await write_stream.send(m)

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump_in)
        tg.start_soon(pump_out)
        try:
            yield in_recv, out_send
        finally:
            tg.cancel_scope.cancel()


@asynccontextmanager
async def open_transport(args: argparse.Namespace) -> AsyncIterator[tuple[Any, Any]]:
    if args.url:
        async with streamable_http_client(args.url) as (r, w, _get_session_id):
            yield r, w
    else:
        cmd = shlex.split(args.stdio)
        params = StdioServerParameters(command=cmd[0], args=cmd[1:])
        async with stdio_client(params, errlog=sys.stderr) as (r, w):
            yield r, w


# --------------------------------------------------------------------------- helpers
async def check_task_support(session: Any, want: dict[str, str]) -> None:
    """tools/list: each named tool declares the execution.taskSupport given for it."""
    listed = await timed(session.list_tools())
    by_name = {t.name: t for t in listed.tools}
    for name, mode in want.items():
        tool = by_name.get(name)
        got = tool.execution.taskSupport if tool and tool.execution else None
        R.check(f"tools/list: {name} execution.taskSupport is {mode}", got == mode, got if tool else "tool missing")


def text_of(r: types.CallToolResult) -> str:
    return "\n".join(c.text for c in r.content if isinstance(c, types.TextContent))


def related(x: Any) -> str | None:
    """The related-task taskId in raw params or results (their ``_meta``), in a RequestContext.meta
    (a ``RequestParams.Meta``, where the key is an extra field) or in a result's ``meta``."""
    if isinstance(x, dict):
        m = x.get("_meta")
    elif isinstance(x, types.RequestParams.Meta):
        m = x.model_dump(by_alias=True)
    else:
        m = getattr(x, "meta", None)
    v = (m or {}).get(RELATED)
    return v.get("taskId") if isinstance(v, dict) else None


# --------------------------------------------------------------------------- running a client
async def within_deadline(deadline: float, body: Callable[[], Awaitable[None]]) -> None:
    """Runs the client's sessions; passing the deadline or a transport breakdown is a failed
    check, not a crash."""
    try:
        with anyio.fail_after(deadline):
            await body()
    except TimeoutError:
        R.check("client finished within the deadline", False, f"{deadline} s passed")
    except Exception as e:  # noqa: BLE001 - a transport breakdown is a failure, not a crash
        R.check("session closed cleanly", False, e)


def note_transport_errors(errors: list[str]) -> None:
    if errors:
        R.note(f"transport errors seen by the session: {errors[:3]}")


def run(main: Callable[[argparse.Namespace], Awaitable[int]], doc: str) -> None:
    """Parses ``--url URL | --stdio "CMD ARGS"`` and exits with what ``main`` returns."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--url")
    g.add_argument("--stdio")
    sys.exit(anyio.run(main, p.parse_args()))
