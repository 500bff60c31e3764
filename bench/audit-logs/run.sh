#!/usr/bin/env bash
# Benchmark `dupctl audit logs` against what a user would otherwise run,
# on the same generated worker-fleet logs, in one run:
#   jq:     jq -c 'select(.event=="side_effect") | .idempotencyKey' f | sort | uniq -d
#   naive:  a straightforward encoding/json Go program (bench/audit-logs/naive)
#   dupctl: dupctl audit logs f (two passes, causes, metrics)
# Wall time and peak RSS come from /usr/bin/time -v. The logs are made in a
# temporary directory and deleted at the end (they are large).
#
#   bash bench/audit-logs/run.sh                 # the 1 GB log (~3M lines)
#   SIZES="1g 8g" bash bench/audit-logs/run.sh   # and the ~8 GB log (~5M jobs): naive vs dupctl
#   SIZES=8g bash bench/audit-logs/run.sh        # only the ~8 GB log
#   SIZES=msg bash bench/audit-logs/run.sh       # the message-only 1 GB log (issue 16), and a
#                                                # quarter of it for dupctl's RSS; dupctl also with -o json
#   SIZES=dup10 bash bench/audit-logs/run.sh     # 1 GB in which a tenth of the jobs ran twice (issue 29):
#                                                # the jq pipeline against dupctl -o json and as a table
#   SIZES=grep bash bench/audit-logs/run.sh      # issue 41: 1.2 GB message-only, ~2,880 duplicated keys: the grep
#                                                # pipeline and jq against dupctl -o json (DUPCTL_BASE=path: and
#                                                # another build of dupctl, e.g. one before the prefilter)
#   SIZES=fmt bash bench/audit-logs/run.sh       # logfmt (logrus) and Spring Boot console text, ~0.5 GB
#                                                # each: the naive Go reader of that format against dupctl
#                                                # (FMT_JOBS=30000 FMT_DIALECTS=spring-boot-3 for a smaller, single run)
# The message-only log has no event field: the step is only in a ~100-character
# msg ("side_effect: payment capture sent for order, provider=... see span for
# details"); jq and the naive program select side effects by the message's
# start, as issue 16's pipeline does:
#   jq -c 'select(.msg|startswith("side_effect")) | .idempotencyKey' f | sort | uniq -d
#
# Output: a markdown table on stdout (for docs/benchmarks.md), details on stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dupctl-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
go build -o "$TMP/dupctl" ./cmd/dupctl
go build -o "$TMP/naive" ./bench/audit-logs/naive
go build -o "$TMP/gen" ./bench/audit-logs/gen

# measure NAME CMD...: run once, print "wall_s rss_mb cpu_s" and keep the output.
measure() {
	local name=$1
	shift
	/usr/bin/time -v -o "$TMP/$name.time" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || true
	local wall rss
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$TMP/$name.time")
	rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2/1024}' "$TMP/$name.time")
	cpu=$(awk -F': ' '/User time|System time/ {s+=$2} END {printf "%.1f", s}' "$TMP/$name.time")
	echo "$wall $rss $cpu"
}

row() { # label, wall, rss, cpu
	awk -v l="$1" -v w="$2" -v r="$3" -v c="$4" 'BEGIN { printf "| %s | %.1f s | %.1f s | %s MB |\n", l, w, c, r }'
}

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GB; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

SIZES=${SIZES:-1g}

