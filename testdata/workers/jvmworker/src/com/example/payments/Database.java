package com.example.payments;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;

/**
 * One JDBC connection kept open and replaced when it breaks, which is what a pool
 * (HikariCP) does for a single listener thread: a connection whose I/O failed is evicted,
 * the next borrower gets a new one. transaction() is what @Transactional does around a
 * method: autocommit off, commit on return, rollback on an exception.
 */
final class Database {
    /** A unit of work on the connection. */
    interface Work<T> {
        T run(Connection c) throws SQLException;
    }

    private final String url;
    private final Properties props = new Properties();
    private Connection conn;

    Database(Settings s) {
        url = s.jdbcUrl;
        if (!s.dbUser.isEmpty()) {
            props.setProperty("user", s.dbUser);
        }
        if (!s.dbPassword.isEmpty()) {
            props.setProperty("password", s.dbPassword);
        }
        props.setProperty("ApplicationName", s.appName);
    }

    /** Runs work in one transaction. */
    <T> T transaction(Work<T> work) throws SQLException {
        Connection c = connection();
        try {
            c.setAutoCommit(false);
            T v = work.run(c);
            c.commit();
            return v;
        } catch (SQLException | RuntimeException e) {
            rollback(c);
            evictIfBroken(c, e);
            throw e;
        }
    }

    /** Runs work with autocommit: every statement is its own transaction. */
    <T> T autocommit(Work<T> work) throws SQLException {
        Connection c = connection();
        try {
            c.setAutoCommit(true);
            return work.run(c);
        } catch (SQLException | RuntimeException e) {
            evictIfBroken(c, e);
            throw e;
        }
    }

    /** Opens the connection now, as a pool does at startup, so the first message does not wait for it. */
    void connect() throws SQLException {
        connection();
    }

    void close() {
        if (conn != null) {
            try {
                conn.close();
            } catch (SQLException ignored) {
                // closing anyway
            }
        }
    }

    private Connection connection() throws SQLException {
        if (conn == null || conn.isClosed()) {
            conn = DriverManager.getConnection(url, props);
        }
        return conn;
    }

    private static void rollback(Connection c) {
        try {
            if (!c.isClosed()) {
                c.rollback();
            }
        } catch (SQLException ignored) {
            // a broken connection rolls back on the server when it goes
        }
    }

    /** A connection error (SQLSTATE class 08) or a closed connection is not used again. */
    private void evictIfBroken(Connection c, Exception e) {
        boolean broken = e instanceof SQLException se && se.getSQLState() != null && se.getSQLState().startsWith("08");
        try {
            broken = broken || c.isClosed();
        } catch (SQLException ignored) {
            broken = true;
        }
        if (broken) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // already gone
            }
            conn = null;
        }
    }
}
