#!/usr/bin/env bash
# Interoperability tests: drives the mcp-tasks server with the official MCP client SDKs,
# pinned, over both transports.
#
#   bash tests/interop/run.sh            # all clients, stdio and HTTP
#   INTEROP_ONLY=ts|py|rust bash tests/interop/run.sh   # rust: only the Rust peers (rmcp,
#                                         # tower-mcp, turul: servers, and turul's client)
#   INTEROP_TRANSPORTS="stdio http"       # default; pick one to narrow a run
#   INTEROP_SUITES="client hitl gateway hosts"  # default; client.* = tasks, hitl.* = elicitation/
#                                         # sampling, gateway = `mcp-tasks wrap` in front of real
#                                         # upstreams, hosts.* = clients without tasks (sync budget,
#                                         # task tools; tests/interop/hosts.sh) and the MCP
#                                         # Inspector's CLI; `none` runs none of them
#   INTEROP_CLIENT_PEERS="fastmcp-tasks everything"  # default; our Rust client and CLI against
#                                         # their servers (`none` skips them, and the TypeScript
#                                         # example servers and Rust servers below too;
#                                         # INTEROP_ONLY=ts drops fastmcp-tasks, =py drops everything)
#   INTEROP_ONLY=ext-tasks                # only the Tasks extension client package (ext_tasks.mjs)
#   INTEROP_EXT_TASKS=0                   # skip it (it runs with every full or INTEROP_ONLY=ts run)
#   INTEROP_INSTALL_ONLY=1                # only the npm and PyPI installs below, then stop
#                                         # (scripts/test.sh runs this in the background while
#                                         # the workspace builds)
#   INTEROP_RMCP_BRIDGE=0                 # skip the rmcp bridge runs (examples/rmcp-count-to, an
#                                         # rmcp server with durable tools added by mcp-tasks-rmcp,
#                                         # with the TypeScript and Python SDK clients on
#                                         # 2025-11-25: rmcp_bridge.mjs/.py; with full, ts and py runs)
#
# Installs (idempotent, into <repo>/target/interop):
#   node/   @modelcontextprotocol/sdk (TypeScript SDK client) and
#           @modelcontextprotocol/server-everything (the official test server, as an upstream)
#   venv/   Python venv with mcp (Python SDK client)
#   inspector/  @modelcontextprotocol/inspector (the MCP Inspector, whose CLI the hosts suite
#           runs; its own folder: it brings a newer SDK line)
#   ext-tasks/  @modelcontextprotocol/ext-tasks (the Tasks extension client package) with the
#           v2 client SDK it needs, @modelcontextprotocol/client (its own folder: a different
#           SDK line than node/)
#   venv-fastmcp-tasks/  fastmcp-tasks (FastMCP's Tasks extension server; it needs mcp 2.x,
#           which clashes with the Python SDK client's pin, hence its own venv)
# Needs node + npm and python3 (with venv) on PATH; builds target/debug/mcp-tasks if missing.
# Each suite (client.mjs/.py, hitl.mjs/.py) runs against a fresh server per transport; the
# clients of each language share common.mjs/common.py.
# Then the other direction (unless INTEROP_ONLY=py): our Rust client crate and the CLI
# against the TypeScript SDK's own example servers (the peer scenarios of
# crates/{client,cli}/tests/peers.rs, modules ts_streamable_http_* and
# ts_task_interactive_*, which find the SDK through MCP_TASKS_INTEROP_NODE).
# Then (unless INTEROP_ONLY=ts|py) our Rust client crate and the mcp-tasks CLI against task
# servers written with other Rust MCP libraries: tests/interop/rmcp-server (rmcp) and
# tests/interop/tower-mcp-server (tower-mcp), each its own cargo workspace with a committed
# lock, built (debug, --locked) into target/interop/rust-peers
# (the peer scenarios of crates/{client,cli}/tests/peers.rs, modules rmcp_* and
# tower_mcp_*, which find the binaries through MCP_TASKS_INTEROP_RMCP_SERVER /
# MCP_TASKS_INTEROP_TOWER_MCP_SERVER); and the durable Rust peer, bench/turul-task-server
# (turul-mcp-server with turul-mcp-ext-tasks, its own workspace too), on its memory and SQLite
# stores (modules turul_*, through MCP_TASKS_INTEROP_TURUL_SERVER), with turul's own client
# (its member client/, turul-mcp-client with ext-tasks) driving our demo server the other way.
# Every run is recorded (peer, version, wire, counts) in target/interop/results.tsv, and
# render_matrix.py turns that into target/interop/interop.md; a full run (no INTEROP_*
# narrowing) also writes docs/interop.md, the matrix the README links to.
# Prints the clients' PASS/FAIL lines and ends with "N passed, M failed" summed over all runs.
# Exit status is non-zero when any check failed or a client run broke down.
set -euo pipefail

