package heldout;

/** wording/java-spring.md: each step's logger, level, SLF4J message pattern and arguments. */
final class Wording {
    final String logger, level, pattern;
    final Object[] args;
    final Throwable thrown;

    private Wording(String logger, String level, String pattern, Throwable thrown, Object... args) {
        this.logger = logger;
        this.level = level;
        this.pattern = pattern;
        this.args = args;
        this.thrown = thrown;
    }

    static final String APP = "com.acme.payments.PaymentsWorkerApplication";
    static final String LISTENER = "com.acme.payments.listener.PaymentRequestListener";
    static final String LOCK = "com.acme.payments.lock.RedisLockService";
    static final String IDEM = "com.acme.payments.idempotency.IdempotencyService";
    static final String GATEWAY = "com.acme.payments.gateway.StripeChargeClient";
    static final String REPO = "com.acme.payments.repository.PaymentRepository";
    static final String RECEIPT = "com.acme.payments.notify.ReceiptPublisher";
    static final String STATS = "com.acme.payments.metrics.ConsumerStats";
    static final String[] LOGGERS = {APP, LISTENER, LOCK, IDEM, GATEWAY, REPO, RECEIPT, STATS};

    static String threadName(Fleet.Event e) {
        if (e.step().equals("start")) {
            return "main";
        }
        if (e.step().equals("heartbeat")) {
            return "scheduling-1";
        }
        return "org.springframework.amqp.rabbit.RabbitListenerEndpointContainer#0-" + (e.thread() + 1);
    }

    static Wording of(Fleet.Event e) {
        String o = e.order();
        switch (e.step()) {
            case "start":
                return new Wording(APP, "INFO", "Started PaymentsWorkerApplication in 6.8 seconds (process running for 7.9)", null);
            case "heartbeat":
                return new Wording(STATS, "DEBUG", "Consumer stats: processed={}, inFlight={}", null, e.n("processed"), 0);
            case "received":
                return new Wording(LISTENER, "INFO", "Received message for order {} (messageId={}, redelivered={}, deliveryCount={})",
                        null, o, e.s("msg_id"), e.b("redelivered"), e.n("delivery"));
            case "lock_acquired":
                return new Wording(LOCK, "DEBUG", "Acquired lock {} (token={}, leaseTime={}ms)", null,
                        e.s("lock_key"), e.s("token"), e.n("ttl_ms"));
            case "lock_busy":
                return new Wording(LOCK, "WARN", "Could not acquire lock {}: held by another instance, order {} will be retried",
                        null, e.s("lock_key"), o);
            case "idem_check":
                return new Wording(IDEM, "DEBUG", "No payment recorded yet for idempotency key {} (checked {})", null,
                        e.s("idem_key"), e.s("source"));
            case "idem_seen":
                return new Wording(IDEM, "INFO", "Order {} was already paid (idempotency key {}), skipping", null, o, e.s("idem_key"));
            case "charge_start":
                return new Wording(GATEWAY, "DEBUG", "Charging {} {} for order {}", null, e.amount(), e.s("currency"), o);
            case "charge":
                return new Wording(GATEWAY, "INFO", "Payment captured for order {}: chargeId={}, amount={} {}, took {} ms", null,
                        o, e.s("charge_id"), e.amount(), e.s("currency"), e.n("elapsed_ms"));
            case "charge_failed":
                return new Wording(GATEWAY, "WARN", "Payment gateway call failed for order {}: {}", null, o, e.s("error"));
            case "commit":
                return new Wording(REPO, "INFO", "Saved payment record for order {} (idempotencyKey={})", null, o, e.s("idem_key"));
            case "commit_failed":
                return new Wording(REPO, "ERROR", "Failed to save payment record for order {}",
                        exception(new java.sql.SQLTransientConnectionException(e.s("error")), REPO, "save"), o);
            case "receipt_failed":
                return new Wording(RECEIPT, "ERROR", "Could not publish receipt for order {}",
                        exception(new java.io.IOException(e.s("error")), RECEIPT, "publish"), o);
            case "retry":
                return new Wording(LISTENER, "WARN", "Retrying order {} in {} ms (attempt {} of 3): {}", null,
                        o, e.n("backoff_ms"), e.n("attempt"), e.s("error"));
            case "lock_released":
                if (e.s("token").isEmpty()) {
                    return new Wording(LOCK, "DEBUG", "Released lock {}", null, e.s("lock_key"));
                }
                return new Wording(LOCK, "DEBUG", "Released lock {} (token={})", null, e.s("lock_key"), e.s("token"));
            case "lock_release_failed":
                return new Wording(LOCK, "WARN", "Lock {} could not be released (token={}): {}", null,
                        e.s("lock_key"), e.s("token"), e.s("error"));
            case "nack":
                return new Wording(LISTENER, "WARN", "Rejecting message {} for order {} (requeue=true): {}", null,
                        e.s("msg_id"), o, e.s("error"));
            case "ack":
                return new Wording(LISTENER, "DEBUG", "Acknowledged message {} (deliveryCount={})", null,
                        e.s("msg_id"), e.n("delivery"));
            default:
                throw new IllegalArgumentException("no wording for " + e.step());
        }
    }

    /** A real exception with a short, fixed stack trace, as the logger would print it. */
    static Throwable exception(Throwable t, String cls, String method) {
        t.setStackTrace(new StackTraceElement[] {
            new StackTraceElement(cls, method, cls.substring(cls.lastIndexOf('.') + 1) + ".java", 88),
            new StackTraceElement(LISTENER, "onMessage", "PaymentRequestListener.java", 61),
            new StackTraceElement("org.springframework.amqp.rabbit.listener.adapter.MessagingMessageListenerAdapter",
                    "invokeHandler", "MessagingMessageListenerAdapter.java", 229),
        });
        return t;
    }

    /** The SLF4J pattern with {} replaced by JUL's {0}, {1}, ... */
    String julPattern() {
        StringBuilder sb = new StringBuilder();
        int n = 0;
        for (int i = 0; i < pattern.length(); i++) {
            if (pattern.startsWith("{}", i)) {
                sb.append('{').append(n++).append('}');
                i++;
            } else if (pattern.charAt(i) == '\'') {
                sb.append("''");
            } else {
                sb.append(pattern.charAt(i));
            }
        }
        return sb.toString();
    }
}
