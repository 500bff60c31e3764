#!/usr/bin/env bash
# The soak of dupctl watch (issue 43): the built binary, every check on a 1 s
# interval against the real Redis, RabbitMQ and PostgreSQL (a key prefix, a
# schema and queues of the soak's own), following a log written continuously
# by bench/watch/loggen (rotated by rename and by truncation), for DURATION.
# Every 30 s it samples the process's RSS (/proc/PID/status VmRSS), its
# go_goroutines and go_memstats_heap_inuse_bytes from /metrics and the check
# runs; at the end it prints the summary (start, median of the first and of the
# last 10 minutes; runs per check and result).
#
#   bench/watch/soak.sh [DURATION]            # default 80m; OUT=/tmp/soak
#   bench/watch/soak.sh --summary samples.tsv # the summary of a finished run
set -euo pipefail
cd "$(dirname "$0")/../.."
source bench/lib.sh

summary() {
  local tsv=$1
  # Columns: t_s rss_kb goroutines heap_inuse_bytes then runs per check/result.
  local last_t; last_t=$(awk 'NR > 1 { t = $1 } END { print t }' "$tsv")
  echo "samples: $(($(wc -l <"$tsv") - 1)) over ${last_t}s"
  # The medians, and each window's min-max: a heap sampled at random
  # points of its GC cycle spreads wide.
  printf '%-18s %10s %12s %24s %12s %24s\n' metric start first-10-min min-max last-10-min min-max
  local col name
  for col in 2 3 4; do
    name=$(head -1 "$tsv" | cut -f"$col")
    local start first last fr lr
    start=$(awk -v c="$col" 'NR == 2 { print $c }' "$tsv")
    # shellcheck disable=SC2046
    first=$(median $(awk -v c="$col" 'NR > 1 && $1 <= 600 { print $c }' "$tsv"))
    fr=$(awk -v c="$col" 'NR > 1 && $1 <= 600 { if (!n++ || $c < lo) lo = $c; if ($c > hi) hi = $c } END { print lo "-" hi }' "$tsv")
    # shellcheck disable=SC2046
    last=$(median $(awk -v c="$col" -v l="$last_t" 'NR > 1 && $1 > l - 600 { print $c }' "$tsv"))
    lr=$(awk -v c="$col" -v l="$last_t" 'NR > 1 && $1 > l - 600 { if (!n++ || $c < lo) lo = $c; if ($c > hi) hi = $c } END { print lo "-" hi }' "$tsv")
    printf '%-18s %10s %12s %24s %12s %24s\n' "$name" "$start" "$first" "$fr" "$last" "$lr"
  done
  echo "last sample's counters:"
  head -1 "$tsv" | tr '\t' '\n' | tail -n +5 | paste - <(tail -1 "$tsv" | tr '\t' '\n' | tail -n +5)
}

if [ "${1:-}" = --summary ]; then
  summary "$2"
  exit 0
fi

duration=${1:-80m}
out=${OUT:-/tmp/soak}
mkdir -p "$out"
tag=soak_$$_$(date +%s)
prefix=dupctl_$tag schema=dupctl_$tag queue=dupctl_$tag.dlq
port=$((20000 + $$ % 10000))

go build -o "$out/dupctl" ./cmd/dupctl
go build -o "$out/loggen" ./bench/watch/loggen
go build -o "$out/setup" ./bench/watch/setup
"$out/setup" -prefix "$prefix" -schema "$schema" -queue "$queue"

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  "$out/setup" -prefix "$prefix" -schema "$schema" -queue "$queue" -clean || true
}
trap cleanup EXIT

cat >"$out/dupctl.yaml" <<YAML
connections:
  redis_url: redis://127.0.0.1:6379/0
  database_url: postgres://127.0.0.1:5432/test
  amqp_url: amqp://guest:guest@127.0.0.1:5672/
jobs:
  - name: payment
    dlq: $queue
    lock_pattern: "$prefix:lock:payment:order:*"
    lock_ttl: 30s
    cache_pattern: "$prefix:job:status:{key}"
    idempotency:
      table: $schema.idempotency_keys
      key_column: idempotency_key
      status_column: status
watch:
  interval: 1s
  checks:
    lock:  {interval: 1s, timeout: 10s}
    dlq:   {interval: 1s, timeout: 10s}
    store: {interval: 1s, timeout: 10s}
    cache: {interval: 1s, timeout: 10s}
YAML

log=$out/worker.log
: >"$log"
"$out/loggen" -o "$log" >"$out/loggen.out" 2>&1 &
pids+=($!)
"$out/dupctl" watch --config "$out/dupctl.yaml" --listen "127.0.0.1:$port" --follow "$log" \
  >"$out/watch.out" 2>"$out/watch.err" &
watch=$!
pids=("$watch" "${pids[@]}")

checks=(lock dlq store cache)
results=(ok error timeout)
tsv=$out/samples.tsv
{
  printf 't_s\trss_kb\tgoroutines\theap_inuse_bytes'
  for c in "${checks[@]}"; do for r in "${results[@]}"; do printf '\t%s_%s' "$c" "$r"; done; done
  printf '\tlog_events\tduplicates\tfollow_errors\n'
} >"$tsv"

metric() { # metric BODY SERIES-REGEX: the sum of the matching series' values
  awk -v re="$2" '$0 !~ /^#/ && $1 ~ re { s += $2 } END { printf "%.0f", s }' <<<"$1"
}
secs=$(( $(sed -E 's/m$/*60/; s/h$/*3600/; s/s$//' <<<"$duration") ))
t0=$(date +%s)
while :; do
  sleep 30 &
  wait $!
  now=$(date +%s)
  t=$((now - t0))
  kill -0 "$watch" 2>/dev/null || { echo "dupctl watch exited" >&2; exit 1; }
  rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$watch/status")
  body=$(curl -s --max-time 10 "http://127.0.0.1:$port/metrics" || true)
  row="$t	$rss	$(metric "$body" '^go_goroutines$')	$(metric "$body" '^go_memstats_heap_inuse_bytes$')"
  for c in "${checks[@]}"; do
    for r in "${results[@]}"; do
      row+="	$(metric "$body" "^dupctl_check_runs_total[{]check=\"$c\",result=\"$r\"[}]$")"
    done
  done
  row+="	$(metric "$body" '^dupctl_log_events_total')	$(metric "$body" '^dupctl_duplicates_total')	$(metric "$body" '^dupctl_follow_errors_total$')"
  echo "$row" >>"$tsv"
  [ "$t" -ge "$secs" ] && break
done
kill -TERM "$watch"
wait "$watch" && echo "dupctl watch exited $?"
pids=("${pids[@]:1}")
summary "$tsv"
echo "stderr of dupctl watch (distinct lines):"
sort "$out/watch.err" | uniq -c | sort -rn | head -20
