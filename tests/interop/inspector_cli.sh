#!/usr/bin/env bash
# The MCP Inspector's CLI (pinned and installed by run.sh) against a server started over
# stdio, as a user would point it at one: it must list the task tools a client without
# tasks is offered, and call them.
#
#   bash inspector_cli.sh LAUNCHER SERVER_CMD [ARGS...]
#
# LAUNCHER is the Inspector's launcher script (node_modules/@modelcontextprotocol/
# inspector/clients/launcher/build/index.js); SERVER_CMD... is the stdio server, e.g.
# `mcp-tasks serve --demo --stdio --sync-budget 2s`. Each Inspector run starts its own
# server. Prints "PASS name" / "FAIL name: detail" and "N passed, M failed"; exits 1 on a
# failure. The Inspector's files (its catalog, its secrets) go to a scratch HOME.
set -uo pipefail

LAUNCHER="$1"; shift
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
PASSED=0 FAILED=0
check() { # check NAME OK DETAIL
  if [ "$2" = 1 ]; then PASSED=$((PASSED + 1)); echo "PASS $1"
  else FAILED=$((FAILED + 1)); echo "FAIL $1: $(printf '%s' "$3" | tr '\n' ' ' | cut -c1-600)"; fi
}

# inspect ARGS...: one Inspector CLI run (JSON output), bounded in time; sets OUT (stdout
# and stderr, where the CLI puts its error envelope) and RC.
inspect() {
  OUT="$(HOME="$SCRATCH" timeout --kill-after=5 30 node "$LAUNCHER" --cli --format json -q \
    "${SERVER[@]}" "$@" 2>&1)"
  RC=$?
}
SERVER=("$@")

# json EXPR: evaluates EXPR (Python, over `d`, the CLI's JSON output) to 1 or 0.
json() {
  printf '%s' "$OUT" | python3 -c '
import json, sys
try:
    d = json.loads(sys.stdin.read())
    print(1 if eval(sys.argv[1]) else 0)
except Exception:
    print(0)' "$1"
}

inspect --method tools/list
check "inspector --method tools/list runs (exit 0)" "$([ "$RC" = 0 ] && echo 1 || echo 0)" "exit $RC: $OUT"
check "inspector lists the five task tools" "$(json '{"task_wait","task_status","task_answer","task_cancel","task_list"} <= {t["name"] for t in d["result"]["tools"]}')" "$OUT"

inspect --method tools/call --tool-name task_list
check "inspector calls task_list: a list of tasks" "$(json 'isinstance(d["result"]["structuredContent"]["tasks"], list) and not d["result"].get("isError")')" "exit $RC: $OUT"

inspect --method tools/call --tool-name task_status --tool-arg taskId=no-such-task-0000
check 'inspector calls task_status of a made-up id: a tool error, "no task"' \
  "$([ "$RC" != 0 ] && printf '%s' "$OUT" | grep -q 'no task' && echo 1 || echo 0)" "exit $RC: $OUT"

# A long call: the Inspector shows the handle's text. The tool has an outputSchema, which a
# client offered the task tools is not shown, so the handle is no tool error either.
inspect --method tools/call --tool-name slow_compute --tool-arg seconds=6
check "inspector calls slow_compute 6 s: the handle's text names task_wait" \
  "$(printf '%s' "$OUT" | grep -q 'task_wait' && echo 1 || echo 0)" "exit $RC: $OUT"
check "inspector calls slow_compute 6 s: the handle is not an error" \
  "$(json 'd["result"]["structuredContent"]["status"] == "working" and not d["result"].get("isError")')" "exit $RC: $OUT"

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
