#!/usr/bin/env bash
# Benchmark `dupctl inspect lock` against what a user would otherwise run,
# `redis-cli --scan --pattern 'lock:*'` (names only), on the same keyspace,
# in alternating runs; and dupctl's peak RSS at 100k and 1M lock keys.
#
#   bash bench/inspect-lock/run.sh            # 1,000,000 locks + 200,000 others
#   LOCKS=100000 OTHERS=20000 bash bench/inspect-lock/run.sh
#
# It uses a dedicated database (DB, default 13) of the local Redis, refuses
# to run when that database is not empty, and flushes it when done.
set -euo pipefail
cd "$(dirname "$0")/../.."

DB=${DB:-13}
LOCKS=${LOCKS:-1000000}
OTHERS=${OTHERS:-200000}
RUNS=${RUNS:-3}
RSS_SIZES=${RSS_SIZES:-"100000 1000000"}
URL="redis://127.0.0.1:6379/$DB"
cli() { redis-cli -h 127.0.0.1 -p 6379 -n "$DB" "$@"; }

if [ "$(cli DBSIZE)" != "0" ]; then
  echo "database $DB is not empty: pick another with DB=N" >&2
  exit 2
fi
trap 'cli FLUSHDB >/dev/null' EXIT

go build -o /tmp/dupctl-bench ./cmd/dupctl

# load N locks and M other keys with redis-cli --pipe. The lock families:
# 60% lock:payment:order:<int> with a random 32-hex token and a 1h TTL,
# 20% lock:job:<uuid> (per-run keys), 20% lock:report:<int> holding "1"
# without a TTL; the others are cache:user:<int>.
load() {
  local locks=$1 others=$2
  awk -v locks="$locks" -v others="$others" 'BEGIN {
    srand(42)
    for (i = 0; i < locks; i++) {
      r = i % 10
      if (r < 6) {
        k = "lock:payment:order:" i
        v = sprintf("%08x%08x%08x%08x", rand()*4294967295, rand()*4294967295, rand()*4294967295, rand()*4294967295)
        printf "*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$2\r\nPX\r\n$7\r\n3600000\r\n", length(k), k, length(v), v
      } else if (r < 8) {
        k = sprintf("lock:job:%08x-3b2a-4c1d-9e8f-%012x", rand()*4294967295, i)
        v = sprintf("%08x%08x%08x%08x", rand()*4294967295, rand()*4294967295, rand()*4294967295, rand()*4294967295)
        printf "*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$2\r\nPX\r\n$6\r\n600000\r\n", length(k), k, length(v), v
      } else {
        k = "lock:report:" i
        printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\n1\r\n", length(k), k
      }
    }
    for (i = 0; i < others; i++) {
      k = "cache:user:" i
      printf "*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nx\r\n", length(k), k
    }
  }' | cli --pipe >/dev/null
}

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

echo "== loading $LOCKS locks + $OTHERS other keys into DB $DB"
load "$LOCKS" "$OTHERS"
echo "keys: $(cli DBSIZE); redis $(redis-cli INFO server | tr -d '\r' | awk -F: '/^redis_version/ {print $2}')"

echo "== alternating runs ($RUNS each)"
declare -a T_CLI T_DUP
for i in $(seq 1 "$RUNS"); do
  a=$(now); cli --scan --pattern 'lock:*' >/dev/null; b=$(now)
  T_CLI+=("$(elapsed "$a" "$b")")
  a=$(now); /tmp/dupctl-bench inspect lock --redis-url "$URL" --fail-on none -o json >/tmp/dupctl-bench.json; b=$(now)
  T_DUP+=("$(elapsed "$a" "$b")")
  echo "run $i: redis-cli --scan ${T_CLI[-1]}s   dupctl inspect lock ${T_DUP[-1]}s"
done
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
mc=$(median "${T_CLI[@]}"); md=$(median "${T_DUP[@]}")
echo "median: redis-cli --scan ${mc}s, dupctl inspect lock ${md}s, ratio $(awk -v d="$md" -v c="$mc" 'BEGIN { printf "%.2f", d / c }')"
grep -o '"keys_matched": [0-9]*\|"locks": [0-9]*\|"families": [0-9]*' /tmp/dupctl-bench.json | head -3 | tr '\n' ' '
echo

echo "== peak RSS"
for n in $RSS_SIZES; do
  cli FLUSHDB >/dev/null
  load "$n" $((n / 5))
  /usr/bin/time -v /tmp/dupctl-bench inspect lock --redis-url "$URL" --fail-on none -o json 2>/tmp/dupctl-bench.time >/dev/null
  echo "$n locks + $((n / 5)) others: max RSS $(awk -F: '/Maximum resident/ { gsub(/ /, "", $2); print $2 }' /tmp/dupctl-bench.time) kB"
done
