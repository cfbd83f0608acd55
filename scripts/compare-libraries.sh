#!/usr/bin/env bash
# Measures the comparison server of docs/comparison.md (count_to with a status line each
# step and a question half-way, and a sync echo, on Streamable HTTP) as written with each
# library, in one run on this machine, and prints a markdown table:
#   scripts/compare-libraries.sh [--only NAME]...
#                    NAME: mcp-tasks, rmcp, turul, bridge, bridge-memory
#
#   mcp-tasks  examples/count-to                 (package count-to, main workspace)
#   rmcp       bench/compare/rmcp-count-to       (own workspace, rmcp 3.11)
#   turul      bench/compare/turul-count-to      (own workspace, turul-mcp-server 0.4.5)
#   bridge     examples/rmcp-count-to            (rmcp 3.11 + mcp-tasks-rmcp, SQLite store: the
#              example as a user copies it out: its manifest without the dev-dependencies,
#              in a workspace of its own under target/compare/src, our crates patched to
#              this checkout, the versions of this repository's Cargo.lock)
#   bridge-memory  the same with mcp-tasks' features emptied (`features = []`): no durable
#              store, tasks in memory (the binary then needs `--store memory:`)
#
# For each server: `cargo fetch --locked` (not timed; after it the build needs no network),
# then a CLEAN `cargo build --release --locked --offline` into a fresh
# CARGO_TARGET_DIR=target/compare/NAME (deleted first), timed by the wall clock. Each uses
# its workspace's own release profile (none of them sets one, so cargo's default:
# opt-level 3, no debug info, symbols kept). Reported per server:
#   - lines of main.rs: code lines (non-blank lines that are not `//` comments, doc
#     comments included in "comments") / all lines; the same rule for all;
#   - crates compiled: the "Compiling" lines of the clean build (each package once,
#     proc-macros, build scripts' packages and the server itself included);
#   - clean release build: wall time of that build, with `nproc` jobs (cargo's default);
#   - binary as built (and whether `file` calls it stripped), and its size after `strip`.
# MB = 10^6 bytes. Build logs stay in target/compare/NAME.log. RUSTC_WRAPPER (sccache) and
# CARGO_INCREMENTAL are unset so no build is served from a cache. The machine should be
# otherwise idle: the figures are wall times.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

ALL=(mcp-tasks rmcp turul bridge bridge-memory)
ONLY=()
while [ $# -gt 0 ]; do
  case "$1" in
    --only)
      [ $# -ge 2 ] || { echo "error: --only needs a name (${ALL[*]})" >&2; exit 2; }
      case "$2" in
        mcp-tasks | rmcp | turul | bridge | bridge-memory) ONLY+=("$2") ;;
        *) echo "error: unknown server '$2'; choose from: ${ALL[*]}" >&2; exit 2 ;;
      esac
      shift 2
      ;;
    -h | --help) usage; exit 0 ;;
    *) echo "error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ ${#ONLY[@]} -gt 0 ] || ONLY=("${ALL[@]}")

# The workspace manifest, package, binary and main.rs of each server.
manifest() {
  case "$1" in
    mcp-tasks) echo Cargo.toml ;;
    bridge | bridge-memory) echo "target/compare/src/$1/Cargo.toml" ;;
    *) echo "bench/compare/$1-count-to/Cargo.toml" ;;
  esac
}
package() { case "$1" in mcp-tasks) echo count-to ;; bridge | bridge-memory) echo example-rmcp-count-to ;; *) echo "$1-count-to" ;; esac; }
main_rs() { case "$1" in mcp-tasks) echo examples/count-to/src/main.rs ;; bridge | bridge-memory) echo examples/rmcp-count-to/src/main.rs ;; *) echo "bench/compare/$1-count-to/src/main.rs" ;; esac; }
label() {
  case "$1" in
    mcp-tasks) echo "mcp-tasks" ;;
    rmcp) echo "rmcp 3.11" ;;
    turul) echo "turul 0.4.5 + ext-tasks 0.1.5" ;;
    bridge) echo "rmcp 3.11 + mcp-tasks-rmcp, SQLite store" ;;
    bridge-memory) echo "rmcp 3.11 + mcp-tasks-rmcp, no durable store" ;;
  esac
}

