package main

// The read measurement (-reads N): dlq stats and dlq export alternately,
// N times each, back to back on one DLQ of n messages, printing the count
// each read reports and how long it took. Every count must be n.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/dupctl/dupctl/bench/internal/deadletter"
	amqp "github.com/rabbitmq/amqp091-go"
)

func (b *bench) reads(times int) error {
	b.seq++
	dlq := fmt.Sprintf("bench_dlq_reads_%d_%d.dlq", os.Getpid(), b.seq)
	conn, err := amqp.Dial(b.url)
	if err != nil {
		return err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	if _, err := ch.QueueDeclare(dlq, true, false, false, false, nil); err != nil {
		return err
	}
	defer ch.QueueDelete(dlq, false, false, false)
	if err := deadletter.Fill(conn, dlq, dlq+".work", b.n, paymentDeadLetter); err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	out := os.TempDir() + "/" + dlq + ".jsonl"
	fmt.Printf("| read | command | messages counted | read | settled | seconds |\n|---:|---|---:|---:|---|---:|\n")
	for i := 1; i <= 2*times; i++ {
		args := []string{"dlq", "stats", "--queue", dlq}
		if i%2 == 0 {
			_ = os.Remove(out)
			args = []string{"dlq", "export", "--queue", dlq, "--out", out}
		}
		args = append(args, "--amqp-url", b.url, "-o", "json", "--fail-on", "none")
		start := time.Now()
		raw, err := exec.Command(b.dupctl, args...).Output()
		if err != nil {
			return fmt.Errorf("%s: %v: %s", args[1], err, tail(raw))
		}
		el := time.Since(start)
		var doc struct {
			Data struct {
				Messages int `json:"messages"`
				Written  int `json:"written"`
				Read     struct {
					AtStart struct {
						Messages int `json:"messages"`
					} `json:"at_start"`
					Read    int  `json:"read"`
					Settled bool `json:"settled"`
				} `json:"read"`
			} `json:"data"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			return fmt.Errorf("%s output: %v", args[1], err)
		}
		d := doc.Data
		fmt.Printf("| %d | %s | %d | %d | %v | %.2f |\n", i, args[1], d.Read.AtStart.Messages, d.Read.Read, d.Read.Settled, el.Seconds())
	}
	_ = os.Remove(out)
	return nil
}
