'use strict';
// Logs the fleet's event script through pino, winston and bunyan, worded as
// wording/node.md says, each line stamped at the script's virtual time by the
// library's own hook (pino `timestamp`, winston `format.timestamp({format})`,
// bunyan's `time` record field).
//
//   node index.js pino|winston|bunyan SCRIPT_DIR OUT_DIR

const fs = require('fs');
const path = require('path');
const { Writable } = require('stream');

const [mode, scriptDir, outDir] = process.argv.slice(2);
const events = fs.readFileSync(path.join(scriptDir, 'events.jsonl'), 'utf8')
  .split('\n').filter(Boolean).map((l) => JSON.parse(l));
const fleet = JSON.parse(fs.readFileSync(path.join(scriptDir, 'fleet-truth.json'), 'utf8'));
const inst = Object.fromEntries(fleet.instances.map((i) => [i.id, i]));
fs.mkdirSync(outDir, { recursive: true });

const modules = {
  app: 'app', consumer: 'consumer', lock: 'lock', idempotency: 'idempotency',
  payments: 'stripe', store: 'db', notify: 'receipts',
};

function err(message, withStack) {
  const e = new Error(message);
  e.stack = withStack
    ? `Error: ${message}\n    at PaymentRepository.save (/app/src/db/payments.js:41:11)\n` +
      '    at async handle (/app/src/consumer.js:88:5)'
    : undefined;
  return e;
}

// wording/node.md: [level, msg, fields]
function words(e) {
  const o = { orderId: e.order };
  switch (e.step) {
    case 'start': return ['info', 'worker listening', { queue: 'payments.charge', prefetch: 3, version: e.version }];
    case 'heartbeat': return ['debug', 'consumer stats', { processed: e.processed || 0, inFlight: 0 }];
    case 'received': return ['info', 'job received', { ...o, messageId: e.msg_id, redelivered: !!e.redelivered,
      deliveryCount: e.delivery, consumerTag: `amq.ctag-${e.thread + 1}` }];
    case 'lock_acquired': return ['debug', 'lock acquired', { ...o, lockKey: e.lock_key, token: e.token, ttl: e.ttl_ms }];
    case 'lock_busy': return ['warn', 'lock busy', { ...o, lockKey: e.lock_key }];
    case 'idem_check': return ['debug', 'idempotency key not found', { ...o, idempotencyKey: e.idem_key, store: e.source }];
    case 'idem_seen': return ['info', 'duplicate job skipped', { ...o, idempotencyKey: e.idem_key }];
    case 'charge_start': return ['debug', 'creating charge', { ...o, amount: e.amount, currency: e.currency }];
    case 'charge': return ['info', 'charge created', { ...o, chargeId: e.charge_id, amount: e.amount,
      currency: e.currency, durationMs: e.elapsed_ms }];
    case 'charge_failed': return ['warn', 'charge failed', { ...o, err: err(e.error, false) }];
    case 'commit': return ['info', 'payment saved', { ...o, idempotencyKey: e.idem_key }];
    case 'commit_failed': return ['error', 'failed to save payment', { ...o, err: err(e.error, true) }];
    case 'receipt_failed': return ['error', 'receipt failed', { ...o, err: err(e.error, false) }];
    case 'retry': return ['warn', 'retrying job', { ...o, attempt: e.attempt, delayMs: e.backoff_ms, reason: e.error }];
    case 'lock_released': {
      const f = { ...o, lockKey: e.lock_key };
      if (e.token) f.token = e.token;
      return ['debug', 'lock released', f];
    }
    case 'lock_release_failed': return ['warn', 'lock release failed', { ...o, lockKey: e.lock_key, token: e.token,
      reason: e.error }];
    case 'nack': return ['warn', 'job requeued', { ...o, messageId: e.msg_id, reason: e.error, delayMs: e.backoff_ms || 0 }];
    case 'ack': return ['debug', 'job acked', { ...o, messageId: e.msg_id }];
    default: throw new Error(`no wording for ${e.step}`);
  }
}

let now = 0; // the virtual clock, epoch ms

