package cli_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/testenv"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdAMQP sets up and checks RabbitMQ state for the dlq scripts. Every
// queue and exchange it declares is deleted when the script ends.
//
//	amqp queue NAME [quorum] [dlx=QUEUE]   declare a durable queue (dead letters to QUEUE)
//	amqp exchange NAME KEY QUEUE           declare a direct exchange bound to QUEUE
//	amqp publish EXCHANGE KEY ID BODY [HEADER=VALUE...]
//	amqp reject QUEUE N                    reject N messages (the broker dead-letters them)
//	amqp count QUEUE N                     assert QUEUE holds N ready messages (waits up to 10s)
//	amqp header QUEUE NAME VALUE           assert the first message's header (message requeued)
//	amqp name VAR                          set VAR to a unique queue name of fixed length
//	amqp load QUEUE FILE                   publish an export file's records to QUEUE unchanged
//	amqp fill QUEUE N                      publish N dead letters to QUEUE, each with an x-death naming QUEUE.work
//	amqp consumer QUEUE                    keep a consumer on QUEUE (acking nothing) until the script ends
//	amqp rejector QUEUE                    reject every message of QUEUE (no requeue) until the script ends
func cmdAMQP(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: amqp queue|exchange|publish|reject|count|header ...")
	}
	conn, err := amqp.Dial(testenv.AMQP.ConnURL())
	ts.Check(err)
	defer conn.Close()
	ch, err := conn.Channel()
	ts.Check(err)
	switch args[0] {
	case "name":
		ts.Setenv(args[1], fmt.Sprintf("dlq-%012x", rand.Uint64()>>16))
	case "load":
		ts.Check(ch.Confirm(false))
		// $VARS in the file are the script's, so fixtures can name the
		// script's queues.
		text := os.Expand(ts.ReadFile(args[2]), ts.Getenv)
		ts.Check(deadletter.ReadRecords(strings.NewReader(text), func(m *deadletter.Message) error {
			dc, err := ch.PublishWithDeferredConfirm("", args[1], true, false, m.Publishing())
			if err == nil && !dc.Wait() {
				err = fmt.Errorf("not confirmed")
			}
			return err
		}))
	case "fill":
		n, err := strconv.Atoi(args[2])
		ts.Check(err)
		ts.Check(ch.Confirm(false))
		death := amqp.Table{"count": int64(1), "exchange": "", "queue": args[1] + ".work", "reason": "rejected",
			"routing-keys": []any{args[1] + ".work"}, "time": time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
		var pending []*amqp.DeferredConfirmation
		for i := 0; i < n; i++ {
			dc, err := ch.PublishWithDeferredConfirm("", args[1], true, false, amqp.Publishing{
				MessageId: fmt.Sprintf("m-%06d", i), ContentType: "application/json", DeliveryMode: amqp.Persistent,
				Headers: amqp.Table{"x-death": []any{death}, "x-exception-message": "upstream timed out"},
				Body:    []byte(fmt.Sprintf(`{"orderId":%d,"type":"payment"}`, i))})
			ts.Check(err)
			if pending = append(pending, dc); len(pending) == 1000 || i == n-1 {
				for _, dc := range pending {
					if !dc.Wait() {
						ts.Fatalf("amqp fill: publish not confirmed")
					}
				}
				pending = pending[:0]
			}
		}
	case "consumer", "rejector":
		reject := args[0] == "rejector"
		c, err := amqp.Dial(testenv.AMQP.ConnURL())
		ts.Check(err)
		ts.Defer(func() { c.Close() })
		cch, err := c.Channel()
		ts.Check(err)
		ts.Check(cch.Qos(1, 0, false))
		d, err := cch.Consume(args[1], "", false, false, false, false, nil)
		ts.Check(err)
		go func() {
			for m := range d {
				if reject {
					_ = m.Reject(false)
				}
			}
		}()
	case "queue":
		qargs := amqp.Table{}
		for _, a := range args[2:] {
			switch {
			case a == "quorum":
				qargs["x-queue-type"] = "quorum"
			case strings.HasPrefix(a, "dlx="):
				qargs["x-dead-letter-exchange"] = ""
				qargs["x-dead-letter-routing-key"] = strings.TrimPrefix(a, "dlx=")
			default:
				ts.Fatalf("amqp queue: unknown option %q", a)
			}
		}
		_, err = ch.QueueDeclare(args[1], true, false, false, false, qargs)
		ts.Check(err)
		ts.Defer(func() { deleteQueue(args[1]) })
	case "exchange":
		ts.Check(ch.ExchangeDeclare(args[1], "direct", false, true, false, false, nil))
		ts.Check(ch.QueueBind(args[3], args[2], args[1], false, nil))
	case "publish":
		h := amqp.Table{}
		for _, kv := range args[5:] {
			k, v, _ := strings.Cut(kv, "=")
			h[k] = v
		}
		ts.Check(ch.Confirm(false))
		dc, err := ch.PublishWithDeferredConfirm(args[1], args[2], true, false, amqp.Publishing{
			MessageId: args[3], Body: []byte(args[4]), Headers: h, ContentType: "application/json",
			Timestamp: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)})
		ts.Check(err)
		if !dc.Wait() {
			ts.Fatalf("publish not confirmed")
		}
	case "reject":
		n, _ := strconv.Atoi(args[2])
		for i := 0; i < n; i++ {
			d, ok, err := ch.Get(args[1], false)
			ts.Check(err)
			if !ok {
				ts.Fatalf("amqp reject: only %d messages in %s", i, args[1])
			}
			ts.Check(d.Reject(false))
		}
	case "count":
		want, _ := strconv.Atoi(args[2])
		got := -1
		for i := 0; i < 100 && got != want; i++ {
			q, err := ch.QueueDeclarePassive(args[1], true, false, false, false, nil)
			ts.Check(err)
			got = q.Messages
			if got != want {
				time.Sleep(100 * time.Millisecond)
			}
		}
		if got != want {
			ts.Fatalf("queue %s has %d messages, want %d", args[1], got, want)
		}
	case "header":
		d, ok, err := ch.Get(args[1], false)
		ts.Check(err)
		if !ok {
			ts.Fatalf("amqp header: %s is empty", args[1])
		}
		got := fmt.Sprint(d.Headers[args[2]])
		ts.Check(d.Nack(false, true))
		if got != args[3] {
			ts.Fatalf("header %s = %q, want %q", args[2], got, args[3])
		}
	default:
		ts.Fatalf("amqp: unknown subcommand %q", args[0])
	}
}

func deleteQueue(name string) {
	conn, err := amqp.Dial(testenv.AMQP.ConnURL())
	if err != nil {
		return
	}
	defer conn.Close()
	if ch, err := conn.Channel(); err == nil {
		_, _ = ch.QueueDelete(name, false, false, false)
	}
}
