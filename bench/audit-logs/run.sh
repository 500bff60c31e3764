#!/usr/bin/env bash
# Benchmark `dupctl audit logs` against what a user would otherwise run,
# on the same generated worker-fleet logs, in one run:
#   jq:     jq -c 'select(.event=="side_effect") | .idempotencyKey' f | sort | uniq -d
#   naive:  a straightforward encoding/json Go program (bench/audit-logs/naive)
#   dupctl: dupctl audit logs f (two passes, causes, metrics)
# Wall time and peak RSS come from /usr/bin/time -v. The logs are made in a
# temporary directory and deleted at the end (they are large).
#
#   bash bench/audit-logs/run.sh            # the 1 GB log (~3M lines)
#   BIG=1 bash bench/audit-logs/run.sh      # also the ~8 GB log (~5M jobs): naive vs dupctl
#
# Output: a markdown table on stdout (for docs/benchmarks.md), details on stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dupctl-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
go build -o "$TMP/dupctl" ./cmd/dupctl
go build -o "$TMP/naive" ./bench/audit-logs/naive
go build -o "$TMP/gen" ./bench/audit-logs/gen

# measure NAME CMD...: run once, print "seconds rss_mb" and keep the output.
measure() {
	local name=$1
	shift
	/usr/bin/time -v -o "$TMP/$name.time" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || true
	local wall rss
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$TMP/$name.time")
	rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$TMP/$name.time")
	echo "$wall $rss"
}

row() { # label, wall, rss, baseline wall
	awk -v l="$1" -v w="$2" -v r="$3" -v b="$4" 'BEGIN { printf "| %s | %.1f s | %s MB | %s |\n", l, w, r, (b > 0 ? sprintf("%.1fx", b / w) : "-") }'
}

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GB; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# 1 GB: full flow, ~330-byte lines, one incident every 1000 jobs.
"$TMP/gen" -jobs 315000 -incident-every 1000 -pad 40 -o "$TMP/1g.log" 2>"$TMP/gen1.err"
size=$(stat -c %s "$TMP/1g.log")
lines=$(wc -l <"$TMP/1g.log")
echo "1 GB log: $size bytes, $lines lines; $(cat "$TMP/gen1.err")" >&2
read -r jw jr < <(measure jq sh -c "jq -c 'select(.event==\"side_effect\") | .idempotencyKey' '$TMP/1g.log' | sort | uniq -d")
read -r nw nr < <(measure naive "$TMP/naive" "$TMP/1g.log")
read -r dw dr < <(measure dupctl "$TMP/dupctl" audit logs "$TMP/1g.log" --fail-on none)
echo "jq found $(wc -l <"$TMP/jq.out") duplicated keys; naive: $(cat "$TMP/naive.out"); dupctl: $(sed -n 2p "$TMP/dupctl.out")" >&2
echo
echo "1 GB log: $(numfmt --to=iec "$size") bytes, $lines lines, 315,000 jobs, 315 injected duplicates; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| tool | wall | peak RSS | dupctl faster by |"
echo "|---|---|---|---|"
row "jq \| sort \| uniq -d" "$jw" "$jr" 0
row "naive encoding/json" "$nw" "$nr" 0
row "dupctl audit logs" "$dw" "$dr" 0
awk -v j="$jw" -v n="$nw" -v d="$dw" 'BEGIN { printf "\ndupctl vs jq: %.1fx faster; vs naive Go: %.1fx faster\n", j / d, n / d }'
rm -f "$TMP/1g.log"

if [[ "${BIG:-}" == 1 ]]; then
	# ~8 GB: lean flow (six lines per job), 5M jobs, one incident every 10,000.
	"$TMP/gen" -jobs 5000000 -incident-every 10000 -lean -o "$TMP/8g.log" 2>"$TMP/gen8.err"
	size=$(stat -c %s "$TMP/8g.log")
	lines=$(wc -l <"$TMP/8g.log")
	echo "8 GB log: $size bytes, $lines lines; $(cat "$TMP/gen8.err")" >&2
	read -r nw nr < <(measure naive8 "$TMP/naive" "$TMP/8g.log")
	read -r dw dr < <(measure dupctl8 "$TMP/dupctl" audit logs "$TMP/8g.log" --fail-on none)
	echo "naive: $(cat "$TMP/naive8.out"); dupctl: $(sed -n 2p "$TMP/dupctl8.out")" >&2
	echo
	echo "~8 GB log: $(numfmt --to=iec "$size") bytes, $lines lines, 5,000,000 jobs, 500 injected duplicates; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "| tool | wall | peak RSS |"
	echo "|---|---|---|"
	awk -v w="$nw" -v r="$nr" 'BEGIN { printf "| naive encoding/json | %.1f s | %s MB |\n", w, r }'
	awk -v w="$dw" -v r="$dr" 'BEGIN { printf "| dupctl audit logs | %.1f s | %s MB |\n", w, r }'
fi
