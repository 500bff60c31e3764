// Issue 42's held-out keyspace, npm part: locks taken and held by the code
// of lock libraries dupctl's catalogue has no entry for, in the layouts
// their users would pick, with the defects the libraries allow planted
// beside the healthy locks (truth.json). Held until stdin closes. Usage:
//   REDIS_URL=redis://127.0.0.1:6379/3 node fixtures.js
// It prints one line "ready" when every lock is held.
'use strict';
const crypto = require('crypto');
const IORedis = require('ioredis');
const nodeRedis = require('redis');
const IoredisLock = require('ioredis-lock');
const NpmRedislock = require('redislock');
const { tryLock } = require('simple-redis-mutex');
const { createLock, IoredisAdapter } = require('redlock-universal');
const { Lock: PromiseLock } = require('redis-promise-lock');
const IoRedfour = require('ioredfour');
const { Redlock: SesameRedlock } = require('@sesamecare-oss/redlock');
const { Redisson } = require('node-redisson');
const { Redlock: KitRedlock } = require('@redis-kit/lock');
const path = require('path');
const { pathToFileURL } = require('url');

// @chat-adapter/state-redis is an ES module: import() it by its file, as
// an ES module does not look in NODE_PATH (its own imports resolve from
// its node_modules folder).
function importModule(name, file) {
  for (const dir of (process.env.NODE_PATH || '').split(path.delimiter).filter(Boolean)) {
    const p = path.join(dir, name, file);
    if (require('fs').existsSync(p)) return import(pathToFileURL(p).href);
  }
  return import(name);
}

const url = process.env.REDIS_URL;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// keepTaking takes a short lease now and again whenever it has run out,
// as a job that keeps running with a too-short TTL would: a short lease
// among long ones is then live whenever the keyspace is read.
async function keepTaking(io, key, take) {
  await take();
  (async () => {
    for (;;) {
      await sleep(250);
      if (!(await io.exists(key))) await take().catch(() => {});
    }
  })();
}
const u = new URL(url);
const ioOptions = { host: u.hostname, port: Number(u.port || 6379), db: Number((u.pathname || '/0').slice(1) || 0) };

