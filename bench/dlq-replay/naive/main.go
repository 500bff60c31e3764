// Command naive moves every message of one queue to another the way a
// hand-written script usually does, safely but one message at a time:
// basic.get, publish with confirms, wait for the confirm, ack. It is the
// baseline of bench/dlq-replay.
//
//	naive -amqp amqp://guest:guest@127.0.0.1:5672/ -from q.dlq -to q.work
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"

	amqp "github.com/rabbitmq/amqp091-go"
)

func main() {
	url := flag.String("amqp", "amqp://guest:guest@127.0.0.1:5672/", "AMQP URL")
	from := flag.String("from", "", "source queue")
	to := flag.String("to", "", "destination queue (default exchange)")
	flag.Parse()
	if *from == "" || *to == "" {
		fmt.Fprintln(os.Stderr, "usage: naive -from QUEUE -to QUEUE")
		os.Exit(2)
	}
	n, err := move(*url, *from, *to)
	if err != nil {
		log.Fatalf("after %d messages: %v", n, err)
	}
	fmt.Println(n)
}

func move(url, from, to string) (int, error) {
	conn, err := amqp.Dial(url)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	get, err := conn.Channel()
	if err != nil {
		return 0, err
	}
	pub, err := conn.Channel()
	if err != nil {
		return 0, err
	}
	if err := pub.Confirm(false); err != nil {
		return 0, err
	}
	n := 0
	for {
		d, ok, err := get.Get(from, false)
		if err != nil || !ok {
			return n, err
		}
		dc, err := pub.PublishWithDeferredConfirmWithContext(context.Background(), "", to, false, false, amqp.Publishing{
			Headers: d.Headers, ContentType: d.ContentType, DeliveryMode: d.DeliveryMode, MessageId: d.MessageId,
			CorrelationId: d.CorrelationId, Timestamp: d.Timestamp, Type: d.Type, AppId: d.AppId, Body: d.Body,
		})
		if err != nil {
			return n, err
		}
		if !dc.Wait() {
			return n, fmt.Errorf("publish of %q nacked", d.MessageId)
		}
		if err := d.Ack(false); err != nil {
			return n, err
		}
		n++
	}
}
