"""A small MCP server written with the official Python SDK (FastMCP, pinned by run.sh),
used as an upstream of the mcp-tasks gateway in the interop tests:

  add(a, b)           an ordinary quick tool
  slow_steps(steps)   reports progress each step (0.2 s apart), then answers
  crash(after_ms)     the process dies with exit status 3 in the middle of the call
  ask_colour()        asks the user (elicitation) and answers with the choice
  grow()              adds a tool `grown` and sends notifications/tools/list_changed

  python upstream_server.py            # stdio
"""

import asyncio
import os

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel

mcp = FastMCP("py-upstream")


@mcp.tool()
def add(a: int, b: int) -> str:
    """Adds two integers."""
    return f"sum={a + b}"


@mcp.tool()
async def slow_steps(steps: int, ctx: Context) -> str:
    """Counts to `steps`, reporting progress on the way."""
    for i in range(1, steps + 1):
        await asyncio.sleep(0.2)
        await ctx.report_progress(i, steps, f"step {i}")
        await ctx.info(f"upstream log line {i}")
    return f"done after {steps} steps"


@mcp.tool()
async def crash(after_ms: int = 300) -> str:
    """Exits the whole server process (status 3) after `after_ms` milliseconds."""
    await asyncio.sleep(after_ms / 1000)
    os._exit(3)
    return "unreachable"


class Colour(BaseModel):
    colour: str


@mcp.tool()
async def ask_colour(ctx: Context) -> str:
    """Asks the user for a colour."""
    answer = await ctx.elicit(message="Which colour?", schema=Colour)
    if answer.action == "accept":
        return f"colour={answer.data.colour}"
    return f"no colour ({answer.action})"


@mcp.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `grown` to this server and tells the client its tool list changed."""

    def grown() -> str:
        """A tool added while the server runs."""
        return "grown at run time"

    mcp.add_tool(grown)
    await ctx.session.send_tool_list_changed()
    return "added"


if __name__ == "__main__":
    mcp.run()
