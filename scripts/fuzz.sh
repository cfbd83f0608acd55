#!/usr/bin/env bash
# Builds and runs every cargo-fuzz target in fuzz/ for SECONDS each (default 60):
#   scripts/fuzz.sh [SECONDS]
#   scripts/fuzz.sh --build-only      installs cargo-fuzz if missing and builds the targets, runs
#                                     none (.ci/run starts this in the background, at the lowest
#                                     CPU priority, so the run at the end finds them built)
# The targets run side by side, as many at a time as the machine has cores; each one gets
# the whole SECONDS (libFuzzer is single-threaded).
# Installs cargo-fuzz when it is missing (`cargo install cargo-fuzz --locked`, a few minutes).
# cargo-fuzz passes nightly-only flags (-Zsanitizer=address, ...); RUSTC_BOOTSTRAP=1 lets the
# stable toolchain accept them, so no nightly toolchain is needed.
# The committed seeds in fuzz/corpus/TARGET are only read; new inputs go to
# target/fuzz-corpus/TARGET and crashing inputs to fuzz/artifacts/TARGET. Logs: target/fuzz-logs.
# Environment: FUZZ_SANITIZER (address, the default, or none: faster, without AddressSanitizer).
# Prints one line per target and a last line "N passed, M failed"; exits non-zero when a
# target crashed, hung or did not build.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_ONLY=0
if [ "${1:-}" = --build-only ]; then BUILD_ONLY=1; shift; fi
SECS="${1:-60}"
case "$SECS" in '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;; esac
SANITIZER="${FUZZ_SANITIZER:-address}"
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "[fuzz] installing cargo-fuzz" >&2
  t0=$(date +%s)
  cargo install cargo-fuzz --locked >&2
  echo "[fuzz] cargo-fuzz installed in $(($(date +%s) - t0)) s" >&2
fi

LOGS=target/fuzz-logs
mkdir -p "$LOGS"
t0=$(date +%s)
echo "[fuzz] building targets (sanitizer: $SANITIZER)" >&2
if ! cargo fuzz build --sanitizer "$SANITIZER" >"$LOGS/build.log" 2>&1; then
  tail -n 40 "$LOGS/build.log"
  echo "build: FAIL (log: $LOGS/build.log)"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "[fuzz] built in $(($(date +%s) - t0)) s" >&2
[ "$BUILD_ONLY" = 1 ] && exit 0

# stat NAME LOG -> the value of libFuzzer's final "stat::NAME:" line, or ?
fstat() { sed -n "s/^stat::$1: *//p" "$2" | tail -n 1 | grep . || echo "?"; }

# The targets run straight from the build above (`cargo fuzz run` would rebuild whenever a
# crate changed in between).
BIN="fuzz/target/$(rustc -vV | sed -n 's/^host: //p')/release"
# run_target T: runs one target for SECS; writes its line (PASS/FAIL and the details) to
# $LOGS/T.result and exits non-zero when it crashed or hung.
run_target() {
  local t="$1" log="$LOGS/$1.log" out="$LOGS/$1.result" corpus rc why unit
  mkdir -p "target/fuzz-corpus/$t" "fuzz/corpus/$t" "fuzz/artifacts/$t"
  # -timeout: one input running this long is a hang. The outer timeout bounds the whole run.
  if timeout $((SECS + 120)) "$BIN/$t" -artifact_prefix="fuzz/artifacts/$t/" \
    -max_total_time="$SECS" -timeout=25 -print_final_stats=1 \
    "target/fuzz-corpus/$t" "fuzz/corpus/$t" >"$log" 2>&1; then
    corpus=$(find "target/fuzz-corpus/$t" -type f | wc -l)
    echo "PASS $t: $(fstat number_of_executed_units "$log") runs in $(sed -n "s/^Done [0-9]* runs in \\([0-9]*\\) second.*/\\1/p" "$log") s," \
      "$(fstat average_exec_per_sec "$log") exec/s, corpus $corpus, peak rss $(fstat peak_rss_mb "$log") MB" >"$out"
  else
    rc=$?
    why=$(grep -m 1 -E "panicked at|ERROR: libFuzzer|ERROR: AddressSanitizer|SUMMARY:" "$log" || true)
    unit=$(grep -m 1 -o "Test unit written to [^ ]*" "$log" | sed 's/Test unit written to //' || true)
    { echo "FAIL $t (exit $rc): ${why:-see log} ${unit:+input: $unit} (log: $log)"
      grep -A 3 -m 1 "panicked at" "$log" || true
      [ -z "$unit" ] || echo "  reproduce: RUSTC_BOOTSTRAP=1 cargo fuzz run $t $unit"
    } >"$out"
    return 1
  fi
}

# As many targets at a time as there are cores; the results print in the list's order.
TARGETS=$(cargo fuzz list)
AT_ONCE=$(nproc 2>/dev/null || echo 1)
running=0
for t in $TARGETS; do
  rm -f "$LOGS/$t.result"
  run_target "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$AT_ONCE" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true
passed=0 failed=0
for t in $TARGETS; do
  if [ -f "$LOGS/$t.result" ]; then cat "$LOGS/$t.result"; else echo "FAIL $t: no result (log: $LOGS/$t.log)"; fi
  if grep -q "^PASS $t:" "$LOGS/$t.result" 2>/dev/null; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