if [[ " $SIZES " == *" 1g "* ]]; then
	# 1 GB: full flow, ~330-byte lines, one incident every 1000 jobs.
	"$TMP/gen" -jobs 315000 -incident-every 1000 -pad 40 -o "$TMP/1g.log" 2>"$TMP/gen1.err"
	size=$(stat -c %s "$TMP/1g.log")
	lines=$(wc -l <"$TMP/1g.log")
	echo "1 GB log: $size bytes, $lines lines; $(cat "$TMP/gen1.err")" >&2
	load0=$(cut -d' ' -f1 /proc/loadavg)
	read -r jw jr jc < <(measure jq sh -c "jq -c 'select(.event==\"side_effect\") | .idempotencyKey' '$TMP/1g.log' | sort | uniq -d")
	read -r nw nr nc < <(measure naive "$TMP/naive" "$TMP/1g.log")
	read -r dw dr dc < <(measure dupctl "$TMP/dupctl" audit logs "$TMP/1g.log" --fail-on none)
	echo "jq found $(wc -l <"$TMP/jq.out") duplicated keys; naive: $(cat "$TMP/naive.out"); dupctl: $(sed -n 2p "$TMP/dupctl.out")" >&2
	echo
	echo "1 GB log: $size bytes, $lines lines, 315,000 jobs, 315 injected duplicates; 1-minute load average $load0 before, $(cut -d' ' -f1 /proc/loadavg) after"
	echo
	echo "| tool | wall | CPU (user+sys) | peak RSS |"
	echo "|---|---|---|---|"
	row 'jq + sort + uniq -d' "$jw" "$jr" "$jc"
	row "naive encoding/json" "$nw" "$nr" "$nc"
	row "dupctl audit logs" "$dw" "$dr" "$dc"
	awk -v j="$jw" -v n="$nw" -v d="$dw" -v jc="$jc" -v nc="$nc" -v dc="$dc" 'BEGIN { printf "\ndupctl is %.1fx faster than jq and %.1fx faster than the naive Go program (wall); in CPU time %.1fx and %.1fx.\n", j / d, n / d, jc / dc, nc / dc }'
	rm -f "$TMP/1g.log"
fi

if [[ " $SIZES " == *" msg "* ]]; then
	"$TMP/gen" -dialect camel-msg -jobs 294000 -incident-every 1000 -o "$TMP/msg.log" 2>"$TMP/genm.err"
	"$TMP/gen" -dialect camel-msg -jobs 73500 -incident-every 1000 -o "$TMP/msg4.log" 2>"$TMP/genm4.err"
	size=$(stat -c %s "$TMP/msg.log")
	lines=$(wc -l <"$TMP/msg.log")
	echo "message-only log: $size bytes, $lines lines; $(cat "$TMP/genm.err")" >&2
	load0=$(cut -d' ' -f1 /proc/loadavg)
	read -r jw jr jc < <(measure jqm sh -c "jq -c 'select(.msg|startswith(\"side_effect\")) | .idempotencyKey' '$TMP/msg.log' | sort | uniq -d")
	read -r nw nr nc < <(measure naivem "$TMP/naive" -msg-prefix side_effect "$TMP/msg.log")
	read -r dw dr dc < <(measure dupctlm "$TMP/dupctl" audit logs "$TMP/msg.log" --fail-on none)
	read -r ow or oc < <(measure dupctlmj "$TMP/dupctl" audit logs "$TMP/msg.log" --fail-on none -o json)
	read -r qw qr qc < <(measure dupctlm4 "$TMP/dupctl" audit logs "$TMP/msg4.log" --fail-on none)
	echo "jq found $(wc -l <"$TMP/jqm.out") duplicated keys; naive: $(cat "$TMP/naivem.out"); dupctl: $(sed -n 2p "$TMP/dupctlm.out"); causes: $(grep -A12 '^CAUSE' "$TMP/dupctlm.out" | grep DUP_ | tr -s ' ' | tr '\n' ';')" >&2
	echo
	echo "message-only 1 GB log: $size bytes, $lines lines, 294,000 jobs, 294 injected duplicates; 1-minute load average $load0 before, $(cut -d' ' -f1 /proc/loadavg) after"
	echo
	echo "| tool | wall | CPU (user+sys) | peak RSS |"
	echo "|---|---|---|---|"
	row 'jq + sort + uniq -d' "$jw" "$jr" "$jc"
	row "naive encoding/json (-msg-prefix)" "$nw" "$nr" "$nc"
	row "dupctl audit logs" "$dw" "$dr" "$dc"
	row "dupctl audit logs -o json" "$ow" "$or" "$oc"
	row "dupctl audit logs, a quarter of the log ($(stat -c %s "$TMP/msg4.log") bytes)" "$qw" "$qr" "$qc"
	awk -v j="$jw" -v n="$nw" -v d="$dw" -v o="$ow" -v jc="$jc" -v nc="$nc" -v dc="$dc" 'BEGIN { printf "\ndupctl is %.1fx faster than jq (%.1fx with -o json) and %.1fx faster than the naive Go program (wall); in CPU time %.1fx and %.1fx.\n", j / d, j / o, n / d, jc / dc, nc / dc }'
	rm -f "$TMP/msg.log" "$TMP/msg4.log"
fi

