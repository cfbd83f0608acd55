"""The rmcp bridge with the official Python SDK client (mcp, pinned by run.sh) on 2025-11-25.

examples/rmcp-count-to is an rmcp server with a resource and a prompt of its own, its durable
count_to added by mcp-tasks-rmcp (DurableTasks::wrap). Checks: its own serverInfo, resource and
prompt; count_to's half-way question arrives as elicitation/create and the answer wakes the tool
(accepted: it counts on; declined: it stops), never an error -32600.

    python rmcp_bridge.py --url http://127.0.0.1:PORT/mcp

Prints "PASS name" / "FAIL name: detail" per check and "N passed, M failed"; exits 1 when any
check failed.
"""

from __future__ import annotations

import argparse
from typing import Any

from mcp import ClientSession, types
from pydantic import AnyUrl

from common import R, group, open_transport, run, text_of, timed, within_deadline

DEADLINE = 28.0


async def main(args: argparse.Namespace) -> int:
    asked: list[types.ElicitRequestParams] = []
    go_on = {"value": True}

    async def on_elicit(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"go_on": go_on["value"]})

    async def sessions() -> None:
        async with open_transport(args) as (r, w):
            async with ClientSession(r, w, elicitation_callback=on_elicit) as session:
                init = await timed(session.initialize())
                R.check("negotiated 2025-11-25", init.protocolVersion == "2025-11-25", init.protocolVersion)
                R.check("serverInfo is the server's own", init.serverInfo.name == "rmcp-count-to", init.serverInfo)

                async with group("resources and prompts"):
                    read = await timed(session.read_resource(AnyUrl("count://about")))
                    text = getattr(read.contents[0], "text", None)
                    R.check("resources/read", text == "count_to counts, durably.", read)
                    prompt = await timed(session.get_prompt("count_to_ten"))
                    said = getattr(prompt.messages[0].content, "text", None)
                    R.check("prompts/get", said == "Count to 10 with count_to.", prompt)

                async with group("a question on 2025-11-25"):
                    arguments = {"n": 4, "delay_ms": 20}
                    done = await timed(session.call_tool("count_to", arguments))
                    R.check("count_to asked through elicitation/create", len(asked) == 1, asked)
                    R.check("the question is the tool's", asked and asked[0].message == "Counted to 2. Go on?", asked)
                    R.check("the answer woke the tool", text_of(done) == "counted to 4" and not done.isError, done)
                    go_on["value"] = False
                    stopped = await timed(session.call_tool("count_to", arguments))
                    R.check('a "no" stops it', text_of(stopped) == "stopped at 2, as asked", stopped)

    await within_deadline(DEADLINE, sessions)
    return R.summary()


if __name__ == "__main__":
    run(main, __doc__)
