#!/usr/bin/env python3
"""The chaos suite: a mixed workload against real `mcp-tasks serve` replicas while a
random replica is killed with SIGKILL every 10-20 s and restarted, on SQLite (two
processes on one file) and PostgreSQL (three replicas on one database, when
MCP_TASKS_TEST_PG_URL is set). It prints and asserts, per store: acknowledged creations
lost = 0, tasks stuck non-terminal = 0, resumable tasks completed = all, step bodies run
again only when in flight at a kill (from the ledger the `pipeline` demo tool writes),
no question asked again after its answer; and it prints takeover time p50/max and
answer-to-resume latency p50. Python standard library only.

    python3 tests/chaos/chaos.py                      # short form (about 2 minutes)
    python3 tests/chaos/chaos.py --duration 1800      # long form: 30 minutes per store

The seed is printed; --seed replays the same plans and kill schedule (thread timing still
varies). Exit status 1 when any check fails. See docs/durability.md.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cluster  # noqa: E402
import verdict  # noqa: E402
import workload  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "mcp-tasks"), help="the mcp-tasks binary")
    ap.add_argument("--duration", type=float, default=45, help="seconds of workload and kills per store (default 45)")
    ap.add_argument("--settle", type=float, default=120, help="most seconds to wait for every task to end afterwards")
    ap.add_argument("--stores", default="auto", help="sqlite, postgres or both (comma-separated); auto: sqlite, and postgres when MCP_TASKS_TEST_PG_URL is set")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--kill-every", default="10-20", help="seconds between kills, MIN-MAX (default 10-20)")
    ap.add_argument("--restart-after", default="2-12", help="seconds a killed replica stays down, MIN-MAX (default 2-12): short ones show a restart taking its predecessor's tasks over at once, long ones another replica's takeover")
    ap.add_argument("--server-arg", action="append", default=[], help="an extra argument for every replica (repeat), e.g. --server-arg=--lease-ttl=10s")
    ap.add_argument("--client-questions-only", action="store_true", help="serve without --board-takes-questions: a question first asked after a takeover then needs the capabilities of the client that created the task")
    ap.add_argument("--out", default=os.path.join(ROOT, "target", "chaos"), help="where databases, ledgers and replica logs go")
    return ap.parse_args()


def pg_database(url: str, name: str, create: bool) -> str:
    """Creates (or drops) a database of its own for the run on the test cluster, so that
    no other test's replicas take its tasks over; returns its URL."""
    parts = urllib.parse.urlsplit(url)
    admin = urllib.parse.urlunsplit(parts._replace(path="/postgres"))
    sql = f'CREATE DATABASE "{name}"' if create else f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", admin, "-c", sql], check=True, timeout=60)
    return urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))


def board_tasks(base: str) -> list[dict]:
    """Every task on the board (all pages, bounded)."""
    tasks, cursor = [], None
    for _ in range(10_000):
        path = "/tasks" + (f"?cursor={urllib.parse.quote(cursor)}" if cursor else "")
        status, page = workload.board(base, "GET", path)
        if status != 200:
            raise workload.Unreachable(f"board list: HTTP {status} {page}")
        tasks += page["tasks"]
        cursor = page.get("nextCursor")
        if not cursor:
            return tasks
    raise RuntimeError("the board's list did not end after 10000 pages")


def span(text: str) -> tuple[float, float]:
    """`MIN-MAX` (or one number) in seconds."""
    lo, _, hi = text.partition("-")
    return float(lo), float(hi or lo)


