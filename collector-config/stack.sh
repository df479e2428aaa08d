#!/usr/bin/env bash
# The full stack without Docker, on 127.0.0.1 with the shipped configurations (`make stack-up`,
# `make stack-down`): Prometheus :9090 (its UI, with the rules and alerts), Jaeger v2 :16686 (query
# API and Monitor data; built from the Go module proxy, it has no UI: the Docker stack has it),
# the collector :4317/:4318. Each program's log and PID are in .cache/stack/.
set -euo pipefail
cd "$(dirname "$0")/.."
run=.cache/stack
mkdir -p "$run"

start() {
  local name=$1
  shift
  "$@" >"$run/$name.log" 2>&1 &
  echo $! >"$run/$name.pid"
  echo ">> $name started (pid $!, log $run/$name.log)"
}

# Said at every start (and checked by tests/stack/test_stack_script.py against docs/stack.md).
JAEGER_UI_NOTE="Jaeger here serves its query API and Monitor data but no UI: Go's module proxy ships Jaeger without its UI assets (only the Docker image has them; \`docker compose up\` for the UI). Here: Prometheus's UI at http://127.0.0.1:9090 (graphs, rules, alerts), and \`mcp-otel report\` for the per-server table."

case "${1:-}" in
up)
  start prometheus prometheus --config.file=grafana/prometheus/prometheus.yml \
    --storage.tsdb.path="$run/prometheus-data" --web.listen-address=127.0.0.1:9090 \
    --web.enable-remote-write-receiver --enable-feature=exemplar-storage
  start jaeger .cache/bin/jaeger --config collector-config/jaeger.yaml
  start collector .cache/bin/mcp-otelcol --config collector-config/collector.yaml
  echo ">> Prometheus http://127.0.0.1:9090  Jaeger API http://127.0.0.1:16686/api  OTLP http://127.0.0.1:4318"
  echo ">> $JAEGER_UI_NOTE"
  ;;
note)
  echo "$JAEGER_UI_NOTE"
  ;;
down)
  for name in collector jaeger prometheus; do
    if [ -f "$run/$name.pid" ]; then
      kill "$(cat "$run/$name.pid")" 2>/dev/null && echo ">> $name stopped" || true
      rm -f "$run/$name.pid"
    fi
  done
  ;;
*)
  echo "usage: $0 up|down|note" >&2
  exit 2
  ;;
esac
