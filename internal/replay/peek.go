package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// PeekOptions are one `dlq peek` or `dlq export` run.
type PeekOptions struct {
	Read     ReadOptions
	Vhost    string
	Analyzer *Analyzer
	Router   Router
	Dial     Dialer
	Now      func() time.Time
}

// Peeked is one message of `dlq peek`: its export record and what dupctl
// makes of it.
type Peeked struct {
	Record      json.RawMessage `json:"record"`
	Reason      string          `json:"reason"`
	Queue       string          `json:"died_in"`
	Error       string          `json:"error"`
	JobType     string          `json:"job_type"`
	Class       Class           `json:"class"`
	Group       string          `json:"group"`
	Deaths      int64           `json:"deaths"`
	ReplayCount int64           `json:"replay_count"`
	DiedAt      *time.Time      `json:"died_at"`
	Destination *Target         `json:"replay_destination"`
	Malformed   []string        `json:"malformed_headers"`

	Msg *Message `json:"-"`
}

// PeekData is the JSON data of `dlq peek`.
type PeekData struct {
	Queue    string     `json:"queue"`
	Vhost    string     `json:"vhost,omitempty"`
	Read     ReadResult `json:"read"`
	Messages []*Peeked  `json:"messages"`
}

// Describe analyses one message for peek.
func Describe(m *Message, a *Analyzer, r *Router, rec json.RawMessage) *Peeked {
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

// RunPeek reads up to Read.Limit messages and requeues them.
func RunPeek(ctx context.Context, o PeekOptions) (*findings.Report, *PeekData, error) {
	o.defaults()
	data := &PeekData{Queue: o.Read.Queue, Vhost: o.Vhost, Messages: []*Peeked{}}
	at := o.Now()
	res, err := ReadQueue(ctx, o.Dial, o.Read, func(m *Message) error {
		rec, err := m.MarshalRecord(at, o.Read.Queue, o.Vhost)
		if err != nil {
			return fmt.Errorf("message %d: %w", len(data.Messages)+1, err)
		}
		data.Messages = append(data.Messages, Describe(m, o.Analyzer, &o.Router, rec))
		return nil
	}, false, nil)
	if err != nil {
		return nil, nil, err
	}
	data.Read = res
	rep := &findings.Report{Command: "dlq peek", Data: data}
	rep.Check(RuleHasConsumers.Code, RuleQuorumReads.Code, RuleMalformed.Code)
	rep.Add(readFindings(o.Read.Queue, res.AtStart, res.Quorum, res.MaxDeliveryCount, res.Malformed)...)
	return rep, data, nil
}

func (o *PeekOptions) defaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Analyzer == nil {
		o.Analyzer = &Analyzer{}
	}
}

// ExportData is the JSON data of `dlq export`.
type ExportData struct {
	Queue   string     `json:"queue"`
	Vhost   string     `json:"vhost,omitempty"`
	File    string     `json:"file"`
	Read    ReadResult `json:"read"`
	Written int        `json:"written"`
	Bytes   int64      `json:"body_bytes"`
	Drained bool       `json:"drained"`
}

// RunExport writes every message read to w as export records, syncs it,
// and requeues the messages - or, with drain, acks them only after the
// sync succeeded.
func RunExport(ctx context.Context, o PeekOptions, w JournalFile, file string, drain bool) (*findings.Report, *ExportData, error) {
	o.defaults()
	data := &ExportData{Queue: o.Read.Queue, Vhost: o.Vhost, File: file}
	bw := bufio.NewWriterSize(w, 1<<20)
	at := o.Now()
	write := func(m *Message) error {
		rec, err := m.MarshalRecord(at, o.Read.Queue, o.Vhost)
		if err != nil {
			return fmt.Errorf("message %d: %w", data.Written+1, err)
		}
		if _, err := bw.Write(append(rec, '\n')); err != nil {
			return fmt.Errorf("write %s: %w", file, err)
		}
		data.Written++
		data.Bytes += int64(len(m.Body))
		return nil
	}
	commit := func() error {
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("write %s: %w", file, err)
		}
		if err := w.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", file, err)
		}
		return nil
	}
	res, err := ReadQueue(ctx, o.Dial, o.Read, write, drain, commit)
	if err != nil {
		return nil, nil, err
	}
	data.Read, data.Drained = res, drain && data.Written > 0
	rep := &findings.Report{Command: "dlq export", Data: data}
	rep.Check(RuleHasConsumers.Code, RuleQuorumReads.Code, RuleMalformed.Code)
	rep.Add(readFindings(o.Read.Queue, res.AtStart, res.Quorum, res.MaxDeliveryCount, res.Malformed)...)
	return rep, data, nil
}
