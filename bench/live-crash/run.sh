#!/usr/bin/env bash
# A live crash scenario with 1,000 jobs and 4 workers on the local servers:
# every job's first delivery crashes its worker before the ack; the broker
# redelivers, a new worker instance with new connections finishes it.
set -euo pipefail
cd "$(dirname "$0")/../.."
go build -o /tmp/dupctl-bench ./cmd/dupctl
export DUPCTL_REDIS_URL=${DUPCTL_REDIS_URL:-redis://127.0.0.1:6379}
export DUPCTL_DATABASE_URL=${DUPCTL_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
export DUPCTL_AMQP_URL=${DUPCTL_AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/}
start=$(date +%s.%N)
/tmp/dupctl-bench simulate crash --live --jobs 1000 --workers 4 --job-duration 0s --profile safe -o json > /tmp/dupctl-live-crash.json
end=$(date +%s.%N)
grep -o '"live": "[^"]*"\|"effects": [0-9]*\|"crashes": [0-9]*\|"elapsed": "[^"]*"' /tmp/dupctl-live-crash.json | head -4
awk -v s="$start" -v e="$end" 'BEGIN {printf "wall time %.1fs (target < 30s)\n", e-s}'
