#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the store's PostgreSQL tests.
#
#   scripts/pg-test-cluster.sh start   installs PostgreSQL if missing, creates the cluster
#                                      (once), starts it (unless running), creates the test
#                                      database (once); prints the URL as the last line
#   scripts/pg-test-cluster.sh url     prints the URL of the running cluster
#   scripts/pg-test-cluster.sh stop    stops the cluster (if running)
#
# Use:  export MCP_TASKS_TEST_PG_URL="$(scripts/pg-test-cluster.sh start | tail -n 1)"
#
# The cluster lives in target/pg (data/, log, port) and listens on 127.0.0.1 only, on a
# free port chosen at creation (kept in target/pg/port), with trust authentication: it
# holds nothing but test data. (If the checkout sits where the postgres user cannot
# reach, such as under /root, data/ and log go to a folder under /tmp named after the
# checkout instead; target/pg/home says where.) Durability settings are off (fsync, full_page_writes,
# synchronous_commit) because the cluster is disposable and fast matters more here.
# PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres`
# system user (created by the Debian package). A rerun against a running cluster only
# prints the URL. Progress goes to stderr, the URL alone to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR="$PWD/target/pg"
# Where the server's own files go (data/, log): $DIR, or the fallback under /tmp.
HOME_DIR="$DIR"
[ -f "$DIR/home" ] && HOME_DIR="$(cat "$DIR/home")"
DATA="$HOME_DIR/data"
DB=mcp_tasks_test
USER_NAME=postgres
# The first port tried when creating the cluster; the next free one is taken.
FIRST_PORT=55432

say() { printf 'pg-test-cluster: %s\n' "$*" >&2; }

# Finds initdb and pg_ctl (PATH first, then the Debian layout), installing PostgreSQL
# when neither is there.
find_bin() {
  if command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1; then
    BIN="$(dirname "$(readlink -f "$(command -v pg_ctl)")")"
    return
  fi
  local found
  found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -z "$found" ] || [ ! -x "$found/initdb" ]; then
    say "PostgreSQL not found: installing it"
    apt-get update >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql >&2
    found="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
  fi
  BIN="$found"
}

# Runs a PostgreSQL program as the cluster's owner.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    # From /, which the owner can always enter (every path used is absolute).
    (cd / && runuser -u "$USER_NAME" -- "$@")
  else
    "$@"
  fi
}

port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

running() {
  [ -f "$DATA/PG_VERSION" ] && as_owner "$BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

url() {
  echo "postgres://postgres@127.0.0.1:$(cat "$DIR/port")/$DB"
}

psql_admin() {
  "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(cat "$DIR/port")" -U postgres -d postgres "$@"
}

init_cluster() {
  mkdir -p "$DIR"
  HOME_DIR="$DIR"
  if [ "$(id -u)" = 0 ]; then
    id -u "$USER_NAME" >/dev/null 2>&1 || useradd --system --no-create-home "$USER_NAME"
    # The owner must reach its files: every parent directory needs search permission.
    if ! runuser -u "$USER_NAME" -- test -x "$DIR"; then
      HOME_DIR="/tmp/mcp-tasks-pg-$(printf '%s' "$PWD" | cksum | cut -d ' ' -f 1)"
      say "user $USER_NAME cannot reach $DIR: the cluster goes to $HOME_DIR"
      mkdir -p "$HOME_DIR"
      echo "$HOME_DIR" >"$DIR/home"
    fi
    chown "$USER_NAME" "$HOME_DIR"
  fi
  DATA="$HOME_DIR/data"
  local port=$FIRST_PORT
  while port_in_use "$port"; do port=$((port + 1)); done
  say "creating a cluster in $DATA (port $port)"
  as_owner "$BIN/initdb" -D "$DATA" -U postgres --auth=trust --encoding=UTF8 \
    --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; exit 1; }
  cat >>"$DATA/postgresql.conf" <<EOF

# mcp-tasks test cluster
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = ''
max_connections = 200
fsync = off
full_page_writes = off
synchronous_commit = off
EOF
  echo "$port" >"$DIR/port"
}

start() {
  find_bin
  [ -f "$DATA/PG_VERSION" ] || init_cluster
  if ! running; then
    local port
    port="$(cat "$DIR/port")"
    if port_in_use "$port"; then
      # Taken by something else since the cluster was made: move to a free port.
      while port_in_use "$port"; do port=$((port + 1)); done
      sed -i "s/^port = .*/port = $port/" "$DATA/postgresql.conf"
      echo "$port" >"$DIR/port"
    fi
    say "starting PostgreSQL on 127.0.0.1:$port"
    as_owner "$BIN/pg_ctl" -D "$DATA" -l "$HOME_DIR/log" -w -t 60 start >&2 \
      || { tail -n 20 "$HOME_DIR/log" >&2; exit 1; }
  fi
  if [ "$(psql_admin -tA -c "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != 1 ]; then
    psql_admin -c "CREATE DATABASE $DB"
  fi
  url
}

stop() {
  find_bin
  if running; then
    say "stopping PostgreSQL"
    as_owner "$BIN/pg_ctl" -D "$DATA" -m fast -w stop >&2
  else
    say "not running"
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  url)
    find_bin
    running || { say "not running: use start"; exit 1; }
    url
    ;;
  *)
    echo "usage: $0 start|stop|url" >&2
    exit 2
    ;;
esac
