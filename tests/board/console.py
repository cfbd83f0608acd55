"""The task board as a console, in a real headless Chromium (Debian's package) driven by
Playwright for Python: tabs with a count per state, no stale "waiting for …" text on a
finished task, refused answers naming the field's label in plain words, bulk cancel of a
filter (operators only), and "run again" of a failed or cancelled task. Screenshots of
the list with its tabs, at desktop width and on a 390 px phone, go to --shots.

Usage: console.py --bin target/debug/mcp-tasks --chromium /usr/bin/chromium --shots DIR
"""

import argparse
import contextlib
import os
import re
import sys
import tempfile
import time

from playwright.sync_api import expect, sync_playwright

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Mcp, Server, login, open_task, row, wait_status  # noqa: E402

WAIT_MS = 15_000
CHECKS = []
STATES = ["working", "input_required", "completed", "failed", "cancelled"]


FAILED = []


@contextlib.contextmanager
def checking(name):
    """One check: a failure is reported and the next check still runs, so that a run
    against a board without these features shows each check failing."""
    try:
        yield
        CHECKS.append(name)
        print(f"ok - {name}", flush=True)
    except Exception as e:  # noqa: BLE001 (reported, and the run fails at its end)
        FAILED.append(name)
        print(f"not ok - {name}: {str(e).splitlines()[0] if str(e) else type(e).__name__}", flush=True)


