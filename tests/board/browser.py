"""The task board in a real headless Chromium (Debian's package), driven by Playwright
for Python: log in, watch tasks appear live, answer a form of every field type, decline,
answer a sampling request, cancel, who sees what, CSRF. Screenshots of the list and of
a question form are written to the folder given by --shots.

Usage: browser.py --bin target/debug/mcp-tasks --chromium /usr/bin/chromium --shots DIR
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import urllib.request

from playwright.sync_api import expect, sync_playwright

TOKENS = '"tok-alice" = "alice"\n"tok-bob" = "bob"\n"tok-ops" = "ops-lead"\n'
WAIT_MS = 15_000
CHECKS = []


def check(name):
    CHECKS.append(name)
    print(f"ok - {name}", flush=True)


class Server:
    """`mcp-tasks serve --demo` on a free loopback port, with tokens and an operator."""

    def __init__(self, binary, folder):
        tokens = os.path.join(folder, "tokens.toml")
        with open(tokens, "w") as f:
            f.write(TOKENS)
        self.process = subprocess.Popen(
            [binary, "serve", "--demo", "--listen", "127.0.0.1:0", "--log", "warn",
             "--database", f"sqlite://{folder}/tasks.db", "--auth-tokens", tokens,
             "--operators", "ops-lead"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for line in self.process.stderr:
            match = re.search(r"listening on (http://\S+)/mcp", line)
            if match:
                self.base = match.group(1)
                break
        else:
            raise SystemExit("the server did not start")
        threading.Thread(target=lambda: [None for _ in self.process.stderr], daemon=True).start()

    def stop(self):
        self.process.kill()
        self.process.wait()


class Mcp:
    """A stateless extension-wire client with a bearer token. It declares
    elicitation and sampling but never answers: people answer on the board."""

    def __init__(self, base, token):
        self.url = f"{base}/mcp"
        self.token = token
        self.next_id = 1

    def result(self, method, params, meta=None):
        params = dict(params)
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {
                "elicitation": {}, "sampling": {},
                "extensions": {"io.modelcontextprotocol/tasks": {}}},
            **(meta or {}),
        }
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.next_id += 1
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": method,
            "authorization": f"Bearer {self.token}",
        }
        name = params.get("name") or params.get("taskId")
        if name:
            headers["mcp-name"] = name
        request = urllib.request.Request(self.url, json.dumps(body).encode(), headers)
        with urllib.request.urlopen(request, timeout=10) as response:
            reply = json.loads(response.read())
        if "error" in reply:
            raise AssertionError(f"{method} failed: {reply}")
        return reply["result"]

    def start(self, tool, arguments, meta=None):
        created = self.result("tools/call", {"name": tool, "arguments": arguments}, meta)
        assert created["resultType"] == "task", created
        return created["taskId"]

    def get(self, task):
        return self.result("tasks/get", {"taskId": task})


def login(browser, base, token):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(f"{base}/board")
    expect(page).to_have_url(f"{base}/board/login")
    page.fill("#token", token)
    page.click("#login button[type=submit]")
    expect(page).to_have_url(f"{base}/board")
    expect(page.locator("#live")).to_have_text("live")
    return page


def row(page, task):
    return page.locator(f'#tasks tr[data-id="{task}"]')


def open_task(page, task):
    row(page, task).click()
    expect(page.locator("#detail-id")).to_have_text(task)


def wait_status(page, status):
    expect(page.locator("#detail-status")).to_have_text(status.replace("_", " "))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--chromium", required=True)
    parser.add_argument("--shots", required=True)
    args = parser.parse_args()
    os.makedirs(args.shots, exist_ok=True)

    folder = tempfile.mkdtemp(prefix="board-browser-")
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
            alice = login(browser, base, "tok-alice")
            check("log in with a token")

            # A task appears live, and finishes live, with no reload.
            quick = alice_mcp.start("slow_compute", {"seconds": 1, "label": "warm-up"})
            expect(row(alice, quick)).to_be_visible()
            expect(row(alice, quick)).to_have_attribute("data-status", "completed")
            check("a task appears and completes live")

            # A call naming related tasks (the draft `_meta` key, advisory): its page
            # links the plausible ids and ignores the rest; a link opens that task.
            follow_up = alice_mcp.start(
                "slow_compute", {"seconds": 1, "label": "follow-up"},
                {"io.modelcontextprotocol/relatedTaskIds": [quick, "not a task id!", 7]})
            open_task(alice, follow_up)
            related = alice.locator("#detail-pane ul.related a")
            expect(related).to_have_count(1)
            expect(related).to_have_text(quick)
            related.click()
            expect(alice.locator("#detail-id")).to_have_text(quick)
            check("a call's related tasks (_meta relatedTaskIds) are linked on its page")

            # A form of every field type, answered.
            meeting = alice_mcp.start("book_meeting", {"subject": "planning"})
            expect(row(alice, meeting)).to_have_attribute("data-status", "input_required")
            open_task(alice, meeting)
            form = alice.locator(".question form")
            expect(form.locator("label[for=field-organizer]")).to_contain_text("Organizer")
            expect(form.locator("#field-day")).to_have_value("2026-12-01")
            expect(form.locator("#field-attendees")).to_have_value("4")
            expect(form.locator("#field-remote")).to_be_checked()
            expect(form.locator("#field-room")).to_contain_text("South room (20 seats)")
            expect(form.locator("#field-catering")).to_contain_text("Lunch")
            # The question's third button is not called "Cancel": that is the task's.
            expect(form.get_by_role("button", name="Cancel", exact=True)).to_have_count(0)
            for button in ["Submit", "Decline", "Dismiss question"]:
                expect(form.get_by_role("button", name=button, exact=True)).to_be_visible()
            form.locator("#field-organizer").fill("Alice Example")
            form.locator("#field-email").fill("alice@example.com")
            form.locator("#field-agenda").fill("https://example.com/agenda")
            form.locator("#field-starts").fill("2026-12-01T09:30")
            form.locator("#field-attendees").fill("6")
            form.locator("#field-budget").fill("99.5")
            form.locator("#field-remote").uncheck()
            form.locator("#field-room").select_option(label="South room (20 seats)")
            form.locator("#field-catering").get_by_label("Lunch").check()
            alice.screenshot(path=os.path.join(args.shots, "board-question.png"), full_page=True)
            # The page checks constraints before anything is sent.
            form.locator("#field-attendees").fill("50")
            form.get_by_role("button", name="Submit", exact=True).click()
            expect(alice.locator(".question .answered")).to_have_count(0)
            assert alice_mcp.get(meeting)["status"] == "input_required"
            form.locator("#field-attendees").fill("6")
            form.get_by_role("button", name="Submit", exact=True).click()
            wait_status(alice, "completed")
            result = alice.locator(".result")
            expect(result).to_contain_text('"room": "south"')
            expect(result).to_contain_text('"lunch"')
            structured = alice_mcp.get(meeting)["result"]["structuredContent"]
            assert structured["answer"]["attendees"] == 6, structured
            assert structured["answer"]["remote"] is False, structured
            assert structured["answer"]["catering"] == ["coffee", "lunch"], structured
            assert structured["answer"]["starts"].endswith("Z"), structured
            check("a form of every field type answered; the task completes with the answer")

            declined = alice_mcp.start("book_meeting", {"subject": "retro"})
            expect(row(alice, declined)).to_have_attribute("data-status", "input_required")
            open_task(alice, declined)
            alice.locator(".question").get_by_role("button", name="Decline", exact=True).click()
            wait_status(alice, "completed")
            assert alice_mcp.get(declined)["result"]["structuredContent"]["action"] == "decline"
            check("a question declined")

            # Two questions open at once: answering one keeps what was typed in the other.
            both = alice_mcp.start("multi_input", {})
            expect(row(alice, both)).to_have_attribute("data-status", "input_required")
            open_task(alice, both)
            questions = alice.locator("#detail-pane section.question")
            expect(questions).to_have_count(2)
            alice.locator("#field-name").fill("Ada")
            colour = questions.filter(has=alice.locator("#field-colour"))
            colour.locator("#field-colour").select_option(label="blue")
            colour.get_by_role("button", name="Submit", exact=True).click()
            # The pane re-renders once the colour's question is gone: one question left.
            expect(alice.locator("#detail-pane section.question")).to_have_count(1)
            expect(alice.locator("#field-name")).to_have_value("Ada")
            alice.locator("#detail-pane section.question").get_by_role("button", name="Submit", exact=True).click()
            wait_status(alice, "completed")
            assert alice_mcp.get(both)["result"]["structuredContent"] == {"name": "Ada", "colour": "blue"}
            check("answering one of two open questions keeps what was typed in the other")

            summary = alice_mcp.start("summarize_with_model", {"text": "a very long story"})
            expect(row(alice, summary)).to_have_attribute("data-status", "input_required")
            open_task(alice, summary)
            expect(alice.locator(".conversation")).to_contain_text("a very long story")
            alice.locator(".question textarea").fill("A short story.")
            alice.get_by_role("button", name="Send reply").click()
            wait_status(alice, "completed")
            expect(alice.locator(".result")).to_contain_text("A short story.")
            check("a sampling request answered")

            slow = alice_mcp.start("slow_compute", {"seconds": 600, "label": "long"})
            expect(row(alice, slow)).to_have_attribute("data-status", "working")
            open_task(alice, slow)
            alice.once("dialog", lambda dialog: dialog.accept())
            alice.locator("#cancel-task").click()
            wait_status(alice, "cancelled")
            assert alice_mcp.get(slow)["status"] == "cancelled"
            check("a working task cancelled (after confirming)")

            # Without the CSRF token, the API refuses a state change.
            status = alice.evaluate(
                """async (id) => (await fetch(`/board/api/tasks/${id}/cancel`, {
                    method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"})).status""",
                quick)
            assert status == 403, status
            check("a state-changing request without the CSRF token is refused")

            # Another principal: sees none of alice's tasks, neither in the page nor the API.
            bobs = bob_mcp.start("slow_compute", {"seconds": 600, "label": "bob's"})
            bob = login(browser, base, "tok-bob")
            expect(row(bob, bobs)).to_be_visible()
            expect(row(bob, meeting)).to_have_count(0)
            bob.goto(f"{base}/board/tasks/{meeting}")
            expect(bob.locator("#detail-pane .error")).to_contain_text("no such task")
            foreign = bob.evaluate(
                """async (id) => { const r = await fetch(`/board/api/tasks/${id}`);
                   return [r.status, (await r.json()).error]; }""", meeting)
            unknown = bob.evaluate(
                """async () => { const r = await fetch(`/board/api/tasks/no-such-task`);
                   return [r.status, (await r.json()).error]; }""")
            assert foreign == unknown and foreign[0] == 404, (foreign, unknown)
            csrf = bob.locator('meta[name="csrf-token"]').get_attribute("content")
            cancel = bob.evaluate(
                """async ([id, csrf]) => (await fetch(`/board/api/tasks/${id}/cancel`, {
                    method: "POST", headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf},
                    body: "{}"})).status""", [meeting, csrf])
            assert cancel == 404, cancel
            check("an ordinary principal cannot see or act on another's task")

            # An operator sees everyone's tasks with their owners and can act on them.
            ops = login(browser, base, "tok-ops")
            expect(ops.locator("header .role")).to_have_text("operator")
            expect(row(ops, meeting)).to_be_visible()
            expect(row(ops, bobs).locator(".owner")).to_have_text("bob")
            open_task(ops, bobs)
            ops.once("dialog", lambda dialog: dialog.accept())
            ops.locator("#cancel-task").click()
            wait_status(ops, "cancelled")
            assert "ops-lead" in bob_mcp.get(bobs)["statusMessage"]
            check("an operator sees and cancels another principal's task")

            # The list screenshot: tasks in every state, one waiting for an answer.
            alice_mcp.start("book_meeting", {"subject": "quarterly review"})
            alice_mcp.start("slow_compute", {"seconds": 300, "label": "report"})
            broken = alice_mcp.start("failing_job", {})
            waiting = alice_mcp.start("confirm_delete", {"filename": "old-logs.tar"})
            ops.goto(f"{base}/board")
            expect(row(ops, broken).locator(".status-tool-error")).to_have_text("tool error")
            expect(row(ops, waiting)).to_have_attribute("data-status", "input_required")
            ops.screenshot(path=os.path.join(args.shots, "board-list.png"), full_page=True)

            # Without JavaScript the list is there all the same (rendered by the server),
            # and the filter form filters it (a plain GET form).
            plain = browser.new_context(java_script_enabled=False).new_page()
            plain.set_default_timeout(WAIT_MS)
            plain.goto(f"{base}/board/login")
            plain.fill("#token", "tok-ops")
            plain.click("#login button[type=submit]")
            expect(plain).to_have_url(f"{base}/board")
            expect(row(plain, waiting)).to_have_attribute("data-status", "input_required")
            expect(row(plain, waiting).locator("a")).to_have_attribute("href", f"/board/tasks/{waiting}")
            plain.select_option("#filter-status", "completed")
            plain.click("#filters button[type=submit]")
            expect(plain).to_have_url(re.compile(r"/board\?status=completed"))
            expect(row(plain, waiting)).to_have_count(0)
            expect(row(plain, quick)).to_have_attribute("data-status", "completed")
            row(plain, quick).locator("a").click()
            expect(plain).to_have_url(f"{base}/board/tasks/{quick}")
            expect(plain.locator("#detail-id")).to_have_text(quick)
            expect(plain.locator("#detail-pane ol.timeline li").first).to_be_visible()
            plain.context.close()
            check("the list, its filters and a task's page work without JavaScript")

            # A notification's link opened while logged out: the login page, then that
            # task (not the list); a crafted `next` leading elsewhere is not followed.
            fresh = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            fresh.set_default_timeout(WAIT_MS)
            fresh.goto(f"{base}/board/tasks/{waiting}")
            expect(fresh).to_have_url(re.compile(r"/board/login\?next="))
            fresh.fill("#token", "tok-ops")
            fresh.click("#login button[type=submit]")
            expect(fresh).to_have_url(f"{base}/board/tasks/{waiting}")
            expect(fresh.locator("#detail-id")).to_have_text(waiting)
            fresh.context.close()
            crafted = browser.new_context().new_page()
            crafted.set_default_timeout(WAIT_MS)
            crafted.goto(f"{base}/board/login?next=//evil.example/board")
            crafted.fill("#token", "tok-ops")
            crafted.click("#login button[type=submit]")
            expect(crafted).to_have_url(f"{base}/board")
            crafted.context.close()
            check("a task's link opened while logged out leads to that task after login")

            # A phone, 390 px wide: no sideways scrolling on the list or a task's page,
            # and a task opened from a link is scrolled into view.
            phone = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
            phone.set_default_timeout(WAIT_MS)
            phone.goto(f"{base}/board/tasks/{waiting}")
            phone.fill("#token", "tok-ops")
            phone.click("#login button[type=submit]")
            expect(phone.locator("#detail-id")).to_have_text(waiting)
            expect(phone.locator("#detail-pane .question")).to_be_in_viewport()
            width = phone.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"the task's page scrolls sideways on a phone: {width}px"
            phone.screenshot(path=os.path.join(args.shots, "board-phone.png"))
            phone.goto(f"{base}/board")
            expect(row(phone, waiting)).to_be_visible()
            width = phone.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"the list scrolls sideways on a phone: {width}px"
            phone.context.close()
            check("a phone-width screen (390 px) shows the list and a task without sideways scrolling")

            # Logging out ends the session.
            alice.locator("#logout button").click()
            expect(alice).to_have_url(f"{base}/board/login")
            alice.goto(f"{base}/board")
            expect(alice).to_have_url(f"{base}/board/login")
            check("log out")
            browser.close()
    finally:
        server.stop()
    print(f"board browser tests: {len(CHECKS)} passed")


if __name__ == "__main__":
    sys.exit(main())
