#!/usr/bin/env bash
# Benchmark: `dupctl audit cache` over KEYS cache keys (default 1,000,000)
# against listing the same keys with `redis-cli --scan --pattern`, the
# cheapest thing a person could run, in the same run. The audit does
# everything on top of the listing: reads every value and TTL, looks every
# key up in PostgreSQL (a 1M-row table with a primary key) and compares.
# 0.1% of the entries disagree with the database.
#
#   bash bench/audit-cache/run.sh             # 1M keys, 5 rounds
#   KEYS=100000 ROUNDS=3 bash bench/audit-cache/run.sh
#   LOOKUP=batch bash bench/audit-cache/run.sh   # force one query per page
#
# Needs Redis on 127.0.0.1:6379 (REDIS_URL, default database 13), PostgreSQL on 127.0.0.1:5432
# (DATABASE_URL), redis-cli and psql. The audit runs with --recheck 0: the
# re-read grace period is waiting, not work (2s by default when anything
# disagrees). Rounds alternate; the figures are medians and their ratio.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."

N=${KEYS:-1000000}
ROUNDS=${ROUNDS:-5}
LOOKUP=${LOOKUP:-auto}
DB=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
# A database of its own (13): SCAN walks the whole keyspace of a database,
# so other keys would be walked by both sides and blur the comparison.
REDIS=${REDIS_URL:-redis://127.0.0.1:6379/13}
NAME=dupctl_bench_cache_$$
PREFIX="$NAME:job:status:"
BIN=$(mktemp -d)/dupctl
cleanup() {
  psql -q "$DB" -c "DROP SCHEMA IF EXISTS $NAME CASCADE" >/dev/null 2>&1 || true
  redis-cli -u "$REDIS" --scan --pattern "$NAME:*" | xargs -r -n 1000 redis-cli -u "$REDIS" DEL >/dev/null || true
  rm -rf "$(dirname "$BIN")"
}
trap cleanup EXIT

go build -o "$BIN" ./cmd/dupctl
echo "== loading $N cache keys and table rows ($NAME)"
psql -q -v ON_ERROR_STOP=1 "$DB" <<SQL
CREATE SCHEMA $NAME;
CREATE TABLE $NAME.jobs (idempotency_key text PRIMARY KEY, status text NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());
INSERT INTO $NAME.jobs (idempotency_key, status) SELECT i::text, 'SUCCEEDED' FROM generate_series(1, $N) i;
VACUUM ANALYZE $NAME.jobs;
SQL
# RESP for SET <prefix><i> <status> EX 3600; every 1000th entry lags.
awk -v n="$N" -v p="$PREFIX" 'BEGIN {
  for (i = 1; i <= n; i++) {
    k = p i; v = (i % 1000 == 0) ? "PROCESSING" : "SUCCEEDED"
    printf "*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$2\r\nEX\r\n$4\r\n3600\r\n", length(k), k, length(v), v
  }
}' | redis-cli -u "$REDIS" --pipe >/dev/null

now() { date +%s.%N; }
scan=()
audit=()
for r in $(seq 1 "$ROUNDS"); do
  t0=$(now)
  listed=$(redis-cli -u "$REDIS" --scan --pattern "${PREFIX}*" | wc -l)
  t1=$(now)
  set +e
  "$BIN" audit cache --redis-url "$REDIS" --database-url "$DB" --cache-pattern "${PREFIX}{key}" --table "$NAME.jobs" --recheck 0 --lookup "$LOOKUP" -o json >"$(dirname "$BIN")/out.json"
  rc=$?
  set -e
  t2=$(now)
  [ "$listed" = "$N" ] || { echo "redis-cli listed $listed keys, want $N" >&2; exit 1; }
  [ "$rc" = 0 ] || { echo "dupctl exited $rc, want 0 (warnings only)" >&2; exit 1; }
  grep -q "\"read\": $N," "$(dirname "$BIN")/out.json" || { echo "dupctl did not read $N entries" >&2; exit 1; }
  mode=$(sed -n 's/.*"lookup": "\(.*\)",/\1/p' "$(dirname "$BIN")/out.json")
  scan+=("$(echo "$t1 - $t0" | bc)")
  audit+=("$(echo "$t2 - $t1" | bc)")
  printf 'round %d: redis-cli --scan %.2fs, dupctl audit cache %.2fs (lookup %s)\n' "$r" "${scan[-1]}" "${audit[-1]}" "$mode"
done

s=$(median "${scan[@]}")
a=$(median "${audit[@]}")
printf '== %s keys, median of %d: redis-cli --scan %.2fs, dupctl audit cache %.2fs, ratio %.2f (target <= 2)\n' \
  "$N" "$ROUNDS" "$s" "$a" "$(echo "$a / $s" | bc -l)"