def wait_until(what, condition, seconds=15):
    """Polls `condition` until it is true, at most `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def wait_task(mcp, task, status):
    wait_until(f"task {task} to be {status}", lambda: mcp.get(task)["status"] == status)


def api(page, method, path, body=None):
    """A request from the page with its CSRF token: [status, body]."""
    return page.evaluate(
        """async ([method, path, body]) => {
            const csrf = document.querySelector('meta[name="csrf-token"]').content;
            const init = {method, headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf}};
            if (body !== null) init.body = JSON.stringify(body);
            const r = await fetch(path, init);
            return [r.status, await r.json()];
        }""",
        [method, path, body])


def tab(page, status):
    return page.locator(f'#tabs a.tab[data-status="{status}"]')


def expect_counts(page):
    """The tabs' counts are those of the list of each state, read from the API."""
    truth = {"": 0}
    for status in STATES:
        got = api(page, "GET", f"/board/api/tasks?status={status}")[1]
        assert got["nextCursor"] is None, "more tasks than one page: count them otherwise"
        truth[status] = len(got["tasks"])
        truth[""] += truth[status]
    for status, n in truth.items():
        expect(tab(page, status).locator(".count")).to_have_text(str(n))
    return truth


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--chromium", required=True)
    parser.add_argument("--shots", required=True)
    args = parser.parse_args()
    os.makedirs(args.shots, exist_ok=True)

    folder = tempfile.mkdtemp(prefix="board-console-")
    server = Server(args.bin, folder)
    base = server.base
    alice_mcp, bob_mcp = Mcp(base, "tok-alice"), Mcp(base, "tok-bob")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=args.chromium,
                headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                      "--disable-background-networking", "--disable-component-update",
                      "--disable-sync"],
            )

            # Tasks of alice in every state (a tool error counts as failed for people), and
            # one of bob's.
            done = alice_mcp.start("slow_compute", {"seconds": 0.2, "label": "quick"})
            broken = alice_mcp.start("failing_job", {})
            long = alice_mcp.start("slow_compute", {"seconds": 600, "label": "long"})
            waiting = alice_mcp.start("confirm_delete", {"filename": "old-logs.tar"})
            stopped = alice_mcp.start("slow_compute", {"seconds": 600, "label": "stopped"})
            alice_mcp.result("tasks/cancel", {"taskId": stopped})
            wait_task(alice_mcp, done, "completed")
            wait_task(alice_mcp, broken, "completed")
            wait_task(alice_mcp, waiting, "input_required")
            bob_mcp.start("slow_compute", {"seconds": 600, "label": "bob's"})
            alice = login(browser, base, "tok-alice")
            ops = login(browser, base, "tok-ops")
            bob = login(browser, base, "tok-bob")
            more = None

            # ---- counts per state ---------------------------------------------------
            with checking("tabs show a count per state for the viewer's tasks, filter the list, follow live changes"):
                alice.reload()
                truth = expect_counts(alice)
                # Alice's own tasks only: bob's working task is not counted for her.
                assert truth == {"": 5, "working": 1, "input_required": 1, "completed": 1,
                                 "failed": 1, "cancelled": 1}, truth
                expect(tab(alice, "")).to_have_attribute("aria-current", "page")
                expect(tab(alice, "input_required")).to_contain_text("Waiting")
                # A tab filters the list and becomes the current one.
                tab(alice, "input_required").click()
                expect(tab(alice, "input_required")).to_have_attribute("aria-current", "page")
                expect(row(alice, waiting)).to_be_visible()
                expect(alice.locator("#tasks tbody tr[data-id]")).to_have_count(1)
                expect(alice.locator("#filter-status")).to_have_value("input_required")
                # Counts follow live changes: a new working task moves the Working count.
                more = alice_mcp.start("slow_compute", {"seconds": 600, "label": "more"})
                expect(tab(alice, "working").locator(".count")).to_have_text("2")
                expect(tab(alice, "").locator(".count")).to_have_text("6")
                # The tool filter narrows the counts too.
                alice.fill("#filter-tool", "confirm_delete")
                alice.click("#filters button[type=submit]")
                expect(tab(alice, "").locator(".count")).to_have_text("1")
                expect(tab(alice, "working").locator(".count")).to_have_text("0")
                # Without a script the tabs and counts are there all the same.
                plain = browser.new_context(java_script_enabled=False).new_page()
                plain.set_default_timeout(WAIT_MS)
                plain.goto(f"{base}/board/login")
                plain.fill("#token", "tok-alice")
                plain.click("#login button[type=submit]")
                expect(tab(plain, "completed").locator(".count")).to_have_text("1")
                expect(tab(plain, "failed").locator(".count")).to_have_text("1")
                tab(plain, "cancelled").click()
                expect(plain).to_have_url(re.compile(r"/board\?status=cancelled$"))
                expect(row(plain, stopped)).to_be_visible()
                expect(row(plain, long)).to_have_count(0)
                plain.context.close()
            # ---- no stale "waiting for …" on a finished task -------------------------
            with checking("a task cancelled while waiting shows no stale 'waiting for …' as its current text"):
                alice.goto(f"{base}/board")
                expect(row(alice, waiting).locator(".message")).to_contain_text("waiting for confirmation")
                open_task(alice, waiting)
                alice.once("dialog", lambda dialog: dialog.accept())
                alice.locator("#cancel-task").click()
                wait_status(alice, "cancelled")
                expect(alice.locator("#detail-pane .status-message")).to_have_text(
                    "cancelled on the task board by alice")
                expect(row(alice, waiting).locator(".message")).not_to_contain_text("waiting for")
                expect(row(alice, waiting).locator(".message")).to_contain_text("cancelled on the task board")
                # The same by the client's own tasks/cancel, seen after a reload.
                asked = alice_mcp.start("confirm_delete", {"filename": "tmp.tar"})
                wait_task(alice_mcp, asked, "input_required")
                alice_mcp.result("tasks/cancel", {"taskId": asked})
                alice.goto(f"{base}/board/tasks/{asked}")
                wait_status(alice, "cancelled")
                expect(alice.locator("#detail-pane .status-message")).not_to_contain_text("waiting for")
                expect(row(alice, asked).locator(".message")).not_to_contain_text("waiting for")
                # The timeline still tells that it waited.
                expect(alice.locator("#detail-pane ol.timeline")).to_contain_text("waiting for confirmation")
            # ---- refused answers name the field's label ------------------------------
            with checking("a refused answer names the field's label in plain words (page and server)"):
                meeting = alice_mcp.start("book_meeting", {"subject": "planning"})
                wait_task(alice_mcp, meeting, "input_required")
                open_task(alice, meeting)
                form = alice.locator(".question form")
                form.locator("#field-organizer").fill("A")
                form.locator("#field-attendees").fill("50")
                form.locator("#field-email").fill("not-an-address")
                form.locator("#field-catering").get_by_label("Coffee").uncheck()
                form.get_by_role("button", name="Submit", exact=True).click()
                problem = alice.locator(".question .error")
                expect(problem).to_be_visible()
                said = problem.text_content()
                for words in ["Organizer must be at least 2 characters long.",
                              "Attendees must be at most 20.",
                              "Organizer email must be an email address",
                              "Catering needs at least 1 choice."]:
                    assert words in said, said
                for jargon in ["'", "got", "/", "attendees"]:
                    assert jargon not in said, said
                expect(form.locator("#field-attendees")).to_have_attribute("aria-invalid", "true")
                assert alice_mcp.get(meeting)["status"] == "input_required"
                # The server's refusal (a client that skips the page's checks) is worded alike.
                key = api(alice, "GET", f"/board/api/tasks/{meeting}")[1]["questions"][0]["key"]
                status, body = api(alice, "POST", f"/board/api/tasks/{meeting}/answer", {
                    "key": key,
                    "action": "accept",
                    "content": {"organizer": "Alice", "email": "a@example.com", "attendees": 50,
                                "catering": ["coffee"], "room": "north", "day": "2026-12-01"},
                })
                assert status == 422, (status, body)
                assert body["error"] == "Attendees must be at most 20.", body
            # ---- bulk cancel by filter (operators) -----------------------------------
            with checking("bulk cancel cancels only the tasks the filter shows, operators only"):
                ops.reload()
                targets = [alice_mcp.start("slow_compute", {"seconds": 600, "label": f"batch {i}"})
                           for i in range(3)]
                targets.append(bob_mcp.start("slow_compute", {"seconds": 600, "label": "bob batch"}))
                spared = [alice_mcp.start("confirm_delete", {"filename": "keep.tar"}),
                          alice_mcp.start("book_meeting", {"subject": "keep"})]
                for task in spared:
                    wait_task(alice_mcp, task, "input_required")
                working = [t for t in targets + [long, more] if t]
                ops.fill("#filter-tool", "slow_compute")
                ops.select_option("#filter-status", "working")
                expect(tab(ops, "working")).to_have_attribute("aria-current", "page")
                # Every working slow_compute: alice's and bob's, from earlier checks too.
                n = len(working) + 1  # bob's first one
                expect(tab(ops, "working").locator(".count")).to_have_text(str(n))
                button = ops.locator("#bulk-cancel")
                expect(button).to_have_text(f"Cancel the {n} unfinished tasks")
                asked_for = []
                ops.once("dialog", lambda dialog: (asked_for.append(dialog.message), dialog.accept()))
                button.click()
                expect(ops.locator("#bulk-result")).to_have_text(f"{n} tasks cancelled.")
                assert asked_for and f"Cancel {n} tasks" in asked_for[0], asked_for
                assert "tool slow_compute" in asked_for[0], asked_for
                for task in working:
                    mcp = bob_mcp if task == targets[-1] else alice_mcp
                    got = mcp.get(task)
                    assert got["status"] == "cancelled", got
                    assert got["statusMessage"] == "cancelled on the task board by ops-lead (bulk)", got
                for task in spared:
                    assert alice_mcp.get(task)["status"] == "input_required"
                expect(tab(ops, "working").locator(".count")).to_have_text("0")
                expect(button).to_be_hidden()
                # A non-operator has no such button, and the endpoint refuses them.
                bob.reload()
                expect(bob.locator("#bulk-cancel")).to_have_count(0)
                status, body = api(bob, "POST", "/board/api/bulk-cancel", {"status": "", "tool": "", "q": ""})
                assert status == 403 and "operators" in body["error"], (status, body)
                for task in spared:
                    assert alice_mcp.get(task)["status"] == "input_required"
            # ---- run again -----------------------------------------------------------
            with checking("run again makes a new task of the owner's that runs, linked both ways"):
                short = alice_mcp.start("slow_compute", {"seconds": 1.5, "label": "again"})
                alice_mcp.result("tasks/cancel", {"taskId": short})
                ops.goto(f"{base}/board/tasks/{short}")
                wait_status(ops, "cancelled")
                ops.once("dialog", lambda dialog: dialog.accept())
                ops.locator("#run-again").click()
                expect(ops.locator("#detail-id")).not_to_have_text(short)
                fresh = ops.locator("#detail-id").text_content()
                expect(ops).to_have_url(f"{base}/board/tasks/{fresh}")
                # The new task is the owner's (her client finds it), runs, and completes.
                wait_task(alice_mcp, fresh, "completed")
                made = alice_mcp.get(fresh)
                assert made["status"] == "completed", made
                wait_status(ops, "completed")
                # Linked both ways: the new one names the old as related, the old one
                # says what it was run again as.
                related = ops.locator("#detail-pane ul.related a")
                expect(related).to_have_text(short)
                related.click()
                expect(ops.locator("#detail-id")).to_have_text(short)
                expect(ops.locator("#detail-pane .reruns a")).to_have_text(fresh)
                ops.locator("#detail-pane .reruns a").click()
                expect(ops.locator("#detail-id")).to_have_text(fresh)
                # The same arguments.
                expect(ops.locator("#detail-pane h3:text-is('Arguments') + pre")).to_contain_text('"label": "again"')
                # Its owner runs a tool error again from her own page.
                alice.goto(f"{base}/board/tasks/{broken}")
                expect(alice.locator("#run-again")).to_be_visible()
                # Refused for a task still working, and for one that completed.
                still = alice_mcp.start("slow_compute", {"seconds": 600, "label": "still"})
                status, body = api(alice, "POST", f"/board/api/tasks/{still}/rerun", {})
                assert status == 409 and "still working" in body["error"], (status, body)
                status, body = api(alice, "POST", f"/board/api/tasks/{done}/rerun", {})
                assert status == 409 and "completed" in body["error"], (status, body)
                alice.goto(f"{base}/board/tasks/{done}")
                expect(alice.locator("#detail-id")).to_have_text(done)
                expect(alice.locator("#run-again")).to_have_count(0)
                # Another principal cannot run alice's task again.
                status, body = api(bob, "POST", f"/board/api/tasks/{short}/rerun", {})
                assert status == 404, (status, body)
                alice_mcp.result("tasks/cancel", {"taskId": still})
            # ---- screenshots: the list with its tabs, desktop and phone --------------
            with checking("the tabs fit a phone (390 px) without sideways scrolling"):
                ops.goto(f"{base}/board")
                expect(ops.locator("#bulk-cancel")).to_be_visible()
                ops.screenshot(path=os.path.join(args.shots, "board-tabs.png"), full_page=True)
                phone = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
                phone.set_default_timeout(WAIT_MS)
                phone.goto(f"{base}/board/login")
                phone.fill("#token", "tok-ops")
                phone.click("#login button[type=submit]")
                expect(tab(phone, "").locator(".count")).to_be_visible()
                expect(phone.locator("#bulk-cancel")).to_be_visible()
                width = phone.evaluate("document.documentElement.scrollWidth")
                assert width <= 390, f"the list with its tabs scrolls sideways on a phone: {width}px"
                phone.screenshot(path=os.path.join(args.shots, "board-tabs-phone.png"))
                phone.context.close()
            browser.close()
    finally:
        server.stop()
    print(f"board console tests: {len(CHECKS)} passed, {len(FAILED)} failed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
