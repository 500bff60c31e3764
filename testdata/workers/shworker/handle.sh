#!/bin/sh
# One message: the body on stdin; amqp-consume acks when this exits.
set -eu
body=$(cat)
order=$(printf '%s' "$body" | sed -n 's/.*"orderId" *: *"\([A-Za-z0-9_-]*\)".*/\1/p')
if [ -z "$order" ]; then
	printf '{"event":"invalid_payload","worker":"%s"}\n' "$WORKER"
	exit 0
fi
key="payment:$order"
sleep "${WORK:-0.05}"
case "${IDEM:-txn}" in
txn)
	# The claim and the charge in one statement: one transaction.
	n=$(psql "$DATABASE_URL" -qAt -v ON_ERROR_STOP=1 -c "with claim as (insert into $IDEM_TABLE (key, status) values ('$key', 'SUCCEEDED') on conflict do nothing returning key) insert into $CHARGES (order_id, idempotency_key, worker) select '$order', key, '$WORKER' from claim returning 1" | wc -l)
	;;
none)
	n=$(psql "$DATABASE_URL" -qAt -v ON_ERROR_STOP=1 -c "insert into $CHARGES (order_id, idempotency_key, worker) values ('$order', '$key', '$WORKER') returning 1" | wc -l)
	;;
esac
if [ "$n" -gt 0 ]; then
	printf '{"time":"%s","event":"side_effect","orderId":"%s","idempotencyKey":"%s","worker":"%s"}\n' "$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)" "$order" "$key" "$WORKER"
else
	printf '{"event":"duplicate_caught","orderId":"%s","worker":"%s"}\n' "$order" "$WORKER"
fi