TS_SDK_VERSION=1.32.2
EVERYTHING_VERSION=2026.8.31
PY_MCP_VERSION=1.30.0
EXT_TASKS_VERSION=0.2.2
EXT_TASKS_CLIENT_VERSION=2.4.0
FASTMCP_TASKS_VERSION=4.1.4
INSPECTOR_VERSION=2.12.0

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The Rust peers' pins (RMCP_VERSION, TOWER_MCP_VERSION, TURUL_*) and build_rust_peer.
. "$HERE/rust-peers.sh"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK="$ROOT/target/interop"
BIN="${MCP_TASKS_BIN:-$ROOT/target/debug/mcp-tasks}"
ONLY="${INTEROP_ONLY:-}"
# The Tasks extension client runs with full and TypeScript runs, or alone (INTEROP_ONLY=ext-tasks).
EXT_TASKS=0
if [ "${INTEROP_EXT_TASKS:-1}" != 0 ] && { [ -z "$ONLY" ] || [ "$ONLY" = ts ] || [ "$ONLY" = ext-tasks ]; }; then
  EXT_TASKS=1
fi
TRANSPORTS="${INTEROP_TRANSPORTS:-stdio http}"
SUITES="${INTEROP_SUITES:-client hitl gateway hosts}"
CLIENT_PEERS="${INTEROP_CLIENT_PEERS:-fastmcp-tasks everything}"
# INTEROP_CLIENT_PEERS=none also skips our client against the TypeScript example servers and
# the Rust servers (a narrowed run of server-side suites builds and runs none of them).
OUR_CLIENT_RUNS=1
[ "${INTEROP_CLIENT_PEERS:-}" = none ] && OUR_CLIENT_RUNS=0
case "$ONLY" in rust|ext-tasks) CLIENT_PEERS=none ;; esac

say() { echo "[interop] $*" >&2; }
if [ "$ONLY" = rust ]; then needed="cargo timeout"; else needed="node npm python3 timeout"; fi
for tool in $needed; do
  command -v "$tool" >/dev/null || { say "needs $tool on PATH"; exit 2; }
done
mkdir -p "$WORK"

# ---------------------------------------------------------------- installs
installed_npm_version() {
  local pj="$WORK/node/node_modules/@modelcontextprotocol/sdk/package.json"
  [ -f "$pj" ] || return 0
  node -e 'try { process.stdout.write(require(process.argv[1]).version) } catch (e) {}' "$pj" 2>/dev/null || true
}
installed_everything_version() {
  local pj="$WORK/node/node_modules/@modelcontextprotocol/server-everything/package.json"
  [ -f "$pj" ] || return 0
  node -e 'try { process.stdout.write(require(process.argv[1]).version) } catch (e) {}' "$pj" 2>/dev/null || true
}
installed_py_version() {
  [ -x "$WORK/venv/bin/python" ] || return 0
  "$WORK/venv/bin/python" - <<'EOF' 2>/dev/null || true
import importlib.metadata as md
try:
    print(md.version("mcp"), end="")
except md.PackageNotFoundError:
    pass
EOF
}

if [ "$ONLY" != py ] && [ "$ONLY" != ext-tasks ] && [ "$ONLY" != rust ]; then
  if [ "$(installed_npm_version)" != "$TS_SDK_VERSION" ]; then
    say "installing @modelcontextprotocol/sdk@$TS_SDK_VERSION into $WORK/node"
    mkdir -p "$WORK/node"
    if [ ! -f "$WORK/node/package.json" ]; then
      printf '{\n  "name": "mcp-tasks-interop",\n  "private": true,\n  "type": "module"\n}\n' > "$WORK/node/package.json"
    fi
    (cd "$WORK/node" && npm install --no-audit --no-fund --save-exact --loglevel=error \
      "@modelcontextprotocol/sdk@$TS_SDK_VERSION" >&2)
    [ "$(installed_npm_version)" = "$TS_SDK_VERSION" ] || { say "npm install did not yield sdk $TS_SDK_VERSION"; exit 2; }
  fi
  if [ "$(installed_everything_version)" != "$EVERYTHING_VERSION" ]; then
    say "installing @modelcontextprotocol/server-everything@$EVERYTHING_VERSION into $WORK/node"
    (cd "$WORK/node" && npm install --no-audit --no-fund --save-exact --loglevel=error \
      "@modelcontextprotocol/sdk@$TS_SDK_VERSION" \
      "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" >&2)
    [ "$(installed_everything_version)" = "$EVERYTHING_VERSION" ] || { say "npm install did not yield server-everything $EVERYTHING_VERSION"; exit 2; }
  fi
fi

if [ "$ONLY" != ts ] && [ "$ONLY" != ext-tasks ] && [ "$ONLY" != rust ]; then
  if [ "$(installed_py_version)" != "$PY_MCP_VERSION" ]; then
    say "installing python mcp==$PY_MCP_VERSION into $WORK/venv"
    [ -x "$WORK/venv/bin/python" ] || python3 -m venv "$WORK/venv"
    "$WORK/venv/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$PY_MCP_VERSION" >&2
    [ "$(installed_py_version)" = "$PY_MCP_VERSION" ] || { say "pip did not yield mcp $PY_MCP_VERSION"; exit 2; }
  fi
fi

