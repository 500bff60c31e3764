"""Logs the fleet's event script through Python's logging module and structlog.

Worded as wording/python.md says. logging stamps each record at the script's
virtual time with a filter that sets record.created (the formatter then renders
asctime from it); structlog gets a processor in TimeStamper's place that writes
the same ISO UTC stamp from the virtual time.

    /usr/bin/python3 fleetlog.py logging|structlog-console|structlog-json SCRIPT_DIR OUT_DIR
"""
import json
import logging
import os
import sys
import time
from datetime import datetime, timezone

mode, script_dir, out_dir = sys.argv[1:4]
with open(os.path.join(script_dir, "events.jsonl")) as f:
    events = [json.loads(line) for line in f if line.strip()]
with open(os.path.join(script_dir, "fleet-truth.json")) as f:
    fleet = json.load(f)
inst = {i["id"]: i for i in fleet["instances"]}
os.makedirs(out_dir, exist_ok=True)
now = 0.0  # the virtual clock, epoch seconds

LOGGERS = {"app": "payments.worker", "consumer": "payments.worker", "lock": "payments.locks",
           "idempotency": "payments.idempotency", "payments": "payments.gateway", "store": "payments.db",
           "notify": "payments.receipts"}
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}


# The worker's commit, compiled under the path it has in the worker's image so the
# tracebacks logger.exception prints are real and do not depend on this checkout's path.
_DB_SOURCE = """
class CommitError(Exception):
    pass


def save_payment(order_id, error):
    raise CommitError(f"{error} (order {order_id})")


def commit(log, order_id, error, /, *args, **kw):
    try:
        save_payment(order_id, error)
    except CommitError:
        log.exception(*args, **kw)
"""
_db = {}
exec(compile(_DB_SOURCE, "/app/payments/db.py", "exec"), _db)


def std_words(e):
    """wording/python.md, logging section: the f-string message of each step."""
    o, step = e.get("order", ""), e["step"]
    amount = e.get("amount", 0) / 100
    return {
        "start": lambda: f"Starting payments worker v{e.get('version')}, 3 consumer threads",
        "heartbeat": lambda: f"Stats: {e.get('processed', 0)} jobs processed, 0 in flight",
        "received": lambda: f"Processing order {o} (message {e.get('msg_id')}, delivery #{e.get('delivery')})",
        "lock_acquired": lambda: f"Acquired lock {e.get('lock_key')} token={e.get('token')} ttl={e.get('ttl_ms', 0) // 1000}s",
        "lock_busy": lambda: f"Lock {e.get('lock_key')} is held by another worker, requeueing order {o}",
        "idem_check": lambda: f"Idempotency key {e.get('idem_key')} not seen before ({e.get('source')})",
        "idem_seen": lambda: f"Order {o} already charged, skipping",
        "charge_start": lambda: f"Charging {amount:.2f} {e.get('currency')} for order {o}",
        "charge": lambda: f"Charge {e.get('charge_id')} succeeded for order {o} ({e.get('elapsed_ms')} ms)",
        "charge_failed": lambda: f"Charge failed for order {o}: {e.get('error')}",
        "commit": lambda: f"Committed payment for order {o} (key {e.get('idem_key')})",
        "commit_failed": lambda: f"Could not commit payment for order {o}",
        "receipt_failed": lambda: f"Sending receipt failed for order {o}: {e.get('error')}",
        "retry": lambda: f"Retrying order {o} in {e.get('backoff_ms', 0) / 1000:.1f}s (attempt {e.get('attempt')})",
        "lock_released": lambda: f"Released lock {e.get('lock_key')}",
        "lock_release_failed": lambda: f"Failed to release lock {e.get('lock_key')}: {e.get('error')}",
        "nack": lambda: f"Requeued order {o} (message {e.get('msg_id')}): {e.get('error')}",
        "ack": lambda: f"Acked message {e.get('msg_id')}",
    }[step]()


def struct_words(e):
    """wording/python.md, structlog section: the event name and keys of each step."""
    g = e.get
    table = {
        "start": ("worker_started", {"version": g("version"), "threads": 3}),
        "heartbeat": ("consumer_stats", {"processed": g("processed", 0), "in_flight": 0}),
        "received": ("message_received", {"msg_id": g("msg_id"), "delivery": g("delivery"),
                                          "redelivered": bool(g("redelivered"))}),
        "lock_acquired": ("lock_acquired", {"lock": g("lock_key"), "token": g("token"), "ttl_ms": g("ttl_ms")}),
        "lock_busy": ("lock_contended", {"lock": g("lock_key")}),
        "idem_check": ("idempotency_miss", {"idempotency_key": g("idem_key"), "source": g("source")}),
        "idem_seen": ("already_processed", {"idempotency_key": g("idem_key")}),
        "charge_start": ("charge_requested", {"amount": g("amount"), "currency": g("currency")}),
        "charge": ("charge_succeeded", {"charge_id": g("charge_id"), "amount": g("amount"),
                                        "currency": g("currency"), "duration_ms": g("elapsed_ms")}),
        "charge_failed": ("charge_failed", {"error": g("error")}),
        "commit": ("payment_committed", {"idempotency_key": g("idem_key")}),
        "commit_failed": ("payment_commit_failed", {"error": g("error")}),
        "receipt_failed": ("receipt_failed", {"error": g("error")}),
        "retry": ("retry_scheduled", {"attempt": g("attempt"), "backoff_ms": g("backoff_ms"), "reason": g("error")}),
        "lock_released": ("lock_released", {"lock": g("lock_key"), "token": g("token") or None}),
        "lock_release_failed": ("lock_release_failed", {"lock": g("lock_key"), "token": g("token"),
                                                        "error": g("error")}),
        "nack": ("message_requeued", {"msg_id": g("msg_id"), "reason": g("error")}),
        "ack": ("message_acked", {"msg_id": g("msg_id")}),
    }
    return table[e["step"]]


