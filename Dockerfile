# mcp-tasks in a container: build with the Rust toolchain, run on a small Debian image as
# a non-root user, tasks in the /data volume (SQLite) unless MCP_TASKS_DATABASE says
# postgres://...
#
#   docker build -t mcp-tasks .
#   docker run -p 8080:8080 -v mcp-tasks-data:/data mcp-tasks serve --demo
#
# The server binds 0.0.0.0 inside the container, so it needs authentication
# (--auth-tokens FILE or --jwt-jwks URL) or, on a trusted network only,
# --allow-unauthenticated-remote.

FROM rust:1.89-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p mcp-tasks-cli \
    && strip target/release/mcp-tasks

FROM debian:bookworm-slim
# ca-certificates is left unpinned on purpose: it must follow Debian's updates (a pinned
# version would keep revoked roots, and stop building once the archive drops it).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 mcp-tasks \
    && useradd --system --uid 10001 --gid 10001 --home-dir /data --shell /usr/sbin/nologin mcp-tasks \
    && mkdir -p /data && chown 10001:10001 /data
COPY --from=build /src/target/release/mcp-tasks /usr/local/bin/mcp-tasks
# Numeric, so that the host and orchestrators (runAsNonRoot) can check it.
USER 10001:10001
WORKDIR /data
VOLUME ["/data"]
ENV MCP_TASKS_LISTEN=0.0.0.0:8080 \
    MCP_TASKS_DATABASE=sqlite:///data/mcp-tasks.db \
    MCP_TASKS_LOG_FORMAT=json \
    MCP_TASKS_STATE_DIR=/data/state
EXPOSE 8080
# /healthz without curl: bash's /dev/tcp.
HEALTHCHECK --interval=15s --timeout=3s --start-period=5s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080 && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && grep -q ' 200 ' <&3"]
ENTRYPOINT ["mcp-tasks"]
CMD ["serve"]
