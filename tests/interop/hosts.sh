# The hosts suite of run.sh (sourced by it; uses its BIN, WORK, HERE, TRANSPORTS, EVERYTHING,
# pins and helpers): long tools for clients that do not speak tasks. The TypeScript and Python
# SDK clients (hosts.mjs / hosts.py), declaring no tasks and no elicitation, with a 4 s request
# timeout, against `serve --demo --sync-budget 2s --progress-interval 1s` and against
# `wrap --sync-budget 2s` in front of the everything server; then the MCP Inspector's CLI
# (inspector_cli.sh) against `serve --demo --sync-budget 2s` over stdio.

HOSTS_FLAGS=(--sync-budget 2s --progress-interval 1s)
INSPECTOR_DIR="$WORK/inspector"
INSPECTOR_LAUNCHER="$INSPECTOR_DIR/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"

installed_inspector_version() {
  local pj="$INSPECTOR_DIR/node_modules/@modelcontextprotocol/inspector/package.json"
  [ -f "$pj" ] || return 0
  node -e 'try { process.stdout.write(require(process.argv[1]).version) } catch (e) {}' "$pj" 2>/dev/null || true
}

# install_inspector: @modelcontextprotocol/inspector at INSPECTOR_VERSION into its own folder
# (it brings its own, newer SDK line); idempotent.
install_inspector() {
  [ "$(installed_inspector_version)" = "$INSPECTOR_VERSION" ] && return 0
  say "installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION into $INSPECTOR_DIR"
  mkdir -p "$INSPECTOR_DIR"
  if [ ! -f "$INSPECTOR_DIR/package.json" ]; then
    printf '{\n  "name": "mcp-tasks-interop-inspector",\n  "private": true,\n  "type": "module"\n}\n' > "$INSPECTOR_DIR/package.json"
  fi
  (cd "$INSPECTOR_DIR" && npm install --no-audit --no-fund --save-exact --loglevel=error \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >&2)
  [ "$(installed_inspector_version)" = "$INSPECTOR_VERSION" ] \
    || { say "npm install did not yield inspector $INSPECTOR_VERSION"; exit 2; }
}

# hosts_demo_runs PREFIX CMD... (--stdio or --url added per transport): one client against the
# demo server, over each transport.
hosts_demo_runs() {
  local prefix="$1"; shift
  local tr
  for tr in $TRANSPORTS; do
    case "$tr" in
      stdio)
        run_client "$prefix-stdio" "$@" --stdio "$BIN serve --demo --database memory: --stdio --log warn ${HOSTS_FLAGS[*]}"
        ;;
      http)
        # Two principals (bearer tokens), so that one's task is unknown to the other.
        printf '"hosts-token-a" = "alice"\n"hosts-token-b" = "bob"\n' > "$WORK/hosts-tokens.toml"
        if start_http_server "$prefix" "$BIN" serve --demo --database memory: --log warn "${HOSTS_FLAGS[@]}" \
            --auth-tokens "$WORK/hosts-tokens.toml" --listen 127.0.0.1:0; then
          run_client "$prefix-http" env HOSTS_TOKEN=hosts-token-a HOSTS_OTHER_TOKEN=hosts-token-b "$@" --url "$URL"
          stop_server
        else
          echo "FAIL [$prefix-http] server did not start"
          record "$prefix-http" 0 1
        fi
        ;;
    esac
  done
}

# The same client through `mcp-tasks wrap` in front of the everything server.
hosts_wrap_runs() {
  local prefix="$1"; shift
  local tr
  for tr in $TRANSPORTS; do
    case "$tr" in
      stdio)
        run_client "$prefix-stdio" env HOSTS_UPSTREAM=everything "$@" \
          --stdio "$BIN wrap --database memory: --log warn ${HOSTS_FLAGS[*]} -- node $EVERYTHING stdio"
        ;;
      http)
        if start_http_server "$prefix" "$BIN" wrap --database memory: --log warn "${HOSTS_FLAGS[@]}" \
            --listen 127.0.0.1:0 -- node "$EVERYTHING" stdio; then
          run_client "$prefix-http" env HOSTS_UPSTREAM=everything "$@" --url "$URL"
          stop_server
        else
          echo "FAIL [$prefix-http] server did not start"
          record "$prefix-http" 0 1
        fi
        ;;
    esac
  done
}

# run_hosts_suite CLIENT (ts|py): that client's runs; the TypeScript pass also runs the
# Inspector's CLI.
run_hosts_suite() {
  local cmd
  if [ "$1" = ts ]; then
    cmd=(node "$WORK/node/hosts.mjs")
    peer "server" "@modelcontextprotocol/sdk client (TypeScript SDK), no tasks declared, hosts suite" "$TS_SDK_VERSION" "2025-11-25"
  else
    cmd=(env PYTHONDONTWRITEBYTECODE=1 "$WORK/venv/bin/python" "$HERE/hosts.py")
    peer "server" "mcp client (Python SDK), no tasks declared, hosts suite" "$PY_MCP_VERSION" "2025-11-25"
  fi
  hosts_demo_runs "$1-hosts" "${cmd[@]}"
  peer "gateway" "@modelcontextprotocol/server-everything upstream, $([ "$1" = ts ] && echo TypeScript || echo Python) SDK client without tasks" \
    "$EVERYTHING_VERSION" "2025-11-25"
  hosts_wrap_runs "$1-hosts-wrap-everything" "${cmd[@]}"
  if [ "$1" = ts ]; then
    peer "server" "@modelcontextprotocol/inspector CLI" "$INSPECTOR_VERSION" "2025-11-25"
    run_client "inspector-cli-stdio" bash "$HERE/inspector_cli.sh" "$INSPECTOR_LAUNCHER" \
      "$BIN" serve --demo --database memory: --stdio --log warn --sync-budget 2s
  fi
}
