"""Issue 42's held-out keyspace, Python part: locks taken and held by the
code of Debian-packaged libraries dupctl's catalogue has no entry for
(python3-rq's scheduler locks, python3-dogpile.cache's distributed lock
under its cache entries, python3-beaker's RedisSynchronizer), and
ordinary application data of other kinds written with redis-py
(truth.json). Held until stdin closes. Usage (Debian's python3, which
apt's python3-* packages install into):

    apt-get install python3-redis python3-rq python3-dogpile.cache python3-beaker \
        python3-tooz python3-limits python3-cachelib python3-apscheduler
    REDIS_URL=redis://127.0.0.1:6379/3 /usr/bin/python3 fixtures.py

It prints one line "ready" when every lock is held."""
import hashlib
import json
import os
import random
import secrets
import string
import sys
import threading
import time
import uuid

import redis
from apscheduler.jobstores.redis import RedisJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from cachelib.redis import RedisCache
from limits import parse
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter
from tooz import coordination
from beaker.ext.redisnm import RedisSynchronizer
from dogpile.cache import make_region
from rq import Queue
from rq.scheduler import RQScheduler

url = os.environ["REDIS_URL"]
r = redis.Redis.from_url(url)
rng = random.Random(42)


def locks():
    # rq 1.13 rq/scheduler.py acquire_locks: SET rq:scheduler-lock:<queue> <pid> NX EX interval+60;
    # heartbeat re-EXPIREs them. The queues' own keys beside them.
    names = ["default", "mail", "reports"]
    for n in names:
        q = Queue(n, connection=r)
        for i in range(3):
            q.enqueue("math.sqrt", i * i, job_timeout=600)
    sched = RQScheduler(names, connection=r)
    if sched.acquire_locks() != set(names):
        raise SystemExit("rq: scheduler locks not acquired")

    def beat():
        while True:
            time.sleep(15)
            sched.heartbeat()

    threading.Thread(target=beat, daemon=True).start()

    # dogpile.cache 1.1.8 backends/redis.py: entries are pickles under their keys;
    # get_mutex(key) is redis-py's Lock on "_lock" + key (uuid1().hex, PX lock_timeout).
    region = make_region().configure(
        "dogpile.cache.redis",
        arguments={"url": url, "distributed_lock": True, "thread_local_lock": False, "lock_timeout": 120,
                   "redis_expiration_time": 3600},
    )
    for i in range(12):
        region.set("catalog:item:%d" % i, {"id": i, "title": "Item %d" % i, "price": 9.5 + i})
    held = []
    for i in range(4):
        m = region.backend.get_mutex("catalog:item:%d" % (100 + i))
        if not m.acquire(False):
            raise SystemExit("dogpile: mutex not acquired")
        held.append(m)

    # Beaker 1.11 ext/redisnm.py RedisSynchronizer: SET beaker_lock:<identifier>
    # <machine id>-<pid>-<thread id> NX EX 900, one owner value per thread.
    for i in range(5):
        s = RedisSynchronizer("page_cache.render_%d" % i, url)
        if not s.do_acquire_write_lock(False):
            raise SystemExit("beaker: lock not acquired")
        held.append(s)
    return held


def token(alphabet, n):
    return "".join(rng.choice(alphabet) for _ in range(n))


