package heldout;

import org.apache.logging.log4j.core.util.Clock;

/** log4j2's clock hook (system property log4j2.Clock): the script's virtual time. */
public final class VirtualClock implements Clock {
    static volatile long now;

    @Override
    public long currentTimeMillis() {
        return now;
    }
}