installed_ext_tasks_version() {
  local pj="$WORK/ext-tasks/node_modules/@modelcontextprotocol/$1/package.json"
  [ -f "$pj" ] || return 0
  node -e 'try { process.stdout.write(require(process.argv[1]).version) } catch (e) {}' "$pj" 2>/dev/null || true
}
if [ "$EXT_TASKS" = 1 ]; then
  if [ "$(installed_ext_tasks_version ext-tasks)" != "$EXT_TASKS_VERSION" ] ||
     [ "$(installed_ext_tasks_version client)" != "$EXT_TASKS_CLIENT_VERSION" ]; then
    say "installing @modelcontextprotocol/ext-tasks@$EXT_TASKS_VERSION with @modelcontextprotocol/client@$EXT_TASKS_CLIENT_VERSION into $WORK/ext-tasks"
    mkdir -p "$WORK/ext-tasks"
    if [ ! -f "$WORK/ext-tasks/package.json" ]; then
      printf '{\n  "name": "mcp-tasks-interop-ext-tasks",\n  "private": true,\n  "type": "module"\n}\n' > "$WORK/ext-tasks/package.json"
    fi
    (cd "$WORK/ext-tasks" && npm install --no-audit --no-fund --save-exact --loglevel=error \
      "@modelcontextprotocol/ext-tasks@$EXT_TASKS_VERSION" \
      "@modelcontextprotocol/client@$EXT_TASKS_CLIENT_VERSION" >&2)
    [ "$(installed_ext_tasks_version ext-tasks)" = "$EXT_TASKS_VERSION" ] || { say "npm install did not yield ext-tasks $EXT_TASKS_VERSION"; exit 2; }
    [ "$(installed_ext_tasks_version client)" = "$EXT_TASKS_CLIENT_VERSION" ] || { say "npm install did not yield client $EXT_TASKS_CLIENT_VERSION"; exit 2; }
  fi
fi

# The MCP Inspector, for the hosts suite's TypeScript pass (tests/interop/hosts.sh).
. "$HERE/hosts.sh"
if [[ " $SUITES " == *" hosts "* ]] && { [ -z "$ONLY" ] || [ "$ONLY" = ts ]; }; then
  install_inspector
fi

# fastmcp-tasks, in its own venv (FastMCP 4 needs mcp 2.x; the client venv pins 1.30.0).
FASTMCP_VENV="$WORK/venv-fastmcp-tasks"
installed_fastmcp_tasks_version() {
  [ -x "$FASTMCP_VENV/bin/python" ] || return 0
  "$FASTMCP_VENV/bin/python" - <<'EOF' 2>/dev/null || true
import importlib.metadata as md
try:
    print(md.version("fastmcp-tasks"), end="")
except md.PackageNotFoundError:
    pass
EOF
}
pip_fastmcp() { "$FASTMCP_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >&2; }
if [ "$ONLY" != ts ] && [[ " $CLIENT_PEERS " == *" fastmcp-tasks "* ]] \
  && [ "$(installed_fastmcp_tasks_version)" != "$FASTMCP_TASKS_VERSION" ]; then
  say "installing fastmcp-tasks==$FASTMCP_TASKS_VERSION into $FASTMCP_VENV"
  [ -x "$FASTMCP_VENV/bin/python" ] || python3 -m venv "$FASTMCP_VENV"
  if ! pip_fastmcp "fastmcp-tasks==$FASTMCP_TASKS_VERSION" 2> "$WORK/fastmcp-tasks-pip.log"; then
    # Workaround (tests/interop/workarounds.md): fastmcp-slim 4.1.4, which fastmcp-tasks
    # 4.1.4 pins, asks for certifi>=2026.10.19 in its [server] extra, a release the
    # package index here does not serve. Install the two pinned packages without
    # dependencies, then every requirement they declare (with the [server] extra) except
    # that certifi floor; certifi only matters for TLS, and these servers are plain HTTP
    # on loopback.
    say "fastmcp-tasks did not resolve (see $WORK/fastmcp-tasks-pip.log); installing its requirements without the certifi floor"
    pip_fastmcp --no-deps "fastmcp-slim==$FASTMCP_TASKS_VERSION" "fastmcp-tasks==$FASTMCP_TASKS_VERSION"
    mapfile -t FASTMCP_REQS < <("$FASTMCP_VENV/bin/python" - <<'EOF'
import importlib.metadata as md
from pip._vendor.packaging.requirements import Requirement
for dist, extras in (("fastmcp-slim", ("", "server")), ("fastmcp-tasks", ("",))):
    for line in md.requires(dist) or []:
        r = Requirement(line)
        if r.name in ("certifi", "fastmcp-slim"):
            continue
        if r.marker is None or any(r.marker.evaluate({"extra": e}) for e in extras):
            print(str(r).split(";")[0].strip())
EOF
)
    pip_fastmcp certifi "${FASTMCP_REQS[@]}"
  fi
  [ "$(installed_fastmcp_tasks_version)" = "$FASTMCP_TASKS_VERSION" ] \
    || { say "pip did not yield fastmcp-tasks $FASTMCP_TASKS_VERSION"; exit 2; }
  "$FASTMCP_VENV/bin/python" -c 'import fastmcp_tasks, docket, uvicorn' \
    || { say "fastmcp-tasks $FASTMCP_TASKS_VERSION is installed but does not import"; exit 2; }
fi

if [ "${INTEROP_INSTALL_ONLY:-0}" = 1 ]; then
  say "installs done (INTEROP_INSTALL_ONLY=1)"
  exit 0
fi

# ---------------------------------------------------------------- binary
if [ ! -x "$BIN" ]; then
  say "building mcp-tasks"
  (cd "$ROOT" && cargo build -p mcp-tasks-cli >&2)
fi
[ -x "$BIN" ] || { say "no binary at $BIN"; exit 2; }

# The ESM clients resolve '@modelcontextprotocol/sdk' from their own directory, so they run
# from copies placed beside node_modules (refreshed on every run), with the common.mjs they
# import.
{ [ "$ONLY" = py ] || [ "$ONLY" = ext-tasks ] || [ "$ONLY" = rust ]; } || cp "$HERE/common.mjs" "$HERE/client.mjs" "$HERE/hitl.mjs" "$HERE/gateway.mjs" "$HERE/hosts.mjs" "$HERE/rmcp_bridge.mjs" "$WORK/node/"
[ "$EXT_TASKS" = 0 ] || cp "$HERE/ext_tasks.mjs" "$WORK/ext-tasks/"

# ---------------------------------------------------------------- server lifecycle
SERVER_PID=""
SERVER_LOG=""
stop_server() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}
trap stop_server EXIT
trap 'stop_server; exit 130' INT TERM

