#!/usr/bin/env bash
# Regenerates the screenshots of docs/reports.md: builds dupctl, renders
# each command's HTML page on this repository's examples (generated logs,
# durations, the simulator; doctor with no connection), and screenshots
# them in headless Chromium on a laptop (1400 px), a phone (390 px) and in
# the dark scheme; pngquant, when present, keeps the files small.
#
#   bash docs/reports-screenshots.sh        # writes docs/img/reports/*.png
#
# Needs: go, chromium (apt-get install -y chromium), optionally pngquant.
# The worker run's and the replay's pages need the local services
# (RabbitMQ, Redis, PostgreSQL with psql; DUPCTL_AMQP_URL, DUPCTL_REDIS_URL
# and DUPCTL_DATABASE_URL override where): without them those shots are
# skipped with a message.
set -euo pipefail
cd "$(dirname "$0")/.."
out=docs/img/reports
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
go build -o "$work/dupctl" ./cmd/dupctl
go run ./bench/audit-logs/gen -jobs 400 -workers 4 -incident-every 40 -o "$work/fleet.log" 2>/dev/null
{
	echo job_type,duration_ms
	for i in $(seq 1 400); do echo "payment,$((100 + i * i / 20))"; done
	for i in $(seq 1 200); do echo "email,$((40 + (i * 37) % 500))"; done
} >"$work/durations.csv"

d() { "$work/dupctl" "$@" >/dev/null || [ $? -eq 1 ]; } # exit 1: findings, as expected
d simulate lock-expiry --html "$work/lock-expiry.html"
d simulate unlock-no-token --html "$work/unlock-no-token.html"
d simulate matrix --html "$work/matrix.html"
d audit logs "$work/fleet.log" --incident ord-0000141 --html "$work/incident.html"
d audit logs "$work/fleet.log" -v --html "$work/incidents.html"
d inspect ttl "$work/durations.csv" --ttl 5s --html "$work/ttl.html"
d doctor --html "$work/doctor.html" --fail-on none
d simulate risk --job-duration p50=30s,p99=5m --lock-ttl 2m --jobs 20000 --html "$work/risk.html" --fail-on none

# A worker run: goworker without idempotency, killed at before-ack.
amqp=${DUPCTL_AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/}
redis=${DUPCTL_REDIS_URL:-redis://127.0.0.1:6379}
pg=${DUPCTL_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}
tbl=dupctl_shots_$$
services=
if command -v psql >/dev/null && psql -q "$pg" -c "create table ${tbl}_charges (order_id text not null, idempotency_key text, worker text);
	create table ${tbl}_idem (key text primary key, status text not null)" >/dev/null 2>&1; then
	services=1
	cleanup() {
		psql -q "$pg" -c "drop table ${tbl}_charges; drop table ${tbl}_idem" >/dev/null 2>&1 || true
		for q in "$tbl.work" "$tbl.parked"; do # the replay's queues, where a tool can delete them
			# amqp-tools reads a URL ending in / as the empty vhost
			amqp-delete-queue --url "${amqp%/}" -q "$q" >/dev/null 2>&1 || rabbitmqctl delete_queue "$q" >/dev/null 2>&1 || true
		done
		rm -rf "$work"
	}
	trap cleanup EXIT
	go build -o "$work/goworker" ./testdata/workers/goworker
	export DUPCTL_AMQP_URL=$amqp DUPCTL_REDIS_URL=$redis DUPCTL_DATABASE_URL=$pg
	d simulate crash --worker "$work/goworker" \
		--worker-env 'AMQP_URL={amqp}' --worker-env 'REDIS_URL={redis}' --worker-env 'DATABASE_URL={postgres}' \
		--worker-env 'QUEUE={prefix}.orders' --worker-env 'WORKER=W{worker}' --worker-env WORK=20ms --worker-env IDEM=none \
		--worker-env "CHARGES=${tbl}_charges" --worker-env "IDEM_TABLE=${tbl}_idem" --publish ':{prefix}.orders' \
		--effects-sql "select order_id, count(*) from ${tbl}_charges group by 1" --jobs 1 --settle 300ms --at before-ack --seed 7 \
		--html "$work/worker.html"
	# A replay of an export file, interrupted by --timeout while --rate
	# paces it, then resumed from its journal: ten dead letters of
	# $tbl.work, one replayed three times already (parked), one with no
	# death history (no destination), one this run replayed before (held
	# by the loop guard).
	death='{"x-death":{"array":[{"table":{"count":{"int64":1},"exchange":{"string":""},"queue":{"string":"'$tbl'.work"},"reason":{"string":"rejected"},"routing-keys":{"array":[{"string":"'$tbl'.work"}]},"time":{"timestamp":"2026-11-30T12:00:00Z"}}}]}'
	rec() { echo '{"format":"dupctl-dlq/1","properties":{"message_id":"m-'"$1"'","headers":'"$2"'},"body":"{\"orderId\":'$((1000 + $1))'}","body_encoding":"text","body_bytes":16}'; }
	{
		rec 1 "$death"',"dupctl-replay-count":{"int64":3}}'
		rec 2 '{}'
		rec 3 "$death"',"dupctl-replay-run":{"string":"shots-'$$'"},"dupctl-replay-count":{"int64":1}}'
		for i in $(seq 4 13); do rec "$i" "$death}"; done
	} >"$work/dlq.jsonl"
	"$work/dupctl" dlq replay --from-file "$work/dlq.jsonl" --yes --create-destination --park-queue "$tbl.parked" --rate 3 --timeout 2s \
		--max-bounces 5 --run-id "shots-$$" --journal "$work/replay.journal" >/dev/null 2>&1 || true
	d dlq replay --from-file "$work/dlq.jsonl" --resume "$work/replay.journal" --yes --create-destination --park-queue "$tbl.parked" \
		--max-bounces 5 --html "$work/replay.html"
else
	echo "PostgreSQL not reachable at $pg (or no psql): the worker run's and the replay's screenshots are skipped" >&2
fi

# shot PAGE NAME WIDTH HEIGHT [dark] [#anchor]
shot() {
	local flags=()
	[ "${5:-}" = dark ] && flags+=(--force-dark-mode)
	chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars "${flags[@]}" \
		--window-size="$3,$4" --screenshot="$out/$2.png" "file://$work/$1.html${6:-}" >/dev/null 2>&1
	if command -v pngquant >/dev/null; then
		pngquant --force --skip-if-larger --quality=60-85 --output "$out/$2.png" "$out/$2.png" || true
	fi
	echo "$out/$2.png: $(wc -c <"$out/$2.png") bytes"
}
shot lock-expiry simulate-lock-expiry 1400 1250
shot unlock-no-token simulate-unlock-no-token-phone 390 2000
shot unlock-no-token simulate-unlock-no-token-dark 1400 1250 dark
shot incident audit-logs-incident 1400 1000
shot incidents audit-logs-v-dark 1400 1100 dark
shot matrix simulate-matrix 900 700
shot ttl inspect-ttl 1400 900
shot doctor doctor 1400 900
shot risk simulate-risk 1100 700
if [ -n "$services" ]; then
	shot worker simulate-worker 1400 1350
	shot replay dlq-replay 1400 1250
fi
