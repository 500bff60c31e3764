package com.example.payments;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A small Redis client (Debian packages none for Java): one socket, RESP2 commands as
 * arrays of bulk strings, one reply read per command. Calls are serialised (the
 * listener and the lock watchdog share it). A failed call drops the socket; the next
 * one connects again, as Lettuce's reconnect does.
 */
final class RespClient implements AutoCloseable {
    /** An error reply (-ERR ...). */
    static final class RedisError extends IOException {
        private static final long serialVersionUID = 1L;

        RedisError(String message) {
            super(message);
        }
    }

    private final URI uri;
    private Socket socket;
    private InputStream in;
    private OutputStream out;

    RespClient(URI uri) {
        this.uri = uri;
    }

    /** SET key value NX PX ttl: true when the key was set. */
    synchronized boolean setNxPx(String key, String value, long ttlMillis) throws IOException {
        return call("SET", key, value, "NX", "PX", Long.toString(ttlMillis)) != null;
    }

    /** SET key value PX ttl. */
    synchronized void setPx(String key, String value, long ttlMillis) throws IOException {
        call("SET", key, value, "PX", Long.toString(ttlMillis));
    }

    /** GET key: null when there is none. */
    synchronized String get(String key) throws IOException {
        Object v = call("GET", key);
        return v == null ? null : v.toString();
    }

    /** DEL key: how many keys went. */
    synchronized long del(String key) throws IOException {
        return (Long) call("DEL", key);
    }

    /** EVAL script 1 key args...: the script's integer reply. */
    synchronized long eval(String script, String key, String... args) throws IOException {
        String[] cmd = new String[4 + args.length];
        cmd[0] = "EVAL";
        cmd[1] = script;
        cmd[2] = "1";
        cmd[3] = key;
        System.arraycopy(args, 0, cmd, 4, args.length);
        Object v = call(cmd);
        return v instanceof Long n ? n : 0;
    }

    @Override
    public synchronized void close() {
        drop();
    }

    private Object call(String... args) throws IOException {
        try {
            connect();
            write(args);
            return read();
        } catch (RedisError e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            drop();
            throw e;
        }
    }

    private void connect() throws IOException {
        if (socket != null) {
            return;
        }
        Socket s = new Socket();
        s.setTcpNoDelay(true);
        s.connect(new InetSocketAddress(uri.getHost(), uri.getPort() < 0 ? 6379 : uri.getPort()), 2000);
        s.setSoTimeout(5000);
        socket = s;
        in = new BufferedInputStream(s.getInputStream());
        out = new BufferedOutputStream(s.getOutputStream());
        String info = uri.getRawUserInfo();
        if (info != null && !info.isEmpty()) {
            String[] up = info.split(":", 2);
            String password = URLDecoder.decode((up.length > 1 ? up[1] : up[0]).replace("+", "%2B"), StandardCharsets.UTF_8);
            String user = up.length > 1 ? URLDecoder.decode(up[0], StandardCharsets.UTF_8) : "";
            if (user.isEmpty()) {
                write(new String[] {"AUTH", password});
            } else {
                write(new String[] {"AUTH", user, password});
            }
            read();
        }
        String path = uri.getPath();
        if (path != null && path.length() > 1) {
            write(new String[] {"SELECT", path.substring(1)});
            read();
        }
    }

    private void drop() {
        if (socket != null) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // the socket is going away either way
            }
        }
        socket = null;
    }

    private void write(String[] args) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
        for (String a : args) {
            byte[] v = a.getBytes(StandardCharsets.UTF_8);
            b.writeBytes(("$" + v.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
            b.writeBytes(v);
            b.writeBytes(new byte[] {'\r', '\n'});
        }
        out.write(b.toByteArray());
        out.flush();
    }

    /** One RESP2 reply: a String, a Long, null, a List, or a RedisError thrown. */
    private Object read() throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new EOFException("Redis closed the connection");
        }
        String line = line();
        switch (type) {
            case '+':
                return line;
            case '-':
                throw new RedisError(line);
            case ':':
                return Long.parseLong(line);
            case '$': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                byte[] v = in.readNBytes(n + 2);
                if (v.length < n + 2) {
                    throw new EOFException("Redis closed the connection mid-reply");
                }
                return new String(v, 0, n, StandardCharsets.UTF_8);
            }
            case '*': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    items.add(read());
                }
                return items;
            }
            default:
                throw new IOException("unexpected RESP type byte " + type);
        }
    }

    private String line() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\r') {
                if (in.read() != '\n') {
                    throw new IOException("malformed RESP line");
                }
                return b.toString(StandardCharsets.UTF_8);
            }
            b.write(c);
        }
        throw new EOFException("Redis closed the connection");
    }
}