# start_http_server LABEL [CMD...]: starts a fresh server on a free port (by default the demo
# server; else CMD, which must itself say --listen 127.0.0.1:0), sets SERVER_PID and URL.
start_http_server() {
  SERVER_LOG="$WORK/server-http-$1.log"
  shift
  : > "$SERVER_LOG"
  if [ $# -eq 0 ]; then set -- "$BIN" serve --demo --database memory: --log warn --listen 127.0.0.1:0; fi
  "$@" 2> "$SERVER_LOG" &
  SERVER_PID=$!
  URL=""
  for _ in $(seq 1 100); do
    URL="$(sed -n 's#.*listening on \(http://[^ ]*\).*#\1#p' "$SERVER_LOG" | head -n1)"
    [ -n "$URL" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$URL" ]; then
    say "server did not report its address; log:"; cat "$SERVER_LOG" >&2
    stop_server
    return 1
  fi
}

# ---------------------------------------------------------------- runs
TOTAL_PASS=0
TOTAL_FAIL=0
CLIENT_TIMEOUT="${INTEROP_CLIENT_TIMEOUT:-90}"

# The interop matrix (docs/interop.md) is rendered from one line per run, written by
# `record`: which side of ours, the peer, its pinned version, the wire, and the counts.
# `peer SIDE NAME VERSION WIRE` names what the runs that follow exercise.
RESULTS="$WORK/results.tsv"
: > "$RESULTS"
# What failed and why, gathered as runs go and printed again at the end.
FAILURES="$WORK/failures.txt"
: > "$FAILURES"
PEER_SIDE="" PEER_NAME="" PEER_VERSION="" PEER_WIRE=""
peer() { PEER_SIDE="$1" PEER_NAME="$2" PEER_VERSION="$3" PEER_WIRE="$4"; }

# record LABEL PASSED FAILED: adds a run's counts to the totals and to the matrix.
record() {
  TOTAL_PASS=$((TOTAL_PASS + $2)); TOTAL_FAIL=$((TOTAL_FAIL + $3))
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$PEER_SIDE" "$PEER_NAME" "$PEER_VERSION" "$PEER_WIRE" \
    "$1" "$2" "$3" >> "$RESULTS"
}

# run_client LABEL CMD...: runs one client, echoes its output, records its counts.
run_client() {
  local label="$1"; shift
  local out="$WORK/$label.out" rc=0
  say "=== $label"
  timeout --kill-after=5 "$CLIENT_TIMEOUT" "$@" > "$out" 2> "$WORK/$label.err" || rc=$?
  sed "s/^/[$label] /" "$out"
  local summary p f
  summary="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -n1 || true)"
  if [ -n "$summary" ]; then
    p="${summary%% passed*}"; f="${summary#*passed, }"; f="${f%% failed*}"
  else
    p="$(grep -c '^PASS ' "$out" || true)"; f="$(grep -c '^FAIL ' "$out" || true)"
  fi
  if [ -z "$summary" ] || { [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; }; then
    # The client died, hung or exited without a summary: count that as a failure.
    echo "FAIL [$label] client run broke down (exit $rc); stderr tail:"
    tail -n 20 "$WORK/$label.err" | sed "s/^/[$label]   /"
    f=$((f + 1))
  fi
  if [ "$f" -gt 0 ]; then
    { echo "[$label] (whole output: $out)"
      grep -E '^FAIL ' "$out" | sed "s/^/[$label]   /" || true
      tail -n 5 "$WORK/$label.err" | sed "s/^/[$label]   stderr: /"
    } >> "$FAILURES"
  fi
  record "$label" "$p" "$f"
}

# run_cargo_test LABEL TIMEOUT [VAR=VALUE...] -- -p PACKAGE --test TARGET [FILTER...]: one of
# our Rust test files against a peer (our client or CLI driving their server); each #[test]
# counts as a check, and a run that breaks down without a summary counts as a failure.
# It runs the test binary of the workspace's own test build (`cargo test --workspace
# --all-features`, what scripts/test.sh builds just before): `cargo test -p PACKAGE` would
# resolve another feature set and build the workspace a second time. The build below is
# a no-op after the test command (and builds everything once when run alone).
TEST_EXES="$WORK/test-executables.tsv"
rm -f "$TEST_EXES"
test_exe() {
  local package="$1" target="$2"
  if [ ! -s "$TEST_EXES" ]; then
    (cd "$ROOT" && cargo test --workspace --all-features --no-run --message-format=json 2>"$WORK/test-build.err") \
      | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        pid = m["package_id"]
        if " " in pid:  # the older form: "name version (source)"
            name = pid.split(" ")[0]
        else:  # "source#name@version", or "source/name#version" when the two agree
            base, _, tail = pid.partition("#")
            name = tail.split("@")[0] if "@" in tail else base.rstrip("/").split("/")[-1]
        print(name, m["target"]["name"], m["executable"], m["manifest_path"], sep="\t")
' > "$TEST_EXES" || true
  fi
  awk -F'\t' -v p="$package" -v t="$target" '$1 == p && $2 == t { print $3 "\t" $4; exit }' "$TEST_EXES"
}
run_cargo_test() {
  local label="$1" limit="$2"; shift 2
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
  [ "${1:-}" = -- ] && shift
  local package="" target="" filters=()
  while [ $# -gt 0 ]; do
    case "$1" in
      -p) package="$2"; shift 2 ;;
      --test) target="$2"; shift 2 ;;
      *) filters+=("$1"); shift ;;
    esac
  done
  local out="$WORK/$label.out" rc=0 summary p f found exe dir
  say "=== $label"
  found="$(test_exe "$package" "$target")"
  exe="${found%%$'\t'*}"
  dir="$(dirname "${found#*$'\t'}")"
  if [ -z "$found" ] || [ ! -x "$exe" ]; then
    { echo "no test binary $package/$target from the workspace's test build:"; tail -n 20 "$WORK/test-build.err" 2>/dev/null; } > "$out"
    rc=101
  else
    (cd "$dir" && env ${envs[@]+"${envs[@]}"} timeout --kill-after=5 "$limit" \
      "$exe" ${filters[@]+"${filters[@]}"} > "$out" 2>&1) || rc=$?
  fi
  grep -E '^test |^test result' "$out" | sed "s/^/[$label] /"
  summary="$(grep -E '^test result: ' "$out" | tail -n1 || true)"
  if [ -n "$summary" ]; then
    p="$(echo "$summary" | sed -n 's/.* \([0-9][0-9]*\) passed.*/\1/p')"
    f="$(echo "$summary" | sed -n 's/.* \([0-9][0-9]*\) failed.*/\1/p')"
  else
    p=0; f=0
  fi
  if [ -z "$summary" ] || { [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; }; then
    echo "FAIL [$label] cargo test broke down (exit $rc); tail:"
    tail -n 20 "$out" | sed "s/^/[$label]   /"
    f=$(( ${f:-0} + 1 ))
  fi
  if [ "${f:-0}" -gt 0 ]; then
    { echo "[$label] (whole output: $out)"
      grep -E -A6 'panicked at' "$out" | grep -v '^ *[0-9]*: \|^ *at ' | sed "s/^/[$label]   /" || true
    } >> "$FAILURES"
  fi
  record "$label" "${p:-0}" "${f:-0}"
}

STDIO_CMD="$BIN serve --demo --database memory: --stdio --log warn"
EVERYTHING="$WORK/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

# run_gateway_suite: the TypeScript and Python SDK clients through `mcp-tasks wrap` in front of
# the everything server (stdio and HTTP; over HTTP gateway.mjs also uses the 2026-07-28 wire),
# and the TypeScript one through `serve --config` in front of a server written with the Python
# SDK (tests/interop/upstream_server.py) that dies mid-task.
run_gateway_suite() {
  local tr
  local py=()
  [ -x "$WORK/venv/bin/python" ] && py=(env PYTHONDONTWRITEBYTECODE=1 "$WORK/venv/bin/python" "$HERE/gateway.py")
  peer "gateway" "@modelcontextprotocol/server-everything upstream, SDK clients in front" "$EVERYTHING_VERSION" "2025-11-25"
  for tr in $TRANSPORTS; do
    case "$tr" in
      stdio)
        run_client "gateway-everything-stdio" node "$WORK/node/gateway.mjs" \
          --stdio "$BIN wrap --database memory: --log warn -- node $EVERYTHING stdio"
        [ ${#py[@]} -eq 0 ] || run_client "gateway-everything-py-stdio" "${py[@]}" \
          --stdio "$BIN wrap --database memory: --log warn -- node $EVERYTHING stdio"
        ;;
      http)
        if start_http_server gateway "$BIN" wrap --database memory: --log warn --listen 127.0.0.1:0 -- node "$EVERYTHING" stdio; then
          run_client "gateway-everything-http" node "$WORK/node/gateway.mjs" --url "$URL"
          [ ${#py[@]} -eq 0 ] || run_client "gateway-everything-py-http" "${py[@]}" --url "$URL"
          stop_server
        else
          echo "FAIL [gateway-everything-http] server did not start"
          record "gateway-everything-http" 0 1
        fi
        ;;
    esac
  done
  # The everything server as a Streamable HTTP upstream (`url = ...` in [[upstream]]).
  local port ev_pid
  # It takes a port number, not a listener: a port picked here may be taken by another
  # process before it binds it, so a start that dies (EADDRINUSE) is retried on another
  # port, a bounded number of times.
  for _attempt in 1 2 3 4 5; do
    port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    PORT="$port" node "$EVERYTHING" streamableHttp > "$WORK/everything-http.log" 2>&1 &
    ev_pid=$!
    for _ in $(seq 1 100); do
      grep -q "listening on port" "$WORK/everything-http.log" 2>/dev/null && break
      kill -0 "$ev_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$ev_pid" 2>/dev/null && break
    echo "the everything server did not start on port $port (retrying)"
  done
  printf '[[upstream]]\nname = "everything-http"\nurl = "http://127.0.0.1:%s/mcp"\n' "$port" > "$WORK/gateway-http-upstream.toml"
  run_client "gateway-everything-over-http-upstream" node "$WORK/node/gateway.mjs" \
    --stdio "$BIN serve --stdio --database memory: --log warn --config $WORK/gateway-http-upstream.toml"
  kill "$ev_pid" 2>/dev/null || true
  wait "$ev_pid" 2>/dev/null || true
  if [ -x "$WORK/venv/bin/python" ]; then
    peer "gateway" "Python SDK server (mcp) upstream, TypeScript SDK client in front" "$PY_MCP_VERSION" "2025-11-25"
    printf '[[upstream]]\nname = "py"\ncommand = ["%s", "%s"]\nprefix = "py_"\n' \
      "$WORK/venv/bin/python" "$HERE/upstream_server.py" > "$WORK/gateway-py.toml"
    run_client "gateway-python-upstream-stdio" env GATEWAY_UPSTREAM=py node "$WORK/node/gateway.mjs" \
      --stdio "$BIN serve --stdio --database memory: --log warn --config $WORK/gateway-py.toml"
  fi
}

# run_ext_tasks_suite: the Tasks extension's client package against the demo server over
# Streamable HTTP on the 2026-07-28 wire. The server suggests a poll interval other than the
# package's default (1 s) so that honouring pollIntervalMs shows, and gives up on unanswered
# input requests after 3 s so that a failed task comes quickly.
run_ext_tasks_suite() {
  peer "server" "@modelcontextprotocol/ext-tasks client (TypeScript)" "$EXT_TASKS_VERSION" "2026-07-28 extension"
  if start_http_server ext-tasks "$BIN" serve --demo --database memory: --log warn \
      --poll-interval 300ms --input-timeout 3s --listen 127.0.0.1:0; then
    run_client "ext-tasks-http" node "$WORK/ext-tasks/ext_tasks.mjs" --url "$URL"
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      echo "FAIL [ext-tasks-http] server process exited during the run; log tail:"
      tail -n 20 "$SERVER_LOG" | sed "s/^/[ext-tasks-http]   /"
      record "ext-tasks-http" 0 1
    fi
    stop_server
  else
    echo "FAIL [ext-tasks-http] server did not start"
    record "ext-tasks-http" 0 1
  fi
}
[ "$EXT_TASKS" = 0 ] || run_ext_tasks_suite

for client in ts py; do
  [ -z "$ONLY" ] || [ "$ONLY" = "$client" ] || continue
  for suite in $SUITES; do
    case "$suite" in
      client) prefix="$client" ;;
      hitl) prefix="$client-hitl" ;;
      gateway) [ "$client" = ts ] && run_gateway_suite; continue ;;
      hosts) run_hosts_suite "$client"; continue ;;
      none) continue ;;
      *) say "unknown suite $suite"; exit 2 ;;
    esac
    if [ "$client" = ts ]; then
      peer "server" "@modelcontextprotocol/sdk client (TypeScript SDK), $suite suite" "$TS_SDK_VERSION" "2025-11-25"
      cmd=(node "$WORK/node/$suite.mjs")
    else
      # common.py is imported from the script's own folder; no __pycache__ left there.
      peer "server" "mcp client (Python SDK), $suite suite" "$PY_MCP_VERSION" "2025-11-25"
      cmd=(env PYTHONDONTWRITEBYTECODE=1 "$WORK/venv/bin/python" "$HERE/$suite.py")
    fi
    for tr in $TRANSPORTS; do
      case "$tr" in
        stdio)
          run_client "$prefix-stdio" "${cmd[@]}" --stdio "$STDIO_CMD"
          ;;
        http)
          if start_http_server "$prefix"; then
            run_client "$prefix-http" "${cmd[@]}" --url "$URL"
            if ! kill -0 "$SERVER_PID" 2>/dev/null; then
              echo "FAIL [$prefix-http] server process exited during the run; log tail:"
              tail -n 20 "$SERVER_LOG" | sed "s/^/[$prefix-http]   /"
              record "$prefix-http" 0 1
            fi
            stop_server
          else
            echo "FAIL [$prefix-http] server did not start"
            record "$prefix-http" 0 1
          fi
          ;;
        *) say "unknown transport $tr"; exit 2 ;;
      esac
    done
  done
