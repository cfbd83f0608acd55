"""The mixed workload of a chaos run: plans drawn from the seeded RNG up front, then one
driver thread per plan that creates its task on a random live replica and follows it
to the end over the Tasks extension wire (stateless 2026-07-28 requests), answering
questions through the task board's API or `tasks/update` and cancelling through
`tasks/cancel` or the board, whichever replica is up at that moment.

Every wait is bounded: requests by REQUEST_TIMEOUT, a driver by the run's deadline.
"""

from __future__ import annotations

import json
import random
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

REQUEST_TIMEOUT = 10.0
POLL_INTERVAL = 0.5
EXTENSION = "io.modelcontextprotocol/tasks"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {EXTENSION: {}},
        "elicitation": {"form": {}},
    },
    "io.modelcontextprotocol/clientInfo": {"name": "mcp-tasks-chaos", "version": "0"},
}
TERMINAL = {"completed", "failed", "cancelled"}


class Unreachable(Exception):
    """The replica did not answer (killed, restarting): try another one."""


class RpcError(Exception):
    def __init__(self, error: dict):
        super().__init__(json.dumps(error))
        self.error = error

    def not_found(self) -> bool:
        text = json.dumps(self.error).lower()
        return "not found" in text or "no such task" in text or "does not exist" in text


def _http(url: str, body: bytes | None, headers: dict[str, str], method: str) -> tuple[int, Any]:
    req = urllib.request.Request(url, data=body, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=REQUEST_TIMEOUT) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as e:
        raise Unreachable(f"{url}: {e}") from e
    if status >= 500 or status in (502, 503, 504):
        raise Unreachable(f"{url}: HTTP {status}: {raw[:200]!r}")
    try:
        return status, json.loads(raw) if raw else None
    except ValueError as e:
        raise Unreachable(f"{url}: unreadable reply ({e}): {raw[:200]!r}") from e


def rpc(base: str, method: str, params: dict, name: str | None = None) -> dict:
    """One stateless request; the result, or RpcError with the JSON-RPC error."""
    params = dict(params)
    params["_meta"] = META
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    if name:
        headers["Mcp-Name"] = name
    status, reply = _http(base + "/mcp", body, headers, "POST")
    if not isinstance(reply, dict):
        raise Unreachable(f"{base}: HTTP {status} without a JSON-RPC reply")
    if "error" in reply:
        raise RpcError(reply["error"])
    return reply.get("result") or {}


def board(base: str, method: str, path: str, body: dict | None = None) -> tuple[int, Any]:
    """A task board API request; actions carry the replica's CSRF token."""
    headers = {"Accept": "application/json"}
    data = None
    if method == "POST":
        _, me = _http(base + "/board/api/me", None, headers, "GET")
        headers["x-csrf-token"] = me["csrf"]
        headers["Content-Type"] = "application/json"
        data = json.dumps(body or {}).encode()
    return _http(base + "/board/api" + path, data, headers, method)


@dataclass
class Plan:
    """What one driver does, drawn from the seeded RNG before the run starts."""

    index: int
    at: float  # seconds after the start
    tool: str
    args: dict
    kind: str  # pipeline | instant | failing | slow
    answer_delay: float = 0.0
    answer_via: str = "update"  # update | board
    answer: str = "approve"  # approve | reject | decline
    cancel_after: float | None = None
    cancel_via: str = "rpc"  # rpc | board


@dataclass
class Outcome:
    """What a driver saw."""

    plan: Plan
    task_id: str | None = None
    acknowledged: bool = False
    immediate: dict | None = None  # a plain result (no task)
    status: str | None = None
    result: dict | None = None
    answered_at: float | None = None
    asked_again: list[str] = field(default_factory=list)
    cancel_sent: bool = False
    errors: list[str] = field(default_factory=list)
    done_at: float | None = None


def make_plans(rng: random.Random, duration: float) -> list[Plan]:
    plans: list[Plan] = []
    t = 0.5
    while t < duration:
        i = len(plans)
        roll = rng.random()
        steps = rng.randint(2, 7)
        secs = round(rng.uniform(0.3, 1.5), 2)
        if roll < 0.30:
            p = Plan(i, t, "pipeline", {"steps": steps, "step_seconds": secs}, "pipeline")
        elif roll < 0.62:
            p = Plan(i, t, "pipeline", {"steps": steps, "step_seconds": secs, "ask_after": rng.randint(1, steps - 1)}, "pipeline")
            p.answer_delay = round(rng.uniform(0.2, 8.0), 2)
            p.answer_via = rng.choice(["update", "board"])
            p.answer = rng.choices(["approve", "reject", "decline"], [6, 2, 2])[0]
        elif roll < 0.72:
            p = Plan(i, t, "pipeline", {"steps": steps, "step_seconds": secs, "ask_after": 1}, "pipeline")
            p.answer_delay = round(rng.uniform(0.2, 3.0), 2)
            p.cancel_after = round(rng.uniform(0.5, 6.0), 2)
            p.cancel_via = rng.choice(["rpc", "board"])
        elif roll < 0.82:
            p = Plan(i, t, "slow_compute", {"seconds": 0, "label": f"instant-{i}"}, "instant")
        elif roll < 0.91:
            p = Plan(i, t, "failing_job", {}, "failing")
        else:
            p = Plan(i, t, "slow_compute", {"seconds": round(rng.uniform(1, 4), 1), "label": f"slow-{i}"}, "slow")
        plans.append(p)
        t += rng.uniform(0.3, 1.2)
    return plans


