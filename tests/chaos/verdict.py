"""What a chaos run found: the ledger the replicas' `pipeline` step bodies append to
(read while the run goes on, each line stamped with the time it was first seen), the
drivers' outcomes and the kills, turned into the figures and the checks that fail the run.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from dataclasses import dataclass, field

from workload import Outcome


@dataclass
class Line:
    task: str
    step: int
    attempt: int
    seen: float  # wall clock, within TAIL_INTERVAL of the write


TAIL_INTERVAL = 0.05


class LedgerTail(threading.Thread):
    """Reads new complete lines of the ledger every TAIL_INTERVAL until stopped."""

    def __init__(self, path: str):
        super().__init__(name="ledger-tail", daemon=True)
        self.path, self.lines, self.stop, self._offset, self._rest = path, [], threading.Event(), 0, b""
        self.bad: list[str] = []

    def run(self) -> None:
        while not self.stop.is_set():
            self.read_new()
            self.stop.wait(TAIL_INTERVAL)
        self.read_new()

    def read_new(self) -> None:
        if not os.path.exists(self.path):
            return
        with open(self.path, "rb") as f:
            f.seek(self._offset)
            chunk = f.read()
        self._offset += len(chunk)
        data = self._rest + chunk
        *complete, self._rest = data.split(b"\n")
        now = time.time()
        for raw in complete:
            parts = raw.decode(errors="replace").split()
            if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
                self.bad.append(raw.decode(errors="replace"))
                continue
            self.lines.append(Line(parts[0], int(parts[1]), int(parts[2]), now))


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f} s"


@dataclass
class Verdict:
    figures: list[tuple[str, str]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def figure(self, name: str, value) -> None:
        self.figures.append((name, str(value)))

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            self.failures.append(what)


def ledger_reruns(lines: list[Line]) -> tuple[int, list[str]]:
    """Step bodies run again, and those that ran again although not in flight at a kill.

    A body may run again only when it was the last one started by the latest earlier
    attempt that ran any: the step in flight when that attempt's process died (its
    output was not recorded yet). Any other repeat re-ran a recorded step.
    """
    by_task: dict[str, list[Line]] = {}
    for line in lines:
        by_task.setdefault(line.task, []).append(line)
    reruns, bad = 0, []
    for task, ls in by_task.items():
        ran: set[int] = set()
        last_of: dict[int, int] = {}  # attempt -> last step it started
        for line in ls:
            if line.step in ran:
                reruns += 1
                earlier = [a for a in last_of if a < line.attempt]
                in_flight = last_of[max(earlier)] if earlier else None
                if line.step != in_flight or line.attempt in last_of and last_of[line.attempt] >= line.step:
                    bad.append(f"{task} step {line.step} ran again in attempt {line.attempt} (in flight at the last kill: {in_flight})")
            ran.add(line.step)
            last_of[line.attempt] = line.step
    return reruns, bad


def takeovers(lines: list[Line], kills: list[tuple[float, str, int]], ask_after: dict[str, int]) -> list[float]:
    """Seconds from a kill to the first step body of the next attempt of a task it hit
    (tasks then waiting for an answer are left out: they resume when answered).

    The kill counted is the first one after the previous attempt's last step body: the
    process running it died at that kill or a later one, so the figure is an upper bound.
    """
    out: list[float] = []
    last: dict[str, Line] = {}
    kill_times = sorted(k[0] for k in kills)
    for line in lines:
        prev = last.get(line.task)
        if prev and line.attempt > prev.attempt and prev.step != ask_after.get(line.task):
            between = [k for k in kill_times if prev.seen - 2 * TAIL_INTERVAL <= k <= line.seen]
            if between:
                out.append(line.seen - between[0])
        last[line.task] = line
    return out


def resume_latencies(lines: list[Line], outcomes: list[Outcome]) -> list[float]:
    """Seconds from an accepted answer to the first step body after the question."""
    out = []
    by_task: dict[str, list[Line]] = {}
    for line in lines:
        by_task.setdefault(line.task, []).append(line)
    for o in outcomes:
        after = o.plan.args.get("ask_after")
        if o.answered_at is None or after is None or not succeeded(o):
            continue
        first = next((line.seen for line in by_task.get(o.task_id, []) if line.step == after + 1 and line.seen >= o.answered_at - TAIL_INTERVAL), None)
        if first is not None:
            out.append(max(0.0, first - o.answered_at))
    return out


def succeeded(o: Outcome) -> bool:
    """Completed without a tool error (a tool error is a completed task whose result
    has `isError`)."""
    return o.status == "completed" and not (o.result or {}).get("isError")


def why(o: Outcome) -> str:
    r = o.result or {}
    text = " ".join(c.get("text", "") for c in r.get("content", []) if isinstance(c, dict)) or str(r)
    return f"{o.task_id} {o.status}: {text[:200]}"


def judge(store: str, outcomes: list[Outcome], lines: list[Line], kills, lost: list[str], stuck: list[str]) -> Verdict:
    v = Verdict()
    acked = [o for o in outcomes if o.acknowledged]
    v.figure("tasks acknowledged", len(acked))
    v.figure("instant calls (plain results)", sum(1 for o in outcomes if o.status == "immediate"))
    v.figure("replicas killed (SIGKILL)", len(kills))
    v.figure("acknowledged creations lost", len(lost))
    v.check(not lost, f"acknowledged creations lost: {lost[:5]}")
    v.figure("tasks stuck non-terminal", len(stuck))
    v.check(not stuck, f"tasks stuck non-terminal: {stuck[:5]}")

    pipelines = [o for o in acked if o.plan.kind == "pipeline"]
    must_complete = [o for o in pipelines if o.plan.cancel_after is None]
    completed = [o for o in must_complete if succeeded(o)]
    v.figure("resumable tasks completed", f"{len(completed)}/{len(must_complete)}")
    v.check(len(completed) == len(must_complete), "resumable tasks not completed: " + "; ".join(why(o) for o in must_complete if not succeeded(o))[:1500])
    cancelled = [o for o in pipelines if o.plan.cancel_after is not None]
    v.figure("pipelines cancelled", f"{sum(1 for o in cancelled if o.status == 'cancelled')}/{len(cancelled)} (the rest finished first)")
    max_attempt: dict[str, int] = {}
    steps_of: dict[str, set[int]] = {}
    for line in lines:
        max_attempt[line.task] = max(max_attempt.get(line.task, 0), line.attempt)
        steps_of.setdefault(line.task, set()).add(line.step)
    for o in pipelines:
        if not succeeded(o):
            continue
        sc = (o.result or {}).get("structuredContent") or {}
        want = None if o.plan.args.get("ask_after") is None else o.plan.answer == "approve"
        v.check(sc.get("completed_steps") == o.plan.args["steps"], f"{o.task_id}: completed_steps {sc.get('completed_steps')} != {o.plan.args['steps']}")
        v.check(sc.get("approved") == want, f"{o.task_id}: approved {sc.get('approved')!r}, answered {o.plan.answer!r}")
        v.check(isinstance(sc.get("attempts"), int) and sc["attempts"] >= max_attempt.get(o.task_id, 1), f"{o.task_id}: attempts {sc.get('attempts')} < ledger's {max_attempt.get(o.task_id)}")
        steps_seen = steps_of.get(o.task_id, set())
        v.check(steps_seen == set(range(1, o.plan.args["steps"] + 1)), f"{o.task_id}: ledger steps {sorted(steps_seen)}")
    for o in acked:
        if o.plan.kind == "failing":
            v.check(o.status == "failed" or (o.status == "completed" and not succeeded(o)), f"{o.task_id} (failing_job) ended {o.status} without an error")
    v.figure("tasks taken over (a later attempt ran a step)", sum(1 for t, a in max_attempt.items() if a > 1))

    reruns, bad = ledger_reruns(lines)
    v.figure("step bodies run again (in flight at a kill)", reruns - len(bad))
    v.figure("step bodies run again although recorded", len(bad))
    v.check(not bad, "recorded steps ran again: " + "; ".join(bad[:5]))
    asked = [f"{o.task_id} {o.asked_again}" for o in outcomes if o.asked_again]
    v.figure("questions asked again after their answer", len(asked))
    v.check(not asked, "questions asked again after their answer: " + "; ".join(asked[:5]))
    errors = [f"{o.task_id or o.plan.index}: {e}" for o in outcomes for e in o.errors]
    v.figure("driver errors", len(errors))
    v.check(not errors, "driver errors: " + "; ".join(errors[:5]))

    ask_after = {o.task_id: o.plan.args.get("ask_after") for o in pipelines}
    tk = takeovers(lines, kills, ask_after)
    v.figure("takeover time p50 / max", f"{fmt(pct(tk, 0.5))} / {fmt(max(tk) if tk else None)} (n={len(tk)})")
    rl = resume_latencies(lines, outcomes)
    v.figure("answer-to-resume latency p50", f"{fmt(pct(rl, 0.5))} (n={len(rl)})")
    return v


def print_verdict(store: str, seed: int, v: Verdict) -> None:
    print(f"\n== chaos verdict: {store} (seed {seed})", flush=True)
    width = max(len(n) for n, _ in v.figures)
    for name, value in v.figures:
        print(f"  {name:<{width}}  {value}", flush=True)
    for f in v.failures:
        print(f"  FAIL {f}", flush=True)
    print(f"  {'PASS' if not v.failures else 'FAILED'} ({store})", flush=True)
