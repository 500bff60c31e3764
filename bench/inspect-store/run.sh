#!/usr/bin/env bash
# Benchmark: `dupctl inspect store --checks duplicates` against the query a
# person would write by hand, psql running
#   SELECT idempotency_key FROM t GROUP BY 1 HAVING count(*) > 1
# on the same table in the same run. The table has ROWS rows (default
# 5,000,000), no unique constraint, and 1% of its keys twice.
#
#   bash bench/inspect-store/run.sh            # 5M rows, 5 rounds
#   ROWS=1000000 ROUNDS=3 bash bench/inspect-store/run.sh
#
# Needs PostgreSQL on 127.0.0.1:5432 (DATABASE_URL to override) and psql.
# Rounds alternate the two commands so that both see the same cache state;
# the figure is the median of each, and their ratio.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."

ROWS=${ROWS:-5000000}
ROUNDS=${ROUNDS:-5}
DB=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
SCHEMA=dupctl_bench_store_$$
BIN=$(mktemp -d)/dupctl
trap 'psql -q "$DB" -c "DROP SCHEMA IF EXISTS $SCHEMA CASCADE" >/dev/null 2>&1 || true; rm -rf "$(dirname "$BIN")"' EXIT

go build -o "$BIN" ./cmd/dupctl
echo "== loading $ROWS rows into $SCHEMA.payments"
psql -q -v ON_ERROR_STOP=1 "$DB" <<SQL
CREATE SCHEMA $SCHEMA;
CREATE TABLE $SCHEMA.payments (
  id bigserial PRIMARY KEY, idempotency_key text NOT NULL, status text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT '2026-12-01T10:00:00Z');
INSERT INTO $SCHEMA.payments (idempotency_key, status)
  SELECT 'pay:' || (CASE WHEN i % 100 = 0 THEN i - 1 ELSE i END), 'SUCCEEDED' FROM generate_series(1, $ROWS) i;
VACUUM ANALYZE $SCHEMA.payments;
SQL

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
printf '== %s rows, median of %d: hand-written GROUP BY %.2fs, dupctl %.2fs, ratio %.2f (target <= 1.2)\n' \
  "$ROWS" "$ROUNDS" "$h" "$d" "$(echo "$d / $h" | bc -l)"
