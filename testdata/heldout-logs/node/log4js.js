'use strict';
// Logs the fleet's event script through log4js's pattern layout, worded as
// wording/node-log4js.md says. log4js stamps an event with `new Date()` and
// `process.pid` in LoggingEvent's constructor; both are hooked to the script's
// virtual time and process (Date without arguments returns the virtual clock, the
// way fake-timer libraries do), so the library formats every line itself.
//
//   node log4js.js SCRIPT_DIR OUT_DIR

const fs = require('fs');
const path = require('path');

const [scriptDir, outDir] = process.argv.slice(2);
const events = fs.readFileSync(path.join(scriptDir, 'events.jsonl'), 'utf8')
  .split('\n').filter(Boolean).map((l) => JSON.parse(l));
const fleet = JSON.parse(fs.readFileSync(path.join(scriptDir, 'fleet-truth.json'), 'utf8'));
const inst = Object.fromEntries(fleet.instances.map((i) => [i.id, i]));
fs.mkdirSync(outDir, { recursive: true });

let now = 0; // the virtual clock, epoch ms
let pid = process.pid; // the script's process
const RealDate = Date;
global.Date = class extends RealDate {
  constructor(...args) { if (args.length === 0) super(now); else super(...args); }
  static now() { return now; }
};
Object.defineProperty(process, 'pid', { get: () => pid, configurable: true });

const categories = {
  app: 'payments', consumer: 'payments.consumer', lock: 'payments.lock', idempotency: 'payments.dedupe',
  payments: 'payments.gateway', store: 'payments.repo', notify: 'payments.mailer',
};

function saveError(message) {
  const e = new Error(message);
  e.stack = `Error: ${message}\n    at PaymentRepo.insert (/srv/payments/lib/repo.js:57:13)\n` +
    '    at async Consumer.handle (/srv/payments/lib/consumer.js:112:7)';
  return e;
}

// wording/node-log4js.md: [level, format, ...args]
function words(e) {
  const o = e.order;
  switch (e.step) {
    case 'start': return ['info', 'payment worker %s started, prefetch=3', e.version];
    case 'heartbeat': return ['debug', 'processed %d messages so far', e.processed || 0];
    case 'received': return ['info', 'received message %s for order %s (delivery %d)', e.msg_id, o, e.delivery];
    case 'lock_acquired': return ['debug', 'got lock %s with token %s, expires in %dms', e.lock_key, e.token, e.ttl_ms];
    case 'lock_busy': return ['warn', 'lock %s is already taken, putting order %s back', e.lock_key, o];
    case 'idem_check': return ['debug', 'no payment recorded yet under %s (checked %s)', e.idem_key, e.source];
    case 'idem_seen': return ['info', 'order %s was already paid, nothing to do', o];
    case 'charge_start': return ['debug', 'sending charge of %d %s for order %s to the gateway', e.amount, e.currency, o];
    case 'charge': return ['info', 'gateway accepted charge %s for order %s in %dms', e.charge_id, o, e.elapsed_ms];
    case 'charge_failed': return ['warn', 'gateway refused order %s: %s', o, e.error];
    case 'commit': return ['info', 'saved payment for order %s under %s', o, e.idem_key];
    case 'commit_failed': return ['error', 'could not save payment for order %s', o, saveError(e.error)];
    case 'receipt_failed': return ['error', 'receipt email for order %s failed: %s', o, e.error];
    case 'retry': return ['warn', 'will retry order %s in %dms (attempt %d): %s', o, e.backoff_ms, e.attempt, e.error];
    case 'lock_released': return ['debug', 'released lock %s', e.lock_key];
    case 'lock_release_failed': return ['warn', 'could not release lock %s (token %s): %s', e.lock_key, e.token, e.error];
    case 'nack': return ['warn', 'rejected message %s for order %s with requeue: %s', e.msg_id, o, e.error];
    case 'ack': return ['debug', 'message %s done', e.msg_id];
    default: throw new Error(`no wording for ${e.step}`);
  }
}

// One appender writes each line to the file of the host it happened on: the
// layout is log4js's own pattern layout, only the destination is chosen here.
let host = '';
const fds = {};
const perHost = {
  configure(config, layouts) {
    const layout = layouts.layout('pattern', { pattern: '%d{ISO8601} %p %z %c - %m' });
    return (ev) => {
      fds[host] = fds[host] || fs.openSync(path.join(outDir, `${host}.log`), 'w');
      fs.writeSync(fds[host], `${layout(ev)}\n`);
    };
  },
};

const log4js = require('log4js');
log4js.configure({
  appenders: { file: { type: perHost } },
  categories: { default: { appenders: ['file'], level: 'debug' } },
});

for (const e of events) {
  if (e.silent) continue;
  now = new RealDate(e.t).getTime();
  pid = e.pid;
  host = inst[e.instance].host;
  const [level, ...args] = words(e);
  log4js.getLogger(categories[e.component])[level](...args);
}
for (const fd of Object.values(fds)) fs.closeSync(fd);

const manifest = {
  name: 'log4js', ecosystem: 'node', library: 'log4js',
  layout: "pattern layout '%d{ISO8601} %p %z %c - %m' (TZ=UTC), a file per host",
  placement: 'per-instance', clock: "virtual (Date and process.pid hooked where LoggingEvent reads them)",
  files: fleet.instances.map((i) => `${i.host}.log`).sort(),
  workers: fleet.instances.flatMap((i) => [i.host, ...i.pids.map(String)]),
  threads: [], loggers: [...new Set(Object.values(categories))].sort(), other: [],
};
fs.writeFileSync(path.join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