if [[ " $SIZES " == *" grep "* ]]; then
	# Issue 41: the message-only dialect at 1.2 GB, one incident every 108
	# jobs (3,241 incidents; grep finds the 2,881 whose key is stable).
	"$TMP/gen" -dialect camel-msg -jobs 350000 -incident-every 108 -o "$TMP/grep.log" 2>"$TMP/geng.err"
	size=$(stat -c %s "$TMP/grep.log")
	lines=$(wc -l <"$TMP/grep.log")
	echo "1.2 GB message-only log: $size bytes, $lines lines; $(cat "$TMP/geng.err")" >&2
	load0=$(cut -d' ' -f1 /proc/loadavg)
	read -r gw gr gc < <(measure grepg sh -c "grep -F '\"msg\":\"side_effect' '$TMP/grep.log' | grep -o '\"idempotencyKey\":\"[^\"]*\"' | sort | uniq -d")
	read -r jw jr jc < <(measure jqg sh -c "jq -c 'select(.msg|startswith(\"side_effect\")) | .idempotencyKey' '$TMP/grep.log' | sort | uniq -d")
	read -r ow or oc < <(measure dupctlg "$TMP/dupctl" audit logs "$TMP/grep.log" --fail-on none -o json)
	echo "grep found $(wc -l <"$TMP/grepg.out") duplicated keys, jq $(wc -l <"$TMP/jqg.out"); dupctl JSON $(stat -c %s "$TMP/dupctlg.out") bytes" >&2
	echo
	echo "1.2 GB message-only log: $size bytes, $lines lines, 350,000 jobs, 3,241 injected duplicates; 1-minute load average $load0 before, $(cut -d' ' -f1 /proc/loadavg) after"
	echo
	echo "| tool | wall | CPU (user+sys) | peak RSS |"
	echo "|---|---|---|---|"
	row 'grep -F + grep -o + sort + uniq -d' "$gw" "$gr" "$gc"
	row 'jq + sort + uniq -d' "$jw" "$jr" "$jc"
	row "dupctl audit logs -o json" "$ow" "$or" "$oc"
	if [ -n "${DUPCTL_BASE:-}" ]; then
		read -r bw br bc < <(measure dupctlgb "$DUPCTL_BASE" audit logs "$TMP/grep.log" --fail-on none -o json)
		row "$DUPCTL_BASE audit logs -o json" "$bw" "$br" "$bc"
		cmp -s "$TMP/dupctlg.out" "$TMP/dupctlgb.out" && echo "the two builds' reports are identical" >&2
	fi
	awk -v g="$gw" -v j="$jw" -v o="$ow" 'BEGIN { printf "\ndupctl -o json is %.2fx the grep pipeline'"'"'s speed and %.1fx jq'"'"'s (wall).\n", g / o, j / o }'
	rm -f "$TMP/grep.log"
fi

if [[ " $SIZES " == *" 8g "* ]]; then
	# ~8 GB: lean flow (six lines per job), 5M jobs, one incident every 10,000.
	"$TMP/gen" -jobs 5000000 -incident-every 10000 -lean -o "$TMP/8g.log" 2>"$TMP/gen8.err"
	size=$(stat -c %s "$TMP/8g.log")
	lines=$(wc -l <"$TMP/8g.log")
	echo "8 GB log: $size bytes, $lines lines; $(cat "$TMP/gen8.err")" >&2
	load0=$(cut -d' ' -f1 /proc/loadavg)
	read -r nw nr nc < <(measure naive8 "$TMP/naive" "$TMP/8g.log")
	read -r dw dr dc < <(measure dupctl8 "$TMP/dupctl" audit logs "$TMP/8g.log" --fail-on none)
	echo "naive: $(cat "$TMP/naive8.out"); dupctl: $(sed -n 2p "$TMP/dupctl8.out")" >&2
	echo
	echo "~8 GB log: $size bytes, $lines lines, 5,000,000 jobs, 500 injected duplicates; 1-minute load average $load0 before, $(cut -d' ' -f1 /proc/loadavg) after"
	echo
	echo "| tool | wall | CPU (user+sys) | peak RSS |"
	echo "|---|---|---|---|"
	row "naive encoding/json" "$nw" "$nr" "$nc"
	row "dupctl audit logs" "$dw" "$dr" "$dc"
	rm -f "$TMP/8g.log"