done

# ---------------------------------------------------------------- the rmcp bridge
# examples/rmcp-count-to (a workspace member, debug, target/debug) on a free port,
# tasks in memory, a fresh server per client; the SDK clients speak 2025-11-25, where the
# bridge asks count_to's question as elicitation/create through rmcp's peer.
run_rmcp_bridge() {
  local client="$1" label="$client-rmcp-bridge-http" bridge="$ROOT/target/debug/example-rmcp-count-to" cmd
  case "$client" in
    ts) peer "server" "@modelcontextprotocol/sdk client (TypeScript SDK), rmcp bridge (examples/rmcp-count-to, rmcp $RMCP_VERSION)" "$TS_SDK_VERSION" "2025-11-25"
        cmd=(node "$WORK/node/rmcp_bridge.mjs") ;;
    py) peer "server" "mcp client (Python SDK), rmcp bridge (examples/rmcp-count-to, rmcp $RMCP_VERSION)" "$PY_MCP_VERSION" "2025-11-25"
        cmd=(env PYTHONDONTWRITEBYTECODE=1 "$WORK/venv/bin/python" "$HERE/rmcp_bridge.py") ;;
  esac
  # Built every run, so a stale binary never passes for this checkout: by the workspace's
  # test build (which builds it for its own tests), a no-op after the test command, where
  # `cargo build -p` would resolve other features and build the workspace again.
  if ! (cd "$ROOT" && cargo test --workspace --all-features --no-run --quiet >&2) || [ ! -x "$bridge" ]; then
    echo "FAIL [$label] building examples/rmcp-count-to failed"
    record "$label" 0 1
    return
  fi
  if start_http_server "$label" "$bridge" --listen 127.0.0.1:0 --store memory:; then
    run_client "$label" "${cmd[@]}" --url "$URL"
    stop_server
  else
    echo "FAIL [$label] server did not start"
    record "$label" 0 1
  fi
}
if [ "${INTEROP_RMCP_BRIDGE:-1}" != 0 ]; then
  for client in ts py; do
    if [ -z "$ONLY" ] || [ "$ONLY" = "$client" ]; then run_rmcp_bridge "$client"; fi
  done
