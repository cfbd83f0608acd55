"""The replicas of one chaos run: real `mcp-tasks serve` processes on one store, started,
killed with SIGKILL and restarted by pid, and all of them stopped on the way out (also
when the run fails or is interrupted: `stop_all` is registered with atexit and the
signal handlers of chaos.py).
"""

from __future__ import annotations

import atexit
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

LISTENING = re.compile(r"listening on (http://127\.0\.0\.1:\d+)/mcp")
START_TIMEOUT = 60.0  # seconds for a replica to print its address (debug build, migrations)

# Every process this module started and has not reaped yet, by pid.
_LIVE: dict[int, subprocess.Popen] = {}
_LIVE_LOCK = threading.Lock()


def stop_all() -> None:
    """Kills (SIGKILL) every process still running that this module started, by pid."""
    with _LIVE_LOCK:
        procs = list(_LIVE.values())
        _LIVE.clear()
    for p in procs:
        if p.poll() is None:
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


atexit.register(stop_all)


@dataclass
class Replica:
    """One server process slot: restarted in place after a kill, on a new free port."""

    name: str
    argv: list[str]
    env: dict[str, str]
    log_dir: str
    proc: subprocess.Popen | None = None
    base_url: str | None = None  # http://127.0.0.1:PORT while up
    starts: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        self.starts += 1
        log_path = os.path.join(self.log_dir, f"{self.name}-{self.starts}.log")
        log = open(log_path, "w")
        proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self.env,
            start_new_session=True,  # a Ctrl-C of the terminal reaches only the harness
        )
        log.close()
        with _LIVE_LOCK:
            _LIVE[proc.pid] = proc
        deadline = time.monotonic() + START_TIMEOUT
        url = None
        while time.monotonic() < deadline and url is None:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"replica {self.name} exited with {proc.returncode} at start; see {log_path}"
                )
            with open(log_path, errors="replace") as f:
                m = LISTENING.search(f.read())
            if m:
                url = m.group(1)
            else:
                time.sleep(0.05)
        if url is None:
            os.kill(proc.pid, signal.SIGKILL)
            raise RuntimeError(f"replica {self.name} printed no address within {START_TIMEOUT} s; see {log_path}")
        with self.lock:
            self.proc, self.base_url = proc, url

    def kill9(self) -> int:
        """SIGKILL, reaped; returns the pid killed."""
        with self.lock:
            proc, self.proc, self.base_url = self.proc, None, None
        if proc is None:
            return 0
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)
        with _LIVE_LOCK:
            _LIVE.pop(proc.pid, None)
        return proc.pid

    def url(self) -> str | None:
        with self.lock:
            return self.base_url

    def alive(self) -> bool:
        with self.lock:
            return self.proc is not None and self.proc.poll() is None


class Cluster:
    """The replicas of one store, and the kills done to them (wall-clock times)."""

    def __init__(self, binary: str, database: str, n: int, ledger: str, log_dir: str, extra: list[str]):
        env = dict(os.environ)
        env["MCP_TASKS_DEMO_LEDGER"] = ledger
        env.setdefault("RUST_LOG", "info")
        argv = [binary, "serve", "--listen", "127.0.0.1:0", "--database", database, "--demo", *extra]
        self.replicas = [Replica(f"r{i + 1}", argv, env, log_dir) for i in range(n)]
        self.kills: list[tuple[float, str, int]] = []  # (time, replica, pid)

    def start(self) -> None:
        for r in self.replicas:
            r.start()

    def urls(self) -> list[str]:
        return [u for u in (r.url() for r in self.replicas) if u]

    def kill_one(self, rng) -> Replica | None:
        """SIGKILLs a random replica that is up, unless it is the last one up (requests
        always have somewhere to go); returns it, to be started again later."""
        up = [r for r in self.replicas if r.alive()]
        if len(up) < 2:
            return None
        r = rng.choice(up)
        pid = r.kill9()
        self.kills.append((time.time(), r.name, pid))
        return r

    def ensure_up(self) -> None:
        for r in self.replicas:
            if not r.alive():
                r.kill9()
                r.start()

    def stop(self) -> None:
        for r in self.replicas:
            r.kill9()
