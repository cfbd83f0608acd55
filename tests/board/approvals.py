"""Approvals and the inbox in a real headless Chromium (Debian's package), driven by
Playwright for Python, against `mcp-tasks serve --demo` with `[[approval]]` rules and a
gateway upstream: approve (with changed arguments), reject with a reason the client
receives, a quorum of two where one person voting twice does not count, each deadline
outcome, escalation to a second group, an upstream tool behind a rule, and the inbox
("Waiting for me", overdue). The client is a stateless extension-wire client; people
decide on the board.

Usage: approvals.py --bin target/debug/mcp-tasks --chromium /usr/bin/chromium --shots DIR
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

from playwright.sync_api import expect, sync_playwright

from browser import Mcp, login, WAIT_MS

CHECKS = []
TOKENS = '"tok-alice" = "alice"\n"tok-bob" = "bob"\n"tok-dave" = "dave"\n"tok-carol" = "carol"\n'


def check(name):
    CHECKS.append(name)
    print(f"ok - {name}", flush=True)


def config(folder, binary):
    return f"""
[server]
auth_tokens = "{folder}/tokens.toml"

[groups]
ops = ["alice", "bob"]
leads = ["dave"]

[[approval]]
tool = "deploy"
when = [{{ pointer = "/service", equals = "web" }}]
approvers = ["ops"]
allow_edit = true
message = "Deploy web?"

[[approval]]
tool = "deploy"
when = [{{ pointer = "/service", equals = "db" }}]
approvers = ["ops"]
required = 2

[[approval]]
tool = "deploy"
when = [{{ pointer = "/service", equals = "late-reject" }}]
approvers = ["dave"]
deadline = "2s"

[[approval]]
tool = "deploy"
when = [{{ pointer = "/service", equals = "late-approve" }}]
approvers = ["dave"]
deadline = "2s"
on_timeout = "approve"

[[approval]]
tool = "deploy"
when = [{{ pointer = "/service", equals = "escalate" }}]
approvers = ["ops"]
deadline = "4s"
on_timeout = "escalate"
escalate_to = ["leads"]

[[approval]]
tool = "up_*"
approvers = ["ops"]

[[upstream]]
name = "up"
command = ["{binary}", "serve", "--demo", "--stdio", "--database", "memory:", "--log", "warn"]
prefix = "up_"
"""


class Server:
    """`mcp-tasks serve --demo --config …` on a free loopback port."""

    def __init__(self, binary, folder):
        with open(os.path.join(folder, "tokens.toml"), "w") as f:
            f.write(TOKENS)
        path = os.path.join(folder, "approvals.toml")
        with open(path, "w") as f:
            f.write(config(folder, os.path.abspath(binary)))
        self.process = subprocess.Popen(
            [binary, "serve", "--demo", "--listen", "127.0.0.1:0", "--log", "warn",
             "--database", f"sqlite://{folder}/tasks.db", "--config", path],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
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
    """tasks/get until the task ended (bounded)."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        got = mcp.get(task)
        if got["status"] in ("completed", "failed", "cancelled"):
            return got
        time.sleep(0.1)
    raise AssertionError(f"task {task} did not end: {got}")


def text_of(got):
    return got["result"]["content"][0]["text"]


