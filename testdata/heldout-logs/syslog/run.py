"""Writes the fleet's event script through a real rsyslogd: the ops-script deployment of wording/syslog-ops.md.

A private rsyslogd (config, work dir and pid file under a temp dir, listening on a free loopback TCP port) is
the central log host; each event is sent by util-linux `logger` (RFC 5424 over TCP, tag payworker, the
instance's pid as --id, facility local3) from a UTS namespace whose hostname is the instance's host, under
libfaketime frozen at the event's virtual time - so the time and host in each line are the ones logger itself
put in the message. rsyslogd writes two files from the same messages: RFC 3164
(RSYSLOG_TraditionalFileFormat) and RFC 5424 (RSYSLOG_SyslogProtocol23Format).

    /usr/bin/python3 run.py SCRIPT_DIR OUT_DIR        (as root: unshare --uts)
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

script_dir, out_dir = sys.argv[1:3]
out_dir = os.path.abspath(out_dir)
FAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

with open(os.path.join(script_dir, "events.jsonl")) as f:
    events = [json.loads(line) for line in f if line.strip()]
with open(os.path.join(script_dir, "fleet-truth.json")) as f:
    fleet = json.load(f)
inst = {i["id"]: i for i in fleet["instances"]}

SEVERITY = {"debug": "debug", "info": "info", "warn": "warning", "error": "err"}


def words(e):
    """wording/syslog-ops.md"""
    o, g = e.get("order", ""), e.get
    amount = f"{g('amount', 0) / 100:.2f} {g('currency')}"
    return {
        "start": lambda: f"starting payworker {g('version')} (3 consumers)",
        "heartbeat": lambda: f"alive: {g('processed', 0)} done",
        "received": lambda: f"{o}: got message {g('msg_id')} (delivery {g('delivery')})",
        "lock_acquired": lambda: f"{o}: locked {g('lock_key')} token {g('token')} ttl {g('ttl_ms') // 1000}s",
        "lock_busy": lambda: f"{o}: {g('lock_key')} busy, requeue",
        "idem_check": lambda: f"{o}: not paid yet ({g('idem_key')}, {g('source')})",
        "idem_seen": lambda: f"{o}: already paid ({g('idem_key')}), skip",
        "charge_start": lambda: f"{o}: charging {amount}",
        "charge": lambda: f"{o}: charged {amount} id {g('charge_id')} in {g('elapsed_ms')}ms",
        "charge_failed": lambda: f"{o}: charge FAILED: {g('error')}",
        "commit": lambda: f"{o}: recorded {g('idem_key')}",
        "commit_failed": lambda: f"{o}: record FAILED: {g('error')}",
        "receipt_failed": lambda: f"{o}: receipt FAILED: {g('error')}",
        "retry": lambda: f"{o}: retry #{g('attempt')} in {g('backoff_ms') / 1000:.1f}s",
        "lock_released": lambda: f"{o}: unlocked {g('lock_key')}",
        "lock_release_failed": lambda: f"{o}: unlock {g('lock_key')} FAILED: {g('error')}",
        "nack": lambda: f"{o}: nack {g('msg_id')} requeue ({g('error')})",
        "ack": lambda: f"{o}: ack {g('msg_id')}",
    }[e["step"]]()


CONF = """
global(workDirectory="{tmp}/work")
module(load="imtcp")
ruleset(name="bsd") {{
  local3.* action(type="omfile" file="{out}/syslog-rfc3164.log" template="RSYSLOG_TraditionalFileFormat")
}}
ruleset(name="ietf") {{
  local3.* action(type="omfile" file="{out}/syslog-rfc5424.log" template="RSYSLOG_SyslogProtocol23Format")
}}
input(type="imtcp" address="127.0.0.1" port="{port3164}" ruleset="bsd")
input(type="imtcp" address="127.0.0.1" port="{port5424}" ruleset="ietf")
"""

# One shell per host in a UTS namespace of its own (hostname = the instance's host); it reads one event a line
# and sends it with logger twice - RFC 3164 to the first port, RFC 5424 to the second - under libfaketime frozen
# at the event's time, then says "done" so the next event (maybe another host's) goes only after this one.
HOST_SHELL = r"""hostname "$0" || exit 1
while IFS='	' read -r ft prio pid msg; do
  FAKETIME="$ft" logger --rfc3164 -n 127.0.0.1 -P "$1" -T -t payworker --id="$pid" -p "$prio" -- "$msg" || exit 1
  FAKETIME="$ft" logger --rfc5424=notq -n 127.0.0.1 -P "$2" -T -t payworker --id="$pid" -p "$prio" -- "$msg" || exit 1
  echo done
