"""Logs the fleet's event script through loguru, worded as wording/python-loguru.md says.

loguru formats every line with its default format; `logger.patch` (loguru's own hook
for changing a record) stamps each record at the script's virtual time. The functions
that log are compiled under the module names and paths they have in the worker's image,
so `{name}:{function}:{line}` and the traceback of `logger.exception` are loguru's own.
The instances run as docker compose services: the file is `docker compose logs --no-color`.

    TZ=UTC /usr/bin/python3 loguru_fleet.py SCRIPT_DIR OUT_DIR
"""
import json
import os
import sys
from datetime import datetime

from loguru import logger

script_dir, out_dir = sys.argv[1:3]
with open(os.path.join(script_dir, "events.jsonl")) as f:
    events = [json.loads(line) for line in f if line.strip()]
with open(os.path.join(script_dir, "fleet-truth.json")) as f:
    fleet = json.load(f)
inst = {i["id"]: i for i in fleet["instances"]}
os.makedirs(out_dir, exist_ok=True)

# The worker's modules: where each step is logged from.
SOURCES = {
    "payments.main": ("/app/payments/main.py", """
def run(level, msg, *args):
    logger.log(level, msg, *args)


def report_stats(level, msg, *args):
    logger.log(level, msg, *args)
"""),
    "payments.consumer": ("/app/payments/consumer.py", """
def handle(level, msg, *args):
    logger.log(level, msg, *args)


def settle(level, msg, *args):
    logger.log(level, msg, *args)
"""),
    "payments.locks": ("/app/payments/locks.py", """
def acquire(level, msg, *args):
    logger.log(level, msg, *args)


def release(level, msg, *args):
    logger.log(level, msg, *args)
"""),
    "payments.idempotency": ("/app/payments/idempotency.py", """
def check(level, msg, *args):
    logger.log(level, msg, *args)
"""),
    "payments.provider": ("/app/payments/provider.py", """
def charge(level, msg, *args):
    logger.log(level, msg, *args)
"""),
    "payments.store": ("/app/payments/store.py", """
class SaveError(Exception):
    pass


def _insert(order_id, error):
    raise SaveError(f"{error} (order {order_id})")


def save(level, msg, *args):
    logger.log(level, msg, *args)


def save_failed(order_id, error, msg, *args):
    try:
        _insert(order_id, error)
    except SaveError:
        logger.exception(msg, *args)
"""),
    "payments.receipts": ("/app/payments/receipts.py", """
def send(level, msg, *args):
    logger.log(level, msg, *args)
"""),
}
mods = {}
for name, (path, src) in SOURCES.items():
    g = {"__name__": name, "logger": logger}
    exec(compile(src, path, "exec"), g)
    mods[name] = g

LEVELS = {"debug": "DEBUG", "info": "INFO", "warn": "WARNING", "error": "ERROR"}


def words(e):
    """wording/python-loguru.md: (module, function, level, message, args) of each step."""
    g, o = e.get, e.get("order", "")
    lv = LEVELS[e["level"]]
    return {
        "start": ("payments.main", "run", lv, "Worker {} up, consuming payments.charge with 3 threads", (g("version"),)),
        "heartbeat": ("payments.main", "report_stats", lv, "Heartbeat: {} messages handled", (g("processed", 0),)),
        "received": ("payments.consumer", "handle", lv, "Got order {} from queue (message {}, delivery {})",
                     (o, g("msg_id"), g("delivery"))),
        "lock_acquired": ("payments.locks", "acquire", lv, "Locked {} for {}s (token {})",
                          (g("lock_key"), g("ttl_ms", 0) // 1000, g("token"))),
        "lock_busy": ("payments.locks", "acquire", lv, "{} is locked by someone else, will requeue order {}",
                      (g("lock_key"), o)),
        "idem_check": ("payments.idempotency", "check", lv, "No record for {} in {}, proceeding",
                       (g("idem_key"), g("source"))),
        "idem_seen": ("payments.idempotency", "check", lv, "Order {} already has a payment, skipping", (o,)),
        "charge_start": ("payments.provider", "charge", lv, "Calling payment provider: {:.2f} {} for order {}",
                         (g("amount", 0) / 100, g("currency"), o)),
        "charge": ("payments.provider", "charge", "SUCCESS", "Order {} charged, charge id {} ({} ms)",
                   (o, g("charge_id"), g("elapsed_ms"))),
        "charge_failed": ("payments.provider", "charge", lv, "Payment provider error for order {}: {}", (o, g("error"))),
        "commit": ("payments.store", "save", lv, "Payment for order {} saved (key {})", (o, g("idem_key"))),
        "receipt_failed": ("payments.receipts", "send", lv, "Receipt for order {} not sent: {}", (o, g("error"))),
        "retry": ("payments.consumer", "handle", lv, "Retry {} for order {} in {:.1f}s: {}",
                  (g("attempt"), o, g("backoff_ms", 0) / 1000, g("error"))),
        "lock_released": ("payments.locks", "release", lv, "Unlocked {}", (g("lock_key"),)),
        "lock_release_failed": ("payments.locks", "release", lv, "Unlock of {} failed (token {}): {}",
                                (g("lock_key"), g("token"), g("error"))),
        "nack": ("payments.consumer", "settle", lv, "Message {} for order {} requeued: {}", (g("msg_id"), o, g("error"))),
        "ack": ("payments.consumer", "settle", lv, "Message {} acked", (g("msg_id"),)),
    }[e["step"]]


out = open(os.path.join(out_dir, "docker-compose-logs.log"), "w")
service = ""  # the compose service of the event being logged
now = None  # the virtual clock


def compose_sink(message):
    # what `docker compose logs --no-color` writes before each line of a service
    for line in str(message).splitlines():
        out.write(f"{service:<18} | {line}\n")


def virtual_time(record):
    # record["time"] is loguru's own datetime subclass (its __format__ reads the
    # format's tokens); replace() keeps the class and sets the virtual instant.
    record["time"] = record["time"].astimezone(now.tzinfo).replace(
        year=now.year, month=now.month, day=now.day, hour=now.hour, minute=now.minute,
        second=now.second, microsecond=now.microsecond)


logger.remove()
logger.add(compose_sink, level="DEBUG", colorize=False, backtrace=False, diagnose=False)
patched = logger.patch(virtual_time)
for m in mods.values():
    m["logger"] = patched

for e in events:
    if e.get("silent"):
        continue
    now = datetime.fromisoformat(e["t"].replace("Z", "+00:00"))
    service = inst[e["instance"]]["compose"]
    if e["step"] == "commit_failed":
        mods["payments.store"]["save_failed"](e["order"], e["error"], "Saving payment for order {} failed", e["order"])
        continue
    module, func, level, msg, args = words(e)
    mods[module][func](level, msg, *args)
out.close()

manifest = {
    "name": "loguru", "ecosystem": "python", "library": "loguru",
    "layout": "loguru default format (time, level, name:function:line - message), behind docker compose logs prefixes",
    "placement": "docker compose", "clock": "virtual (logger.patch sets record time)",
    "files": ["docker-compose-logs.log"],
    "workers": [i["compose"] for i in fleet["instances"]],
    "threads": [], "loggers": sorted(SOURCES), "other": [],
}
with open(os.path.join(out_dir, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=2)
    f.write("\n")
