// Locks written by Node.js lock libraries' own code (issue 30's proof:
// fixtures written by the library itself), held until stdin closes so
// dupctl inspect lock reads them live. Usage:
//   REDIS_URL=redis://127.0.0.1:6379/3 PREFIX=p node fixtures.js
// It prints one line "ready" when every lock is held.
'use strict';
const IORedis = require('ioredis');
const Redlock = require('redlock');
const { Mutex, Semaphore } = require('redis-semaphore');
const { Queue, Worker } = require('bullmq');
const Bull = require('bull');

const url = process.env.REDIS_URL;
const P = process.env.PREFIX;
const never = () => new Promise(() => {});

async function waitFor(client, pattern, n) {
  for (let i = 0; i < 300; i++) {
    const keys = await client.keys(pattern);
    if (keys.length >= n) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${n} keys ${pattern}`);
}

async function main() {
  const client = new IORedis(url);
  const bullConn = () => new IORedis(url, { maxRetriesPerRequest: null });

  // node-redlock 4: SET resource <randomBytes(16) hex> NX PX ttl.
  const redlock = new Redlock([client], { retryCount: 0 });
  for (let i = 0; i < 4; i++) await redlock.lock(`${P}:locks:account:${i}`, 60000);

  // redis-semaphore: Mutex "mutex:<name>" (a uuid, PX), Semaphore "semaphore:<name>" (a sorted set of holders).
  for (let i = 0; i < 4; i++) {
    await new Mutex(client, `${P}:payment:${i}`, { lockTimeout: 60000, refreshInterval: 0 }).acquire();
  }
  for (let i = 0; i < 2; i++) {
    await new Semaphore(client, `${P}:export`, 3, { lockTimeout: 60000, refreshInterval: 0 }).acquire();
  }

  // BullMQ: a worker holding three job locks "bull:<queue>:<id>:lock" (token <uuid>:<n>),
  // a deduplicated job "bull:<queue>:de:<id>", and the queue's own keys beside them.
  const mq = new Queue(`${P}-mail`, { connection: bullConn() });
  for (let i = 0; i < 5; i++) await mq.add('send', { n: i });
  await mq.add('send', { user: 7 }, { deduplication: { id: 'user-7' } });
  new Worker(`${P}-mail`, never, { connection: bullConn(), concurrency: 3, lockDuration: 60000 });
  await waitFor(client, `bull:${P}-mail:*:lock`, 3);

  // Bull 4: the Queue's one token on every job lock it holds.
  const bq = new Bull(`${P}-pdf`, url, { settings: { lockDuration: 60000 } });
  for (let i = 0; i < 4; i++) await bq.add({ n: i });
  bq.process(2, never);
  await waitFor(client, `bull:${P}-pdf:*:lock`, 2);

  process.stdout.write('ready\n');
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack || e) + '\n');
  process.exit(1);
});
