"""mcp-tasks human-in-the-loop interoperability client: the official Python SDK (``mcp``, pinned by
run.sh) answering a task's elicitation and sampling requests, against an mcp-tasks server with the
demo tools, over stdio or Streamable HTTP.

    python hitl.py --url http://127.0.0.1:PORT/mcp
    python hitl.py --stdio "target/debug/mcp-tasks serve --demo --database memory: --stdio"

Prints ``PASS name`` / ``FAIL name: detail`` per check, ``NOTE ...`` for information, and a final
``N passed, M failed``; exits 1 when any check failed.

Tools are called as tasks (``session.experimental.call_tool_as_task``), polled with ``poll_task``
and read with ``get_task_result``; the questions are answered by the session's
``elicitation_callback`` / ``sampling_callback``. The session's streams are relayed through a
recorder (common.py, shared with client.py), so the raw requests and the order of status changes
are checked too.

mcp 1.30 runs a callback inside the session's receive loop: while one question is being answered
the session reads nothing else. The recorder reads on, so "both questions outstanding at once"
(multi_input) is checked on the wire, with the first callback waiting until the second request
has been recorded.
"""

from __future__ import annotations

import argparse
import itertools
import json
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Callable

import anyio
import pydantic
from mcp import ClientSession, types
from mcp.shared.context import RequestContext
from mcp.shared.message import SessionMessage

from common import R, Wire, check_task_support, group, note_transport_errors, open_transport, recorded
from common import related, run, text_of, timed, wait_for, within_deadline

WAIT = 5.0  # seconds a callback waits for a condition before answering anyway
STEP = 0.02  # seconds between looks while waiting
DEADLINE = 28.0  # seconds, whole run
HITL_SEQUENCE = ["working", "input_required", "working", "completed"]
TERMINAL = ("completed", "failed", "cancelled")
MODEL_REPLY = "Tasks can ask their client questions."

# One counter orders everything observed: received messages and answers given.
_seq = itertools.count(1)


def tick() -> int:
    return next(_seq)


# --------------------------------------------------------------------------- wire recorder
@dataclass
class HitlWire(Wire):
    """The recorder, stamping by the counter, that also keeps our answers to server requests."""

    stamp: Callable[[], Any] = tick
    # (seq, raw response we sent to a server request)
    answered: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    def outgoing(self, m: SessionMessage) -> None:
        super().outgoing(m)
        root = m.message.root
        if isinstance(root, (types.JSONRPCResponse, types.JSONRPCError)):
            self.answered.append((tick(), root.model_dump(by_alias=True, mode="json", exclude_none=True)))

    def answer_seq(self, request_id: Any) -> int | None:
        return next((s for s, raw in self.answered if raw.get("id") == request_id), None)

    def statuses(self, task_id: str) -> list[tuple[int, str, str]]:
        """(seq, status, source) of a task, from status notifications and tasks/get responses."""
        out: list[tuple[int, str, str]] = []
        for s, raw, m in self.received:
            if raw.get("method") == "notifications/tasks/status" and raw.get("params", {}).get("taskId") == task_id:
                out.append((s, raw["params"].get("status"), "notification"))
            elif m == "tasks/get" and "result" in raw and raw["result"].get("taskId") == task_id:
                out.append((s, raw["result"].get("status"), "poll"))
        return out


# --------------------------------------------------------------------------- helpers
def dedupe(xs: list[str]) -> list[str]:
    return [x for i, x in enumerate(xs) if i == 0 or x != xs[i - 1]]


def has_subsequence(xs: list[str], want: list[str]) -> bool:
    i = 0
    for x in xs:
        if i < len(want) and x == want[i]:
            i += 1
    return i == len(want)


@dataclass
class Asked:
    """An input request as the callback saw it."""

    method: str
    request_id: Any
    ctx_task_id: str | None  # related-task taskId read from RequestContext.meta
    params: dict[str, Any]
    waited: bool | None = None


@dataclass
class Client:
    wire: HitlWire = field(default_factory=HitlWire)
    asked: list[Asked] = field(default_factory=list)