# The bridge example copied out as a user would (see the header), into target/compare/src/NAME.
prepare_bridge() {
  local name="$1" out="$ROOT/target/compare/src/$1"
  rm -rf "$out"; mkdir -p "$out"
  cp -r "$ROOT/examples/rmcp-count-to/src" "$out/src"
  sed '/^# The smoke test of this repository/,$d' "$ROOT/examples/rmcp-count-to/Cargo.toml" > "$out/Cargo.toml"
  if [ "$name" = bridge-memory ]; then
    sed -i 's/default-features = false, features = \["sqlite"\]/default-features = false, features = []/' "$out/Cargo.toml"
    grep -q 'features = \[\] }' "$out/Cargo.toml" || { echo "error: $name: could not empty mcp-tasks' features" >&2; exit 1; }
  fi
  {
    echo
    echo "[workspace]"
    echo
    echo "[patch.crates-io]"
    sed -n '/^\[patch.crates-io\]/,/^$/p' "$ROOT/Cargo.toml" | grep '^mcp-tasks' |
      sed "s#path = \"#path = \"$ROOT/#"
  } >> "$out/Cargo.toml"
  cp "$ROOT/Cargo.lock" "$out/Cargo.lock"
  # Trims the copied lock to this project's packages (the versions stay as locked).
  cargo fetch --manifest-path "$out/Cargo.toml" >&2
}

# Code lines: non-blank and not starting (after indentation) with `//`.
code_lines() { grep -cvE '^[[:space:]]*(//|$)' "$1" || true; }
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
duration() { awk -v s="$1" 'BEGIN { t = int(s + 0.5); m = int(t / 60); if (m > 0) printf "%d min %d s", m, t - 60 * m; else printf "%d s", t }'; }

unset RUSTC_WRAPPER CARGO_BUILD_RUSTC_WRAPPER CARGO_INCREMENTAL
mkdir -p target/compare
ROWS=()
for name in "${ONLY[@]}"; do
  case "$name" in bridge | bridge-memory) prepare_bridge "$name" ;; esac
  m="$(manifest "$name")"; p="$(package "$name")"; src="$(main_rs "$name")"
  [ -f "$m" ] && [ -f "$src" ] || { echo "error: $name: $m or $src is missing" >&2; exit 1; }
  dir="$ROOT/target/compare/$name"; log="$ROOT/target/compare/$name.log"
  echo "== $name: fetching (not timed)" >&2
  cargo fetch --locked --manifest-path "$m" >&2 || {
    echo "error: $name: cargo fetch failed (network, or Cargo.lock out of date: run cargo update in $(dirname "$m"))" >&2
    exit 1
  }
  rm -rf "$dir"
  echo "== $name: clean release build into target/compare/$name (log: target/compare/$name.log)" >&2
  start=$(date +%s.%N)
  if ! CARGO_TARGET_DIR="$dir" cargo build --release --locked --offline --manifest-path "$m" -p "$p" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "error: $name: the release build failed (log above and in target/compare/$name.log)" >&2
    exit 1
  fi
  end=$(date +%s.%N)
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  crates=$(grep -c '^ *Compiling ' "$log" || true)
  bin="$dir/release/$p"
  size=$(stat -c %s "$bin")
  if file "$bin" | grep -q 'not stripped'; then stripped="not stripped"; else stripped="stripped"; fi
  strip -o "$dir/$p.stripped" "$bin"
  ssize=$(stat -c %s "$dir/$p.stripped")
  code=$(code_lines "$src"); all=$(wc -l <"$src")
  echo "== $name: $secs s, $crates crates, $size bytes" >&2
  ROWS+=("| $(label "$name") | $code / $all | $crates | $(duration "$secs") ($secs s) | $(mb "$size") ($stripped) | $(mb "$ssize") |")
done

cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
echo
echo "| server | main.rs lines (code / all) | crates compiled | clean release build | binary as built | binary stripped |"
echo "|---|--:|--:|--:|--:|--:|"
printf '%s\n' "${ROWS[@]}"
echo
echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) cores${cpu:+ ($cpu)}, $(uname -sm), $(rustc -V | cut -d' ' -f1-2), $(cargo -V | cut -d' ' -f1-2)."
[ -z "${RUSTFLAGS:-}" ] || echo "RUSTFLAGS was set for all three builds: $RUSTFLAGS"
echo "Code lines: non-blank lines of main.rs that are not // comments (doc comments count as comments)."
echo "Crates compiled: the \"Compiling\" lines of the clean build. Each workspace's default release profile; MB = 10^6 bytes."