fi

# ---------------------------------------------------------------- our client, their servers
if { [ -z "$ONLY" ] || [ "$ONLY" = ts ]; } && [ "$OUR_CLIENT_RUNS" = 1 ]; then
  peer "client" "TypeScript SDK example servers (@modelcontextprotocol/sdk)" "$TS_SDK_VERSION" "2025-11-25"
  # simpleStreamableHttp.js and simpleTaskInteractive.js, HTTP only; each test starts
  # its own server.
  for crate in client cli; do
    run_cargo_test "rust-$crate-ts-examples" 600 MCP_TASKS_INTEROP_NODE="$WORK/node" -- \
      -p "mcp-tasks-$crate" --test peers -- ts_streamable_http_ ts_task_interactive_
  done
fi

# Our client crate and CLI against their servers: the peer scenarios, written once in
# mcp_tasks_testkit::peer_suite and run by crates/{client,cli}/tests/peers.rs, one module
# per peer and wire (each #[test] a check; a scenario a peer cannot do is listed as
# ignored with its reason):
# - a server written with fastmcp-tasks (tests/interop/fastmcp_tasks_server.py), the
#   2026-07-28 Tasks extension: modules fastmcp_tasks_*;
# - the everything server on 2025-11-25, over HTTP and stdio: modules everything_*.
# The tests find the peers through the variables set here (without them they skip).
for client_peer in $CLIENT_PEERS; do
  case "$client_peer" in
    fastmcp-tasks)
      [ "$ONLY" != ts ] || continue
      peer "client" "fastmcp-tasks server (FastMCP, Docket memory backend)" "$FASTMCP_TASKS_VERSION" "2026-07-28 extension"
      for crate in client cli; do
        run_cargo_test "rust-$crate-fastmcp-tasks" 600 \
          MCP_TASKS_INTEROP_FASTMCP_PYTHON="$FASTMCP_VENV/bin/python" -- \
          -p "mcp-tasks-$crate" --test peers fastmcp_tasks_
      done
      ;;
    everything)
      [ "$ONLY" != py ] || continue
      peer "client" "@modelcontextprotocol/server-everything" "$EVERYTHING_VERSION" "2025-11-25"
      for crate in client cli; do
        run_cargo_test "rust-$crate-everything" 600 \
          MCP_TASKS_INTEROP_EVERYTHING="$EVERYTHING" -- \
          -p "mcp-tasks-$crate" --test peers everything_
      done
      ;;
    none) ;;
    *) say "unknown client peer $client_peer"; exit 2 ;;
  esac
