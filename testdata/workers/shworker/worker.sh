#!/bin/sh
# shworker is a payment consumer in POSIX shell for testing dupctl's
# `simulate <scenario> --worker` with clients other than goworker's:
# RabbitMQ's C client (amqp-consume and amqp-declare-queue from Debian's
# amqp-tools, librabbitmq), and psql (libpq, the simple query protocol,
# the business key as a literal in the SQL text).
#
# amqp-consume runs handle.sh once per message with the body on stdin and
# acks when it exits.
#
# Environment:
#
#	AMQP_HOST, AMQP_PORT     the AMQP proxy (guest/guest, vhost /)
#	DATABASE_URL             the PostgreSQL proxy
#	QUEUE                    queue to declare (durable) and consume
#	CHARGES, IDEM_TABLE      tables: CHARGES(order_id, idempotency_key, worker), IDEM_TABLE(key primary key, status)
#	WORKER                   a name for the logs
#	IDEM=txn|none            claim and charge in one statement | charge, no check
set -eu
here=$(dirname "$0")
set -- --server "$AMQP_HOST" --port "$AMQP_PORT" --username guest --password guest --vhost /
amqp-declare-queue "$@" --durable --queue "$QUEUE" >/dev/null
exec amqp-consume "$@" --queue "$QUEUE" --prefetch-count 1 "$here/handle.sh"
