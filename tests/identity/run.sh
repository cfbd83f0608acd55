#!/usr/bin/env bash
# Identity tests against a real OpenID provider: the `oidc-provider` package (pinned,
# installed into target/identity with the pinned TypeScript SDK client), configured by
# tests/identity/provider.mjs; the board sign-in in Debian's chromium through Playwright
# for Python (the venv of tests/board/run.sh); the SDK client's OAuth flow
# (tests/identity/sdk.mjs). Ends with "N passed, M failed".
# With --install-only it installs what is missing and stops (scripts/test.sh starts that
# in the background while the workspace builds).
set -euo pipefail
cd "$(dirname "$0")/../.."

OIDC_PROVIDER_VERSION=9.13.3
TS_SDK_VERSION=1.32.2
PLAYWRIGHT_VERSION=1.65.2
CHROMIUM="${MCP_TASKS_CHROMIUM:-/usr/bin/chromium}"
BIN="${MCP_TASKS_BIN:-target/debug/mcp-tasks}"
SHOTS="${MCP_TASKS_BOARD_SHOTS:-target/board/screenshots}"
WORK=target/identity

for tool in node npm python3; do
  command -v "$tool" >/dev/null || { echo "identity tests need $tool on PATH" >&2; exit 1; }
done
if [ ! -x "$CHROMIUM" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
  else
    echo "identity tests need Debian's chromium at $CHROMIUM: run 'sudo apt-get install -y chromium' (or set MCP_TASKS_CHROMIUM)" >&2
    exit 1
  fi
fi
mkdir -p "$WORK"
version_of() {
  node -e 'try { process.stdout.write(require(process.argv[1]).version) } catch (e) {}' "$PWD/$WORK/node_modules/$1/package.json" 2>/dev/null || true
}
if [ "$(version_of oidc-provider)" != "$OIDC_PROVIDER_VERSION" ] || [ "$(version_of @modelcontextprotocol/sdk)" != "$TS_SDK_VERSION" ]; then
  [ -f "$WORK/package.json" ] || echo '{"name": "mcp-tasks-identity-tests", "private": true}' > "$WORK/package.json"
  (cd "$WORK" && npm install --no-audit --no-fund --silent \
    "oidc-provider@$OIDC_PROVIDER_VERSION" "@modelcontextprotocol/sdk@$TS_SDK_VERSION")
fi
# ES modules resolve packages from their own folder: the scripts run from the install.
cp tests/identity/provider.mjs tests/identity/sdk.mjs "$WORK/"

venv=target/board/venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import playwright, importlib.metadata as m; assert m.version('playwright') == '$PLAYWRIGHT_VERSION'" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "playwright==$PLAYWRIGHT_VERSION"
fi
[ "${1:-}" = --install-only ] && exit 0
[ -x "$BIN" ] || cargo build -p mcp-tasks-cli
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
"$venv/bin/python" tests/identity/identity.py --bin "$BIN" --chromium "$CHROMIUM" --work "$WORK" --shots "$SHOTS"
