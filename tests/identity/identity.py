"""Identity against a real OpenID provider (`oidc-provider`, tests/identity/provider.mjs):

- the MCP endpoint as an OAuth protected resource: Protected Resource Metadata, 401
  challenges naming it, and refusals each with status and reason (another audience, an
  expired token, an unknown signing key, a revoked opaque token, a missing scope);
- a person signs in to the board through the provider's own login and consent pages in
  Chromium and approves a held call as a member of a group only the provider knows;
- a tampered ID token is refused with a page that says so; sign-out goes through the
  provider's end-session page with the sign-in's ID token as `id_token_hint`;
- a session is renewed silently (`prompt=none`) after `refresh_after`, and a group the
  provider took away is gone after it; a renewal the provider declines
  (`login_required`) ends the session on the login page;
- the TypeScript SDK client's OAuth flow (tests/identity/sdk.mjs) finds the
  authorization server from our metadata, gets a token and runs a task.

Usage: identity.py --bin target/debug/mcp-tasks --chromium /usr/bin/chromium
       --work target/identity --shots DIR
"""

import argparse
import base64
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from playwright.sync_api import expect, sync_playwright

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "board"))
from browser import Mcp, WAIT_MS  # noqa: E402

CHECKS = []
MINTER = ("minter", "minter-client-secret-0123456789")
INTROSPECTOR_SECRET = "introspector-secret-0123456789"
BOARD_SECRET = "board-client-secret-0123456789"
HOST_REDIRECT = "http://127.0.0.1:9/callback"


