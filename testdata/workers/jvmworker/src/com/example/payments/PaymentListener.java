package com.example.payments;

import java.io.IOException;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a @RabbitListener with AcknowledgeMode.MANUAL does: read the JSON body, take the
 * order's lock, pay, release the lock, then basicAck - after the commit. A busy lock or a
 * failure goes back to the queue (basicNack with requeue, as Spring AMQP's default
 * requeue-on-exception does). ACK=first acks on receipt instead.
 */
final class PaymentListener extends DefaultConsumer {
    private static final Logger log = LoggerFactory.getLogger(PaymentListener.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How long a delivery that found the lock busy waits before it goes back. */
    private static final long BUSY_BACKOFF_MILLIS = 50;

    private final Settings s;
    private final RedisLockService locks;
    private final PaymentService payments;

    PaymentListener(Channel channel, Settings s, RedisLockService locks, PaymentService payments) {
        super(channel);
        this.s = s;
        this.locks = locks;
        this.payments = payments;
    }

    @Override
    public void handleDelivery(String consumerTag, Envelope env, AMQP.BasicProperties props, byte[] body) {
        long tag = env.getDeliveryTag();
        String orderId = orderId(body);
        PaymentMessage m = new PaymentMessage(orderId, props.getMessageId(), env.isRedeliver(), tag);
        log.info("received payment message order={} messageId={} redelivered={} deliveryTag={}", orderId, m.messageId(),
                m.redelivered(), tag);
        if (orderId == null) {
            log.warn("invalid payment message messageId={}: no orderId, rejected", m.messageId());
            settle(() -> getChannel().basicReject(tag, false));
            return;
        }
        if (s.ackFirst) {
            settle(() -> getChannel().basicAck(tag, false));
            log.info("message acked order={} deliveryTag={}", orderId, tag);
        }
        try {
            if (!handle(m)) {
                sleep(BUSY_BACKOFF_MILLIS);
                if (!s.ackFirst) {
                    settle(() -> getChannel().basicNack(tag, false, true));
                    log.info("message requeued order={} deliveryTag={}: lock busy", orderId, tag);
                }
                return;
            }
        } catch (Exception e) {
            log.error("payment failed order={}, requeue", orderId, e);
            if (!s.ackFirst) {
                settle(() -> getChannel().basicNack(tag, false, true));
            }
            return;
        }
        if (!s.ackFirst) {
            settle(() -> getChannel().basicAck(tag, false));
            log.info("message acked order={} deliveryTag={}", orderId, tag);
        }
    }

    /** Pays under the order's lock; false when the lock is busy. */
    private boolean handle(PaymentMessage m) throws Exception {
        if (!s.lock) {
            payments.pay(m);
            return true;
        }
        String lockKey = s.lockKey.equals("message-id") ? "lock:payment:msg:" + m.messageId() : "lock:payment:order:" + m.orderId();
        String token = locks.tryLock(lockKey);
        try {
            if (token == null) {
                return false;
            }
            payments.pay(m);
            return true;
        } finally {
            locks.unlock(lockKey, token);
        }
    }

    private static String orderId(byte[] body) {
        try {
            JsonNode n = JSON.readTree(body).path("orderId");
            return n.isTextual() && !n.asText().isEmpty() ? n.asText() : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** An ack, nack or reject on a channel that may have closed under it. */
    private interface Settle {
        void run() throws IOException;
    }

    private void settle(Settle op) {
        try {
            op.run();
        } catch (IOException | RuntimeException e) {
            log.warn("could not settle the delivery: {}", e.toString());
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
