package com.example.payments;

import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The payment itself: "already done?", the provider's call (WORK), the charge row, the
 * status. The safe flow (IDEM=txn) claims the idempotency key and writes the charge and
 * SUCCEEDED in one transaction:
 *
 * <pre>
 * BEGIN
 * INSERT INTO idem (key, status) VALUES (?, 'PROCESSING') ON CONFLICT (key) DO NOTHING
 *   -- 0 rows: SELECT status ... FOR UPDATE; SUCCEEDED: done already; FAILED: take it over
 * (the provider's call)
 * INSERT INTO charges (order_id, idempotency_key, worker) VALUES (?, ?, ?)
 * UPDATE idem SET status = 'SUCCEEDED' WHERE key = ?
 * COMMIT
 * </pre>
 *
 * A failure records FAILED in its own transaction, never over SUCCEEDED: a commit whose
 * reply was lost is durable, and its redelivery must find it done.
 */
final class PaymentService {
    private static final Logger log = LoggerFactory.getLogger(PaymentService.class);

    /** What handling one payment came to. */
    enum Outcome { CHARGED, ALREADY_DONE }

    private final Database db;
    private final StatusCache cache;
    private final Settings s;

    PaymentService(Database db, StatusCache cache, Settings s) {
        this.db = db;
        this.cache = cache;
        this.s = s;
    }

    Outcome pay(PaymentMessage m) throws SQLException, IOException, InterruptedException {
        String key = idempotencyKey(m);
        if (s.cache || s.status.equals("cache")) {
            String st = cache.status(m.orderId());
            if ("SUCCEEDED".equals(st)) {
                log.info("payment already processed order={} key={} source=cache", m.orderId(), key);
                return Outcome.ALREADY_DONE;
            }
        }
        try {
            if (!charge(m, key)) {
                log.info("payment already processed order={} key={} source=db", m.orderId(), key);
                return Outcome.ALREADY_DONE;
            }
        } catch (SQLException e) {
            markFailed(key, e);
            throw e;
        }
        log.info("payment charged order={} key={} attempt={} worker={}", m.orderId(), key, m.attempt(), s.worker);
        cache.succeeded(m.orderId());
        return Outcome.CHARGED;
    }

    /** The idempotency key: from the order (stable), or per attempt, or per message. */
    private String idempotencyKey(PaymentMessage m) {
        return switch (s.key) {
            case "attempt" -> "payment:" + m.orderId() + ":" + m.attempt();
            case "message-id" -> "payment:" + m.messageId();
            default -> "payment:" + m.orderId();
        };
    }

    /** Runs the charge under the configured check; false when it was done already. */
    private boolean charge(PaymentMessage m, String key) throws SQLException, InterruptedException {
        if (s.status.equals("cache")) {
            // The cache was the check: charge, then record the status, each on its own.
            work();
            db.autocommit(c -> insertCharge(c, m, key));
            db.autocommit(c -> upsertStatus(c, key, "SUCCEEDED"));
            return true;
        }
        switch (s.idem) {
            case "none":
                work();
                db.autocommit(c -> insertCharge(c, m, key));
                return true;
            case "check":
                // Check, then act: nothing stops another worker between the two.
                String st = db.autocommit(c -> statusOf(c, key, false));
                if ("SUCCEEDED".equals(st)) {
                    return false;
                }
                work();
                db.autocommit(c -> insertCharge(c, m, key));
                db.autocommit(c -> upsertStatus(c, key, "SUCCEEDED"));
                return true;
            default:
                return db.transaction(c -> claimAndCharge(c, m, key));
        }
    }

    private boolean claimAndCharge(Connection c, PaymentMessage m, String key) throws SQLException {
        if (!claim(c, key)) {
            String st = statusOf(c, key, true);
            if ("SUCCEEDED".equals(st)) {
                return false;
            }
            // FAILED (or a PROCESSING row some other writer committed): this attempt takes it over.
            log.info("payment claim taken over order={} key={} status={}", m.orderId(), key, st);
            exec(c, "update " + s.idemTable + " set status = 'PROCESSING' where key = ?", key);
        }
        try {
            work();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("interrupted", e);
        }
        insertCharge(c, m, key);
        exec(c, "update " + s.idemTable + " set status = 'SUCCEEDED' where key = ?", key);
        return true;
    }

    private boolean claim(Connection c, String key) throws SQLException {
        return exec(c, "insert into " + s.idemTable + " (key, status) values (?, 'PROCESSING') on conflict (key) do nothing", key) == 1;
    }

    private String statusOf(Connection c, String key, boolean forUpdate) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("select status from " + s.idemTable + " where key = ?" + (forUpdate ? " for update" : ""))) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    private Void insertCharge(Connection c, PaymentMessage m, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("insert into " + s.charges + " (order_id, idempotency_key, worker) values (?, ?, ?)")) {
            ps.setString(1, m.orderId());
            ps.setString(2, key);
            ps.setString(3, s.worker);
            ps.executeUpdate();
        }
        return null;
    }

    private Void upsertStatus(Connection c, String key, String status) throws SQLException {
        exec(c, "insert into " + s.idemTable + " (key, status) values (?, '" + status + "') on conflict (key) do update set status = excluded.status", key);
        return null;
    }

    /** Records FAILED in its own transaction, unless the key is SUCCEEDED already. */
    private void markFailed(String key, SQLException cause) {
        if (s.idem.equals("none") || s.status.equals("cache")) {
            return;
        }
        try {
            db.autocommit(c -> exec(c, "insert into " + s.idemTable + " as i (key, status) values (?, 'FAILED') "
                    + "on conflict (key) do update set status = 'FAILED' where i.status <> 'SUCCEEDED'", key));
            log.info("payment marked failed key={} cause={}", key, cause.getSQLState());
        } catch (SQLException e) {
            log.warn("could not mark payment failed key={}: {}", key, e.toString());
        }
    }

    private static int exec(Connection c, String sql, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, key);
            return ps.executeUpdate();
        }
    }

    private void work() throws InterruptedException {
        Thread.sleep(s.work.toMillis());
    }
}
