package com.example.payments;

import java.io.IOException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The payment status cache in Redis (status:ORDER = SUCCEEDED for an hour), the
 * fast path read before the database: a hit skips the database check, a miss (or an
 * unreachable Redis) falls through to it.
 */
final class StatusCache {
    private static final Logger log = LoggerFactory.getLogger(StatusCache.class);
    private static final long TTL_MILLIS = 3_600_000;

    private final RespClient redis;

    StatusCache(RespClient redis) {
        this.redis = redis;
    }

    /** The cached status of an order, or null. */
    String status(String orderId) {
        try {
            String v = redis.get(key(orderId));
            log.info("status cache {} order={} status={}", v == null ? "miss" : "hit", orderId, v);
            return v;
        } catch (IOException e) {
            log.warn("status cache unavailable order={}: {}", orderId, e.toString());
            return null;
        }
    }

    void succeeded(String orderId) {
        try {
            redis.setPx(key(orderId), "SUCCEEDED", TTL_MILLIS);
        } catch (IOException e) {
            log.warn("status cache write failed order={}: {}", orderId, e.toString());
        }
    }

    private static String key(String orderId) {
        return "status:" + orderId;
    }
}
