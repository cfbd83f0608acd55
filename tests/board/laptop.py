"""The board on a laptop, in a real headless Chromium (Debian's package) driven by
Playwright for Python: with the principals of docs/approvals.md's example, an approver
who rejected a call is not offered "Run again" and their list's counts match its rows;
a tool error is a failure (Failed tab, timeline) said once in the detail pane; an
operator's "Run again" meets the approval again and the timeline names them; an
approval shows its arguments once; at 1280 and 1440 px with a task open nothing
overflows, the detail pane covers no column and messages wrap between words; and a
board without sign-in hides the owner, answers `/` and `/favicon.ico`.

Usage: laptop.py --bin target/debug/mcp-tasks --chromium /usr/bin/chromium --shots DIR
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from playwright.sync_api import expect, sync_playwright

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Mcp  # noqa: E402

WAIT_MS = 15_000
CHECKS = []
TOKENS = '"tok-alice" = "alice"\n"tok-bob" = "bob"\n"tok-agent" = "agent"\n"tok-root" = "root"\n'
CONFIG = """
[server]
auth_tokens = "{folder}/tokens.toml"

[board]
operators = ["root"]

[groups]
ops = ["alice", "bob"]

[[approval]]
tool = "deploy"
when = [{{ pointer = "/env", equals = "prod" }}]
approvers = ["ops"]
"""
AGENT_TEXT = "Do not repeat the same call"


def check(name):
    CHECKS.append(name)
    print(f"ok - {name}", flush=True)


class Server:
    """`mcp-tasks serve --demo` on a free loopback port; with `config`, signed in."""

    def __init__(self, binary, folder, config):
        args = [binary, "serve", "--demo", "--listen", "127.0.0.1:0", "--log", "warn",
                "--database", f"sqlite://{folder}/tasks.db"]
        if config:
            with open(os.path.join(folder, "tokens.toml"), "w") as f:
                f.write(TOKENS)
            path = os.path.join(folder, "laptop.toml")
            with open(path, "w") as f:
                f.write(CONFIG.format(folder=folder))
            args += ["--config", path]
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True)
        for line in self.process.stderr:
            match = re.search(r"listening on (http://\S+)/mcp", line)
            if match:
                self.base = match.group(1)
                break
            print(line, end="", file=sys.stderr)
        else:
            raise SystemExit("the server did not start")
        threading.Thread(target=lambda: [None for _ in self.process.stderr], daemon=True).start()

    def stop(self):
        self.process.kill()
        self.process.wait()


def ended(mcp, task):
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        got = mcp.get(task)
        if got["status"] in ("completed", "failed", "cancelled"):
            return got
        time.sleep(0.1)
    raise AssertionError(f"task {task} did not end")


def login(browser, base, token, width=1280):
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(f"{base}/board/login")
    page.fill("#token", token)
    page.click("#login button[type=submit]")
    expect(page).to_have_url(f"{base}/board")
    expect(page.locator("#live")).to_have_text("live")
    return page


def count(page, status):
    """The number a tab shows (no '+')."""
    return int(page.locator(f'#tabs a.tab[data-status="{status}"] .count').inner_text().rstrip("+"))


def rows(page):
    return page.locator("#tasks tbody tr[data-id]").count()


LAYOUT = """() => {
  const problems = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > window.innerWidth) problems.push(`the page scrolls sideways: ${doc.scrollWidth} > ${window.innerWidth}`);
  const pane = document.getElementById("detail-pane");
  const table = document.getElementById("tasks");
  if (pane && !pane.hidden) {
    const left = pane.getBoundingClientRect().left;
    for (const th of table.querySelectorAll("th")) {
      const box = th.getBoundingClientRect();
      if (box.width > 0 && box.right > left + 1) problems.push(`column '${th.textContent}' runs under the detail pane (${box.right} > ${left})`);
    }
  }
  // A word broken over two lines has two boxes.
  for (const cell of document.querySelectorAll("#tasks td.message")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const re = /\\S+/g;
      let m;
      while ((m = re.exec(node.data))) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (lines.size > 1) problems.push(`'${m[0]}' is broken mid-word`);
      }
    }
  }
  return problems;
}"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--chromium", required=True)
    parser.add_argument("--shots", required=True)
    args = parser.parse_args()
    os.makedirs(args.shots, exist_ok=True)

    signed = Server(args.bin, tempfile.mkdtemp(prefix="board-laptop-"), True)
    local = Server(args.bin, tempfile.mkdtemp(prefix="board-laptop-local-"), False)
    base = signed.base
    agent = Mcp(base, "tok-agent")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=args.chromium, headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                      "--disable-background-networking", "--disable-component-update",
                      "--disable-sync"])
            bob = login(browser, base, "tok-bob")
            root = login(browser, base, "tok-root")

            # bob rejects the agent's deploy; he is offered no "Run again", and his
            # list (his own tasks: none) agrees with its counts.
            old = agent.start("deploy", {"service": "api", "env": "prod"})
            item = bob.locator(f'#inbox li[data-task="{old}"]')
            expect(item).to_be_visible()
            item.locator("a").click()
            box = bob.locator("#detail-pane section.question-approval")
            box.locator("textarea.approval-reason").fill("freeze until Monday")
            box.get_by_role("button", name="Reject", exact=True).click()
            assert AGENT_TEXT in ended(agent, old)["result"]["content"][0]["text"]
            bob.reload()
            expect(bob.locator("#detail-status")).to_have_text("tool error")
            expect(bob.locator("#run-again")).to_have_count(0)
            status = bob.evaluate(
                """async (task) => {
                    const csrf = document.querySelector('meta[name="csrf-token"]').content;
                    const r = await fetch(`/board/api/tasks/${task}/rerun`, {method: "POST",
                      headers: {"content-type": "application/json", "x-csrf-token": csrf}, body: "{}"});
                    return [r.status, (await r.json()).error];
                }""", old)
            assert status[0] == 403 and "owner (agent) or an operator" in status[1], status
            time.sleep(2.5)  # a live change re-counts within two seconds
            assert count(bob, "") == rows(bob) == 0, (count(bob, ""), rows(bob))
            check("an approver who rejected a call is not offered Run again (403 with the reason); their counts match their rows")

            # The tool error is a failure, said once.
            root.goto(f"{base}/board/tasks/{old}")
            pane = root.locator("#detail-pane")
            expect(pane.locator(".tool-error-box")).to_be_visible()
            assert pane.inner_text().count(AGENT_TEXT) == 1, pane.inner_text()
            last = pane.locator("ol.timeline li").last
            expect(last).to_contain_text("tool error")
            expect(last).not_to_contain_text("completed")
            root.locator('#tabs a.tab[data-status="failed"]').click()
            expect(root.locator(f'#tasks tr[data-id="{old}"]')).to_have_count(1)
            assert count(root, "failed") >= 1
            root.locator('#tabs a.tab[data-status="completed"]').click()
            expect(root.locator(f'#tasks tr[data-id="{old}"]')).to_have_count(0)
            check("a tool error counts and lists under Failed, not Completed, ends its timeline as 'tool error', and its words are shown once")

            # root runs it again: held by the approval again; the timeline names root.
            root.goto(f"{base}/board/tasks/{old}")
            root.once("dialog", lambda d: d.accept())
            root.locator("#run-again").click()
            expect(root.locator("#detail-status")).to_have_text("input required")
            new = root.locator("#detail-id").inner_text()
            assert new != old
            expect(root.locator("#detail-pane ol.timeline li").first).to_contain_text(
                f"run again by root on the task board from task {old}")
            got = agent.get(new)
            assert got["_meta"]["io.modelcontextprotocol/relatedTaskIds"] == [old], got
            root.goto(f"{base}/board/tasks/{old}")
            expect(root.locator("#detail-pane ol.timeline")).to_contain_text(f"run again by root as task {new}")
            check("an operator's Run again waits for approval again; both timelines and the agent's tasks/get name it")

            # The approval shows its arguments once.
            alice = login(browser, base, "tok-alice")
            alice.goto(f"{base}/board/tasks/{new}")
            approval = alice.locator("#detail-pane section.question-approval")
            expect(approval).to_be_visible()
            assert alice.locator("#detail-pane").inner_text().count('"env": "prod"') == 1
            expect(alice.locator("#detail-pane h3", has_text="Arguments")).to_have_count(0)
            check("an approval shows the call's arguments once")

            # A laptop: tasks with long messages, one open; 1280 and 1440 px.
            for i in range(4):
                agent.start("slow_compute", {"seconds": 30, "label": f"rebuilding the search index of shard {i}"})
            agent.start("confirm_delete", {"filename": "/etc/passwd"})
            agent.start("book_meeting", {"subject": "Planning"})
            failing = agent.start("failing_job", {})
            ended(agent, failing)
            for width in (1280, 1440):
                root.set_viewport_size({"width": width, "height": 900})
                root.goto(f"{base}/board/tasks/{failing}")
                expect(root.locator("#live")).to_have_text("live")
                expect(root.locator("#detail-id")).to_have_text(failing)
                problems = root.evaluate(LAYOUT)
                assert not problems, f"{width}px: {problems}"
                all_rows = rows(root)
                assert count(root, "") == all_rows, (width, count(root, ""), all_rows)
                bulk = root.locator("#bulk-cancel")
                expect(bulk).to_have_text(re.compile(r"^Cancel the \d+ unfinished tasks?$"))
                root.screenshot(path=os.path.join(args.shots, f"board-laptop-{width}.png"), full_page=True)
            check("at 1280 and 1440 px with a task open: no sideways scroll, no column under the pane, words unbroken, All counts the rows")
            browser.close()

        # Without sign-in: no owner column ("stateless" says nothing), / and the icon.
        with urllib.request.urlopen(f"{local.base}/favicon.ico", timeout=10) as icon:
            assert icon.status == 200 and icon.headers["content-type"].startswith("image/"), icon.headers
        with urllib.request.urlopen(f"{local.base}/", timeout=10) as root_page:
            assert root_page.url.endswith("/board"), root_page.url
        anonymous = Mcp(local.base, "unused")
        anonymous.start("slow_compute", {"seconds": 30})
        with urllib.request.urlopen(f"{local.base}/board", timeout=10) as page:
            html = page.read().decode()
        assert "stateless" not in html and 'class="owner"' not in html, "the owner column shows on a board without sign-in"
        check("without sign-in the owner column is hidden; / leads to the board and /favicon.ico is an icon")
    finally:
        signed.stop()
        local.stop()
    print(f"board laptop tests: {len(CHECKS)} passed")


if __name__ == "__main__":
    sys.exit(main())
