package dlqread

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/progress"
	"github.com/dupctl/dupctl/internal/replay/internal/dlqtest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// losingDial is a dialer whose first connection is closed (as a lost node
// closes it) once the read has taken after messages; later connections
// stay up. The meter it returns counts what the reads took.
func losingDial(r *dlqtest.Rig, after int64) (Dialer, progress.Meter) {
	var mu sync.Mutex
	var first *amqp.Connection
	m := &closingMeter{after: after}
	dial := func(ctx context.Context, role string) (*amqp.Connection, error) {
		conn, err := r.Dial(ctx, role)
		mu.Lock()
		defer mu.Unlock()
		if err == nil && first == nil {
			first = conn
			m.close = func() { conn.Close() } // at once: the read must not finish first
		}
		return conn, err
	}
	return dial, m
}

type closingMeter struct {
	mu    sync.Mutex
	after int64
	done  int64
	close func()
}

func (m *closingMeter) SetTotal(int64) {}
func (m *closingMeter) Done()          {}
func (m *closingMeter) Add(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done += n
	if m.done == m.after && m.close != nil {
		m.close()
	}
}

func deadLetters(t *testing.T, n int) *dlqtest.Rig {
	r := dlqtest.NewRig(t, "")
	r.DeadLetter(dlqtest.Jobs(n))
	return r
}

// TestReadsSayWhatTheyReadBeforeALostConnection: peek and export whose
// connection is lost mid-read return what they read before, marked lost
// (DLQ_READ_CONNECTION_LOST, an error), never as the queue; nothing is
// acked, and every message is back in the queue. Stats with a failover
// reads the queue again, whole, through the next dial.
func TestReadsSayWhatTheyReadBeforeALostConnection(t *testing.T) {
	const n = 600
	r := deadLetters(t, n)
	ctx := t.Context()

	dial, meter := losingDial(r, 5)
	p, err := Peek(ctx, Deps{Dial: dial, Progress: meter}, PeekOptions{Read: Options{Queue: r.DLQ, Limit: 20, Window: 20}})
	must(t, err)
	if p.Read.Lost == "" || len(p.Messages) >= 20 || len(p.Messages) != p.Read.Read ||
		!hasFinding(p.Report().Findings, "DLQ_READ_CONNECTION_LOST") {
		t.Errorf("peek: lost %q, %d messages of 20 (read %d), findings %v", p.Read.Lost, len(p.Messages), p.Read.Read,
			codes(p.Report().Findings))
	}
	r.WaitCount(r.DLQ, n)

	out := &dlqtest.MemFile{}
	dial, meter = losingDial(r, 100)
	x, err := Export(ctx, ExportDeps{Deps: Deps{Dial: dial, Progress: meter}, Out: out},
		ExportOptions{Read: Options{Queue: r.DLQ, Window: 50}, Drain: true, File: "x.jsonl"})
	must(t, err)
	if x.Read.Lost == "" || x.Drained || x.Written >= n || !hasFinding(x.Report().Findings, "DLQ_EXPORT_INCOMPLETE") ||
		!hasFinding(x.Report().Findings, "DLQ_READ_CONNECTION_LOST") {
		t.Errorf("export: lost %q, drained %v, %d of %d written, findings %v", x.Read.Lost, x.Drained, x.Written, n, codes(x.Report().Findings))
	}
	if lines := bytes.Count(out.Bytes(), []byte("\n")); lines != x.Written {
		t.Errorf("export: the file holds %d records, the result says %d written", lines, x.Written)
	}
	r.WaitCount(r.DLQ, n) // --drain acked nothing

	dial, meter = losingDial(r, 200)
	redial := func(ctx context.Context, role, lost string) (*amqp.Connection, error) { return dial(ctx, role) }
	s, err := Stats(ctx, Deps{Dial: dial, Progress: meter, Failover: &Failover{Dial: redial, Nodes: 2}},
		StatsOptions{Read: Options{Queue: r.DLQ, Window: 50}})
	must(t, err)
	if s.Read.Lost != "" || len(s.Read.Failovers) != 1 || s.Messages != n || s.Read.Read != n || !s.Read.Settled ||
		!hasFinding(s.Report().Findings, "DLQ_READ_FAILOVER") {
		t.Errorf("stats: lost %q, failovers %+v, %d messages (read %d), settled %v; want %d read again whole",
			s.Read.Lost, s.Read.Failovers, s.Messages, s.Read.Read, s.Read.Settled, n)
	}
	if l := s.Read.Failovers; len(l) == 1 && (l[0].ReadBefore < 200 || l[0].ReadBefore >= n || l[0].TookOver == "") {
		t.Errorf("failover %+v: want the loss after 200 read and a node that took over", l[0])
	}
	r.WaitCount(r.DLQ, n)
}

func hasFinding(fs []findings.Finding, code string) bool {
	for _, f := range fs {
		if f.Code == code {
			return true
		}
	}
	return false
}

func codes(fs []findings.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code)
	}
	return strings.Join(out, ",")
}
