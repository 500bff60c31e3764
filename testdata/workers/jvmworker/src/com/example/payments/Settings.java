package com.example.payments;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The worker's configuration, read from the environment the way Spring Boot's
 * relaxed binding reads it (SPRING_RABBITMQ_ADDRESSES for spring.rabbitmq.addresses),
 * with goworker's names (AMQP_URL, REDIS_URL, DATABASE_URL) accepted too, and one
 * switch per common bug named as goworker names it.
 */
final class Settings {
    /** Where to connect. */
    final Amqp amqp;
    final URI redis;
    final String jdbcUrl;
    final String dbUser;
    final String dbPassword;

    /** Names. */
    final String appName;
    final String worker;
    final String queue;
    final String charges;
    final String idemTable;
    final int prefetch;

    /** The job's own work (the payment provider's call), and the lock. */
    final Duration work;
    final Duration lockTtl;
    final boolean renew;

    /** The switches: the safe flow is the first value of each. */
    final boolean lock;         // LOCK=on|off
    final String idem;          // IDEM=txn|check|none
    final String key;           // KEY=stable|attempt|message-id
    final String lockKey;       // LOCK_KEY=order|message-id
    final String status;        // STATUS=db|cache
    final boolean cache;        // CACHE=on|off
    final String unlock;        // UNLOCK=cas|del
    final boolean ackFirst;     // ACK=after|first

    /** Spring Boot's spring.rabbitmq.* as one value. */
    record Amqp(String host, int port, String user, String password, String vhost) {
    }

    private final Map<String, String> env;

    private Settings(Map<String, String> env) {
        this.env = env;
        amqp = amqp();
        redis = URI.create(first("redis://127.0.0.1:6379", "SPRING_DATA_REDIS_URL", "REDIS_URL"));
        String dbUrl = first("", "SPRING_DATASOURCE_URL", "DATABASE_URL");
        if (dbUrl.startsWith("jdbc:")) {
            jdbcUrl = dbUrl;
            dbUser = get("SPRING_DATASOURCE_USERNAME", "");
            dbPassword = get("SPRING_DATASOURCE_PASSWORD", "");
        } else if (dbUrl.startsWith("postgres://") || dbUrl.startsWith("postgresql://")) {
            URI u = URI.create(dbUrl);
            String[] info = u.getRawUserInfo() == null ? new String[0] : u.getRawUserInfo().split(":", 2);
            jdbcUrl = "jdbc:postgresql://" + u.getHost() + ":" + (u.getPort() < 0 ? 5432 : u.getPort()) + u.getRawPath()
                    + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery());
            dbUser = info.length > 0 ? decode(info[0]) : "";
            dbPassword = info.length > 1 ? decode(info[1]) : "";
        } else {
            throw new IllegalArgumentException("SPRING_DATASOURCE_URL (jdbc:postgresql://...) or DATABASE_URL (postgres://...) is required");
        }
        appName = get("SPRING_APPLICATION_NAME", "payments");
        worker = get("WORKER", Long.toString(ProcessHandle.current().pid()));
        queue = get("QUEUE", "orders");
        charges = get("CHARGES", "charges");
        idemTable = get("IDEM_TABLE", "payments_idem");
        prefetch = Integer.parseInt(get("PREFETCH", "1"));
        work = duration("WORK", "100ms");
        lockTtl = duration("LOCK_TTL", "2s");
        renew = oneOf("RENEW", "true", "false").equals("true");
        lock = oneOf("LOCK", "on", "off").equals("on");
        idem = oneOf("IDEM", "txn", "check", "none");
        key = oneOf("KEY", "stable", "attempt", "message-id");
        lockKey = oneOf("LOCK_KEY", "order", "message-id");
        status = oneOf("STATUS", "db", "cache");
        cache = oneOf("CACHE", "on", "off").equals("on");
        unlock = oneOf("UNLOCK", "cas", "del");
        ackFirst = oneOf("ACK", "after", "first").equals("first");
    }

    static Settings fromEnv(Map<String, String> env) {
        return new Settings(env);
    }

    /** The switches as one line for the startup log. */
    String switches() {
        return String.format("LOCK=%s LOCK_TTL=%dms RENEW=%s IDEM=%s KEY=%s LOCK_KEY=%s STATUS=%s CACHE=%s UNLOCK=%s ACK=%s WORK=%dms PREFETCH=%d",
                lock ? "on" : "off", lockTtl.toMillis(), renew, idem, key, lockKey, status, cache ? "on" : "off", unlock,
                ackFirst ? "first" : "after", work.toMillis(), prefetch);
    }

    private String get(String name, String def) {
        String v = env.get(name);
        return v == null || v.isEmpty() ? def : v;
    }

    private String first(String def, String... names) {
        for (String n : names) {
            String v = env.get(n);
            if (v != null && !v.isEmpty()) {
                return v;
            }
        }
        return def;
    }

    private String oneOf(String name, String... allowed) {
        String v = get(name, allowed[0]);
        if (!List.of(allowed).contains(v)) {
            throw new IllegalArgumentException(name + "=" + v + ": want one of " + String.join(", ", allowed));
        }
        return v;
    }

    private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m)?");

    /** A Spring Boot duration in its simple form (100ms, 2s, 1.5s; a bare number is milliseconds). */
    private Duration duration(String name, String def) {
        String v = get(name, def);
        Matcher m = DURATION.matcher(v);
        if (!m.matches()) {
            throw new IllegalArgumentException(name + "=" + v + ": want a duration like 100ms or 2s");
        }
        double n = Double.parseDouble(m.group(1));
        String unit = m.group(2) == null ? "ms" : m.group(2);
        long ms = Math.round(n * switch (unit) {
            case "s" -> 1000;
            case "m" -> 60_000;
            default -> 1;
        });
        return Duration.ofMillis(ms);
    }

    /**
     * spring.rabbitmq.addresses (an amqp:// URI) or host/port/username/password/virtual-host.
     * An empty virtual host in the URI is "/", as Spring Boot reads it: the RabbitMQ client's
     * own setUri would take "amqp://host:5672/" as the virtual host "" and be refused.
     */
    private Amqp amqp() {
        String uri = first("", "SPRING_RABBITMQ_ADDRESSES", "AMQP_URL");
        if (uri.isEmpty()) {
            return new Amqp(get("SPRING_RABBITMQ_HOST", "localhost"), Integer.parseInt(get("SPRING_RABBITMQ_PORT", "5672")),
                    get("SPRING_RABBITMQ_USERNAME", "guest"), get("SPRING_RABBITMQ_PASSWORD", "guest"),
                    get("SPRING_RABBITMQ_VIRTUAL_HOST", "/"));
        }
        URI u = URI.create(uri.split(",")[0].trim());
        String[] info = u.getRawUserInfo() == null ? new String[] {"guest", "guest"} : u.getRawUserInfo().split(":", 2);
        String path = u.getRawPath() == null ? "" : u.getRawPath();
        String vhost = path.length() <= 1 ? "/" : decode(path.substring(1));
        return new Amqp(u.getHost(), u.getPort() < 0 ? 5672 : u.getPort(), decode(info[0]), info.length > 1 ? decode(info[1]) : "",
                vhost);
    }

    /** Percent-decoding of a URI part ('+' is a plus there, not a space). */
    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}