def check(name):
    CHECKS.append(name)
    print(f"ok - {name}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Provider:
    """The provider, its stdin open until stop()."""

    def __init__(self, work):
        self.process = subprocess.Popen(
            ["node", "provider.mjs"], cwd=work,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.issuer = json.loads(self.process.stdout.readline())["issuer"]

    def configure(self, board_roots, resources):
        self.process.stdin.write(json.dumps(
            {"boardRoots": board_roots, "resources": resources,
             "hostRedirect": HOST_REDIRECT}) + "\n")
        self.process.stdin.flush()
        assert json.loads(self.process.stdout.readline()) == {"ready": True}

    def hook(self, path, body=None):
        data = json.dumps(body).encode() if body is not None else b""
        with urllib.request.urlopen(urllib.request.Request(
                f"{self.issuer}/__test/{path}", data, method="POST"), timeout=10) as r:
            return json.loads(r.read())

    def sign(self, key, claims):
        return self.hook("sign", {"key": key, "claims": claims})["token"]

    def token(self, form):
        """A client credentials token from the provider's token endpoint (as `minter`)."""
        auth = base64.b64encode(f"{MINTER[0]}:{MINTER[1]}".encode()).decode()
        request = urllib.request.Request(
            f"{self.issuer}/token", urllib.parse.urlencode(form).encode(),
            {"authorization": f"Basic {auth}",
             "content-type": "application/x-www-form-urlencoded"})
        with urllib.request.urlopen(request, timeout=10) as r:
            return json.loads(r.read())["access_token"]

    def revoke(self, token):
        auth = base64.b64encode(f"{MINTER[0]}:{MINTER[1]}".encode()).decode()
        request = urllib.request.Request(
            f"{self.issuer}/token/revocation", urllib.parse.urlencode({"token": token}).encode(),
            {"authorization": f"Basic {auth}",
             "content-type": "application/x-www-form-urlencoded"})
        with urllib.request.urlopen(request, timeout=10) as r:
            assert r.status == 200

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


class Server:
    """`mcp-tasks serve --demo` with [oauth], [board.oidc] and an [[approval]] rule."""

    def __init__(self, binary, folder, port, issuer, refresh_after="10m"):
        self.base = f"http://127.0.0.1:{port}"
        with open(os.path.join(folder, "board-client-secret"), "w") as f:
            f.write(BOARD_SECRET)
        path = os.path.join(folder, f"identity-{port}.toml")
        with open(path, "w") as f:
            f.write(f"""
[server]
listen = "127.0.0.1:{port}"

[board]
public_url = "{self.base}"
session_ttl = "1h"

[board.oidc]
name = "Test IdP"
issuer = "{issuer}"
client_id = "board"
client_secret_file = "board-client-secret"
scopes = ["openid", "email", "profile", "groups"]
token_login = false
refresh_after = "{refresh_after}"

[oauth]
resource = "{self.base}/mcp"
authorization_servers = ["{issuer}"]
required_scopes = ["mcp:tools"]
resource_name = "mcp-tasks identity test"
client_id = "introspector"
client_secret_env = "TEST_INTROSPECTION_SECRET"
introspection_cache = "0s"

[[approval]]
tool = "deploy"
approvers = ["release-managers"]
message = "Deploy?"
""")
        env = dict(os.environ, TEST_INTROSPECTION_SECRET=INTROSPECTOR_SECRET)
        self.log = []
        self.process = subprocess.Popen(
            [binary, "serve", "--demo", "--log", "info", "--database", "memory:",
             "--config", path],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, env=env)
        for line in self.process.stderr:
            self.log.append(line)
            if re.search(r"listening on http://\S+/mcp", line):
                break
        else:
            raise SystemExit("the server did not start:\n" + "".join(self.log))
        threading.Thread(target=lambda: [self.log.append(line) for line in self.process.stderr],
                         daemon=True).start()

    def stop(self):
        self.process.kill()
        self.process.wait()


def post_mcp(base, token, body=None):
    """POST an initialize to /mcp with `token`: (status, headers, body)."""
    body = body or {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "identity-test", "version": "1"}}}
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(f"{base}/mcp", json.dumps(body).encode(), headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def refused(base, token, status, says):
    code, headers, body = post_mcp(base, token)
    assert code == status, (code, body)
    message = json.loads(body)["error"]["message"]
    assert says in message, (says, message)
    challenge = headers.get("www-authenticate", "")
    assert "resource_metadata=" in challenge, challenge
    return message, challenge


def ended(mcp, task):
    deadline = time.monotonic() + WAIT_MS / 1000
    got = None
    while time.monotonic() < deadline:
        got = mcp.get(task)
        if got["status"] in ("completed", "failed", "cancelled"):
            return got
        time.sleep(0.1)
    raise AssertionError(f"task {task} did not end: {got}")


def sign_in(browser, base, login):
    """Through the provider's own login and consent pages; back on the board."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    offline(context)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    page.goto(f"{base}/board")
    # token_login = false: straight to the provider.
    expect(page.locator("input[name=login]")).to_be_visible()
    assert page.url.startswith(PROVIDER.issuer), page.url
    page.fill("input[name=login]", login)
    page.fill("input[name=password]", "any password")
    page.click("button[type=submit]")
    expect(page.get_by_role("button", name="Continue")).to_be_visible()
    page.click("button[type=submit]")
    return page


PROVIDER = None


def me(page, base):
    """`/board/api/me` with the page's cookies: (status, body)."""
    response = page.request.get(f"{base}/board/api/me")
    return response.status, response.json()


def until_due(page, base):
    """Waits (bounded) until the server says the page's sign-in is due for renewal."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        status, body = me(page, base)
        if status == 401:
            assert body.get("renew") is True, body
            return
        time.sleep(0.1)
    raise AssertionError("the sign-in never came due for renewal")


def renewal(browser, provider, server):
    """`refresh_after = "5s"`: a group the provider takes away is gone after the
    silent renewal, with no page shown; a renewal the provider declines ends the
    session on the login page."""
    base = server.base
    caller = Mcp(base, provider.token({"grant_type": "client_credentials",
                                       "scope": "mcp:tools", "resource": f"{base}/mcp"}))
    task = caller.start("deploy", {"service": "api", "env": "prod"})
    ana = sign_in(browser, base, "ana")
    expect(ana).to_have_url(f"{base}/board")
    status, body = me(ana, base)
    assert status == 200 and "release-managers" in body["groups"], (status, body)
    ana.goto(f"{base}/board/tasks/{task}")
    expect(ana.locator("#detail-id")).to_have_text(task)
    expect(ana.locator("#detail-pane section.question")
           .get_by_role("button", name="Approve", exact=True)).to_be_visible()
    try:
        provider.hook("groups", {"account": "ana", "groups": []})
        until_due(ana, base)
        # Seen from the page: its stale session's API call answers 401 and it reloads,
        # and the reload goes to the provider and back without a page of its own.
        visited = []
        ana.on("framenavigated", lambda frame: visited.append(frame.url))
        ana.goto(f"{base}/board/tasks/{task}")
        # Back on the board, signed in: the task that asked her group is no longer
        # hers to see.
        expect(ana.locator("#detail-pane")).to_contain_text("no such task")
        expect(ana.locator(".who")).to_contain_text("ana")
        # Only committed pages are seen: the provider's redirects are not, its code
        # arriving at our callback is, and none of its login or consent pages.
        assert any("/board/oidc/callback?code=" in url for url in visited), visited
        assert not any("/interaction/" in url for url in visited), visited
        status, body = me(ana, base)
        assert status == 200 and body["principal"] == "ana", (status, body)
        assert "release-managers" not in body["groups"], body
        check("a silent renewal (prompt=none) reads the groups again: once the provider took her group away, ana no longer sees the approval it gave her")

        # The same board cookies in a browser without the provider's session: the
        # provider answers login_required, and the session ends on the login page.
        board_cookies = [c for c in ana.context.cookies(f"{base}/board/")
                         if c["name"].startswith("mcp_tasks_")]
        assert any(c["name"] == "mcp_tasks_idt" for c in board_cookies), board_cookies
        elsewhere = browser.new_context()
        offline(elsewhere)
        elsewhere.add_cookies(board_cookies)
        page = elsewhere.new_page()
        page.set_default_timeout(WAIT_MS)
        until_due(page, base)
        page.goto(f"{base}/board")
        expect(page).to_have_url(re.compile(re.escape(f"{base}/board/oidc/callback")))
        expect(page.locator(".error")).to_contain_text("Your session has ended")
        expect(page.locator(".error")).to_contain_text("login_required")
        status, _ = me(page, base)
        assert status == 401, status
        left = elsewhere.cookies(f"{base}/board/")
        assert not any(c["name"] in ("mcp_tasks_board", "mcp_tasks_idt") for c in left), left
        elsewhere.close()
        check("a renewal the provider declines (login_required) ends the session on the login page, which says why")
    finally:
        provider.hook("groups", {"account": "ana", "groups": ["release-managers"]})
        ana.context.close()


def offline(context):
    """Only loopback: the provider's pages import a web font the test must not fetch."""
    context.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), lambda route: route.abort())