def open_from_inbox(page, task):
    item = page.locator(f'#inbox li[data-task="{task}"]')
    expect(item).to_be_visible()
    item.locator("a").click()
    expect(page.locator("#detail-id")).to_have_text(task)
    return page.locator("#detail-pane section.question")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--chromium", required=True)
    parser.add_argument("--shots", required=True)
    args = parser.parse_args()
    os.makedirs(args.shots, exist_ok=True)

    folder = tempfile.mkdtemp(prefix="board-approvals-")
    server = Server(args.bin, folder)
    base = server.base
    carol = Mcp(base, "tok-carol")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=args.chromium, headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                      "--disable-background-networking", "--disable-component-update",
                      "--disable-sync"])
            alice = login(browser, base, "tok-alice")
            bob = login(browser, base, "tok-bob")
            dave = login(browser, base, "tok-dave")

            # Approve with changed arguments: the tool runs with them.
            web = carol.start("deploy", {"service": "web", "env": "prod"})
            box = open_from_inbox(alice, web)
            expect(box.locator("h3")).to_have_text("Approval")
            expect(box.locator(".question-message")).to_have_text("Deploy web?")
            expect(alice.locator("#inbox-count")).not_to_have_text("0")
            # An approver of someone else's call answers it; cancelling it is not theirs.
            expect(alice.locator("#cancel-task")).to_have_count(0)
            alice.screenshot(path=os.path.join(args.shots, "board-approval.png"), full_page=True)
            box.locator("textarea.approval-arguments").fill('{"service": "web", "env": "staging"}')
            box.get_by_role("button", name="Approve", exact=True).click()
            got = ended(carol, web)
            assert got["status"] == "completed", got
            assert got["result"]["structuredContent"] == {"service": "web", "env": "staging"}, got
            alice.reload()
            expect(alice.locator("#detail-pane ol.timeline")).to_contain_text(
                'approved with changed arguments {"service":"web","env":"staging"} by alice via board')
            check("an approver approves a demo tool's call with changed arguments; the timeline says who, how, when")

            # Reject: a reason is required, and the client receives it.
            rejected = carol.start("deploy", {"service": "web", "env": "prod"})
            box = open_from_inbox(bob, rejected)
            box.get_by_role("button", name="Reject", exact=True).click()
            expect(box.locator("p.error")).to_contain_text("Write a reason")
            box.locator("textarea.approval-reason").fill("freeze until Monday")
            box.get_by_role("button", name="Reject", exact=True).click()
            got = ended(carol, rejected)
            assert got["result"].get("isError") is True, got
            assert 'rejected by bob: "freeze until Monday"' in text_of(got), got
            check("a reject with a reason reaches the client as a tool error carrying the reason")

            # Quorum of two: alice's second vote does not count; bob's does.
            db = carol.start("deploy", {"service": "db", "env": "prod"})
            box = open_from_inbox(alice, db)
            expect(box.locator(".approval-who")).to_contain_text("2 must approve")
            box.get_by_role("button", name="Approve", exact=True).click()
            expect(alice.locator('#detail-pane section.question .why-not')).to_contain_text(
                "You approved an earlier round already")
            # The page offers no button; the API refuses a made-up second vote too.
            key = alice.locator("#detail-pane section.question").get_attribute("data-key")
            status = alice.evaluate(
                """async ([task, key]) => {
                    const csrf = document.querySelector('meta[name="csrf-token"]').content;
                    const r = await fetch(`/board/api/tasks/${task}/answer`, {method: "POST",
                      headers: {"content-type": "application/json", "x-csrf-token": csrf},
                      body: JSON.stringify({key, action: "approve"})});
                    return r.status;
                }""", [db, key])
            assert status == 403, status
            assert carol.get(db)["status"] == "input_required"
            box = open_from_inbox(bob, db)
            expect(box.locator(".approval-who")).to_contain_text("approved so far by alice")
            box.get_by_role("button", name="Approve", exact=True).click()
            got = ended(carol, db)
            assert got["status"] == "completed" and not got["result"].get("isError"), got
            check("a quorum of two needs two distinct people: one person voting twice does not count")

            # Deadlines: reject, approve, escalate to a second group.
            late_reject = carol.start("deploy", {"service": "late-reject", "env": "prod"})
            late_approve = carol.start("deploy", {"service": "late-approve", "env": "prod"})
            escalate = carol.start("deploy", {"service": "escalate", "env": "prod"})
            got = ended(carol, late_reject)
            assert got["result"].get("isError") is True and "nobody decided by its deadline" in text_of(got), got
            got = ended(carol, late_approve)
            assert got["result"]["structuredContent"]["service"] == "late-approve", got
            check("a deadline with on_timeout reject rejects, with approve approves")
            # Escalated: the leads (dave) are asked; ops no longer decide.
            item = dave.locator(f'#inbox li[data-task="{escalate}"]')
            expect(item).to_be_visible(timeout=WAIT_MS)
            item.locator("a").click()
            box = dave.locator("#detail-pane section.question-approval")
            expect(box.locator(".approval-who")).to_contain_text("escalated")
            box.get_by_role("button", name="Approve", exact=True).click()
            got = ended(carol, escalate)
            assert got["result"]["structuredContent"]["service"] == "escalate", got
            dave.goto(f"{base}/board/tasks/{escalate}")
            timeline = dave.locator("#detail-pane ol.timeline")
            expect(timeline).to_contain_text("got no answer by its deadline")
            expect(timeline).to_contain_text("approved by dave via board")
            check("a deadline with on_timeout escalate asks the second group, who approve")

            # A gateway upstream's tool behind a rule.
            upstream = carol.start("up_slow_compute", {"seconds": 0, "label": "via gateway"})
            box = open_from_inbox(bob, upstream)
            expect(box.locator(".approval-tool")).to_have_text("up_slow_compute")
            box.get_by_role("button", name="Approve", exact=True).click()
            got = ended(carol, upstream)
            assert got["status"] == "completed", got
            assert got["result"]["structuredContent"]["label"] == "via gateway", got
            check("a gateway upstream tool behind a rule waits for approval, then runs upstream")

            # The inbox: a question assigned to alice with a deadline, overdue, answered.
            asked = carol.start("ask_a_person", {"question": "Ship the release?", "assignee": "alice",
                                                 "deadline_seconds": 1})
            item = alice.locator(f'#inbox li[data-task="{asked}"]')
            expect(item).to_be_visible()
            expect(item).to_have_class(re.compile("overdue"))
            expect(alice.locator("#inbox .overdue-count")).to_contain_text("overdue")
            expect(bob.locator(f'#inbox li[data-task="{asked}"]')).to_have_count(0)
            item.locator("a").click()
            box = alice.locator("#detail-pane section.question")
            expect(box.locator(".question-for")).to_contain_text("overdue")
            box.locator("input[type=checkbox]").check()
            box.get_by_role("button", name="Submit", exact=True).click()
            got = ended(carol, asked)
            assert got["result"]["structuredContent"] == {"yes": True, "by": "alice", "via": "board"}, got
            expect(alice.locator(f'#inbox li[data-task="{asked}"]')).to_have_count(0)
            check("the inbox shows what waits for me, overdue marked; my answer says it was mine")
            browser.close()
    finally:
        server.stop()
    print(f"board approval tests: {len(CHECKS)} passed")


if __name__ == "__main__":
    sys.exit(main())