fi

if [[ " $SIZES " == *" dup10 "* ]]; then
	# 1 GB in which a tenth of the jobs ran twice: the cost follows the
	# bytes, not the findings (issue 29: 8.4 s and 304 MB with -o json on a
	# 26 MB log of 7,200 duplicated keys).
	"$TMP/gen" -jobs 315000 -incident-every 10 -pad 40 -o "$TMP/dup10.log" 2>"$TMP/gend.err"
	size=$(stat -c %s "$TMP/dup10.log")
	lines=$(wc -l <"$TMP/dup10.log")
	echo "10%-duplicated log: $size bytes, $lines lines; $(cat "$TMP/gend.err")" >&2
	load0=$(cut -d' ' -f1 /proc/loadavg)
	read -r jw jr jc < <(measure jqd sh -c "jq -c 'select(.event==\"side_effect\") | .idempotencyKey' '$TMP/dup10.log' | sort | uniq -d")
	read -r ow or oc < <(measure dupctldj "$TMP/dupctl" audit logs "$TMP/dup10.log" --fail-on none -o json)
	read -r dw dr dc < <(measure dupctld "$TMP/dupctl" audit logs "$TMP/dup10.log" --fail-on none)
	echo "jq found $(wc -l <"$TMP/jqd.out") duplicated keys; dupctl: $(sed -n 2p "$TMP/dupctld.out"); JSON $(stat -c %s "$TMP/dupctldj.out") bytes" >&2
	echo
	echo "1 GB log, a tenth of the jobs doubled: $size bytes, $lines lines; 1-minute load average $load0 before, $(cut -d' ' -f1 /proc/loadavg) after"
	echo
	echo "| tool | wall | CPU (user+sys) | peak RSS |"
	echo "|---|---|---|---|"
	row 'jq + sort + uniq -d' "$jw" "$jr" "$jc"
	row "dupctl audit logs -o json" "$ow" "$or" "$oc"
	row "dupctl audit logs (table)" "$dw" "$dr" "$dc"
	awk -v j="$jw" -v o="$ow" -v d="$dw" 'BEGIN { printf "\ndupctl -o json is %.1fx faster than jq; -o json takes %.2fx the table'"'"'s time.\n", j / o, o / d }'
	rm -f "$TMP/dup10.log"
fi

if [[ " $SIZES " == *" fmt "* ]]; then
	# logfmt and console text: dupctl with no flags against the naive Go
	# reader of each format, which must be told the service's phrasings.
	effect='(?i)(side.?effect|charged card|payment captured|card charged|email sent|sent email|notification sent|settlement posted|posted settlement|transfer sent|capture sent)'
	echo
	echo "| format | log | naive reader wall (CPU), RSS | dupctl audit logs wall (CPU), RSS | naive / dupctl wall (CPU) |"
	echo "|---|---|---|---|---|"
	for d in ${FMT_DIALECTS:-logrus spring-boot-3}; do
		"$TMP/gen" -dialect "$d" -jobs "${FMT_JOBS:-150000}" -incident-every 10 -o "$TMP/$d.log" 2>"$TMP/gen-$d.err"
		size=$(stat -c %s "$TMP/$d.log")
		mode=text
		[ "$d" = logrus ] && mode=logfmt
		read -r nw nr nc < <(measure "naive-$d" "$TMP/naive" -format "$mode" -effect "$effect" "$TMP/$d.log")
		read -r dw dr dc < <(measure "dupctl-$d" "$TMP/dupctl" audit logs "$TMP/$d.log" --fail-on none)
		echo "$d: naive: $(cat "$TMP/naive-$d.out"); dupctl: $(sed -n 1,2p "$TMP/dupctl-$d.out" | tr '\n' ' ')" >&2
		awk -v f="$d" -v s="$size" -v n="$nw" -v nr="$nr" -v nc="$nc" -v d="$dw" -v dr="$dr" -v dc="$dc" \
			'BEGIN { printf "| %s | %.0f MB | %.1f s (%.1f s), %s MB | %.1f s (%.1f s), %s MB | %.1fx (%.1fx) |\n", f, s / 1e6, n, nc, nr, d, dc, dr, n / d, nc / dc }'
		rm -f "$TMP/$d.log"
	done
	echo
	echo "1-minute load average after: $(cut -d' ' -f1 /proc/loadavg)"
fi
