package dlqread

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/replay/classify"
)

// PeekOptions are one `dlq peek` run (Read.Limit: how many).
type PeekOptions struct {
	Read     Options
	Vhost    string
	Analyzer *classify.Analyzer // nil: the built-in rules and fields
	Router   classify.Router
}

// Peeked is one message of `dlq peek`: its export record and what dupctl
// makes of it.
type Peeked struct {
	Record      json.RawMessage  `json:"record"`
	Reason      string           `json:"reason"`
	Queue       string           `json:"died_in"`
	Error       string           `json:"error"`
	JobType     string           `json:"job_type"`
	Class       classify.Class   `json:"class"`
	Group       string           `json:"group"`
	Deaths      int64            `json:"deaths"`
	ReplayCount int64            `json:"replay_count"`
	DiedAt      *time.Time       `json:"died_at"`
	Destination *classify.Target `json:"replay_destination"`
	Malformed   []string         `json:"malformed_headers"`

	Msg *deadletter.Message `json:"-"`
}

// PeekResult is what `dlq peek` read (its JSON data).
type PeekResult struct {
	Queue    string    `json:"queue"`
	Vhost    string    `json:"vhost,omitempty"`
	Read     Result    `json:"read"`
	Messages []*Peeked `json:"messages"`
}

// describe analyses one message for peek.
func describe(m *deadletter.Message, a *classify.Analyzer, r *classify.Router, rec json.RawMessage) *Peeked {
	in := a.Analyze(m)
	p := &Peeked{Record: rec, Reason: in.Reason, Queue: in.Queue, Error: in.Error, JobType: in.JobType, Class: in.Class,
		Group: in.Group, Deaths: in.Origin.DeathCount(), ReplayCount: in.Origin.ReplayCount, Malformed: in.Origin.Malformed, Msg: m}
	if p.Malformed == nil {
		p.Malformed = []string{}
	}
	if !in.DiedAt.IsZero() {
		t := in.DiedAt.UTC()
		p.DiedAt = &t
	}
	if t, ok := r.Route(m, &in); ok {
		p.Destination = &t
	}
	return p
}

// Peek reads up to Read.Limit messages, describes them and requeues them.
// A read that loses its node is read again, whole, through another: the
// lost read's messages are back in the queue, and the output is the
// second read's, each message once.
func Peek(ctx context.Context, d Deps, o PeekOptions) (*PeekResult, error) {
	if err := o.Read.check(); err != nil {
		return nil, err
	}
	d.defaults()
	if o.Analyzer == nil {
		o.Analyzer = &classify.Analyzer{}
	}
	data := &PeekResult{Queue: o.Read.Queue, Vhost: o.Vhost}
	at := d.Now()
	res, err := failingOver(ctx, d, o.Read.Queue, "", func(d Deps) (Result, error) {
		data.Messages = []*Peeked{}
		return readQueue(ctx, d, o.Read, func(m *deadletter.Message) error {
			rec, err := m.MarshalRecord(at, o.Read.Queue, o.Vhost)
			if err != nil {
				return fmt.Errorf("message %d: %w", len(data.Messages)+1, err)
			}
			data.Messages = append(data.Messages, describe(m, o.Analyzer, &o.Router, rec))
			return nil
		}, false, nil)
	})
	if err != nil {
		return nil, err
	}
	data.Read = res
	return data, nil
}

// Report has the findings of the read itself (consumers, quorum reads,
// malformed headers).
func (p *PeekResult) Report() *findings.Report { return readReport("dlq peek", p, p.Queue, p.Read) }