done

# ---------------------------------------------------------------- our client, Rust servers
# build_rust_peer (tests/interop/rust-peers.sh) builds each; scripts/test.sh has usually
# built them already, in the background.
if [ "$ONLY" = rust ] || { [ -z "$ONLY" ] && [ "$OUR_CLIENT_RUNS" = 1 ]; }; then
  peer "client" "rmcp server (tests/interop/rmcp-server)" "$RMCP_VERSION" "2026-07-28 extension"
  if RMCP_BIN="$(build_rust_peer rmcp-server rmcp "$RMCP_VERSION")"; then
    run_cargo_test "rust-client-rmcp" 600 MCP_TASKS_INTEROP_RMCP_SERVER="$RMCP_BIN" -- \
      -p mcp-tasks-client --test peers rmcp_
    run_cargo_test "cli-rmcp" 600 MCP_TASKS_INTEROP_RMCP_SERVER="$RMCP_BIN" -- \
      -p mcp-tasks-cli --test peers rmcp_
  else
    echo "FAIL [rust-peers-rmcp] building tests/interop/rmcp-server failed"
    record "rust-peers-rmcp-build" 0 1
  fi
  peer "client" "tower-mcp server (tests/interop/tower-mcp-server)" "$TOWER_MCP_VERSION" "both"
  if TOWER_BIN="$(build_rust_peer tower-mcp-server tower-mcp "$TOWER_MCP_VERSION")"; then
    run_cargo_test "rust-client-tower-mcp" 600 MCP_TASKS_INTEROP_TOWER_MCP_SERVER="$TOWER_BIN" -- \
      -p mcp-tasks-client --test peers tower_mcp_
    run_cargo_test "cli-tower-mcp" 600 MCP_TASKS_INTEROP_TOWER_MCP_SERVER="$TOWER_BIN" -- \
      -p mcp-tasks-cli --test peers tower_mcp_
  else
    echo "FAIL [rust-peers-tower-mcp] building tests/interop/tower-mcp-server failed"
    record "rust-peers-tower-mcp-build" 0 1
  fi
  # turul: one server binary, a row per store; then turul's client against our server.
  TURUL="turul-mcp-server + turul-mcp-ext-tasks (bench/turul-task-server)"
  if TURUL_BIN="$(build_rust_peer "$ROOT/bench/turul-task-server" turul-mcp-server "$TURUL_VERSION")"; then
    for store in memory sqlite; do
      case "$store" in memory) what="memory store" ;; sqlite) what="SQLite store" ;; esac
      peer "client" "$TURUL, $what" "$TURUL_VERSION + $TURUL_EXT_TASKS_VERSION" "2026-07-28 extension"
      run_cargo_test "rust-client-turul-$store" 600 MCP_TASKS_INTEROP_TURUL_SERVER="$TURUL_BIN" -- \
        -p mcp-tasks-client --test peers "turul_${store}_"
      run_cargo_test "cli-turul-$store" 600 MCP_TASKS_INTEROP_TURUL_SERVER="$TURUL_BIN" -- \
        -p mcp-tasks-cli --test peers "turul_${store}_"
    done
  else
    peer "client" "$TURUL" "$TURUL_VERSION + $TURUL_EXT_TASKS_VERSION" "2026-07-28 extension"
    echo "FAIL [rust-peers-turul] building bench/turul-task-server failed"
    record "rust-peers-turul-build" 0 1
  fi
  peer "server" "turul-mcp-client with ext-tasks (bench/turul-task-server/client)" "$TURUL_CLIENT_VERSION" "2026-07-28 extension"
  if TURUL_CLIENT_BIN="$(build_rust_peer "$ROOT/bench/turul-task-server" turul-mcp-client "$TURUL_CLIENT_VERSION" turul-task-client)"; then
    if start_http_server turul-client; then
      run_client "turul-client-http" "$TURUL_CLIENT_BIN" "$URL"
      stop_server
    else
      echo "FAIL [turul-client-http] server did not start"
      record "turul-client-http" 0 1
    fi
  else
    echo "FAIL [rust-peers-turul-client] building bench/turul-task-server/client failed"
    record "rust-peers-turul-client-build" 0 1
  fi
fi

# ---------------------------------------------------------------- the matrix
# target/interop/interop.md always; docs/interop.md too when the whole matrix ran (no
# INTEROP_* narrowing), so the committed page is the last full run's.
python3 "$HERE/render_matrix.py" "$RESULTS" > "$WORK/interop.md"
if [ -z "$ONLY" ] && [ -z "${INTEROP_TRANSPORTS:-}${INTEROP_SUITES:-}${INTEROP_CLIENT_PEERS:-}${INTEROP_EXT_TASKS:-}" ]; then
  cp "$WORK/interop.md" "$ROOT/docs/interop.md"
  say "docs/interop.md rendered from this run"
fi

# The failures again, at the end where a log's tail shows them: which check, and why.
if [ -s "$FAILURES" ]; then
  echo "failures:"
  cat "$FAILURES"
fi
echo "$TOTAL_PASS passed, $TOTAL_FAIL failed"
[ "$TOTAL_FAIL" -eq 0 ]
