package heldout;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.FileAppender;
import ch.qos.logback.core.OutputStreamAppender;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;
import java.util.logging.StreamHandler;

/**
 * Logs the fleet's event script through logback (pattern with MDC; Spring Boot 3's console pattern behind
 * docker compose's prefix), log4j2 (one file per pod, shipped by kubectl logs --prefix) and java.util.logging
 * (SimpleFormatter), each line stamped at the script's virtual time by the library's own means.
 *
 * <p>java -cp ... heldout.Main logback|spring-boot|log4j2|jul SCRIPT_DIR OUT_DIR
 */
public final class Main {
    public static void main(String[] args) throws Exception {
        Fleet fl = Fleet.load(Paths.get(args[1]));
        Path out = Paths.get(args[2]);
        Files.createDirectories(out);
        List<String> pods = new ArrayList<>();
        List<String> composeAndPids = new ArrayList<>();
        for (Fleet.Instance in : fl.instances.values()) {
            pods.add(in.pod);
            composeAndPids.add(in.compose);
            in.pids.forEach(p -> composeAndPids.add(String.valueOf(p)));
        }
        switch (args[0]) {
            case "logback":
                logback(fl, out, false);
                manifest(out, "logback", "logback-classic 1.2 (Debian)", LOGBACK_PATTERN.trim(), "per-instance",
                        "virtual (LoggingEvent.setTimeStamp)", pods, fl);
                break;
            case "spring-boot":
                logback(fl, out, true);
                manifest(out, "spring-boot-console", "logback-classic 1.2 (Debian) with Spring Boot 3.2's console pattern",
                        BOOT_PATTERN.trim() + ", behind docker compose logs prefixes", "docker compose",
                        "virtual (LoggingEvent.setTimeStamp)", composeAndPids, fl);
                break;
            case "log4j2":
                Log4j2Writer.run(fl, out);
                // the files are shipped by kubectl logs --prefix afterwards (generate.sh); the manifest names the result
                manifest(out, "log4j2", "log4j-core 2.19 (Debian)", "%d{yyyy-MM-dd HH:mm:ss.SSS} [%t] %-5level %logger{36} - %msg%n,"
                        + " one file per pod (RoutingAppender), shipped by kubectl logs --prefix", "kubectl",
                        "virtual (log4j2.Clock)", pods, fl);
                break;
            case "jul":
                jul(fl, out);
                manifest(out, "jul", "java.util.logging (JDK 17)", "SimpleFormatter default format (two lines a record)",
                        "per-instance", "virtual (LogRecord.setInstant)", pods, fl);
                break;
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }

    static String jsonList(List<String> xs) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < xs.size(); i++) {
            sb.append(i == 0 ? "" : ", ").append('"').append(xs.get(i).replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
        }
        return sb.append(']').toString();
    }

    static void manifest(Path out, String name, String library, String layout, String placement, String clock,
            List<String> workers, Fleet fl) throws IOException {
        List<String> files = new ArrayList<>();
        try (var ls = Files.list(out)) {
            ls.map(p -> p.getFileName().toString()).filter(f -> f.endsWith(".log")).sorted().forEach(files::add);
        }
        if (placement.equals("kubectl")) {
            files = List.of("kubectl-logs.log");
        }
        List<String> threads = new ArrayList<>();
        for (Fleet.Event e : fl.events) {
            String t = Wording.threadName(e);
            if (!threads.contains(t)) {
                threads.add(t);
            }
            String shortName = t.length() > 15 ? t.substring(t.length() - 15) : t;
            if (!threads.contains(shortName)) {
                threads.add(shortName);
            }
        }
        String json = "{\n  \"name\": \"" + name + "\",\n  \"ecosystem\": \"java\",\n  \"library\": \"" + library
                + "\",\n  \"layout\": " + jsonList(List.of(layout)).replaceAll("^\\[|\\]$", "") + ",\n  \"placement\": \""
                + placement + "\",\n  \"clock\": \"" + clock + "\",\n  \"files\": " + jsonList(files)
                + ",\n  \"workers\": " + jsonList(workers) + ",\n  \"threads\": " + jsonList(threads)
                + ",\n  \"loggers\": " + jsonList(List.of(Wording.LOGGERS)) + ",\n  \"other\": [\"orderId\"]\n}\n";
        Files.writeString(out.resolve("manifest.json"), json);
    }

    static final String LOGBACK_PATTERN = "%d{ISO8601} [%thread] %-5level %logger{36} [%X{orderId}] - %msg%n";
    // Spring Boot 3.2's CONSOLE_LOG_PATTERN without colour, with PID and spring.application.name filled in
    static final String BOOT_PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %5p ${PID} --- [payments-worker] [%15.15t] "
            + "%-40.40logger{39} : %m%n%ex";

