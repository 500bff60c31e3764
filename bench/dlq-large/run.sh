#!/usr/bin/env bash
# Peak RSS of `dupctl dlq replay` on large messages, with the default byte
# bound on the prefetch (--window-mib 64) and without one (--window-mib 0):
# N dead letters of MIB MiB each (default 400 x 4 MiB = 1.6 GB), a fresh
# DLQ per run, deleted afterwards. Needs RabbitMQ on 127.0.0.1:5672 (guest)
# and its management API on :15672 (to delete the queues).
#
#   bash bench/dlq-large/run.sh            # N=400 MIB=4
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${N:-400}
MIB=${MIB:-4}
URL=amqp://guest:guest@127.0.0.1:5672/
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dupctl" ./cmd/dupctl
go build -o "$tmp/fill" ./bench/dlq-large
for budget in 64 0; do
  q="bench_large_$$_$budget"
  "$tmp/fill" -amqp "$URL" -dlq "$q.dlq" -to "$q.work" -n "$N" -mib "$MIB"
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$tmp/dupctl" dlq replay --queue "$q.dlq" --yes \
    --journal "$tmp/$q.journal" --amqp-url "$URL" --window-mib "$budget" -o json >"$tmp/out.json"
  read -r wall rss <"$tmp/time"
  echo "--window-mib $budget: $N x $MIB MiB replayed in ${wall}s, peak RSS $((rss / 1024)) MB ($(grep -o '"replayed": [0-9]*' "$tmp/out.json"))"
  for x in dlq work; do
    curl -fsS -u guest:guest -X DELETE "http://127.0.0.1:15672/api/queues/%2f/$q.$x" >/dev/null
  done
done
