// Command dlq-large fills a DLQ with large dead letters (persistent, an
// x-death naming the destination queue) for bench/dlq-large/run.sh.
//
//	dlq-large -dlq Q.dlq -to Q.work -n 400 -mib 4
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"

	"github.com/dupctl/dupctl/bench/internal/deadletter"
	amqp "github.com/rabbitmq/amqp091-go"
)

func main() {
	url := flag.String("amqp", "amqp://guest:guest@127.0.0.1:5672/", "AMQP URL")
	dlq := flag.String("dlq", "", "the DLQ to fill (declared durable)")
	to := flag.String("to", "", "the destination queue the x-death names (declared durable)")
	n := flag.Int("n", 400, "messages")
	mib := flag.Int("mib", 4, "body size in MiB")
	flag.Parse()
	if *dlq == "" || *to == "" {
		log.Fatal("-dlq and -to are required")
	}
	conn, err := amqp.Dial(*url)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		log.Fatal(err)
	}
	for _, q := range []string{*dlq, *to} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			log.Fatal(err)
		}
	}
	body := bytes.Repeat([]byte{0xfe}, *mib<<20)
	err = deadletter.Fill(conn, *dlq, *to, *n, func(i int) amqp.Publishing {
		return amqp.Publishing{MessageId: fmt.Sprint("large-", i), Body: body}
	})
	if err != nil {
		log.Fatal(err)
	}
}