def thread_name(e):
    return "MainThread" if e["thread"] < 0 else f"ThreadPoolExecutor-0_{e['thread']}"


def run_logging():
    class VirtualTime(logging.Filter):
        def filter(self, record):
            record.created = now
            record.msecs = (now - int(now)) * 1000
            return True

    logging.Formatter.converter = time.gmtime
    fmt = logging.Formatter("%(asctime)s %(levelname)s [%(name)s] %(message)s")
    handlers = {}
    top = logging.getLogger("payments")
    top.setLevel(logging.DEBUG)
    top.propagate = False
    for e in events:
        if e.get("silent"):
            continue
        i = inst[e["instance"]]
        if i["id"] not in handlers:
            h = logging.FileHandler(os.path.join(out_dir, f"{i['host']}.log"), mode="w")
            h.setFormatter(fmt)
            h.addFilter(VirtualTime())
            handlers[i["id"]] = h
        top.handlers = [handlers[i["id"]]]
        log = logging.getLogger(LOGGERS[e["component"]])
        msg = std_words(e)
        if e["step"] == "commit_failed":
            _db["commit"](log, e["order"], e["error"], msg)
        else:
            log.log(LEVELS[e["level"]], msg)
    return {"library": "logging", "layout": "%(asctime)s %(levelname)s [%(name)s] %(message)s (asctime in UTC)",
            "placement": "per-instance", "clock": "virtual (a filter sets record.created)",
            "workers": [i["host"] for i in fleet["instances"]],
            "threads": sorted({thread_name(e) for e in events}), "loggers": sorted(set(LOGGERS.values()))}


def run_structlog(json_out):
    import structlog

    def virtual_timestamper(logger, method, event_dict):
        # what TimeStamper(fmt="iso", utc=True) writes, from the virtual clock
        event_dict["timestamp"] = datetime.fromtimestamp(now, tz=timezone.utc).replace(tzinfo=None).isoformat() + "Z"
        return event_dict

    renderer = structlog.processors.JSONRenderer() if json_out else structlog.dev.ConsoleRenderer(colors=False)
    processors = [structlog.processors.add_log_level, virtual_timestamper]
    if json_out:
        processors.append(structlog.processors.format_exc_info)
    processors.append(renderer)
    files, loggers = {}, {}
    merged = open(os.path.join(out_dir, "payments-worker.jsonl"), "w") if json_out else None
    for e in events:
        if e.get("silent"):
            continue
        i = inst[e["instance"]]
        if i["id"] not in loggers:
            f = merged or open(os.path.join(out_dir, f"{i['host']}.log"), "w")
            files[i["id"]] = f
            loggers[i["id"]] = structlog.wrap_logger(structlog.PrintLogger(f), processors=processors,
                                                     wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
                                                     cache_logger_on_first_use=False).bind(logger="payments",
                                                                                           worker=i["host"])
        log = loggers[i["id"]].bind(thread=thread_name(e))
        if e.get("order"):
            log = log.bind(order_id=e["order"])
        event, kw = struct_words(e)
        if e["step"] == "commit_failed":
            _db["commit"](log, e["order"], e["error"], event, **kw)
        else:
            getattr(log, {"warn": "warning"}.get(e["level"], e["level"]))(event, **kw)
    for f in set(files.values()):
        f.close()
    return {"library": "structlog", "placement": "merged" if json_out else "per-instance",
            "layout": "structlog JSONRenderer" if json_out else "structlog ConsoleRenderer(colors=False)",
            "clock": "virtual (a processor in TimeStamper's place)",
            "workers": [i["host"] for i in fleet["instances"]],
            "threads": sorted({thread_name(e) for e in events}), "loggers": ["payments"]}


def main():
    global events
    events = _Clocked(events)
    runs = {"logging": run_logging, "structlog-console": lambda: run_structlog(False),
            "structlog-json": lambda: run_structlog(True)}
    if mode not in runs:
        sys.exit(f"unknown mode {mode}")
    m = runs[mode]()
    m.update({"name": mode, "ecosystem": "python", "other": ["order_id"],
              "files": sorted(f for f in os.listdir(out_dir) if f.endswith((".log", ".jsonl")))})
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(m, f, indent=2)
        f.write("\n")


class _Clocked(list):
    """The events, advancing the virtual clock as each one is taken."""

    def __iter__(self):
        global now
        for e in list.__iter__(self):
            now = datetime.fromisoformat(e["t"].replace("Z", "+00:00")).timestamp()
            yield e


if __name__ == "__main__":
    main()
