package com.example.payments;

/**
 * One payment request as the listener hands it on: the order from the JSON body, and
 * what the broker says of the delivery.
 */
record PaymentMessage(String orderId, String messageId, boolean redelivered, long deliveryTag) {
    /** 1, or 2 once the broker marks the delivery redelivered. */
    int attempt() {
        return redelivered ? 2 : 1;
    }
}
