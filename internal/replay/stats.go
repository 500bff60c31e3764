package replay

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// StatsOptions are one `dlq stats` run.
type StatsOptions struct {
	Read            ReadOptions
	Vhost           string
	Analyzer        *Analyzer // nil: the built-in rules and fields
	IdempotencyKeys []Field   // nil: DefaultIdempotencyFields
}

// Group is one row of the stats table: messages with the same last death
// (reason, queue, original route), job type and error pattern.
type Group struct {
	ID           string     `json:"id"`
	Reason       string     `json:"reason"`
	Queue        string     `json:"queue"`
	Exchange     string     `json:"exchange"`
	RoutingKeys  []string   `json:"routing_keys"`
	JobType      string     `json:"job_type"`
	Error        string     `json:"error"` // an example
	ErrorPattern string     `json:"error_pattern"`
	Class        Class      `json:"class"`
	ClassRule    string     `json:"class_rule"`
	Messages     int        `json:"messages"`
	Bytes        int64      `json:"bytes"`
	DeathsMax    int64      `json:"deaths_max"`
	DeathsTotal  int64      `json:"deaths_total"`
	ReplayedMax  int64      `json:"replayed_max"`
	Oldest       *time.Time `json:"oldest_death"` // nil: no message says when it died
	Newest       *time.Time `json:"newest_death"`
	Replay       string     `json:"replay_command"`

	noIdentity, noError int
}

// StatsResult is what `dlq stats` found (its JSON data).
type StatsResult struct {
	Queue     string         `json:"queue"`
	Vhost     string         `json:"vhost,omitempty"`
	Read      ReadResult     `json:"read"`
	Messages  int            `json:"messages"`
	Bytes     int64          `json:"bytes"`
	Oldest    *time.Time     `json:"oldest_death"`
	Newest    *time.Time     `json:"newest_death"`
	AgeSecs   int64          `json:"oldest_age_seconds"`
	ByReason  map[string]int `json:"by_reason"`
	ByClass   map[string]int `json:"by_class"`
	Groups    []*Group       `json:"groups"`
	NoOrigin  int            `json:"no_origin"`
	NoIdentit int            `json:"no_identity"`
}

// Aggregator groups messages as they are read.
type Aggregator struct {
	a     *Analyzer
	keys  []Field
	queue string
	s     *StatsResult
	index map[string]*Group
}

// NewAggregator starts stats for a queue.
func NewAggregator(a *Analyzer, idemKeys []Field, queue, vhost string) *Aggregator {
	if idemKeys == nil {
		idemKeys = DefaultIdempotencyFields
	}
	return &Aggregator{a: a, keys: idemKeys, queue: queue, index: map[string]*Group{},
		s: &StatsResult{Queue: queue, Vhost: vhost, ByReason: map[string]int{}, ByClass: map[string]int{}, Groups: []*Group{}}}
}

// Add counts one message.
func (ag *Aggregator) Add(m *Message) {
	in := ag.a.Analyze(m)
	s := ag.s
	s.Messages++
	s.Bytes += int64(len(m.Body))
	s.ByReason[in.Reason]++
	s.ByClass[string(in.Class)]++
	g := ag.index[in.Group]
	if g == nil {
		g = &Group{ID: in.Group, Reason: in.Reason, Queue: in.Queue, Exchange: in.Exchange, RoutingKeys: in.RoutingKeys,
			JobType: in.JobType, Error: in.Error, ErrorPattern: in.ErrorNorm, Class: in.Class, ClassRule: in.ClassRule,
			Replay: fmt.Sprintf("dupctl dlq replay --queue %s --group %s", shellQuote(ag.queue), in.Group)}
		if g.RoutingKeys == nil {
			g.RoutingKeys = []string{}
		}
		ag.index[in.Group] = g
		s.Groups = append(s.Groups, g)
	}
	g.Messages++
	g.Bytes += int64(len(m.Body))
	dc := in.Origin.DeathCount()
	g.DeathsTotal += dc
	g.DeathsMax = max(g.DeathsMax, dc)
	g.ReplayedMax = max(g.ReplayedMax, in.Origin.ReplayCount)
	if t := in.DiedAt; !t.IsZero() {
		if g.Oldest == nil || t.Before(*g.Oldest) {
			g.Oldest = &t
		}
		if g.Newest == nil || t.After(*g.Newest) {
			g.Newest = &t
		}
	}
	if _, _, ok := in.Origin.Route(); !ok && in.Queue == "" {
		s.NoOrigin++
	}
	if _, _, ok := FirstOf(m, ag.keys); !ok && m.Props.MessageID == "" {
		s.NoIdentit++
		g.noIdentity++
	}
	if in.Error == "" {
		g.noError++
	}
}

// Done sorts the groups (most messages first) and returns the stats.
func (ag *Aggregator) Done(now time.Time) *StatsResult {
	s := ag.s
	slices.SortStableFunc(s.Groups, func(a, b *Group) int {
		return cmp.Or(cmp.Compare(b.Messages, a.Messages), cmp.Compare(a.ID, b.ID))
	})
	for _, g := range s.Groups {
		if g.Oldest != nil && (s.Oldest == nil || g.Oldest.Before(*s.Oldest)) {
			s.Oldest = g.Oldest
		}
		if g.Newest != nil && (s.Newest == nil || g.Newest.After(*s.Newest)) {
			s.Newest = g.Newest
		}
	}
	if s.Oldest != nil {
		s.AgeSecs = int64(now.Sub(*s.Oldest).Seconds())
	}
	return s
}

