#!/usr/bin/env bash
# Runs the shared peer checks (real MCP clients maintained outside this repository) against
# `mcp-tasks serve --demo` and the minimal library example, over stdio and Streamable HTTP,
# and the official conformance suite (Tasks-extension and 2025-11-25 tool scenarios)
# against `mcp-tasks serve --conformance-fixtures`:
#   scripts/shared-peers.sh PEERS_SRC     (PEERS_SRC: the folder holding setup.sh, ts-client.sh, py-client.py)
# Prints each client's PASS/FAIL lines and a last line "N passed, M failed"; exits non-zero
# if any check failed.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC="$(cd "$1" && pwd)"
DIR="$(bash "$SRC/setup.sh" target/peers | tail -n 1)"
# The binaries as the test command's build makes them (`cargo test --workspace
# --all-features` builds both for their own tests): a no-op after it, where
# `cargo build -p` would resolve other features and build the workspace again.
cargo test --workspace --all-features --no-run
BIN="$PWD/target/debug/mcp-tasks"
MINIMAL="$PWD/target/debug/example-minimal"
LOGDIR="$(mktemp -d)"
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true; rm -rf "$LOGDIR"; }
trap cleanup EXIT

# start_http TOOLSET: serves --demo or --conformance-fixtures over HTTP; sets URL.
# start_http wrap UPSTREAM...: `mcp-tasks wrap` over HTTP in front of UPSTREAM instead.
start_http() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
  rm -f "$LOGDIR/server.log"
  if [ "$1" = wrap ]; then
    shift
    "$BIN" wrap --database memory: --listen 127.0.0.1:0 --log warn -- "$@" 2>"$LOGDIR/server.log" &
  else
    "$BIN" serve "$1" --database memory: --listen 127.0.0.1:0 --log warn 2>"$LOGDIR/server.log" &
  fi
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    URL="$(grep -o 'http://[^ ]*/mcp' "$LOGDIR/server.log" | head -n 1 || true)"
    [ -n "$URL" ] && return 0
    sleep 0.1
  done
  echo "server did not start:"; cat "$LOGDIR/server.log"; exit 1
}

total_pass=0; total_fail=0
run() {
  local name="$1"; shift
  echo "=== $name"
  local out rc=0
  out="$("$@" 2>&1)" || rc=$?
  echo "$out"
  local line p f
  line="$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1 || true)"
  if [ -z "$line" ]; then p=0; f=1; else p="${line%% passed*}"; f="$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')"; fi
  [ "$rc" = 0 ] || [ "$f" != 0 ] || f=1
  total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
}

STDIO_CMD="$BIN serve --demo --database memory: --stdio --log warn"
run "ts-client stdio" bash "$SRC/ts-client.sh" "$DIR" --stdio "$STDIO_CMD"
run "py-client stdio" "$DIR/venv/bin/python" "$SRC/py-client.py" --stdio "$STDIO_CMD"
start_http --demo
run "ts-client http" bash "$SRC/ts-client.sh" "$DIR" --url "$URL"
run "py-client http" "$DIR/venv/bin/python" "$SRC/py-client.py" --url "$URL"

# conformance LABEL [SCENARIO...]: runs the official conformance suite's scenarios (its
# Tasks-extension ones when none are named) against $URL, prints each scenario's result,
# then "LABEL: N checks passed, M failed", and adds those checks to the totals.
conformance() {
  local label="$1"; shift
  local out rc=0 p f
  out="$(bash "$SRC/conformance.sh" "$DIR" "$URL" "$@" 2>&1)" || rc=$?
  echo "$out" | grep -E '^===|Passed:|FAILURE' || true
  p=$(echo "$out" | sed -nE 's/.*Passed: ([0-9]+)\/[0-9]+, ([0-9]+) failed.*/\1/p' | awk '{s+=$1} END {print s+0}')
  f=$(echo "$out" | sed -nE 's/.*Passed: ([0-9]+)\/[0-9]+, ([0-9]+) failed.*/\2/p' | awk '{s+=$1} END {print s+0}')
  p=${p:-0}; f=${f:-0}
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; echo "$out" | tail -n 30; fi
  echo "$label: $p checks passed, $f failed"
  total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
}

