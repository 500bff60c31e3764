// nodeworker is a payment consumer on Node.js's usual clients - amqplib
// and node-postgres (pg, the extended query protocol, the key as a
// parameter) - for testing dupctl's `simulate <scenario> --worker` with a
// runtime other than Go, the shell and the JVM. It handles its errors as
// a Node worker written in a hurry does: not at all, so a failed query
// rejects the handler's promise and Node ends the process with the
// error's stack and its version line.
//
// Environment:
//
//	AMQP_URL, DATABASE_URL  dupctl's proxies
//	QUEUE                   queue to declare (durable) and consume, prefetch 1
//	CHARGES                 table CHARGES(order_id, idempotency_key, worker)
//	WORKER                  a name for the logs
//	ACK=after|first         ack after the charge committed | on receipt
//	WORK=50ms               work before the charge, in milliseconds
'use strict';
const amqp = require('amqplib');
const { Client } = require('pg');

const env = (name, def) => process.env[name] || def;
const log = (event, fields) =>
  console.log(JSON.stringify({ time: new Date().toISOString(), event, worker: env('WORKER', ''), ...fields }));

async function main() {
  const db = new Client({ connectionString: env('DATABASE_URL') });
  await db.connect();
  const conn = await amqp.connect(env('AMQP_URL'));
  const ch = await conn.createChannel();
  const queue = env('QUEUE');
  await ch.assertQueue(queue, { durable: true });
  await ch.prefetch(1);
  const ackFirst = env('ACK', 'after') === 'first';
  const work = parseInt(env('WORK', '50ms'), 10);
  await ch.consume(queue, async (msg) => {
    const { orderId } = JSON.parse(msg.content.toString());
    if (ackFirst) ch.ack(msg);
    await new Promise((done) => setTimeout(done, work));
    const key = 'payment:' + orderId;
    await db.query('insert into ' + env('CHARGES') + ' (order_id, idempotency_key, worker) values ($1, $2, $3)',
      [orderId, key, env('WORKER', '')]);
    log('side_effect', { orderId, idempotencyKey: key });
    if (!ackFirst) ch.ack(msg);
  });
}

main();