def run_store(store: str, args, seed: int, kill_min: float, kill_max: float) -> verdict.Verdict:
    rng = random.Random(f"{seed}-{store}")
    out = os.path.join(args.out, f"{store}-{seed}")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    ledger = os.path.join(out, "ledger.txt")
    pg_name = None
    if store == "sqlite":
        database, n = "sqlite://" + os.path.join(out, "tasks.db"), 2
    else:
        pg_name = f"chaos_{os.getpid()}_{seed}"
        database, n = pg_database(os.environ["MCP_TASKS_TEST_PG_URL"], pg_name, True), 3
    print(f"\n== chaos: {store}, {n} replicas, {args.duration:.0f} s, kill every {kill_min:g}-{kill_max:g} s; logs in {out}", flush=True)
    # People answer on the board in this workload, so the replicas take questions there:
    # a question first asked after a takeover can then be asked whatever the re-run
    # knows of the creating client's capabilities.
    extra = ([] if args.client_questions_only else ["--board-takes-questions"]) + args.server_arg
    c = cluster.Cluster(args.bin, database, n, ledger, out, extra)
    tail = verdict.LedgerTail(ledger)
    try:
        c.start()
        tail.start()
        plans = workload.make_plans(rng, args.duration)
        t0 = time.time()
        deadline = t0 + args.duration + args.settle
        stop = threading.Event()
        drivers = [workload.Driver(p, c.urls, t0, deadline, stop, rng.randrange(2**32)) for p in plans]
        pending = list(drivers)
        down_min, down_max = span(args.restart_after)
        restarts: list[tuple[float, cluster.Replica]] = []
        next_kill = t0 + rng.uniform(kill_min, kill_max)
        while time.time() < t0 + args.duration:
            now = time.time()
            while pending and t0 + pending[0].plan.at <= now:
                pending.pop(0).start()
            if now >= next_kill:
                killed = c.kill_one(rng)
                if killed:
                    down = rng.uniform(down_min, down_max)
                    restarts.append((now + down, killed))
                    print(f"  {now - t0:6.1f} s  killed {killed.name} (SIGKILL); back in {down:.1f} s", flush=True)
                next_kill = now + rng.uniform(kill_min, kill_max)
            for due, r in [x for x in restarts if x[0] <= now]:
                restarts.remove((due, r))
                r.start()
            time.sleep(0.05)
        for d in pending:  # plans due at the very end
            d.start()
        c.ensure_up()
        print(f"  {time.time() - t0:6.1f} s  kills stop; waiting for {len(drivers)} tasks to end (at most {args.settle:.0f} s)", flush=True)
        for d in drivers:
            d.join(timeout=max(0.0, deadline - time.time()) + 5)
        stop.set()
        outcomes = [d.out for d in drivers]
        # Lost: an acknowledged task no replica knows. Stuck: any task of this store
        # (unacknowledged ones too) still working after the settle, or ours still waiting.
        lost = []
        for o in outcomes:
            if o.acknowledged:
                try:
                    workload.rpc(c.urls()[0], "tasks/get", {"taskId": o.task_id}, o.task_id)
                except workload.RpcError as e:
                    if e.not_found():
                        lost.append(o.task_id)
        ours = {o.task_id for o in outcomes if o.task_id}
        stuck: list[str] = []
        for _ in range(int(args.settle * 2)):
            tasks = board_tasks(c.urls()[0])
            stuck = [f"{t['id']} {t['tool']} {t['status']}" for t in tasks if t["status"] == "working" or (t["status"] == "input_required" and t["id"] in ours)]
            orphans = [t for t in tasks if t["status"] == "input_required" and t["id"] not in ours]
            if not stuck or time.time() > deadline:
                break
            time.sleep(0.5)
        if orphans:
            print(f"  {len(orphans)} unacknowledged task(s) (creation cut by a kill) wait for an answer; not counted", flush=True)
        tail.stop.set()
        tail.join(timeout=5)
        v = verdict.judge(store, outcomes, tail.lines, c.kills, lost, stuck)
        if tail.bad:
            v.failures.append(f"unreadable ledger lines: {tail.bad[:3]}")
        return v
    finally:
        tail.stop.set()
        c.stop()
        if pg_name:
            try:
                pg_database(os.environ["MCP_TASKS_TEST_PG_URL"], pg_name, False)
            except Exception as e:  # a leftover database is harmless: say so, go on
                print(f"  note: could not drop database {pg_name}: {e}", flush=True)


def main() -> int:
    args = parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1, 2**31)
    kill_min, kill_max = span(args.kill_every)
    stores = ["sqlite"] + (["postgres"] if os.environ.get("MCP_TASKS_TEST_PG_URL") else []) if args.stores == "auto" else args.stores.split(",")
    if not os.access(args.bin, os.X_OK):
        print(f"no executable at {args.bin}: build it with `cargo build -p mcp-tasks-cli` or pass --bin", file=sys.stderr)
        return 2
    print(f"chaos seed {seed} (replay with --seed {seed}); stores: {', '.join(stores)}", flush=True)
    if "postgres" not in stores:
        print("(PostgreSQL skipped: set MCP_TASKS_TEST_PG_URL, e.g. from scripts/pg-test-cluster.sh start)", flush=True)
    # SIGTERM/SIGHUP end the run like Ctrl-C: the finally blocks and atexit kill every replica.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(143))
    failed = False
    try:
        for store in stores:
            v = run_store(store, args, seed, kill_min, kill_max)
            verdict.print_verdict(store, seed, v)
            failed |= bool(v.failures)
    finally:
        cluster.stop_all()
    print(f"\nchaos {'FAILED' if failed else 'passed'} (seed {seed})", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