class Driver(threading.Thread):
    """Follows one plan to the end (or to `deadline`, wall clock)."""

    def __init__(self, plan: Plan, urls, t0: float, deadline: float, stop: threading.Event, seed: int):
        super().__init__(name=f"driver-{plan.index}", daemon=True)
        self.plan, self.urls, self.t0, self.deadline, self.stop = plan, urls, t0, deadline, stop
        self.rng = random.Random(seed)
        self.out = Outcome(plan)
        self.question_seen: float | None = None

    def pick(self) -> str:
        urls = self.urls()
        if not urls:
            raise Unreachable("no replica is up")
        return self.rng.choice(urls)

    def run(self) -> None:
        try:
            self._run()
        except Exception as e:  # a driver must never take the harness down
            self.out.errors.append(f"driver crashed: {type(e).__name__}: {e}")

    def _sleep_until(self, t: float) -> bool:
        while time.time() < t:
            if time.time() > self.deadline:
                return False
            time.sleep(min(0.2, max(0.0, t - time.time())))
        return True

    def _run(self) -> None:
        p, out = self.plan, self.out
        if not self._sleep_until(self.t0 + p.at) or self.stop.is_set():
            return
        # Create: a refused connection was never acknowledged, so another replica is
        # tried; a reply is an acknowledgement the task must not be lost after.
        for _ in range(5):
            try:
                r = rpc(self.pick(), "tools/call", {"name": p.tool, "arguments": p.args}, p.tool)
            except Unreachable:
                time.sleep(0.3)
                continue
            except RpcError as e:
                out.errors.append(f"create refused: {e}")
                return
            if r.get("resultType") == "task" and r.get("taskId"):
                out.task_id, out.acknowledged = r["taskId"], True
            else:
                out.immediate, out.status = r, "immediate"
                out.done_at = time.time()
                return
            break
        if not out.task_id:
            out.errors.append("no replica took the creation")
            return
        created = time.time()
        while time.time() < self.deadline:
            try:
                self._poll(created)
            except Unreachable:
                pass
            if out.status in TERMINAL:
                out.done_at = time.time()
                return
            time.sleep(POLL_INTERVAL)
        out.errors.append(f"still {out.status} at the deadline")

    def _poll(self, created: float) -> None:
        p, out = self.plan, self.out
        tid = out.task_id
        try:
            g = rpc(self.pick(), "tasks/get", {"taskId": tid}, tid)
        except RpcError as e:
            out.errors.append(f"tasks/get: {e}")
            return
        out.status = g.get("status")
        if out.status in TERMINAL:
            out.result = g.get("result") or g.get("error")
            return
        questions = g.get("inputRequests") or {}
        if questions and out.answered_at is not None:
            # Answered once: the question must not come back (not even after a takeover).
            for key in questions:
                if key not in out.asked_again:
                    out.asked_again.append(key)
        now = time.time()
        if questions and self.question_seen is None:
            self.question_seen = now
        if p.cancel_after is not None and not out.cancel_sent and now >= created + p.cancel_after:
            self._cancel()
        if questions and out.answered_at is None and now >= self.question_seen + p.answer_delay:
            key = next(iter(questions))
            if self._answer(key):
                out.answered_at = time.time()

    def _answer(self, key: str) -> bool:
        p, tid = self.plan, self.out.task_id
        if p.answer == "decline":
            content, action = None, "decline"
        else:
            content, action = {"approve": p.answer == "approve"}, "accept"
        base = self.pick()
        if p.answer_via == "board":
            form = {"key": key, "action": action}
            if content is not None:
                form["content"] = content
            status, reply = board(base, "POST", f"/tasks/{tid}/answer", form)
            if status == 409:  # moved on meanwhile (a takeover): read the task again
                return False
            if status != 200:
                self.out.errors.append(f"board answer: HTTP {status} {reply}")
                return False
            return True
        response = {"action": action} if content is None else {"action": action, "content": content}
        try:
            rpc(base, "tasks/update", {"taskId": tid, "inputResponses": {key: response}}, tid)
        except RpcError as e:
            self.out.errors.append(f"tasks/update: {e}")
            return False
        return True

    def _cancel(self) -> None:
        tid = self.out.task_id
        base = self.pick()
        if self.plan.cancel_via == "board":
            status, _ = board(base, "POST", f"/tasks/{tid}/cancel")
            ok = status in (200, 409)
        else:
            try:
                rpc(base, "tasks/cancel", {"taskId": tid}, tid)
                ok = True
            except RpcError as e:
                ok = "terminal" in str(e) or "already" in str(e)
        self.out.cancel_sent = self.out.cancel_sent or ok