def main():
    global PROVIDER
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--chromium", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--shots", required=True)
    args = parser.parse_args()
    os.makedirs(args.shots, exist_ok=True)
    folder = tempfile.mkdtemp(prefix="identity-")
    PROVIDER = provider = Provider(args.work)
    port, renew_port = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    resource = f"{base}/mcp"
    renew_base = f"http://127.0.0.1:{renew_port}"
    provider.configure([base, renew_base], [resource, f"{renew_base}/mcp"])
    server = Server(os.path.abspath(args.bin), folder, port, provider.issuer)
    # A second board whose sign-ins are renewed after five seconds (long enough that a
    # slow machine does not renew between two steps that expect the same session).
    renewing = Server(os.path.abspath(args.bin), folder, renew_port, provider.issuer,
                      refresh_after="5s")
    failed = False
    try:
        # The protected resource's metadata, and the challenge that names it.
        for path in ("/.well-known/oauth-protected-resource/mcp",
                     "/.well-known/oauth-protected-resource"):
            with urllib.request.urlopen(base + path, timeout=10) as r:
                meta = json.loads(r.read())
            assert meta["resource"] == resource, meta
            assert meta["authorization_servers"] == [provider.issuer], meta
            assert "mcp:tools" in meta["scopes_supported"], meta
        _, challenge = refused(base, None, 401, "authentication required")
        assert f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"' in challenge
        check("Protected Resource Metadata at both well-known addresses; a 401 without a token names it")

        now = int(time.time())
        other = provider.token({"grant_type": "client_credentials", "scope": "mcp:tools",
                                "resource": "urn:test:another-server"})
        refused(base, other, 401, "another audience")
        check("a token the provider minted for another resource (RFC 8707) is refused: 401, another audience")
        expired = provider.sign("provider", {"iss": provider.issuer, "aud": resource, "sub": "ana",
                                             "scope": "mcp:tools", "iat": now - 7200,
                                             "exp": now - 3600})
        refused(base, expired, 401, "expired")
        check("an expired token signed with the provider's key is refused: 401, expired")
        stranger = provider.sign("stranger", {"iss": provider.issuer, "aud": resource, "sub": "ana",
                                              "scope": "mcp:tools", "iat": now, "exp": now + 600})
        refused(base, stranger, 401, "does not publish")
        check("a token signed with a key the provider does not publish is refused: 401, unknown key")
        no_scope = provider.sign("provider", {"iss": provider.issuer, "aud": resource, "sub": "ana",
                                              "scope": "openid", "iat": now, "exp": now + 600})
        code, headers, body = post_mcp(base, no_scope)
        assert code == 403, (code, body)
        assert 'error="insufficient_scope"' in headers["www-authenticate"], headers
        assert 'scope="mcp:tools"' in headers["www-authenticate"], headers
        assert "mcp:tools" in json.loads(body)["error"]["message"]
        check("a token without the required scope gets 403 insufficient_scope naming it")
        opaque = provider.token({"grant_type": "client_credentials", "scope": "mcp:tools",
                                 "resource": resource})
        assert opaque.count(".") != 2, "expected an opaque token"
        code, _, body = post_mcp(base, opaque)
        assert code == 200, (code, body)
        revoked = provider.token({"grant_type": "client_credentials", "scope": "mcp:tools",
                                  "resource": resource})
        provider.revoke(revoked)
        refused(base, revoked, 401, "not active")
        check("an opaque token is introspected: accepted while active, refused once revoked (401, not active)")

        # A held call, started by a program (client credentials: principal client:minter).
        caller = Mcp(base, opaque)
        task = caller.start("deploy", {"service": "web", "env": "prod"})
        assert caller.get(task)["status"] == "input_required"

        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=args.chromium, headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                      "--disable-background-networking", "--disable-component-update",
                      "--disable-sync"])
            ana = sign_in(browser, base, "ana")
            expect(ana).to_have_url(f"{base}/board")
            expect(ana.locator(".who")).to_contain_text("ana")
            item = ana.locator(f'#inbox li[data-task="{task}"]')
            expect(item).to_be_visible()
            item.locator("a").click()
            expect(ana.locator("#detail-id")).to_have_text(task)
            box = ana.locator("#detail-pane section.question")
            expect(box.locator(".question-message")).to_have_text("Deploy?")
            ana.screenshot(path=os.path.join(args.shots, "identity-approval.png"), full_page=True)
            box.get_by_role("button", name="Approve", exact=True).click()
            got = ended(caller, task)
            assert got["status"] == "completed", got
            ana.reload()
            expect(ana.locator("#detail-pane ol.timeline")).to_contain_text("approved by ana via board")
            check("ana signs in through the provider's login and consent pages and approves as a member of a group only the provider knows")

            # bob signs in too, but is in no group the rule names.
            second = caller.start("deploy", {"service": "db", "env": "prod"})
            bob = sign_in(browser, base, "bob")
            expect(bob).to_have_url(f"{base}/board")
            bob.goto(f"{base}/board/tasks/{second}")
            expect(bob.locator("#detail-pane")).not_to_contain_text("Approve")
            check("a person outside the provider's group cannot approve")

            # Sign-out goes through the provider's end-session page, back to the login page.
            ana.goto(f"{base}/board")
            ana.click("#logout button")
            expect(ana).to_have_url(re.compile("^" + re.escape(provider.issuer)))
            assert "id_token_hint=" in ana.url, ana.url
            ana.get_by_role("button", name=re.compile("sign me out|Yes", re.I)).first.click()
            expect(ana).to_have_url(re.compile(re.escape(f"{base}/board/login")))
            expect(ana.locator("#sso")).to_have_text("Sign in with Test IdP")
            check("sign-out ends the board session and goes through the provider's end-session page with id_token_hint")

            renewal(browser, provider, renewing)

            # A tampered ID token: the board refuses with a page saying why.
            provider.hook("tamper?on=1")
            try:
                mallory = sign_in(browser, base, "ana")
                expect(mallory.locator("h1")).to_have_text("Your sign-in could not be verified")
                expect(mallory.locator(".error")).to_contain_text("signature is not valid")
                mallory.screenshot(path=os.path.join(args.shots, "identity-tampered.png"), full_page=True)
                mallory.goto(f"{base}/board/api/me")
                assert "mallory" not in mallory.content()
            finally:
                provider.hook("tamper?on=0")
            check("a tampered ID token is refused with a page that says its signature is not valid")

            # A denied consent: the provider's abort link, then our page.
            context = browser.new_context()
            offline(context)
            page = context.new_page()
            page.set_default_timeout(WAIT_MS)
            page.goto(f"{base}/board")
            page.fill("input[name=login]", "ana")
            page.fill("input[name=password]", "x")
            page.click("button[type=submit]")
            expect(page.get_by_role("button", name="Continue")).to_be_visible()
            page.get_by_role("link", name=re.compile("Cancel", re.I)).click()
            expect(page.locator("h1")).to_have_text("Sign-in was not completed")
            expect(page.locator(".error")).to_contain_text("declined")
            check("a denied consent ends on a page that says access was declined and what to do")
            browser.close()

        # The TypeScript SDK client's OAuth flow, end to end.
        out = subprocess.run(["node", "sdk.mjs", resource],
                             cwd=args.work, capture_output=True, text=True, timeout=120)
        print(out.stdout, end="")
        if out.returncode != 0:
            print(out.stderr, file=sys.stderr)
            raise AssertionError("the SDK client's OAuth flow failed")
        check("the TypeScript SDK client discovers the provider from our metadata, signs in, and runs a task")

        renew_log = "".join(renewing.log)
        assert "board_session_renewed" in renew_log and "board_session_ended" in renew_log, \
            renew_log[-2000:]
        log = "".join(server.log)
        for secret in (BOARD_SECRET, INTROSPECTOR_SECRET, opaque, revoked, expired):
            assert secret not in log, "a secret or token is in the server's log"
        assert re.search(r'board_login.*ana|ana.*board_login', log), log[-2000:]
        assert "board_logout" in log and "token_refused" in log, log[-2000:]
        assert re.search(r"token_refused.*not active|not active.*token_refused", log)
        check("the log holds sign-in, sign-out and refused tokens with their reasons, and no secret or token")
    except Exception:
        failed = True
        print("".join(server.log)[-4000:], file=sys.stderr)
        raise
    finally:
        server.stop()
        renewing.stop()
        provider.stop()
        print(f"{len(CHECKS)} passed, {1 if failed else 0} failed")


if __name__ == "__main__":
    main()