def make_callbacks(c: Client) -> tuple[Any, Any]:
    async def on_elicit(ctx: RequestContext[ClientSession, Any], params: types.ElicitRequestParams) -> Any:
        raw = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        a = Asked("elicitation/create", ctx.request_id, related(ctx.meta) if ctx.meta else None, raw)
        c.asked.append(a)
        props = list((raw.get("requestedSchema") or {}).get("properties", {}))
        if "confirm" in props:
            if "decline" in raw.get("message", "").lower():
                return types.ElicitResult(action="decline")
            return types.ElicitResult(action="accept", content={"confirm": True})
        if "name" in props or "colour" in props:
            # The session reads nothing while this runs; the recorder does. Hold the answer until
            # the task's other question has been received too.
            tid = a.ctx_task_id

            def both() -> bool:
                return len([r for _, r in c.wire.requests("elicitation/create") if related(r["params"]) == tid]) >= 2

            a.waited = await wait_for(both, WAIT, STEP)
            return types.ElicitResult(action="accept", content={"name": "Grace"} if "name" in props else {"colour": "green"})
        return types.ElicitResult(action="cancel")

    async def on_sample(ctx: RequestContext[ClientSession, Any], params: types.CreateMessageRequestParams) -> Any:
        raw = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        c.asked.append(Asked("sampling/createMessage", ctx.request_id, related(ctx.meta) if ctx.meta else None, raw))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=MODEL_REPLY),
            model="interop-fake-model",
            stopReason="endTurn",
        )

    return on_elicit, on_sample


@dataclass
class Run:
    task_id: str
    created_status: str
    polled: list[str]
    result: types.CallToolResult
    final: types.GetTaskResult


async def run_task(session: ClientSession, name: str, args: dict[str, Any]) -> Run:
    tasks = session.experimental
    c = await timed(tasks.call_tool_as_task(name, args, ttl=60000))
    tid = c.task.taskId
    polled: list[str] = []
    # As poll_task's docstring and the spec have it: poll until terminal or input_required, then
    # tasks/result, which blocks until the task is terminal while its questions are delivered (on
    # its stream, unless the session stream already carried them).
    with anyio.fail_after(15):
        async with aclosing(tasks.poll_task(tid)) as polling:
            async for st in polling:
                polled.append(st.status)
                if st.status == "input_required":
                    break
    result = await timed(tasks.get_task_result(tid, types.CallToolResult))
    final = await timed(tasks.get_task(tid))
    return Run(tid, c.task.status, polled, result, final)


async def check_sequence(c: Client, tool: str, run: Run) -> None:
    # The completed notification may trail the last poll a little.
    await wait_for(lambda: any(s in TERMINAL for _, s, src in c.wire.statuses(run.task_id) if src == "notification"),
                   2.0, STEP)
    seen = [s for _, s, _src in sorted(c.wire.statuses(run.task_id))]
    statuses = dedupe([run.created_status, *seen])
    R.check(f"{tool}: statuses include input_required and end completed "
            "(working -> input_required -> working -> completed)",
            has_subsequence(statuses, HITL_SEQUENCE) and "input_required" in statuses and run.final.status == "completed",
            {"statuses": statuses, "polled": run.polled, "final": run.final.status})


def check_related(name: str, c: Client, asks: list[Asked], task_id: str) -> None:
    """related-task _meta naming the task: as the callback's RequestContext exposes it and on the wire."""
    on_wire = {json.dumps(raw["id"]): raw for _, raw in
               c.wire.requests("elicitation/create") + c.wire.requests("sampling/createMessage")}
    bad = []
    for a in asks:
        raw = on_wire.get(json.dumps(a.request_id))
        if a.ctx_task_id != task_id or raw is None or related(raw["params"]) != task_id:
            bad.append({"ctx.meta": a.ctx_task_id, "wire": raw and raw["params"].get("_meta")})
    R.check(name, bool(asks) and not bad, {"taskId": task_id, "requests": len(asks), "bad": bad})