def data():
    p = r.pipeline()
    # An idempotency-response cache: JSON per Idempotency-Key, 24 h.
    for i in range(8):
        p.set("idem:resp:%s" % uuid.uuid4(), json.dumps({"status": 201, "body": {"order": 7000 + i}}), ex=86400)
    # Feature flags, no TTL.
    for name in ["new_checkout", "dark_mode", "beta_search", "fast_refunds", "promo_banner", "pdf_v2"]:
        p.set("feature:" + name, rng.choice(["on", "off"]))
    # Leaderboards, streams, HyperLogLog, geo.
    for w in range(3):
        p.zadd("leaderboard:weekly:%d" % w, {"user:%d" % u: rng.randint(0, 5000) for u in range(20)})
    for s in ["orders", "payments"]:
        for i in range(5):
            p.xadd("events:" + s, {"id": str(i), "kind": "created"})
    for d in ["2026-12-05", "2026-12-06", "2026-12-07"]:
        p.pfadd("uniq:visitors:" + d, *["v%d" % i for i in range(50)])
    p.geoadd("geo:drivers", [13.36, 38.11, "driver:1", 15.08, 37.50, "driver:2"])
    # JSON blobs.
    for i in range(6):
        p.set("user:profile:%d" % (300 + i), json.dumps({"id": 300 + i, "name": "User %d" % i, "plan": "pro"}))
    # One-time passcodes: 6 digits, 5 minutes.
    for i in range(6):
        p.set("otp:+4915100000%02d" % i, "%06d" % rng.randint(0, 999999), ex=300)
    # Password reset: the token in the name (the user id as value), or the user's current token as value.
    for i in range(6):
        p.set("pwreset:" + secrets.token_urlsafe(32), str(400 + i), ex=3600)
        p.set("reset_token:user:%d" % (400 + i), secrets.token_urlsafe(24), ex=3600)
    # Webhook dedup markers: SET NX EX 1 day.
    for i in range(8):
        p.set("webhook:seen:evt_" + token(string.ascii_letters + string.digits, 24), "1", nx=True, ex=86400)
    # Counters.
    for path in ["home", "pricing", "docs", "blog", "about", "signup"]:
        p.incrby("pageviews:" + path, rng.randint(1, 900))
    # Sessions: JSON under a random id, 30 minutes.
    for i in range(6):
        p.set("session:" + secrets.token_urlsafe(24), json.dumps({"uid": 500 + i, "csrf": secrets.token_hex(16)}), ex=1800)

    # The held-out part's data.
    for i in range(6):
        p.set("email:verify:" + secrets.token_hex(16), str(600 + i), ex=86400)
        p.set("apikey:" + hashlib.sha256(secrets.token_bytes(16)).hexdigest(), json.dumps({"owner": 600 + i, "scopes": ["read"]}), ex=600)
        p.hset("basket:%d" % (600 + i), mapping={"sku-%d" % rng.randint(1, 99): rng.randint(1, 3) for _ in range(3)})
        p.incrby("login:attempts:10.1.2.%d" % i, rng.randint(1, 4))
        p.expire("login:attempts:10.1.2.%d" % i, 900)
        p.set("magiclink:" + secrets.token_urlsafe(32), "user%d@example.com" % i, ex=900)
        p.set("invite:" + token(string.ascii_uppercase, 8), json.dumps({"team": 7, "role": "member"}), ex=7 * 86400)
        p.set("seen:user:%d" % (600 + i), str(int(time.time()) - rng.randint(0, 60)), ex=120)
        p.set("result:job:%s" % uuid.uuid4(), json.dumps({"ok": True, "rows": rng.randint(0, 1000)}), ex=3600)
        p.set("push:device:%d" % (600 + i), secrets.token_hex(32))
        p.set("nonce:" + secrets.token_urlsafe(16), "1", ex=600)
    p.execute()


def second_set():
    """The second held-out set (truth.json "added": "locks")."""
    held = []
    # tooz 3.1 drivers/redis.py RedisLock: redis-py's Lock on "%s_%s_lock" % (namespace, name),
    # the coordinator's heartbeat re-acquiring it; members' beats and groups beside the locks.
    kw = r.connection_pool.connection_kwargs
    base = "redis://%s:%d?db=%d&timeout=30" % (kw["host"], kw["port"], kw.get("db", 0))
    coord = coordination.get_coordinator(base + "&lock_timeout=120", b"image-node-1")
    coord.start(start_heart=True)
    coord.create_group(b"image-workers").get()
    coord.join_group(b"image-workers").get()
    for i in range(1, 7):
        lk = coord.get_lock("image-sync-%d" % i)
        if not lk.acquire(blocking=False):
            raise SystemExit("tooz: lock not acquired")
        held.append(lk)
    # Planted: a lock taken by a coordinator configured with lock_timeout 0 (no TTL).
    bare = coordination.get_coordinator(base + "&lock_timeout=0", b"image-node-2")
    bare.start(start_heart=False)
    lk = bare.get_lock("image-sync-7")
    if not lk.acquire(blocking=False):
        raise SystemExit("tooz: lock not acquired")
    held += [coord, bare, lk]

    # limits 2.8 fixed-window counters: LIMITER/<identifiers>/<amount>/<multiples>/<granularity>.
    storage = storage_from_string(url)  # the limiter holds it only weakly
    limiter = FixedWindowRateLimiter(storage)
    per_minute = parse("20/minute")
    for i in range(6):
        for _ in range(rng.randint(1, 5)):
            limiter.hit(per_minute, "api", "10.9.0.%d" % i)
    # cachelib RedisCache: "!" + pickle under its prefix, 300 s.
    cache = RedisCache(host=kw["host"], port=kw["port"], db=kw.get("db", 0), key_prefix="pages:", default_timeout=300)
    for i in range(6):
        cache.set("/docs/page-%d" % i, {"html": "<p>page %d</p>" % i, "etag": secrets.token_hex(8)})
    # APScheduler's RedisJobStore: a hash of pickled jobs and a zset of run times.
    sched = BackgroundScheduler(jobstores={"default": RedisJobStore(host=kw["host"], port=kw["port"], db=kw.get("db", 0))})
    sched.start(paused=True)
    for i in range(4):
        sched.add_job("math:sqrt", "interval", args=[i], minutes=5 + i, id="report-%d" % i)
    held += [sched, storage]

    p = r.pipeline()
    # A product cache: JSON written once with the same 300 s on every key.
    for i in range(8):
        p.set("product:cache:%d" % (800 + i), json.dumps({"sku": 800 + i, "price": 10 + i, "stock": rng.randint(0, 40)}), ex=300)
    # OAuth access tokens per user, an hour.
    for i in range(6):
        p.set("oauth:access:user:%d" % (900 + i), secrets.token_urlsafe(32), ex=3600)
    p.execute()
    return held


held = locks()
data()
held += second_set()
sys.stdout.write("ready\n")
sys.stdout.flush()
sys.stdin.read()
