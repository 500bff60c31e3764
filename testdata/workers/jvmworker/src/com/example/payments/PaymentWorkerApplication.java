package com.example.payments;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * jvmworker: the payment consumer Spring Boot teams write, in plain Java on Debian's
 * packages (the RabbitMQ Java client, the PostgreSQL JDBC driver, logback, Jackson) and a
 * small Redis client of its own, for testing dupctl's simulate --worker. The safe flow by
 * default, one environment switch per common bug (goworker's names).
 *
 * <p>Environment:
 * <pre>
 *   SPRING_RABBITMQ_ADDRESSES (or AMQP_URL, or SPRING_RABBITMQ_HOST/PORT/USERNAME/PASSWORD/VIRTUAL_HOST)
 *   SPRING_DATA_REDIS_URL (or REDIS_URL)
 *   SPRING_DATASOURCE_URL + _USERNAME + _PASSWORD (or DATABASE_URL=postgres://...)
 *   SPRING_APPLICATION_NAME=payments   the [app] column of the log line
 *   QUEUE, CHARGES, IDEM_TABLE         queue; tables CHARGES(order_id, idempotency_key, worker), IDEM_TABLE(key primary key, status)
 *   WORKER                             a name for the logs
 *   PREFETCH=1                         basicQos
 *   WORK=100ms                         the provider call's duration
 *   LOCK=on|off                        the order's Redis lock | none
 *   LOCK_TTL=2s RENEW=true             lock TTL, and the watchdog extending it
 *   LOCK_KEY=order|message-id          lock on the order | on the message id
 *   UNLOCK=cas|del                     compare-and-delete script | plain DEL in the finally block
 *   IDEM=txn|check|none                claim + charge + SUCCEEDED in one transaction | SELECT then act | nothing
 *   KEY=stable|attempt|message-id      idempotency key from the order | plus the attempt | from the message id
 *   STATUS=db|cache                    "already paid?" from the database | from the Redis status cache only
 *   CACHE=on|off                       read the status cache before the database check
 *   ACK=after|first                    basicAck after the commit | on receipt
 * </pre>
 */
public final class PaymentWorkerApplication {
    private PaymentWorkerApplication() {
    }

    public static void main(String[] args) throws Exception {
        long started = System.nanoTime();
        Settings s;
        try {
            s = Settings.fromEnv(System.getenv());
        } catch (IllegalArgumentException e) {
            System.err.println("jvmworker: " + e.getMessage());
            System.exit(1);
            return;
        }
        // What Spring Boot's LoggingSystem sets before logback reads its configuration.
        System.setProperty("PID", Long.toString(ProcessHandle.current().pid()));
        System.setProperty("APPLICATION_NAME", s.appName);
        new Worker(s).run(started);
    }

    /** The wired application: what the Spring context would hold. */
    private static final class Worker {
        private final Logger log = LoggerFactory.getLogger(PaymentWorkerApplication.class);
        private final Settings s;

        Worker(Settings s) {
            this.s = s;
        }

        void run(long started) throws Exception {
            log.info("Starting PaymentWorkerApplication using Java {} with PID {}", Runtime.version(), ProcessHandle.current().pid());
            RespClient redis = new RespClient(s.redis);
            RedisLockService locks = new RedisLockService(redis, s);
            Database db = new Database(s);
            db.connect();
            PaymentService payments = new PaymentService(db, new StatusCache(redis), s);

            ConnectionFactory cf = new ConnectionFactory();
            cf.setHost(s.amqp.host());
            cf.setPort(s.amqp.port());
            cf.setUsername(s.amqp.user());
            cf.setPassword(s.amqp.password());
            cf.setVirtualHost(s.amqp.vhost());
            // A connection the broker closes is opened again and the consumer re-registered,
            // as Spring AMQP's listener container restarts its consumers.
            cf.setAutomaticRecoveryEnabled(true);
            cf.setNetworkRecoveryInterval(200);
            // One listener thread, named as Spring AMQP names its container's consumer thread.
            ExecutorService listenerThread = Executors.newSingleThreadExecutor(
                    r -> new Thread(r, "org.springframework.amqp.rabbit.RabbitListenerEndpointContainer#0-1"));
            Connection conn = cf.newConnection(listenerThread, s.appName + "-" + s.worker);
            Channel ch = conn.createChannel();
            ch.queueDeclare(s.queue, true, false, false, null);
            ch.basicQos(s.prefetch);
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                log.info("Stopping: closing the listener container");
                try {
                    conn.close(2000);
                } catch (Exception ignored) {
                    // going away either way
                }
                listenerThread.shutdownNow();
                locks.shutdown();
                redis.close();
                stopped.countDown();
            }, "shutdown"));
            ch.basicConsume(s.queue, false, new PaymentListener(ch, s, locks, payments));
            log.info("Listening on queue={} worker={} {}", s.queue, s.worker, s.switches());
            log.info("Started PaymentWorkerApplication in {} seconds", String.format("%.3f", (System.nanoTime() - started) / 1e9));
            stopped.await();
            db.close();
        }
    }
}