async function main() {
  const io = new IORedis(url);
  const v4 = nodeRedis.createClient({ url });
  await v4.connect();

  // ioredis-lock (lib/lock.js): SET <key> <uuid v1 of the Lock> PX timeout NX.
  for (let i = 1; i <= 6; i++) {
    await IoredisLock.createLock(io, { timeout: 60000, retries: 0 }).acquire(`billing:invoice:${1000 + i}`);
  }
  // 8 leases of 600 s, and one taken with 20 s (planted: a TTL outlier).
  for (let i = 1; i <= 8; i++) {
    await IoredisLock.createLock(io, { timeout: 600000, retries: 0 }).acquire(`report:render:${i}`);
  }
  await keepTaking(io, 'report:render:9', () => IoredisLock.createLock(io, { timeout: 20000, retries: 0 }).acquire('report:render:9'));

  // redislock (npm, lib/lock.js _attemptLock): SET <key> <uuid v1> PX ttl NX,
  // a callback client (ioredis takes callbacks).
  const cb = new IORedis(url);
  for (let i = 1; i <= 6; i++) {
    await NpmRedislock.createLock(cb, { timeout: 60000, retries: 0 }).acquire(`sync:tenant:${i}`);
  }
  // Planted: a lock keyed by the job's random id, a new key per run.
  for (let i = 0; i < 6; i++) {
    await NpmRedislock.createLock(cb, { timeout: 60000, retries: 0 }).acquire(`render:pdf:${crypto.randomUUID()}`);
  }

  // simple-redis-mutex (dist/index.js tryLock): @simple-redis-mutex:lock-<name> = String(Math.random()), PX timeout.
  for (let i = 1; i <= 6; i++) {
    const [ok] = await tryLock(v4, `export-${i}`, { timeout: 30000 });
    if (!ok) throw new Error('simple-redis-mutex: not acquired');
  }

  // redlock-universal (SimpleLock with the ioredis adapter): <key> = 16 random bytes hex, PX ttl.
  const adapter = new IoredisAdapter(new IORedis(url));
  for (let i = 1; i <= 6; i++) {
    await createLock({ adapter, key: `app:settle:${i}`, ttl: 300000 }).acquire();
  }
  // Planted: one lease of 20 s among 300 s.
  await keepTaking(io, 'app:settle:7', () => createLock({ adapter, key: 'app:settle:7', ttl: 20000 }).acquire());

  // redis-promise-lock (lib/src/lock.js applyLock): SETNX redis-promise-lock:<name> {"lockedSince":...}, EXPIRE ttl.
  const pl = new PromiseLock(v4, { ttl: 120 });
  for (let i = 1; i <= 5; i++) await pl.acquireLock(`import:${i}`);
  await pl.acquireLock('import:6', { ttl: 0 }); // planted: ttl 0, "infinite"

  // ioredfour (lib/scripts.js acquire): HMSET <ns>:<id> index <INCR <ns>index>, PEXPIRE ttl;
  // planted: the lock named by the job's random id.
  const four = new IoRedfour({ redis: url, namespace: 'lock' });
  for (let i = 0; i < 6; i++) {
    const r = await four.acquireLock(crypto.randomUUID(), 60000);
    if (!r.success) throw new Error('ioredfour: not acquired');
  }

  // @sesamecare-oss/redlock (a fork of node-redlock 5): one value on every resource of a lock.
  // Its scripts SELECT settings.db themselves.
  const sesame = new SesameRedlock([new IORedis(url)], { retryCount: 0, db: ioOptions.db });
  for (let i = 1; i <= 4; i++) {
    await sesame.acquire([`warehouse:${i}:stock`, `warehouse:${i + 10}:stock`, `warehouse:${i + 20}:stock`], 60000);
  }

  // node-redisson (a port of Redisson's RLock): hash <name> {<uuid>:<thread>: 1}, watchdog-renewed.
  const redisson = new Redisson({ redis: { options: ioOptions } });
  for (let i = 1; i <= 6; i++) await redisson.getLock(`inventory:sku:${500 + i}`).lock();

  // The second held-out set (truth.json "added": "locks").
  // @chat-adapter/state-redis (dist/index.js acquireLock): SET chat-sdk:lock:<thread id>
  // redis_<Date.now()>_<Math.random().toString(36)> NX PX ttl; its cache, queues and
  // subscriptions beside the locks.
  const { createRedisState } = await importModule('@chat-adapter/state-redis', 'dist/index.js');
  const chat = createRedisState({ url, logger: { error() {}, warn() {}, info() {}, debug() {}, child() { return this; } } });
  await chat.connect();
  const thread = (i) => `slack:C0AB12CD3:1733580000.00000${i}`;
  for (let i = 1; i <= 8; i++) {
    if (!(await chat.acquireLock(thread(i), 300000))) throw new Error('chat-sdk: lock not acquired');
  }
  // Planted: one lease of 20 s among 300 s.
  await keepTaking(io, 'chat-sdk:lock:' + thread(9), () => chat.acquireLock(thread(9), 20000));
  for (let i = 1; i <= 6; i++) {
    await chat.set(`user:U0${i}ABCDE`, { name: `user ${i}`, tz: 'Europe/Berlin' }, 3600000);
    await chat.subscribe(thread(i));
    await chat.enqueue(thread(i), { text: `message ${i}`, expiresAt: Date.now() + 120000 }, 50);
  }

  // @redis-kit/lock (dist/redlock.js acquire): its ACQUIRE script SETs every key
  // of the lock to one 22-char base64 token (crypto.randomBytes) PX ttl.
  const kit = new KitRedlock([v4], { maxRetryAttempts: 0 });
  for (let i = 1; i <= 6; i++) {
    if (!(await kit.acquire(`ledger:account:${7100 + i}`, 120000))) throw new Error('redis-kit: not acquired');
  }
  // Planted: the lock keyed by the payout job's random id.
  for (let i = 0; i < 6; i++) {
    if (!(await kit.acquire(`payout:${crypto.randomUUID()}`, 120000))) throw new Error('redis-kit: not acquired');
  }

  process.stdout.write('ready\n');
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

main().catch((e) => {
  process.stderr.write(String((e && e.stack) || e) + '\n');
  process.exit(1);
});
