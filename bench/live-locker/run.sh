#!/usr/bin/env bash
# The locker's acquire + release pair against redis-benchmark's SET then DEL
# (one connection, no pipelining) on the same local Redis, alternating, in one
# run. Prints each round and the ratio of the medians.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
N=${N:-100000}
ROUNDS=${ROUNDS:-3}
key="dupctl_bench_rb_$$"
ours=(); theirs=()
rps() { # redis-benchmark requests/s of one command
  redis-benchmark -h 127.0.0.1 -p 6379 -c 1 -P 1 -n "$N" -q "$@" | awk '{for(i=1;i<=NF;i++) if ($i ~ /^[0-9.]+$/ && $(i+1) ~ /requests/) {print $i; exit}}'
}
go test -c -o /tmp/dupctl-live.test ./internal/sim/live >/dev/null
for r in $(seq 1 "$ROUNDS"); do
  o=$(/tmp/dupctl-live.test -test.run XXX -test.bench BenchmarkLockerAcquireRelease -test.benchtime "${N}x" | awk '/pairs\/s/ {for(i=1;i<=NF;i++) if ($(i+1)=="pairs/s") print $i}')
  s=$(rps SET "$key" v); d=$(rps DEL "$key")
  t=$(awk -v s="$s" -v d="$d" 'BEGIN {printf "%.0f", 1/(1/s+1/d)}')
  echo "round $r: dupctl locker ${o} pairs/s; redis-benchmark SET ${s}/s, DEL ${d}/s -> SET+DEL ${t} pairs/s"
  ours+=("$o"); theirs+=("$t")
done
redis-cli -h 127.0.0.1 del "$key" >/dev/null
mo=$(median "${ours[@]}"); mt=$(median "${theirs[@]}")
awk -v o="$mo" -v t="$mt" 'BEGIN {printf "median: dupctl %.0f pairs/s, redis-benchmark %.0f pairs/s, ratio %.2f (target >= 0.6)\n", o, t, o/t}'
