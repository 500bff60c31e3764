package heldout;

import java.nio.file.Path;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.logging.log4j.ThreadContext;

/**
 * log4j2 through its own API, configured by log4j2.xml (a RoutingAppender: one file per pod), the clock set by
 * -Dlog4j2.Clock=heldout.VirtualClock and the thread name being the logging thread's own.
 */
final class Log4j2Writer {
    static void run(Fleet fl, Path out) {
        Thread self = Thread.currentThread();
        for (Fleet.Event e : fl.events) {
            if (e.b("silent")) {
                continue;
            }
            Wording w = Wording.of(e);
            VirtualClock.now = e.time().toEpochMilli();
            self.setName(Wording.threadName(e));
            ThreadContext.put("pod", fl.instances.get(e.instance()).pod);
            Logger lg = LogManager.getLogger(w.logger);
            Object[] args = w.args;
            if (w.thrown != null) {
                args = java.util.Arrays.copyOf(w.args, w.args.length + 1);
                args[w.args.length] = w.thrown;
            }
            lg.log(Level.getLevel(w.level), w.pattern, args);
        }
        LogManager.shutdown();
    }
}
