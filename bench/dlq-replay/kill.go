package main

// The kill measurement (-kill-after D): how much a SIGKILL at full speed
// leaves in doubt. Each round fills a fresh DLQ, starts dupctl dlq replay
// --yes, kills it after D, and reads the journal and both queues:
//
//   - in doubt: published (a "pub" record) with no outcome recorded
//     (messages are told apart by id: the bench's are unique);
//   - last 50 ms: publishes journaled in the 50 ms before the last one
//     (what the target compares against);
//   - at the destination: how many of those in doubt had in fact arrived
//     (the broker took them; their confirm had not been handled);
//   - gone from the DLQ: in doubt yet acked (must be 0: the outcome is
//     journaled before the DLQ ack).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/dupctl/dupctl/bench/internal/deadletter"
	"github.com/dupctl/dupctl/internal/replay/journal"
	amqp "github.com/rabbitmq/amqp091-go"
)

type killRound struct {
	published, inDoubt, last50ms, atDest, goneFromDLQ int
	rate                                              float64
}

func (b *bench) killRounds(after time.Duration, rounds int) error {
	fmt.Printf("| round | published | msgs/s (last second) | journaled in the last 50 ms | in doubt | " +
		"of those at the destination | in doubt and gone from the DLQ |\n|---:|---:|---:|---:|---:|---:|---:|\n")
	for r := 1; r <= rounds; r++ {
		k, err := b.killRound(after)
		if err != nil {
			return err
		}
		fmt.Printf("| %d | %d | %.0f | %d | %d | %d | %d |\n", r, k.published, k.rate, k.last50ms, k.inDoubt, k.atDest, k.goneFromDLQ)
	}
	return nil
}

func (b *bench) killRound(after time.Duration) (*killRound, error) {
	b.seq++
	base := fmt.Sprintf("bench_dlq_kill_%d_%d", os.Getpid(), b.seq)
	dlq, dest := base+".dlq", base+".work"
	conn, err := amqp.Dial(b.url)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return nil, err
	}
	for _, q := range []string{dlq, dest} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			return nil, err
		}
		defer ch.QueueDelete(q, false, false, false)
	}
	if err := deadletter.Fill(conn, dlq, dest, b.n, paymentDeadLetter); err != nil {
		return nil, fmt.Errorf("fill: %w", err)
	}
	jpath := os.TempDir() + "/" + base + ".journal"
	defer os.Remove(jpath)
	cmd := exec.Command(b.dupctl, "dlq", "replay", "--queue", dlq, "--yes", "--journal", jpath,
		"--window", fmt.Sprint(b.window), "--amqp-url", b.url, "-o", "json")
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	time.Sleep(after)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	for i := 0; ; i++ { // its messages back in the DLQ
		q, err := ch.QueueDeclarePassive(dlq, true, false, false, false, nil)
		if err != nil {
			return nil, err
		}
		if q.Consumers == 0 {
			break
		}
		if i == 500 {
			return nil, fmt.Errorf("the killed replay's consumer stayed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	k, doubt, err := readKilledJournal(jpath)
	if err != nil {
		return nil, err
	}
	atDest, err := messageIDs(conn, dest)
	if err != nil {
		return nil, err
	}
	inDLQ, err := messageIDs(conn, dlq)
	if err != nil {
		return nil, err
	}
	for id := range doubt {
		if atDest[id] {
			k.atDest++
		}
		if !inDLQ[id] {
			k.goneFromDLQ++
		}
	}
	return k, nil
}

// readKilledJournal tallies a killed run's journal: publishes, those in
// doubt (by message id: the bench's are unique), the publish rate over the last second and how
// many were journaled in the last 50 ms.
func readKilledJournal(path string) (*killRound, map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	type pub struct {
		id string
		at time.Time
	}
	var pubs []pub
	bySeq := map[int64]string{}
	done := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r journal.Record
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue // the torn last line
		}
		switch r.T {
		case journal.Pub:
			pubs = append(pubs, pub{r.ID, r.At})
			bySeq[r.Seq] = r.ID
		case journal.OK, journal.Returned, journal.Nacked:
			done[bySeq[r.Seq]] = true
		}
	}
	k := &killRound{published: len(pubs)}
	doubt := map[string]bool{}
	for _, p := range pubs {
		if !done[p.id] {
			doubt[p.id] = true
		}
	}
	k.inDoubt = len(doubt)
	if len(pubs) > 0 {
		last := pubs[len(pubs)-1].at
		n1s := 0
		for _, p := range pubs {
			if last.Sub(p.at) <= 50*time.Millisecond {
				k.last50ms++
			}
			if last.Sub(p.at) <= time.Second {
				n1s++
			}
		}
		k.rate = float64(n1s)
	}
	return k, doubt, nil
}

// messageIDs drains a queue and returns its messages' ids.
func messageIDs(conn *amqp.Connection, queue string) (map[string]bool, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, err
	}
	defer ch.Close()
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	if q.Messages == 0 {
		return out, nil
	}
	if err := ch.Qos(2000, 0, false); err != nil {
		return nil, err
	}
	d, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		return nil, err
	}
	for i := 0; i < q.Messages; i++ {
		m, ok := <-d
		if !ok {
			return nil, fmt.Errorf("drain %s: channel closed", queue)
		}
		out[m.MessageId] = true
		if i%1000 == 999 || i == q.Messages-1 {
			if err := m.Ack(true); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
