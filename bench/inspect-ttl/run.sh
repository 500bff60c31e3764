#!/usr/bin/env bash
# 10M job durations (ms, one per line, a lognormal-ish body with a tail):
# `dupctl inspect ttl` summarising them (count, p50..p99.9, max, outlived
# runs, histogram) against what a user would otherwise run, `sort -n | awk`
# computing p99 alone, on the same file in the same run. Wall time and peak
# memory from /usr/bin/time -v. Also a two-column CSV (3 job types).
#
#   bash bench/inspect-ttl/run.sh [N]     (N defaults to 10000000)
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-10000000}
dir=${BENCH_DIR:-/tmp/dupctl-bench-ttl}
mkdir -p "$dir"
go build -o "$dir/dupctl" ./cmd/dupctl

one="$dir/durations-$n.txt"
csv="$dir/durations-$n.csv"
if [ ! -s "$one" ]; then
	# exp of a sum of uniforms: a lognormal-like body around 30s, a long tail
	awk -v n="$n" 'BEGIN { srand(1); for (i = 0; i < n; i++) print int(exp(log(30000) + 0.9 * (rand() + rand() + rand() - 1.5) * 2)) }' > "$one"
	awk 'BEGIN { split("payment settlement email", t, " ") } { print t[NR % 3 + 1] "," $1 }' "$one" > "$csv"
fi
ls -l "$one" "$csv" | awk '{ printf "%s  %d bytes\n", $NF, $5 }'

# run NAME LABEL CMD...: wall seconds (into $NAME_wall) and max RSS (KiB)
run() {
	local name=$1 label=$2
	shift 2
	/usr/bin/time -v -o "$dir/time.txt" "$@" > "$dir/out.txt"
	local wall rss
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$dir/time.txt")
	rss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$dir/time.txt")
	printf '%-44s %8.2fs %9d KiB   %s\n' "$label" "$wall" "$rss" "$(head -c 60 "$dir/out.txt" | tr '\n' ' ')"
	printf -v "${name}_wall" '%s' "$wall"
}

export LC_ALL=C
k=$((n * 99 / 100))
run sortk "sort -n | awk (p99 at line k)" sh -c "sort -n '$one' | awk -v k=$k 'NR == k { print; exit }'"
run sorta "sort -n | awk (array, p99 at END)" sh -c "sort -n '$one' | awk '{ a[NR] = \$1 } END { print a[int(NR * 0.99)] }'"
run dupctl "dupctl inspect ttl (one column)" "$dir/dupctl" inspect ttl "$one" --unit ms --ttl 2m -o json --fail-on none
grep -o '"p99_ms": [0-9.]*' "$dir/out.txt" | head -1
run dupctl3 "dupctl inspect ttl (CSV, 3 job types)" "$dir/dupctl" inspect ttl "$csv" --unit ms --ttl 2m -o json --fail-on none

base=$(awk -v a="$sortk_wall" -v b="$sorta_wall" 'BEGIN { print (a < b) ? a : b }')
awk -v d="$dupctl_wall" -v b="$base" 'BEGIN { printf "ratio dupctl / fastest sort|awk: %.3f (target < 0.5)\n", d / b }'