    /** One logback LoggerContext per process (instance and pid): a restart is a new context. */
    static void logback(Fleet fl, Path out, boolean boot) throws IOException {
        Map<String, LoggerContext> ctxs = new HashMap<>();
        OutputStream compose = boot ? new FileOutputStream(out.resolve("docker-compose-logs.log").toFile()) : null;
        List<String> files = new ArrayList<>();
        for (Fleet.Event e : fl.events) {
            if (e.b("silent")) {
                continue;
            }
            Fleet.Instance in = fl.instances.get(e.instance());
            String key = e.instance() + "/" + e.n("pid");
            LoggerContext ctx = ctxs.get(key);
            if (ctx == null) {
                ctx = new LoggerContext();
                PatternLayoutEncoder enc = new PatternLayoutEncoder();
                enc.setContext(ctx);
                enc.setPattern(boot ? BOOT_PATTERN.replace("${PID}", String.valueOf(e.n("pid"))) : LOGBACK_PATTERN);
                enc.start();
                OutputStreamAppender<ILoggingEvent> app;
                if (boot) {
                    app = new OutputStreamAppender<>();
                    app.setContext(ctx);
                    app.setOutputStream(new ComposePrefix(compose, in.compose, 18));
                } else {
                    FileAppender<ILoggingEvent> fa = new FileAppender<>();
                    fa.setContext(ctx);
                    String name = in.pod + ".log";
                    fa.setFile(out.resolve(name).toString());
                    fa.setAppend(files.contains(name));
                    if (!files.contains(name)) {
                        files.add(name);
                    }
                    app = fa;
                }
                app.setContext(ctx);
                app.setEncoder(enc);
                app.setImmediateFlush(true);
                app.start();
                ch.qos.logback.classic.Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
                root.setLevel(Level.DEBUG);
                root.addAppender(app);
                ctxs.entrySet().removeIf(x -> x.getKey().startsWith(e.instance() + "/") && stop(x.getValue()));
                ctxs.put(key, ctx);
            }
            Wording w = Wording.of(e);
            ch.qos.logback.classic.Logger lg = ctx.getLogger(w.logger);
            LoggingEvent ev = new LoggingEvent(Main.class.getName(), lg, Level.toLevel(w.level), w.pattern, w.thrown, w.args);
            ev.setTimeStamp(e.time().toEpochMilli());
            ev.setThreadName(Wording.threadName(e));
            Map<String, String> mdc = new HashMap<>();
            if (!e.order().isEmpty()) {
                mdc.put("orderId", e.order());
            }
            ev.setMDCPropertyMap(mdc);
            lg.callAppenders(ev);
        }
        for (LoggerContext c : ctxs.values()) {
            c.stop();
        }
        if (compose != null) {
            compose.close();
        }
    }

    private static boolean stop(LoggerContext c) {
        c.stop();
        return true;
    }

    /** java.util.logging: a StreamHandler with SimpleFormatter per pod file; the record carries its instant. */
    static void jul(Fleet fl, Path out) throws IOException {
        Map<String, StreamHandler> handlers = new HashMap<>();
        for (Fleet.Event e : fl.events) {
            if (e.b("silent")) {
                continue;
            }
            Fleet.Instance in = fl.instances.get(e.instance());
            StreamHandler h = handlers.get(in.id);
            if (h == null) {
                h = new StreamHandler(new FileOutputStream(out.resolve(in.pod + ".log").toFile()), new SimpleFormatter());
                h.setLevel(java.util.logging.Level.ALL);
                handlers.put(in.id, h);
            }
            Wording w = Wording.of(e);
            java.util.logging.Level lvl = switch (w.level) {
                case "DEBUG" -> java.util.logging.Level.FINE;
                case "WARN" -> java.util.logging.Level.WARNING;
                case "ERROR" -> java.util.logging.Level.SEVERE;
                default -> java.util.logging.Level.INFO;
            };
            LogRecord r = new LogRecord(lvl, w.julPattern());
            r.setParameters(w.args);
            r.setInstant(e.time());
            r.setLoggerName(w.logger);
            r.setSourceClassName(w.logger);
            r.setSourceMethodName(method(e.step()));
            r.setThrown(w.thrown);
            h.publish(r);
        }
        for (StreamHandler h : handlers.values()) {
            h.close();
        }
    }

    static String method(String step) {
        switch (step) {
            case "start":
                return "logStarted";
            case "heartbeat":
                return "report";
            case "lock_acquired":
            case "lock_busy":
                return "tryLock";
            case "lock_released":
            case "lock_release_failed":
                return "unlock";
            case "idem_check":
            case "idem_seen":
                return "checkAndSkip";
            case "charge_start":
            case "charge":
            case "charge_failed":
                return "charge";
            case "commit":
            case "commit_failed":
                return "save";
            case "receipt_failed":
                return "publish";
            default:
                return "onMessage";
        }
    }

    /** What docker compose logs writes before each line of a service's container: "NAME<pad> | ". */
    static final class ComposePrefix extends OutputStream {
        private final OutputStream out;
        private final byte[] prefix;
        private boolean atStart = true;

        ComposePrefix(OutputStream out, String name, int width) {
            this.out = out;
            this.prefix = String.format("%-" + width + "s | ", name).getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public void write(int b) throws IOException {
            if (atStart) {
                out.write(prefix);
                atStart = false;
            }
            out.write(b);
            if (b == '\n') {
                atStart = true;
            }
        }
    }
}
