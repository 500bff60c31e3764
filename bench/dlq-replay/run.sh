#!/usr/bin/env bash
# Replay N dead letters with dupctl, with a RabbitMQ shovel (ack-mode
# on-confirm) and with a naive get-publish-confirm-ack loop, on the same
# broker in one run; prints a Markdown table for docs/benchmarks.md.
#
#   bench/dlq-replay/run.sh [-n 100000] [-rounds 1] [-window 500]
#   bench/dlq-replay/run.sh -methods dupctl:1000,dupctl:2000,shovel:1000,shovel:2000
#       (dupctl:N runs with --window N, shovel:N with src-prefetch-count N)
#   bench/dlq-replay/run.sh -n 100000 -reads 5        (stats/export back to back)
#   bench/dlq-replay/run.sh -n 100000 -kill-after 5s -rounds 5   (in doubt after SIGKILL)
#
# Needs RabbitMQ on 127.0.0.1:5672 (guest) and rabbitmqctl; enables the
# rabbitmq_shovel plugin for the run when it is off, and turns it off again.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dupctl" ./cmd/dupctl
go build -o "$tmp/naive" ./bench/dlq-replay/naive
go build -o "$tmp/bench" ./bench/dlq-replay
enabled_here=
if ! rabbitmq-plugins list -e -m 2>/dev/null | grep -qx rabbitmq_shovel; then
  rabbitmq-plugins enable rabbitmq_shovel >/dev/null
  enabled_here=1
fi
cleanup_plugin() { [ -n "$enabled_here" ] && rabbitmq-plugins disable rabbitmq_shovel >/dev/null || true; }
trap 'cleanup_plugin; rm -rf "$tmp"' EXIT
echo "# $(date -u +%FT%TZ) $(nproc) cores, RabbitMQ $(rabbitmqctl version 2>/dev/null), $(go version | cut -d' ' -f3)"
"$tmp/bench" -dupctl "$tmp/dupctl" -naive "$tmp/naive" "$@"
