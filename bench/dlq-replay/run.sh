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
#
#   CLUSTER=1 bench/dlq-replay/run.sh -n 100000 -rounds 3 \
#     -methods dupctl:1000,shovel-net:1000,shovel:1000 -queue-type quorum
#
# starts a 3-node cluster of its own (.ci/rabbitmq-cluster, with the
# shovel plugin) in a temporary directory, runs everything against its
# node a (dupctl's and shovel-net's URL, rabbitmqctl -n a; quorum queues
# declared through a are led by a), and stops it on exit. The broker on
# 5672 is not touched.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dupctl" ./cmd/dupctl
go build -o "$tmp/naive" ./bench/dlq-replay/naive
go build -o "$tmp/bench" ./bench/dlq-replay
if [ -n "${CLUSTER:-}" ]; then
  cluster="$tmp/cluster"
  trap '.ci/rabbitmq-cluster stop "$cluster"; rm -rf "$tmp"' EXIT
  t0=$SECONDS
  CLUSTER_PLUGINS=rabbitmq_shovel .ci/rabbitmq-cluster start "$cluster"
  read -r node port <"$cluster/nodes"
  ctl=/usr/lib/rabbitmq/bin/rabbitmqctl
  [ -x "$ctl" ] || ctl=rabbitmqctl
  ctl="env HOME=$cluster RABBITMQ_CONF_ENV_FILE=$cluster/rabbitmq-env.conf ERL_EPMD_ADDRESS=127.0.0.1 $ctl -n $node"
  # shellcheck disable=SC1091 # written by .ci/rabbitmq-cluster
  . "$cluster/env"
  echo "# $(date -u +%FT%TZ) $(nproc) cores, a 3-node cluster ($DUPCTL_TEST_CLUSTER_NODES, up in $((SECONDS - t0))s)," \
    "RabbitMQ $($ctl version 2>/dev/null), $(go version | cut -d' ' -f3), load $(cut -d' ' -f1-3 /proc/loadavg);" \
    "dupctl and shovel-net through $node (127.0.0.1:$port)"
  "$tmp/bench" -dupctl "$tmp/dupctl" -naive "$tmp/naive" -amqp "amqp://guest:guest@127.0.0.1:$port/" -rabbitmqctl "$ctl" \
    -broker-pids "$(for l in a b c; do cat "$cluster/$l/pid"; echo; done)" "$@"
  exit
fi
enabled_here=
if ! rabbitmq-plugins list -e -m 2>/dev/null | grep -qx rabbitmq_shovel; then
  rabbitmq-plugins enable rabbitmq_shovel >/dev/null
  enabled_here=1
fi
cleanup_plugin() { [ -n "$enabled_here" ] && rabbitmq-plugins disable rabbitmq_shovel >/dev/null || true; }
trap 'cleanup_plugin; rm -rf "$tmp"' EXIT
echo "# $(date -u +%FT%TZ) $(nproc) cores, RabbitMQ $(rabbitmqctl version 2>/dev/null), $(go version | cut -d' ' -f3)"
"$tmp/bench" -dupctl "$tmp/dupctl" -naive "$tmp/naive" "$@"