# The gateway: the same peers through `mcp-tasks wrap` in front of an upstream that knows
# nothing of it: the demo server (stdio), and the official everything server from npm
# when the interop tests installed it (its long-running operation as the task tool).
WRAP_DEMO="$BIN wrap --database memory: --log warn -- $BIN serve --demo --database memory: --stdio --log warn"
run "ts-client stdio (wrap -- demo)" bash "$SRC/ts-client.sh" "$DIR" --stdio "$WRAP_DEMO"
run "py-client stdio (wrap -- demo)" "$DIR/venv/bin/python" "$SRC/py-client.py" --stdio "$WRAP_DEMO"
start_http wrap "$BIN" serve --demo --database memory: --stdio --log warn
run "ts-client http (wrap -- demo)" bash "$SRC/ts-client.sh" "$DIR" --url "$URL"
run "py-client http (wrap -- demo)" "$DIR/venv/bin/python" "$SRC/py-client.py" --url "$URL"
EVERYTHING="$PWD/target/interop/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
if [ -f "$EVERYTHING" ]; then
  EV_ARGS=(--tool trigger-long-running-operation --args '{"duration":1,"steps":2}' --long-args '{"duration":40,"steps":40}')
  WRAP_EV="$BIN wrap --database memory: --log warn -- node $EVERYTHING stdio"
  run "ts-client stdio (wrap -- server-everything)" bash "$SRC/ts-client.sh" "$DIR" --stdio "$WRAP_EV" "${EV_ARGS[@]}"
  run "py-client stdio (wrap -- server-everything)" "$DIR/venv/bin/python" "$SRC/py-client.py" --stdio "$WRAP_EV" "${EV_ARGS[@]}"
else
  echo "=== wrap -- server-everything: skipped (run tests/interop/run.sh first to install it)"
fi

# The official conformance suite's Tasks-extension scenarios (2026-07-28 wire), its
# 2025-11-25 tool and transport scenarios (plain calls: content types, tool errors,
# progress, logging, sampling and elicitation on the call's stream, JSON Schema 2020-12),
# and the 2025-11-25 peers again, all on the same binary and endpoint. The suite's
# completion scenario is left out: the server offers no completions.
start_http --conformance-fixtures
echo "=== conformance (Tasks extension scenarios)"
conformance "conformance"
echo "=== conformance (input-required round, SEP-2322: plain calls that ask)"
conformance "conformance input-required" \
  input-required-result-basic-elicitation input-required-result-request-state \
  input-required-result-multi-round input-required-result-tampered-state \
  input-required-result-result-type input-required-result-ignore-extra-params \
  input-required-result-missing-input-response input-required-result-validate-input
echo "=== conformance 2025-11-25 (tool and transport scenarios)"
CONFORMANCE_FLAGS="--spec-version 2025-11-25 ${CONFORMANCE_FLAGS:-}" conformance "conformance 2025-11-25" \
  server-initialize server-session-lifecycle ping dns-rebinding-protection \
  server-sse-multiple-streams tools-list tools-call-simple-text tools-call-image \
  tools-call-audio tools-call-embedded-resource tools-call-mixed-content tools-call-error \
  tools-call-with-progress tools-call-with-logging logging-set-level \
  tools-call-sampling tools-call-elicitation \
  elicitation-sep1034-defaults elicitation-sep1330-enums json-schema-2020-12
run "ts-client http (conformance endpoint)" bash "$SRC/ts-client.sh" "$DIR" --url "$URL"
run "py-client http (conformance endpoint)" "$DIR/venv/bin/python" "$SRC/py-client.py" --url "$URL"

# The minimal library example (examples/minimal, 30 lines) as the server under test, with
# its own tool and arguments: the library API on its own passes the same peers.
MIN_ARGS=(--tool countdown --args '{"from":1}' --long-args '{"from":60}')
run "ts-client stdio (examples/minimal)" bash "$SRC/ts-client.sh" "$DIR" --stdio "$MINIMAL" "${MIN_ARGS[@]}"
run "py-client stdio (examples/minimal)" "$DIR/venv/bin/python" "$SRC/py-client.py" --stdio "$MINIMAL" "${MIN_ARGS[@]}"
[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
# The example takes an address, not a listener: a port picked here may be taken by
# another process before the example binds it, so a start that dies (AddrInUse) is
# retried on another port, a bounded number of times.
SERVER_PID=""
for _attempt in 1 2 3 4 5; do
  PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  "$MINIMAL" "127.0.0.1:$PORT" 2>"$LOGDIR/minimal.log" &
  SERVER_PID=$!
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$SERVER_PID" 2>/dev/null && break
  echo "examples/minimal did not start on port $PORT (retrying): $(tail -n 1 "$LOGDIR/minimal.log")"
done
URL="http://127.0.0.1:$PORT/mcp"
run "ts-client http (examples/minimal)" bash "$SRC/ts-client.sh" "$DIR" --url "$URL" "${MIN_ARGS[@]}"
run "py-client http (examples/minimal)" "$DIR/venv/bin/python" "$SRC/py-client.py" --url "$URL" "${MIN_ARGS[@]}"

echo
echo "peers: $total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ]
