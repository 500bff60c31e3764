// A held-out keyspace (issue 30): keys written by Node.js libraries' own
// code that dupctl's catalogue was not built from - locks, queues,
// sessions, rate limits and caches, with each library's default key
// layout - held live until stdin closes. Usage:
//   REDIS_URL=redis://127.0.0.1:6379/3 node fixtures.js
// It prints one line "ready" when every lock is held.
'use strict';
const http = require('http');
const os = require('os');
const IORedis = require('ioredis');
const nodeRedis = require('redis');
const NR = require('node-resque');
const BeeQueue = require('bee-queue');
const redisLock = require('redis-lock');
const Warlock = require('node-redis-warlock');
const express = require('express');
const session = require('express-session');
const RedisStore = require('connect-redis').default;
const { rateLimit } = require('express-rate-limit');
const { RedisStore: RateLimitStore } = require('rate-limit-redis');
const { RateLimiterRedis } = require('rate-limiter-flexible');
const Keyv = require('keyv');
const KeyvRedis = require('@keyv/redis');
const Bottleneck = require('bottleneck');

const url = process.env.REDIS_URL;
const never = () => new Promise(() => {});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(client, pattern, n) {
  for (let i = 0; i < 300; i++) {
    if ((await client.keys(pattern)).length >= n) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${n} keys ${pattern}`);
}

async function main() {
  const io = new IORedis(url);
  const v4 = nodeRedis.createClient({ url });
  await v4.connect();

  // node-resque: QueueLock (src/plugins/QueueLock.ts: resque:lock:<job>:
  // <queue>:<args json> = its expiry, epoch s, EXPIRE lockTimeout) on jobs
  // enqueued where no worker runs; JobLock (src/plugins/JobLock.ts:
  // resque:workerslock:..., SET NX EX) held by workers running a job that
  // never ends; the scheduler's leader lock (src/core/scheduler.ts
  // tryForLeader); the workers' own keys (src/core/worker.ts).
  const connection = { redis: new IORedis(url) };
  const jobs = {
    sendInvoice: { plugins: [NR.Plugins.QueueLock], perform: async () => {} },
    rebuildIndex: { plugins: [NR.Plugins.JobLock], perform: never },
  };
  const rq = new NR.Queue({ connection }, jobs);
  await rq.connect();
  for (let i = 0; i < 5; i++) await rq.enqueue('billing', 'sendInvoice', [{ invoiceId: 100 + i }]);
  for (let i = 0; i < 3; i++) await rq.enqueue('search', 'rebuildIndex', [`tenant-${i}`]);
  const workers = [];
  for (let i = 0; i < 3; i++) {
    // Named as MultiWorker names its workers (core/multiWorker.js: <host>:<pid>+<n>).
    const name = `${os.hostname()}:${process.pid}+${i + 1}`;
    const w = new NR.Worker({ connection: { redis: new IORedis(url) }, queues: ['search'], timeout: 50, name }, jobs);
    await w.connect();
    w.start();
    workers.push(w);
  }
  const scheduler = new NR.Scheduler({ connection: { redis: new IORedis(url) } });
  await scheduler.connect();
  scheduler.start();
  await waitFor(io, 'resque:workerslock:*', 3);
  await waitFor(io, 'resque:resque_scheduler_leader_lock', 1);

  // bee-queue (lib/queue.js toKey): the job hash, the id counter, waiting
  // and active lists and the stall-check block (lib/lua/checkStalledJobs.lua:
  // SET stallBlock 1 PX stallInterval NX).
  const bq = new BeeQueue('thumbnails', { redis: { url } });
  for (let i = 0; i < 6; i++) await bq.createJob({ image: i }).save();
  bq.process(2, never);
  await waitFor(io, 'bq:thumbnails:stallBlock', 1);

  // redis-lock (index.js acquireLock): SET lock.<name> <expiry ms> PX timeout NX.
  const lock = redisLock(v4);
  for (let i = 0; i < 5; i++) await lock(`report-${i}`, 60000);

  // node-redis-warlock (lib/warlock.js lock): SET <key>:lock <base64 of a uuid v1> PX ttl NX.
  const warlock = Warlock(io);
  for (let i = 0; i < 5; i++) {
    await new Promise((res, rej) => warlock.lock(`export:${i}`, 60000, (err) => (err ? rej(err) : res())));
  }

  // rate-limiter-flexible (lib/RateLimiterRedis.js _upsert): rlflx:<key> =
  // points consumed, PX duration.
  const rl = new RateLimiterRedis({ storeClient: io, points: 100, duration: 60 });
  for (let i = 0; i < 6; i++) for (let n = 0; n <= i; n++) await rl.consume(`10.0.0.${i}`);

  // @keyv/redis (src/index.ts set): keyv:<key> = {"value":...,"expires":...}
  // and the namespace set.
  const keyv = new Keyv({ store: new KeyvRedis(url) });
  for (let i = 0; i < 6; i++) await keyv.set(`product:${i}`, { id: i, name: `Product ${i}`, price: 10 * i }, 3600000);

  // Bottleneck's Redis datastore (src/Scripts.coffee allKeys): b_<id>_settings
  // and its companions, two jobs running.
  const limiter = new Bottleneck({ id: 'mail-api', datastore: 'ioredis', clientOptions: url, maxConcurrent: 2, minTime: 10 });
  await limiter.ready();
  for (let i = 0; i < 4; i++) limiter.schedule(never).catch(() => {});

  // An express app: express-session with connect-redis (src/index.ts set:
  // sess:<sid>, JSON, TTL the cookie's maxAge), express-rate-limit with
  // rate-limit-redis (source/lib.ts: rl:<key> = hits, PX windowMs).
  const app = express();
  app.use(rateLimit({
    windowMs: 60000, limit: 1000, keyGenerator: (req) => req.get('x-user'),
    store: new RateLimitStore({ sendCommand: (...args) => v4.sendCommand(args) }),
  }));
  app.use(session({ store: new RedisStore({ client: v4 }), secret: 'fixture', resave: false, saveUninitialized: false,
    cookie: { maxAge: 86400000 } }));
  app.get('/login', (req, res) => { req.session.userId = Number(req.get('x-user')); res.end('ok'); });
  const server = http.createServer(app);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  for (let i = 0; i < 6; i++) {
    for (let n = 0; n < 1 + (i % 3); n++) { // users who came once, twice, three times
      const r = await fetch(`http://127.0.0.1:${port}/login`, { headers: { 'x-user': String(40 + i) } });
      if (!r.ok) throw new Error(`login: ${r.status}`);
    }
  }

  await waitFor(io, 'b_mail-api_*', 3);
  process.stdout.write('ready\n');
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

main().catch((e) => {
  process.stderr.write(String((e && e.stack) || e) + '\n');
  process.exit(1);
});
