package com.example.payments;

import java.io.IOException;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lock service Spring teams write on Spring Data Redis: SET key token NX PX ttl with a
 * random UUID token, a watchdog that extends the lock every third of its TTL while the
 * token is still ours (as Redisson's does), and a compare-and-delete script to release it.
 * UNLOCK=del releases with a plain DEL instead, whoever holds the key.
 */
final class RedisLockService {
    private static final Logger log = LoggerFactory.getLogger(RedisLockService.class);

    /** Release only while the token is ours. */
    static final String UNLOCK_SCRIPT =
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";
    /** Extend only while the token is ours. */
    static final String RENEW_SCRIPT =
            "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end";

    private final RespClient redis;
    private final Settings settings;
    private final ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "lock-watchdog");
        t.setDaemon(true);
        return t;
    });
    private final Map<String, ScheduledFuture<?>> renewals = new ConcurrentHashMap<>();

    RedisLockService(RespClient redis, Settings settings) {
        this.redis = redis;
        this.settings = settings;
    }

    /** Takes the lock: its token, or null when another holder has it. */
    String tryLock(String lockKey) throws IOException {
        String token = UUID.randomUUID().toString();
        long ttl = settings.lockTtl.toMillis();
        if (!redis.setNxPx(lockKey, token, ttl)) {
            log.info("lock busy lockKey={}", lockKey);
            return null;
        }
        log.info("lock acquired lockKey={} ttl={}ms", lockKey, ttl);
        if (settings.renew) {
            long every = Math.max(1, ttl / 3);
            renewals.put(lockKey + "\0" + token, watchdog.scheduleAtFixedRate(() -> renew(lockKey, token, ttl), every, every,
                    TimeUnit.MILLISECONDS));
        }
        return token;
    }

    /**
     * Releases the lock. With UNLOCK=cas, only a token we hold is released (none on the
     * path where the lock was never taken); with UNLOCK=del, the key goes whatever its
     * token - the lock of whoever holds it now, on every path through a finally block.
     */
    void unlock(String lockKey, String token) {
        if (token != null) {
            ScheduledFuture<?> f = renewals.remove(lockKey + "\0" + token);
            if (f != null) {
                f.cancel(false);
            }
        }
        try {
            if (settings.unlock.equals("del")) {
                long n = redis.del(lockKey);
                log.info("lock released lockKey={} deleted={}", lockKey, n);
            } else if (token != null) {
                long n = redis.eval(UNLOCK_SCRIPT, lockKey, token);
                log.info("lock released lockKey={} owned={}", lockKey, n == 1);
            }
        } catch (IOException e) {
            log.warn("lock release failed lockKey={}: {}", lockKey, e.toString());
        }
    }

    private void renew(String lockKey, String token, long ttl) {
        try {
            if (redis.eval(RENEW_SCRIPT, lockKey, token, Long.toString(ttl)) == 0) {
                log.warn("lock lost lockKey={}: the token is no longer ours", lockKey);
                ScheduledFuture<?> f = renewals.remove(lockKey + "\0" + token);
                if (f != null) {
                    f.cancel(false);
                }
            }
        } catch (IOException e) {
            log.warn("lock renewal failed lockKey={}: {}", lockKey, e.toString());
        }
    }

    void shutdown() {
        watchdog.shutdownNow();
    }
}