// Stats reads the queue non-destructively and groups its messages.
func Stats(ctx context.Context, d ReadDeps, o StatsOptions) (*StatsResult, error) {
	d.defaults()
	if o.Analyzer == nil {
		o.Analyzer = &Analyzer{}
	}
	ag := NewAggregator(o.Analyzer, o.IdempotencyKeys, o.Read.Queue, o.Vhost)
	res, err := readQueue(ctx, d, o.Read, func(m *Message) error { ag.Add(m); return nil }, false, nil)
	if err != nil {
		return nil, err
	}
	s := ag.Done(d.Now())
	s.Read = res
	return s, nil
}

// Report turns the stats into findings: groups that should never have
// been retried, loops, missing context, consumers, quorum reads.
func (s *StatsResult) Report() *findings.Report {
	rep := &findings.Report{Command: "dlq stats", Data: s}
	rep.Check(StatsChecks...)
	var out []findings.Finding
	q := "queue " + s.Queue
	for _, g := range s.Groups {
		subject := "group " + g.ID
		if g.Class == NonRetryable && g.DeathsMax > 1 {
			out = append(out, RuleNonRetryableRetried.New(subject,
				fmt.Sprintf("%s failed with a permanent error (%s) and died up to %d times", msgs(g.Messages), clipText(g.ErrorPattern, 80), g.DeathsMax),
				"error: "+g.Error, "classified by "+g.ClassRule))
		}
		if g.ReplayedMax > 0 {
			out = append(out, RuleReplayedBefore.New(subject,
				fmt.Sprintf("%s replayed up to %d times died again", msgs(g.Messages), g.ReplayedMax), "error: "+g.Error))
		}
		if g.noError > 0 {
			out = append(out, RuleNoErrorContext.New(subject, fmt.Sprintf("%s %s nothing about why %s failed", msgs(g.noError),
				english.Plural(g.noError, "says", "say"), english.Plural(g.noError, "it", "they"))))
		}
	}
	if s.NoIdentit > 0 {
		out = append(out, RuleNoIdentity.New(q, fmt.Sprintf("%d of %s have neither a message id nor an idempotency key", s.NoIdentit, msgs(s.Messages))))
	}
	if s.NoOrigin > 0 {
		out = append(out, RuleNoOrigin.New(q, fmt.Sprintf("%d of %s have no x-death or x-original-* headers", s.NoOrigin, msgs(s.Messages))))
	}
	out = append(out, readFindings(s.Queue, s.Read)...)
	rep.Add(out...)
	return rep
}

// readReport is the report of a verb that only reads: the findings of
// the read itself.
func readReport(command string, data any, queue string, r ReadResult) *findings.Report {
	rep := &findings.Report{Command: command, Data: data}
	rep.Check(RuleHasConsumers.Code, RuleQuorumReads.Code, RuleMalformed.Code, RuleReadIncomplete.Code)
	rep.Add(readFindings(queue, r)...)
	return rep
}

func readFindings(queue string, r ReadResult) []findings.Finding {
	var out []findings.Finding
	q := "queue " + queue
	if r.AtStart.Consumers > 0 {
		out = append(out, RuleHasConsumers.New(q, fmt.Sprintf("%s attached to the DLQ (what they hold unacknowledged is in no count)",
			english.Count(r.AtStart.Consumers, "consumer", "consumers"))))
	}
	if r.Quorum {
		out = append(out, RuleQuorumReads.New(q, fmt.Sprintf("quorum queue: messages carry x-delivery-count (highest %d); each read adds one", r.MaxDeliveryCount)))
	}
	if r.Malformed > 0 {
		out = append(out, RuleMalformed.New(q, fmt.Sprintf("%s with death headers of the wrong type", msgs(r.Malformed))))
	}
	if why := r.inexact(); len(why) > 0 {
		out = append(out, RuleReadIncomplete.New(q, why[0], why[1:]...))
	}
	return out
}

// inexact says why the read's count may not be the queue's, most
// important first (nil: it is exact).
func (r ReadResult) inexact() []string {
	var why []string
	if r.Read < r.Target {
		why = append(why, fmt.Sprintf("read %d of the %d counted at the start: no more arrived (another consumer took them, or they expired)", r.Read, r.Target))
	}
	if !r.Settled {
		why = append(why, fmt.Sprintf("the messages read were not all back in the queue when it ended (it showed %d ready, %s)",
			r.AtEnd.Messages, english.Count(r.AtEnd.Consumers, "consumer", "consumers")))
	} else if r.AtStart.Consumers == 0 && r.AtEnd.Messages > r.AtStart.Messages-r.Acked {
		why = append(why, fmt.Sprintf("%s arrived during the read: not in its count", msgs(r.AtEnd.Messages-(r.AtStart.Messages-r.Acked))))
	}
	return why
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// shellQuote quotes a queue name for a command a user can paste.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == ':' || r == '/' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// msgs is "1 message" or "n messages".
func msgs(n int) string { return english.Count(n, "message", "messages") }
