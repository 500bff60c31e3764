#!/usr/bin/env bash
# Benchmark: `dupctl inspect store --checks duplicates` against the query a
# person would write by hand, psql running
#   SELECT idempotency_key FROM t GROUP BY 1 HAVING count(*) > 1
# on the same table in the same run. The table has ROWS rows (default
# 5,000,000), no unique constraint, and 1% of its keys twice.
#
#   bash bench/inspect-store/run.sh            # 5M rows, 5 rounds
#   ROWS=1000000 ROUNDS=3 bash bench/inspect-store/run.sh
#   PARTITIONS=12 ROWS=1000000 bash bench/inspect-store/run.sh
#
# PARTITIONS=N makes the table PARTITION BY RANGE (created_at), one
# partition per month, rows spread over N months and each duplicate's
# second row a month later than its first (a key in two partitions): the
# check then also counts keys across partitions (min/max of tableoid).
#
# Needs PostgreSQL on 127.0.0.1:5432 (DATABASE_URL to override) and psql.
# Rounds alternate the two commands so that both see the same cache state;
# the figure is the median of each, and their ratio.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."

ROWS=${ROWS:-5000000}
ROUNDS=${ROUNDS:-5}
PARTITIONS=${PARTITIONS:-0}
DB=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
SCHEMA=dupctl_bench_store_$$
BIN=$(mktemp -d)/dupctl
trap 'psql -q "$DB" -c "DROP SCHEMA IF EXISTS $SCHEMA CASCADE" >/dev/null 2>&1 || true; rm -rf "$(dirname "$BIN")"' EXIT

go build -o "$BIN" ./cmd/dupctl
echo "== loading $ROWS rows into $SCHEMA.payments"
if [ "$PARTITIONS" -gt 0 ]; then
  psql -q -v ON_ERROR_STOP=1 "$DB" <<SQL
CREATE SCHEMA $SCHEMA;
CREATE TABLE $SCHEMA.payments (
  id bigserial, idempotency_key text NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL,
  PRIMARY KEY (id, created_at)) PARTITION BY RANGE (created_at);
SELECT format('CREATE TABLE $SCHEMA.payments_%s PARTITION OF $SCHEMA.payments FOR VALUES FROM (%L) TO (%L)',
  m, timestamptz '2026-01-01T00:00:00Z' + make_interval(months => m), timestamptz '2026-01-01T00:00:00Z' + make_interval(months => m + 1))
  FROM generate_series(0, $PARTITIONS) m \gexec
INSERT INTO $SCHEMA.payments (idempotency_key, status, created_at)
  SELECT 'pay:' || (CASE WHEN i % 100 = 0 THEN i - 1 ELSE i END), 'SUCCEEDED',
    timestamptz '2026-01-01T10:00:00Z' + make_interval(months => ((CASE WHEN i % 100 = 0 THEN i - 1 ELSE i END) % $PARTITIONS) + (CASE WHEN i % 100 = 0 THEN 1 ELSE 0 END))
  FROM generate_series(1, $ROWS) i;
VACUUM ANALYZE $SCHEMA.payments;
SQL
else
psql -q -v ON_ERROR_STOP=1 "$DB" <<SQL
CREATE SCHEMA $SCHEMA;
CREATE TABLE $SCHEMA.payments (
  id bigserial PRIMARY KEY, idempotency_key text NOT NULL, status text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT '2026-12-01T10:00:00Z');
INSERT INTO $SCHEMA.payments (idempotency_key, status)
  SELECT 'pay:' || (CASE WHEN i % 100 = 0 THEN i - 1 ELSE i END), 'SUCCEEDED' FROM generate_series(1, $ROWS) i;
VACUUM ANALYZE $SCHEMA.payments;
SQL
fi

now() { date +%s.%N; }
handwritten=()
dupctl=()
for r in $(seq 1 "$ROUNDS"); do
  t0=$(now)
  psql -q -X -A -t "$DB" -c "SELECT idempotency_key FROM $SCHEMA.payments GROUP BY 1 HAVING count(*) > 1" >/dev/null
  t1=$(now)
  set +e
  "$BIN" inspect store --database-url "$DB" --table "$SCHEMA.payments" --checks duplicates -o json --statement-timeout 10m >/dev/null
  rc=$?
  set -e
  t2=$(now)
  [ "$rc" = 1 ] || { echo "dupctl exited $rc, want 1 (duplicates found)" >&2; exit 1; }
  handwritten+=("$(echo "$t1 - $t0" | bc)")
  dupctl+=("$(echo "$t2 - $t1" | bc)")
  printf 'round %d: hand-written %.2fs, dupctl %.2fs\n' "$r" "${handwritten[-1]}" "${dupctl[-1]}"
done

h=$(median "${handwritten[@]}")
d=$(median "${dupctl[@]}")
[ "$PARTITIONS" -gt 0 ] && echo "== $((PARTITIONS + 1)) partitions by month"
printf '== %s rows, median of %d: hand-written GROUP BY %.2fs, dupctl %.2fs, ratio %.2f (target <= 1.2)\n' \
  "$ROWS" "$ROUNDS" "$h" "$d" "$(echo "$d / $h" | bc -l)"