# --------------------------------------------------------------------------- the checks
async def run_checks(session: ClientSession, c: Client) -> None:
    async with group("initialize"):
        init = await timed(session.initialize())
        R.check("initialize negotiates 2025-11-25 (client declares elicitation + sampling)",
                init.protocolVersion == "2025-11-25", init.protocolVersion)
    if R.passed == 0:
        R.note("could not initialize; stopping")
        return

    async with group("tools/list"):
        await check_task_support(session, {"confirm_delete": "optional", "multi_input": "optional",
                                           "summarize_with_model": "optional"})

    async with group("confirm_delete accept"):
        filename = "notes-py.txt"
        run = await run_task(session, "confirm_delete", {"filename": filename})
        asks = [a for a in c.asked if filename in a.params.get("message", "")]
        await check_sequence(c, "confirm_delete", run)
        R.check("confirm_delete: one elicitation/create asking {confirm: boolean}",
                len(asks) == 1 and asks[0].params.get("requestedSchema", {}).get("properties", {})
                .get("confirm", {}).get("type") == "boolean", [a.params for a in asks])
        check_related("confirm_delete: elicitation/create carries related-task _meta (RequestContext.meta and wire)",
                      c, asks, run.task_id)
        R.check('confirm_delete: accepted -> "Deleted <filename> (demo: nothing was really deleted)"',
                text_of(run.result) == f"Deleted {filename} (demo: nothing was really deleted)"
                and not run.result.isError, run.result)
        R.check("confirm_delete: tasks/result carries related-task _meta", related(run.result) == run.task_id,
                run.result.meta)

    async with group("confirm_delete decline"):
        filename = "decline-py.txt"
        run = await run_task(session, "confirm_delete", {"filename": filename})
        asks = [a for a in c.asked if filename in a.params.get("message", "")]
        await check_sequence(c, "confirm_delete decline", run)
        check_related("confirm_delete decline: elicitation/create carries related-task _meta", c, asks, run.task_id)
        R.check(f'confirm_delete decline: action "decline" -> text starts with "kept {filename}"',
                text_of(run.result).startswith(f"kept {filename}") and not run.result.isError, run.result)

    async with group("multi_input"):
        run = await run_task(session, "multi_input", {})
        asks = [a for a in c.asked if a.method == "elicitation/create" and a.ctx_task_id == run.task_id]
        await check_sequence(c, "multi_input", run)
        props = sorted(",".join(a.params.get("requestedSchema", {}).get("properties", {})) for a in asks)
        R.check("multi_input: two elicitations, one for name and one for colour", props == ["colour", "name"], props)
        reqs = [(s, raw) for s, raw in c.wire.requests("elicitation/create") if related(raw["params"]) == run.task_id]
        answers = [c.wire.answer_seq(raw["id"]) for _, raw in reqs]
        together = (len(reqs) == 2 and None not in answers and max(s for s, _ in reqs) < min(answers)  # type: ignore[type-var]
                    and asks[0].waited is True)
        R.check("multi_input: both elicitations were outstanding at the same time (both received before either answer)",
                together, {"received": [s for s, _ in reqs], "answered": answers, "firstWaited": asks[0].waited if asks else None})
        check_related("multi_input: both elicitation/create requests carry related-task _meta", c, asks, run.task_id)
        R.check('multi_input: result is "Grace likes green"',
                text_of(run.result) == "Grace likes green" and not run.result.isError, run.result)

    async with group("summarize_with_model"):
        text = "A long text about tasks that pause to ask the client's model for a summary."
        run = await run_task(session, "summarize_with_model", {"text": text})
        asks = [a for a in c.asked if a.method == "sampling/createMessage"]
        await check_sequence(c, "summarize_with_model", run)
        R.check("summarize_with_model: one sampling/createMessage carrying the text",
                len(asks) == 1 and text in json.dumps(asks[0].params.get("messages")), [a.params for a in asks])
        check_related("summarize_with_model: sampling/createMessage carries related-task _meta", c, asks, run.task_id)
        R.check('summarize_with_model: result is "Summary: <model reply>"',
                text_of(run.result) == f"Summary: {MODEL_REPLY}" and not run.result.isError, run.result)

    async with group("schemas"):
        reqs = c.wire.requests("elicitation/create") + c.wire.requests("sampling/createMessage")
        errors = []
        for _, raw in reqs:
            try:
                types.ServerRequest.model_validate({k: v for k, v in raw.items() if k in ("method", "params")})
            except pydantic.ValidationError as e:
                errors.append({"message": raw, "errors": e.errors(include_url=False)})
        R.check(f"schema: {len(reqs)} server->client requests validate against mcp.types.ServerRequest",
                len(reqs) == 5 and not errors, errors[0] if errors else len(reqs))
        notes = [raw for _, raw, _m in c.wire.received if raw.get("method") == "notifications/tasks/status"]
        bad = []
        for raw in notes:
            try:
                types.TaskStatusNotification.model_validate(raw)
            except pydantic.ValidationError as e:
                bad.append({"message": raw, "errors": e.errors(include_url=False)})
        R.check(f"schema: {len(notes)} TaskStatusNotification(s) (incl. input_required) validate",
                bool(notes) and not bad and any(n["params"].get("status") == "input_required" for n in notes),
                bad[0] if bad else len(notes))

    async with group("synchronous calls"):
        # Without a task the same tools ask on the call's own stream, as for clients without tasks.
        filename = "sync-py.txt"
        before = len(c.asked)
        res = await timed(session.call_tool("confirm_delete", {"filename": filename}))
        asks = [a for a in c.asked[before:] if filename in a.params.get("message", "")]
        R.check("sync confirm_delete: one elicitation/create, answered in the call, without related-task _meta",
                len(asks) == 1 and asks[0].ctx_task_id is None, [(a.params, a.ctx_task_id) for a in asks])
        R.check('sync confirm_delete: accepted -> "Deleted <filename> (demo: nothing was really deleted)"',
                text_of(res) == f"Deleted {filename} (demo: nothing was really deleted)" and not res.isError, res)
        text = "A synchronous call that asks the client's model."
        before = len(c.asked)
        res = await timed(session.call_tool("summarize_with_model", {"text": text}))
        asks = [a for a in c.asked[before:] if a.method == "sampling/createMessage"]
        R.check("sync summarize_with_model: one sampling/createMessage carrying the text",
                len(asks) == 1 and text in json.dumps(asks[0].params.get("messages")), [a.params for a in asks])
        R.check('sync summarize_with_model: result is "Summary: <model reply>"',
                text_of(res) == f"Summary: {MODEL_REPLY}" and not res.isError, res)


