#!/usr/bin/env bash
# Benchmark `dupctl inspect lock` (defaults: every key considered, locks
# found by shape, -o json) on a keyspace of locks of every maker beside
# non-lock data (bench/inspect-lock/load), against what a user would
# otherwise run on the same keys, in alternating runs:
#
#   - naive: a Go program (go-redis) that SCANs with COUNT 1000 and
#     pipelines PTTL + GET for every key (bench/inspect-lock/naive);
#   - redis-cli --scan: every key's name (redis-cli's COUNT 10);
#   - floor (not a contender): naive -ttl-only, SCAN and one PTTL per key,
#     the least any tool that reports every key's TTL asks of Redis - how
#     close to redis-cli --scan such a tool can come on this machine.
#
# Then it checks dupctl's report against the keyspace (every lock family
# found, no non-lock key among the candidates, no warn/error finding about
# one) and measures dupctl's peak RSS at two sizes.
#
#   flock /tmp/dupctl-bench.lock bash bench/inspect-lock/run.sh
#   LOCKS=100000 OTHERS=20000 RUNS=3 bash bench/inspect-lock/run.sh
#
# It uses a database of its own (DB, default 14) of the local Redis,
# refuses to run when that database is not empty, and empties it when done.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."

DB=${DB:-14}
LOCKS=${LOCKS:-1000000}
OTHERS=${OTHERS:-200000}
RUNS=${RUNS:-3}
SMALL=${SMALL:-100000}
URL="redis://127.0.0.1:6379/$DB"
cli() { redis-cli -h 127.0.0.1 -p 6379 -n "$DB" "$@"; }

if [ "$(cli DBSIZE)" != "0" ]; then
  echo "database $DB is not empty: pick another with DB=N" >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'cli FLUSHDB >/dev/null; rm -rf "$tmp"' EXIT

go build -o "$tmp/dupctl" ./cmd/dupctl
go build -o "$tmp/load" ./bench/inspect-lock/load
go build -o "$tmp/naive" ./bench/inspect-lock/naive

load() { "$tmp/load" -locks "$1" -others "$2" | cli --pipe >/dev/null; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
rss() { awk -F: '/Maximum resident/ { gsub(/ /, "", $2); print $2 }' "$1"; }
# Redis's own CPU seconds so far (INFO cpu; other clients of the server
# count too, so this is an upper bound for one command).
rcpu() { redis-cli INFO cpu | tr -d '\r' | awk -F: '/^used_cpu_(sys|user):/ { s += $2 } END { printf "%.2f", s }'; }
spent() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

echo "== $(uptime)"
echo "== loading $LOCKS locks + $OTHERS other keys into DB $DB"
load "$LOCKS" "$OTHERS"
echo "keys: $(cli DBSIZE); redis $(redis-cli INFO server | tr -d '\r' | awk -F: '/^redis_version/ {print $2}'); $(nproc) cores"

echo "== alternating runs ($RUNS of each)"
declare -a T_NAIVE T_DUP T_CLI T_FLOOR M_DUP
for i in $(seq 1 "$RUNS"); do
  c0=$(rcpu); a=$(now); "$tmp/naive" "$URL" >/dev/null 2>&1; b=$(now); c1=$(rcpu)
  T_NAIVE+=("$(elapsed "$a" "$b")"); r_naive=$(spent "$c0" "$c1")
  c0=$(rcpu); a=$(now); /usr/bin/time -v "$tmp/dupctl" inspect lock --redis-url "$URL" --fail-on none -o json >"$tmp/out.json" 2>"$tmp/time"; b=$(now); c1=$(rcpu)
  T_DUP+=("$(elapsed "$a" "$b")"); r_dup=$(spent "$c0" "$c1")
  M_DUP+=("$(rss "$tmp/time")")
  c0=$(rcpu); a=$(now); cli --scan >/dev/null; b=$(now); c1=$(rcpu)
  T_CLI+=("$(elapsed "$a" "$b")"); r_cli=$(spent "$c0" "$c1")
  c0=$(rcpu); a=$(now); "$tmp/naive" -ttl-only "$URL" >/dev/null 2>&1; b=$(now); c1=$(rcpu)
  T_FLOOR+=("$(elapsed "$a" "$b")"); r_floor=$(spent "$c0" "$c1")
  echo "run $i: naive ${T_NAIVE[-1]}s (redis cpu ${r_naive}s)   dupctl ${T_DUP[-1]}s (redis cpu ${r_dup}s, own cpu $(awk -F: '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$tmp/time")s, max RSS ${M_DUP[-1]} kB)   redis-cli --scan ${T_CLI[-1]}s (redis cpu ${r_cli}s)   floor ${T_FLOOR[-1]}s (redis cpu ${r_floor}s)   ($(uptime | sed 's/.*load/load/'))"
done
mn=$(median "${T_NAIVE[@]}"); md=$(median "${T_DUP[@]}"); mc=$(median "${T_CLI[@]}"); mf=$(median "${T_FLOOR[@]}")
echo "median: naive ${mn}s, dupctl ${md}s, redis-cli --scan ${mc}s, floor ${mf}s"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "ratios: dupctl/naive $(ratio "$md" "$mn"), dupctl/redis-cli $(ratio "$md" "$mc"), floor/redis-cli $(ratio "$mf" "$mc")"
status=0
"$tmp/load" -locks "$LOCKS" -others "$OTHERS" -check "$tmp/out.json" || status=1

echo "== peak RSS at $SMALL locks + $((SMALL / 5)) others"
cli FLUSHDB >/dev/null
load "$SMALL" $((SMALL / 5))
/usr/bin/time -v "$tmp/dupctl" inspect lock --redis-url "$URL" --fail-on none -o json >"$tmp/out.json" 2>"$tmp/time"
echo "max RSS $(rss "$tmp/time") kB (at $LOCKS + $OTHERS: $(median "${M_DUP[@]}") kB median)"
"$tmp/load" -locks "$SMALL" -others $((SMALL / 5)) -check "$tmp/out.json" || status=1
echo "== $(uptime)"
exit $status
