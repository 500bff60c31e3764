#!/usr/bin/env bash
# What one run of dupctl watch's cache check costs the watched systems
# (docs/watch.md): a Redis server of its own (redis-server on a free port,
# so INFO commandstats holds nothing else) and a PostgreSQL database of its
# own (pg_stat_database deltas; log_statement=all on that database only,
# its statements counted in the server log by the pids of its backends,
# read from pg_stat_activity while the watch runs). dupctl watch runs the cache check alone
# every 5 s (a run takes less) for RUNS runs; the deltas are divided by the runs.
#
#   bench/watch/cache-cost.sh [KEYS] [ROWS] [DISAGREE] [RUNS]   # 10000 100000 0 10
# DISAGREE: one cache entry in DISAGREE says PROCESSING for a SUCCEEDED row
# (0: none), which makes each run look again 2 s later (audit cache's Recheck).
# Needs root (or the postgres log's group) to read the server log.
set -euo pipefail
cd "$(dirname "$0")/../.."
keys=${1:-10000} rows=${2:-100000} disagree=${3:-0} runs=${4:-10}
out=${OUT:-/tmp/cache-cost}
pglog=${PGLOG:-/var/log/postgresql/postgresql-15-main.log}
mkdir -p "$out"
port=$((26000 + $$ % 1000))
db=dupctl_cachecost_$$
go build -o "$out/dupctl" ./cmd/dupctl
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
  --pidfile "$out/redis.pid" --logfile "$out/redis.log" --dir "$out"
psql() { command psql -h 127.0.0.1 -X -q -v ON_ERROR_STOP=1 "$@"; }
cleanup() {
  [ -n "${watch:-}" ] && kill -TERM "$watch" 2>/dev/null && wait "$watch" 2>/dev/null
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  psql -d test -c "DROP DATABASE IF EXISTS $db" || true
}
trap cleanup EXIT
for _ in 1 2 3 4 5 6 7 8 9 10; do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.2; done

psql -d test -c "CREATE DATABASE $db"
psql -d "$db" -c "CREATE TABLE idempotency_keys (idempotency_key text PRIMARY KEY, status text NOT NULL,
    created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL);
  INSERT INTO idempotency_keys SELECT 'key-' || g, 'SUCCEEDED', now() - interval '3 hours', now() - interval '3 hours'
    FROM generate_series(1, $rows) g" -c "VACUUM ANALYZE idempotency_keys"
psql -d test -c "ALTER DATABASE $db SET log_statement = 'all'"
for i in $(seq 1 "$keys"); do
  status=SUCCEEDED
  [ "$disagree" -gt 0 ] && [ $((i % disagree)) -eq 0 ] && status=PROCESSING
  echo "SET soakc:job:status:key-$i $status EX 86400"
done | redis-cli -p "$port" --pipe >/dev/null

cat >"$out/dupctl.yaml" <<YAML
jobs:
  - name: payment
    cache_pattern: "soakc:job:status:{key}"
    idempotency:
      table: idempotency_keys
      key_column: idempotency_key
      status_column: status
YAML

cmdstats() { redis-cli -p "$port" info commandstats | tr -d '\r' | sed -nE 's/^cmdstat_([^:]+):calls=([0-9]+),usec=([0-9]+).*failed_calls=([0-9]+)/\1 \2 \3 \4/p' | sort; }
pgstats() {
  psql -d test -At -F ' ' -c "SELECT xact_commit + xact_rollback, tup_returned, tup_fetched, blks_read + blks_hit
    FROM pg_stat_database WHERE datname = '$db'"
}
cmdstats >"$out/redis0"
pg0=$(pgstats)
loglines0=$(wc -l <"$pglog")
listen=127.0.0.1:$((port + 1000))
"$out/dupctl" watch --config "$out/dupctl.yaml" --listen "$listen" --checks cache --check-interval cache=5s \
  --check-timeout cache=60s --redis-url "redis://127.0.0.1:$port/0" --database-url "postgres://127.0.0.1:5432/$db" \
  2>"$out/watch.err" &
watch=$!
n=0
: >"$out/pids"
while [ "$n" -lt "$runs" ]; do
  sleep 0.5
  psql -d test -At -c "SELECT pid FROM pg_stat_activity WHERE datname = '$db'" >>"$out/pids"
  n=$(curl -s "http://$listen/metrics" | awk '/^dupctl_check_runs_total\{check="cache"/ { s += $2 } END { print s + 0 }')
done
# The RUNSth run ended less than 0.5 s ago and the next starts 5 s after
# it started: Redis's counters now hold RUNS runs and no more. PostgreSQL's
# come when the backends report them: at the latest when they close.
cmdstats >"$out/redis1"
metrics=$(curl -s "http://$listen/metrics")
kill -TERM "$watch"
wait "$watch" || true
watch=
sleep 1
pg1=$(pgstats)
tail -n +"$((loglines0 + 1))" "$pglog" >"$out/pg.log"
pids=$(sort -u "$out/pids")
statements=0
for p in $pids; do
  statements=$((statements + $(grep -cE "\[$p\] .*LOG:  (statement|execute [^:]*): " "$out/pg.log" || true)))
done

echo "cache check: $n runs, $keys cache keys, $rows rows, disagree 1 in ${disagree} (0: none)"
awk '/^dupctl_check_duration_seconds_(sum|count)\{check="cache"\}/ { v[$1 ~ /sum/ ? "s" : "c"] = $2 }
  END { printf "duration: %.1f ms a run (dupctl_check_duration_seconds sum/count)\n", 1000 * v["s"] / v["c"] }' <<<"$metrics"
grep '^dupctl_cache_disagreements' <<<"$metrics" || true
echo "Redis per run (INFO commandstats deltas / $n): command calls usec failed"
join -a2 -e0 -o 2.1,1.2,2.2,1.3,2.3,1.4,2.4 "$out/redis0" "$out/redis1" |
  awk -v n="$n" '{ c = $3 - $2; if (c) printf "  %-16s %10.1f %10.1f %6.1f\n", $1, c / n, ($5 - $4) / n, ($7 - $6) / n }'
read -r x0 r0 f0 b0 <<<"$pg0"
read -r x1 r1 f1 b1 <<<"$pg1"
awk -v n="$n" -v x=$((x1 - x0)) -v r=$((r1 - r0)) -v f=$((f1 - f0)) -v b=$((b1 - b0)) -v s="$statements" -v c="$(wc -w <<<"$pids")" 'BEGIN {
  printf "PostgreSQL per run (deltas / %d): %.1f statements (log_statement, %d connections), %.1f transactions, tup_returned %.0f, tup_fetched %.0f, buffers %.0f\n",
    n, s / n, c, x / n, r / n, f / n, b / n }'
echo "statements of the first connection (distinct, first 80 chars):"
first=$(head -1 <<<"$pids")
grep -E "\[$first\] .*LOG:  (statement|execute [^:]*): " "$out/pg.log" | sed -E 's/.*LOG:  (statement|execute [^:]*): //' | cut -c1-80 | sort | uniq -c | sort -rn | head -15