// processes: one root logger per instance and pid (a restart is a new process)
function perProcess(make) {
  const roots = new Map();
  return (e) => {
    const key = `${e.instance}/${e.pid}`;
    if (!roots.has(key)) roots.set(key, make(inst[e.instance], e.pid));
    return roots.get(key);
  };
}

// What docker compose logs writes before each line of a service: "NAME<pad> | ".
function composePrefixed(out, name, width) {
  let atStart = true;
  return new Writable({
    write(chunk, enc, cb) {
      let s = '';
      for (const ch of chunk.toString()) {
        if (atStart) { s += `${name.padEnd(width)} | `; atStart = false; }
        s += ch;
        if (ch === '\n') atStart = true;
      }
      fs.writeSync(out, s);
      cb();
    },
  });
}

const manifest = { ecosystem: 'node', threads: [], loggers: ['payments-worker', ...Object.values(modules)],
  other: ['amq.ctag-1', 'amq.ctag-2', 'amq.ctag-3'] };
let root;
if (mode === 'pino') {
  const pino = require('pino');
  const dests = {};
  root = perProcess((i, pid) => {
    dests[i.id] = dests[i.id] || pino.destination({ dest: path.join(outDir, `${i.pod}.log`), sync: true });
    return pino({ level: 'debug', base: { pid, hostname: i.pod }, timestamp: () => `,"time":${now}` }, dests[i.id]);
  });
  Object.assign(manifest, { library: 'pino', layout: 'pino NDJSON (level number, epoch-ms time, pid, hostname, module child)',
    placement: 'per-instance', clock: 'virtual (pino timestamp option)',
    workers: fleet.instances.flatMap((i) => [i.pod, ...i.pids.map(String)]) });
} else if (mode === 'winston') {
  const winston = require('winston');
  const out = fs.openSync(path.join(outDir, 'docker-compose-logs.log'), 'w');
  const streams = {};
  root = perProcess((i) => {
    streams[i.id] = streams[i.id] || composePrefixed(out, i.compose, 18);
    return winston.createLogger({
      level: 'debug',
      format: winston.format.combine(
        winston.format.timestamp({ format: () => new Date(now).toISOString() }),
        winston.format.errors({ stack: true }),
        winston.format.json(),
      ),
      defaultMeta: { service: 'payments-worker' },
      transports: [new winston.transports.Stream({ stream: streams[i.id] })],
    });
  });
  Object.assign(manifest, { library: 'winston', layout: 'winston json() with timestamp(), behind docker compose logs prefixes',
    placement: 'docker compose', clock: 'virtual (winston format.timestamp({format}))',
    workers: fleet.instances.map((i) => i.compose) });
} else if (mode === 'bunyan') {
  const bunyan = require('bunyan');
  const out = fs.openSync(path.join(outDir, 'payments-worker.log'), 'w');
  const stream = { write: (s) => fs.writeSync(out, s) };
  root = perProcess((i, pid) => bunyan.createLogger({ name: 'payments-worker', hostname: i.pod, pid, level: 'debug',
    serializers: bunyan.stdSerializers, streams: [{ level: 'debug', stream }] }));
  Object.assign(manifest, { library: 'bunyan', layout: 'bunyan JSON records (v 0), one file shared by every instance',
    placement: 'merged', clock: 'virtual (bunyan time field)',
    workers: fleet.instances.flatMap((i) => [i.pod, ...i.pids.map(String)]) });
} else {
  throw new Error(`unknown mode ${mode}`);
}

for (const e of events) {
  if (e.silent) continue;
  now = Date.parse(e.t);
  const [level, msg, fields] = words(e);
  // bunyan's child() resets pid to process.pid (this one process plays every worker process), so the child
  // is given the pid its worker process would have had; pino's children keep their parent's base pid.
  const log = root(e).child(mode === 'bunyan' ? { module: modules[e.component], pid: e.pid } : { module: modules[e.component] });
  if (mode === 'bunyan') fields.time = new Date(now);
  if (mode === 'winston') log.log({ level, message: msg, ...fields });
  else log[level](fields, msg);
}

manifest.name = mode;
manifest.files = fs.readdirSync(outDir).filter((f) => f.endsWith('.log')).sort();
fs.writeFileSync(path.join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
