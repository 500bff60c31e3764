#!/usr/bin/env bash
# Issue 39: every reader ends on any input, in bounded memory, at its
# deadline or a signal. Runs each case on a dupctl binary and prints a
# markdown row: exit code, wall time, the time from the signal to the exit,
# peak RSS (VmHWM, sampled every 50 ms) and the first line of stderr. A run
# that has not ended by KILL_AFTER seconds is killed (exit 137).
#
#   DUPCTL=/path/to/dupctl bash bench/bounded-input/run.sh   # default: go build ./cmd/dupctl
#   KILL_AFTER=10 DUPCTL=./dupctl-before bash bench/bounded-input/run.sh
#
# Inputs, in a temporary directory deleted at the end: /dev/zero, a 5 GiB
# sparse file (truncate -s 5G), a 2 GiB single line of 'a' (2 GiB of disk),
# a FIFO fed by `yes` with a valid side-effect line, and a stdin pipe
# nobody writes to.
set -euo pipefail
cd "$(dirname "$0")/../.."
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dupctl-bounded.XXXXXX")
FEEDER=
trap '[ -n "$FEEDER" ] && kill "$FEEDER" 2>/dev/null; rm -rf "$TMP"' EXIT
KILL_AFTER=${KILL_AFTER:-15}
if [ -z "${DUPCTL:-}" ]; then
  go build -o "$TMP/dupctl" ./cmd/dupctl
  DUPCTL=$TMP/dupctl
fi
truncate -s 5G "$TMP/sparse5g.log"
head -c 2G /dev/zero | tr '\0' 'a' >"$TMP/line2g.log"
echo >>"$TMP/line2g.log"
LINE='{"time":"2026-11-03T09:00:00Z","event":"side_effect","orderId":"o1","jobId":"j1","idempotencyKey":"k1"}'

# run LABEL SIGNAL@SECONDS|- STDIN(file|-) ARGS...: one row.
run() {
  local label=$1 sigspec=$2 in=$3
  shift 3
  local start end hwm=0 h sent= sigat= rc
  start=$(date +%s.%N)
  if [ "$in" = - ]; then "$DUPCTL" "$@" >/dev/null 2>"$TMP/err" </dev/null & else "$DUPCTL" "$@" >/dev/null 2>"$TMP/err" <"$in" & fi
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    h=$(awk '/VmHWM/{print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
    local el
    el=$(echo "$(date +%s.%N) - $start" | bc)
    if [ "$sigspec" != - ] && [ -z "$sent" ] && (($(echo "$el >= ${sigspec#*@}" | bc))); then
      kill "-${sigspec%@*}" "$pid" 2>/dev/null || true
      sent=1
      sigat=$(date +%s.%N)
    fi
    if (($(echo "$el >= $KILL_AFTER" | bc))); then kill -KILL "$pid" 2>/dev/null || true; fi
    sleep 0.05
  done
  rc=0
  wait "$pid" || rc=$?
  end=$(date +%s.%N)
  local after=-
  [ -n "$sigat" ] && after=$(printf '%.2f s' "$(echo "$end - $sigat" | bc)")
  printf '| %s | %s | %.2f s | %s | %d MB | %s |\n' "$label" "$rc" "$(echo "$end - $start" | bc)" "$after" $((hwm / 1024)) \
    "$(head -c 160 "$TMP/err" | head -1)"
}

# feed KIND: a FIFO at $TMP/fifo written by a background feeder.
feed() {
  rm -f "$TMP/fifo"
  mkfifo "$TMP/fifo"
  case $1 in
    lines) (exec yes "$LINE" >"$TMP/fifo" 2>/dev/null) & ;;
    blank) (exec tr '\0' '\n' </dev/zero >"$TMP/fifo" 2>/dev/null) & ;;
    idle) (exec sleep 3600 >"$TMP/fifo") & ;;
  esac
  FEEDER=$!
}
unfeed() { kill "$FEEDER" 2>/dev/null || true; wait "$FEEDER" 2>/dev/null || true; FEEDER=; }

echo "| command | exit | wall | signal to exit | peak RSS | stderr |"
echo "|---|---|---|---|---|---|"
for c in "keys unstable" "audit logs"; do
  # shellcheck disable=SC2086 # $c is two words on purpose
  {
    run "$c /dev/zero --timeout 2s" - - $c /dev/zero --timeout 2s
    run "$c /dev/zero, SIGINT at 1 s" INT@1 - $c /dev/zero
    run "$c sparse5g.log --timeout 2s" - - $c "$TMP/sparse5g.log" --timeout 2s
    run "$c line2g.log --timeout 2s" - - $c "$TMP/line2g.log" --timeout 2s
    run "$c - < /dev/zero --timeout 2s" - /dev/zero $c - --timeout 2s
    feed lines; run "$c fifo (lines) --timeout 2s" - - $c "$TMP/fifo" --timeout 2s; unfeed
    feed lines; run "$c - (lines), SIGTERM at 2 s" TERM@2 "$TMP/fifo" $c -; unfeed
    feed blank; run "$c - (blank lines) --timeout 2s" - "$TMP/fifo" $c - --timeout 2s; unfeed
    feed idle; run "$c - (idle), SIGINT at 2 s" INT@2 "$TMP/fifo" $c -; unfeed
  }
done
run "inspect ttl /dev/zero --timeout 2s" - - inspect ttl /dev/zero --ttl 30s --timeout 2s
feed idle; run "inspect ttl - (idle), SIGINT at 2 s" INT@2 "$TMP/fifo" inspect ttl - --ttl 30s; unfeed
