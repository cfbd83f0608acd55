"""mcp-tasks gateway interoperability client: the official Python SDK (``mcp``, pinned by run.sh)
drives ``mcp-tasks wrap`` in front of the official everything server (npm), over stdio or
Streamable HTTP. The everything server knows nothing of the gateway; through it its tools run
as durable tasks with progress, questions and cancellation relayed.

    python gateway.py --stdio "mcp-tasks wrap --database memory: -- node .../index.js stdio"
    python gateway.py --url http://127.0.0.1:PORT/mcp

Prints ``PASS name`` / ``FAIL name: detail`` and ``N passed, M failed``; exits 1 on a failure.
"""

from __future__ import annotations

import argparse
from contextlib import aclosing
from typing import Any

import anyio
from mcp import ClientSession, types
from mcp.shared.context import RequestContext

from common import R, Wire, group, open_transport, recorded, related, run, text_of, timed, within_deadline

DEADLINE = 80.0
asked: list[tuple[str, str | None]] = []  # (method, related task id) of every server request


async def on_elicit(ctx: RequestContext[ClientSession, Any], params: types.ElicitRequestParams) -> Any:
    raw = params.model_dump(by_alias=True, mode="json", exclude_none=True)
    asked.append(("elicitation/create", related(ctx.meta) if ctx.meta else None))
    props = list((raw.get("requestedSchema") or {}).get("properties", {}))
    if "interpretation" in props:
        return types.ElicitResult(action="accept", content={"interpretation": "technical"})
    return types.ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True})


async def on_sample(ctx: RequestContext[ClientSession, Any], params: types.CreateMessageRequestParams) -> Any:
    asked.append(("sampling/createMessage", related(ctx.meta) if ctx.meta else None))
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="python-relayed model answer"),
        model="interop-fake-model",
        stopReason="endTurn",
    )


async def run_task(session: ClientSession, name: str, args: dict[str, Any]) -> tuple[str, types.CallToolResult]:
    tasks = session.experimental
    created = await timed(tasks.call_tool_as_task(name, args, ttl=120000))
    tid = created.task.taskId
    with anyio.fail_after(40):
        async with aclosing(tasks.poll_task(tid)) as polling:
            async for st in polling:
                if st.status == "input_required":
                    break
    result = await timed(tasks.get_task_result(tid, types.CallToolResult), 40)
    return tid, result


async def checks(session: ClientSession, wire: Wire) -> None:
    async with group("tools, resources and prompts"):
        tools = (await timed(session.list_tools())).tools
        long = next((t for t in tools if t.name == "trigger-long-running-operation"), None)
        R.check("upstream tools are listed with task support optional",
                long is not None and long.execution is not None and long.execution.taskSupport == "optional",
                long)
        read = await timed(session.read_resource("demo://resource/dynamic/text/2"))
        R.check("a resource is read from the upstream", str(read.contents[0].uri) == "demo://resource/dynamic/text/2", read)
        prompt = await timed(session.get_prompt("simple-prompt"))
        R.check("a prompt is got from the upstream", len(prompt.messages) > 0, prompt)

    async with group("long-running operation as a task"):
        tid, result = await run_task(session, "trigger-long-running-operation", {"duration": 2, "steps": 4})
        R.check("the task completed with the upstream result", "Long running operation completed" in text_of(result), result)
        final = await timed(session.experimental.get_task(tid))
        R.check("upstream progress shows as the status message", "/4" in (final.statusMessage or ""), final)

    async with group("elicitation and sampling mid-task"):
        tid, result = await run_task(session, "trigger-elicitation-request", {})
        R.check("the upstream question reached us for our task and the answer went back",
                ("elicitation/create", tid) in asked and "Ada Lovelace" in text_of(result), {"asked": asked, "result": result})
        tid, result = await run_task(session, "trigger-sampling-request", {"prompt": "hi", "maxTokens": 10})
        R.check("the upstream sampling request reached us and the answer went back",
                ("sampling/createMessage", tid) in asked and "python-relayed model answer" in text_of(result),
                {"asked": asked, "result": result})

    async with group("the upstream's own task tool"):
        tid, result = await run_task(session, "simulate-research-query", {"topic": "tasks", "ambiguous": True})
        R.check("the upstream task was followed to its report, its question answered through ours",
                "tasks" in text_of(result).lower() and ("elicitation/create", tid) in asked, {"asked": asked, "result": result})

    async with group("cancel"):
        created = await timed(session.experimental.call_tool_as_task(
            "trigger-long-running-operation", {"duration": 30, "steps": 30}, ttl=120000))
        tid = created.task.taskId

        async def has_message() -> bool:
            return bool((await session.experimental.get_task(tid)).statusMessage)

        seen = False
        for _ in range(100):
            if await has_message():
                seen = True
                break
            await anyio.sleep(0.1)
        cancelled = await timed(session.experimental.cancel_task(tid))
        R.check("tasks/cancel cancels the running upstream call", seen and cancelled.status == "cancelled", cancelled)
        r = await timed(session.call_tool("get-sum", {"a": 2, "b": 3}))
        R.check("the next plain call works", "5" in text_of(r), r)


async def main(args: argparse.Namespace) -> int:
    wire = Wire()

    async def body() -> None:
        async with open_transport(args) as (r, w), recorded(r, w, wire) as (rr, ww):
            async with ClientSession(rr, ww, elicitation_callback=on_elicit, sampling_callback=on_sample) as session:
                await timed(session.initialize())
                await checks(session, wire)

    await within_deadline(DEADLINE, body)
    return R.summary()


if __name__ == "__main__":
    run(main, __doc__)
