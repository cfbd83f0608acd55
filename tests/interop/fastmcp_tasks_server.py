"""A small MCP server written with FastMCP and fastmcp-tasks (the 2026-07-28 Tasks
extension, SEP-2663, run on a Docket queue with the in-memory backend), for our Rust
client and CLI to drive: the peer scenarios of crates/{client,cli}/tests/peers.rs
(modules fastmcp_tasks_*).

    python fastmcp_tasks_server.py PORT      # 0 picks a free port

Serves Streamable HTTP on 127.0.0.1 and prints `listening on http://127.0.0.1:PORT/mcp`
on stdout once it accepts connections (the tests wait for that line).

Tools (each may run as a task; the client opts in per call):
- `slow_steps(steps, step_ms)`: reports "step i of n" as its status message before each
  step and returns "done after n steps".
- `ask_name(greeting)`: asks the client for a name with an elicitation (the guard
  pattern: the first leg returns an input request, the task waits in input_required,
  and the leg after `tasks/update` reads the answer) and returns "<greeting>, <name>!".
  A declined question ends with "no name given".
- `run_until_cancelled()`: reports "tick N" every 100 ms until cancelled.
"""

from __future__ import annotations

import asyncio
import socket
import sys
from datetime import timedelta

import mcp_types
import uvicorn
from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

# Clients poll tasks/get at the interval the task names: short, so tests see each
# status message without waiting long.
POLL = timedelta(milliseconds=100)

mcp = FastMCP("fastmcp-tasks-interop")
mcp.add_extension(TasksExtension(url="memory://"))


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=POLL))
async def slow_steps(ctx: Context, steps: int = 3, step_ms: int = 400) -> str:
    """Works through `steps` steps of `step_ms` each, saying which step it is on."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i} of {steps}")
        await asyncio.sleep(step_ms / 1000)
    return f"done after {steps} steps"


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=POLL))
async def ask_name(ctx: Context, greeting: str = "Hello"):
    """Asks the client for a name (elicitation inside the task) and greets it."""
    answers = ctx.input_responses or {}
    answer = answers.get("name")
    if answer is None:
        return mcp_types.InputRequiredResult(
            input_requests={
                "name": mcp_types.ElicitRequest(
                    params=mcp_types.ElicitRequestFormParams(
                        message="What is your name?",
                        requested_schema={
                            "type": "object",
                            "properties": {"name": {"type": "string"}},
                            "required": ["name"],
                        },
                    )
                )
            }
        )
    if answer.action != "accept" or not answer.content:
        return "no name given"
    return f"{greeting}, {answer.content.get('name')}!"


@mcp.tool(task=TaskConfig(mode="optional", poll_interval=POLL))
async def run_until_cancelled(ctx: Context) -> str:
    """Ticks until the client cancels the task."""
    tick = 0
    while True:
        tick += 1
        await ctx.report_progress(tick, None, f"tick {tick}")
        await asyncio.sleep(0.1)


async def main(port: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    bound = sock.getsockname()[1]
    app = mcp.http_app(path="/mcp")
    server = uvicorn.Server(
        uvicorn.Config(app, lifespan="on", log_level="warning", timeout_graceful_shutdown=1)
    )

    async def announce() -> None:
        while not server.started:
            await asyncio.sleep(0.02)
        print(f"listening on http://127.0.0.1:{bound}/mcp", flush=True)

    announcer = asyncio.create_task(announce())
    await server.serve(sockets=[sock])
    announcer.cancel()


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: fastmcp_tasks_server.py PORT")
    asyncio.run(main(int(sys.argv[1])))