done
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc):
    for _ in range(100):
        if proc.poll() is not None:
            sys.exit("rsyslogd exited")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit("rsyslogd did not listen")


def main():
    os.makedirs(out_dir, exist_ok=True)
    for name in ("syslog-rfc3164.log", "syslog-rfc5424.log"):
        if os.path.exists(os.path.join(out_dir, name)):
            os.remove(os.path.join(out_dir, name))
    tmp = tempfile.mkdtemp(prefix="heldout-rsyslog-")
    os.makedirs(os.path.join(tmp, "work"))
    p3164, p5424 = free_port(), free_port()
    with open(os.path.join(tmp, "rsyslog.conf"), "w") as f:
        f.write(CONF.format(tmp=tmp, port3164=p3164, port5424=p5424, out=out_dir))
    proc = subprocess.Popen(["/usr/sbin/rsyslogd", "-n", "-f", os.path.join(tmp, "rsyslog.conf"),
                             "-i", os.path.join(tmp, "rsyslogd.pid")])
    try:
        wait_port(p3164, proc)
        wait_port(p5424, proc)
        env = dict(os.environ, LD_PRELOAD=FAKETIME, TZ="UTC")
        hosts = {i["id"]: subprocess.Popen(["unshare", "--uts", "sh", "-c", HOST_SHELL, i["host"], str(p3164),
                                            str(p5424)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                           text=True)
                 for i in fleet["instances"]}
        for e in events:
            if e.get("silent"):
                continue
            prio = "local3." + ("notice" if e["step"] == "start" else SEVERITY[e["level"]])
            ft = e["t"].replace("T", " ").rstrip("Z")
            sh = hosts[e["instance"]]
            sh.stdin.write(f"{ft}\t{prio}\t{e['pid']}\t{words(e)}\n")
            sh.stdin.flush()
            if sh.stdout.readline().strip() != "done":
                sys.exit(f"sending event {e['seq']} failed")
        for sh in hosts.values():
            sh.stdin.close()
            sh.wait()
        time.sleep(2)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        shutil.rmtree(tmp, ignore_errors=True)
    workers = [i["host"] for i in fleet["instances"]] + [str(p) for i in fleet["instances"] for p in i["pids"]]
    for name, layout in (("rsyslog-3164", "RSYSLOG_TraditionalFileFormat (RFC 3164)"),
                         ("rsyslog-5424", "RSYSLOG_SyslogProtocol23Format (RFC 5424)")):
        d = os.path.join(out_dir, "..", name)
        os.makedirs(d, exist_ok=True)
        src = os.path.join(out_dir, "syslog-rfc" + name[-4:] + ".log")
        shutil.move(src, os.path.join(d, os.path.basename(src)))
        m = {"name": name, "ecosystem": "syslog", "library": "rsyslogd 8 (Debian) fed by util-linux logger",
             "layout": layout, "placement": "merged (central syslog host)",
             "clock": "virtual (libfaketime frozen at each event's time for logger)",
             "files": [os.path.basename(src)], "workers": workers, "threads": [], "loggers": ["payworker"],
             "other": []}
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(m, f, indent=2)
            f.write("\n")
    os.rmdir(out_dir)


if __name__ == "__main__":
    main()