async def check_missing_capability(args: argparse.Namespace) -> None:
    """A session without elicitation_callback declares no elicitation capability."""
    async with group("missing capability"):
        wire = HitlWire()
        with anyio.fail_after(15):
            async with open_transport(args) as (r, w), recorded(r, w, wire) as (rr, ww):
                async with ClientSession(rr, ww) as session:
                    init = await timed(session.initialize())
                    R.note(f"no-capability session negotiated {init.protocolVersion}")
                    c = await timed(session.experimental.call_tool_as_task("confirm_delete", {"filename": "x.txt"}))
                    tid = c.task.taskId
                    last: types.GetTaskResult | None = None
                    async with aclosing(session.experimental.poll_task(tid)) as polling:
                        async for st in polling:
                            last = st
                            if st.status == "input_required":  # would be wrong here: nothing to ask
                                break
                    res = await timed(session.experimental.get_task_result(tid, types.CallToolResult))
                    R.check("no elicitation capability: confirm_delete task fails with a tool error mentioning elicitation",
                            last is not None and last.status == "failed" and res.isError is True
                            and "elicitation" in text_of(res).lower(),
                            {"status": last and last.status, "result": res})
                    sent = wire.requests("elicitation/create")
                    R.check("no elicitation capability: the server sent no elicitation/create", not sent, sent)


async def main(args: argparse.Namespace) -> int:
    transport = "http" if args.url else "stdio"
    c = Client()
    on_elicit, on_sample = make_callbacks(c)
    errors: list[str] = []

    async def on_message(msg: Any) -> None:
        if isinstance(msg, Exception):
            errors.append(f"{type(msg).__name__}: {msg}")

    async def sessions() -> None:
        async with open_transport(args) as (r, w), recorded(r, w, c.wire) as (rr, ww):
            async with ClientSession(rr, ww, message_handler=on_message,
                                     elicitation_callback=on_elicit, sampling_callback=on_sample) as session:
                await run_checks(session, c)
        await check_missing_capability(args)

    await within_deadline(DEADLINE, sessions)
    note_transport_errors(errors)
    R.note(f"{transport}: {len(c.wire.received)} messages received, {len(c.asked)} input requests answered")
    return R.summary()


if __name__ == "__main__":
    run(main, __doc__)
