#!/usr/bin/env bash
# The task board's browser tests: Debian's chromium driven by Playwright for Python
# (pinned, installed into target/board), against the debug binary.
# Chromium comes from Debian's package only (installed here when running as root);
# Playwright's own browser download is never used.
#   tests/board/run.sh                  installs what is missing, then runs the tests
#   tests/board/run.sh --install-only   only the installs (scripts/test.sh starts this in
#                                       the background while the workspace builds)
set -euo pipefail
cd "$(dirname "$0")/../.."

PLAYWRIGHT_VERSION=1.65.2
CHROMIUM="${MCP_TASKS_CHROMIUM:-/usr/bin/chromium}"
BIN="${MCP_TASKS_BIN:-target/debug/mcp-tasks}"
SHOTS="${MCP_TASKS_BOARD_SHOTS:-target/board/screenshots}"

if [ ! -x "$CHROMIUM" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
  else
    echo "board browser tests need Debian's chromium at $CHROMIUM: run 'sudo apt-get install -y chromium' (or set MCP_TASKS_CHROMIUM)" >&2
    exit 1
  fi
fi
venv=target/board/venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import playwright, importlib.metadata as m; assert m.version('playwright') == '$PLAYWRIGHT_VERSION'" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "playwright==$PLAYWRIGHT_VERSION"
fi
[ "${1:-}" = --install-only ] && exit 0
[ -x "$BIN" ] || cargo build -p mcp-tasks-cli
# Never let Playwright fetch a browser of its own.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
"$venv/bin/python" tests/board/browser.py --bin "$BIN" --chromium "$CHROMIUM" --shots "$SHOTS"
"$venv/bin/python" tests/board/approvals.py --bin "$BIN" --chromium "$CHROMIUM" --shots "$SHOTS"
"$venv/bin/python" tests/board/console.py --bin "$BIN" --chromium "$CHROMIUM" --shots "$SHOTS"
"$venv/bin/python" tests/board/laptop.py --bin "$BIN" --chromium "$CHROMIUM" --shots "$SHOTS"
