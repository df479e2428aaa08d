#!/usr/bin/env bash
# The full stack without Docker, on 127.0.0.1 with the shipped configurations (`make stack-up`,
# `make stack-down`): Prometheus :9090, Jaeger v2 :16686 (UI and API), the collector :4317/:4318.
# Each program's log and PID are in .cache/stack/.
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

case "${1:-}" in
up)
  start prometheus prometheus --config.file=grafana/prometheus/prometheus.yml \
    --storage.tsdb.path="$run/prometheus-data" --web.listen-address=127.0.0.1:9090 \
    --web.enable-remote-write-receiver --enable-feature=exemplar-storage
  start jaeger .cache/bin/jaeger --config collector-config/jaeger.yaml
  start collector .cache/bin/mcp-otelcol --config collector-config/collector.yaml
  echo ">> Prometheus http://127.0.0.1:9090  Jaeger http://127.0.0.1:16686  OTLP http://127.0.0.1:4318"
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
  echo "usage: $0 up|down" >&2
  exit 2
  ;;
esac
