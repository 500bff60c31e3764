package dlqread

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/text"
	"github.com/dupctl/dupctl/internal/replay/classify"
)

// StatsOptions are one `dlq stats` run.
type StatsOptions struct {
	Read            Options
	Vhost           string
	Analyzer        *classify.Analyzer // nil: the built-in rules and fields
	IdempotencyKeys []classify.Field   // nil: classify.DefaultIdempotencyFields
}

// Group is one row of the stats table: messages with the same last death
// (reason, queue, original route), job type and error pattern.
type Group struct {
	ID           string         `json:"id"`
	Reason       string         `json:"reason"`
	Queue        string         `json:"queue"`
	Exchange     string         `json:"exchange"`
	RoutingKeys  []string       `json:"routing_keys"`
	JobType      string         `json:"job_type"`
	Error        string         `json:"error"` // an example
	ErrorPattern string         `json:"error_pattern"`
	Class        classify.Class `json:"class"`
	ClassRule    string         `json:"class_rule"`
	Messages     int            `json:"messages"`
	Bytes        int64          `json:"bytes"`
	DeathsMax    int64          `json:"deaths_max"`
	DeathsTotal  int64          `json:"deaths_total"`
	ReplayedMax  int64          `json:"replayed_max"`
	// DeliveryLimited counts the messages its queue's delivery limit
	// dead-lettered (each delivered limit + 1 times, one death).
	DeliveryLimited int        `json:"delivery_limited"`
	Oldest          *time.Time `json:"oldest_death"` // nil: no message says when it died
	Newest          *time.Time `json:"newest_death"`
	Replay          string     `json:"replay_command"`

	noIdentity, noError int
}

// StatsResult is what `dlq stats` found (its JSON data).
type StatsResult struct {
	Queue     string         `json:"queue"`
	Vhost     string         `json:"vhost,omitempty"`
	Read      Result         `json:"read"`
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

// aggregator groups messages as they are read.
type aggregator struct {
	a     *classify.Analyzer
	keys  []classify.Field
	queue string
	s     *StatsResult
	index map[string]*Group
}

// newAggregator starts stats for a queue.
func newAggregator(a *classify.Analyzer, idemKeys []classify.Field, queue, vhost string) *aggregator {
	if idemKeys == nil {
		idemKeys = classify.DefaultIdempotencyFields
	}
	return &aggregator{a: a, keys: idemKeys, queue: queue, index: map[string]*Group{},
		s: &StatsResult{Queue: queue, Vhost: vhost, ByReason: map[string]int{}, ByClass: map[string]int{}, Groups: []*Group{}}}
}

// add counts one message.
func (ag *aggregator) add(m *deadletter.Message) {
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
	if in.Origin.DeliveryLimited() {
		g.DeliveryLimited++
	}
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
	if _, _, ok := classify.FirstOf(m, ag.keys); !ok && m.Props.MessageID == "" {
		s.NoIdentit++
		g.noIdentity++
	}
	if in.Error == "" {
		g.noError++
	}
}

// done sorts the groups (most messages first) and returns the stats.
func (ag *aggregator) done(now time.Time) *StatsResult {
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

// Stats reads the queue non-destructively and groups its messages. A
// read that loses its node is read again, whole, through another
// (failingOver): the stats are one read's, never a sum of two halves.
func Stats(ctx context.Context, d Deps, o StatsOptions) (*StatsResult, error) {
	if err := o.Read.check(); err != nil {
		return nil, err
	}
	d.defaults()
	if o.Analyzer == nil {
		o.Analyzer = &classify.Analyzer{}
	}
	var ag *aggregator
	res, err := failingOver(ctx, d, o.Read.Queue, "", func(d Deps) (Result, error) {
		ag = newAggregator(o.Analyzer, o.IdempotencyKeys, o.Read.Queue, o.Vhost)
		return readQueue(ctx, d, o.Read, func(m *deadletter.Message) error { ag.add(m); return nil }, false, nil)
	})
	if err != nil {
		return nil, err
	}
	s := ag.done(d.Now())
	s.Read = res
	return s, nil
}

// Report turns the stats into findings: groups that should never have
// been retried, loops, missing context, consumers, quorum reads.
func (s *StatsResult) Report() *findings.Report {
	rep := &findings.Report{Command: "dlq stats", Data: s}
	rep.Check(statsChecks...)
	var out []findings.Finding
	q := "queue " + s.Queue
	for _, g := range s.Groups {
		subject := "group " + g.ID
		out = append(out, g.retried(subject)...)
		if g.ReplayedMax > 0 {
			out = append(out, ruleReplayedBefore.New(subject,
				fmt.Sprintf("%s replayed up to %d times died again", msgs(g.Messages), g.ReplayedMax), "error: "+g.Error))
		}
		if g.noError > 0 {
			out = append(out, ruleNoErrorContext.New(subject, fmt.Sprintf("%s %s nothing about why %s failed", msgs(g.noError),
				english.Plural(g.noError, "says", "say"), english.Plural(g.noError, "it", "they"))))
		}
	}
	if s.NoIdentit > 0 {
		out = append(out, ruleNoIdentity.New(q,
			fmt.Sprintf("%d of %s have neither a message id nor an idempotency key", s.NoIdentit, msgs(s.Messages))))
	}
	if s.NoOrigin > 0 {
		out = append(out, ruleNoOrigin.New(q, fmt.Sprintf("%d of %s have no x-death or x-original-* headers", s.NoOrigin, msgs(s.Messages))))
	}
	out = append(out, Findings(s.Queue, s.Read)...)
	out = append(out, lossFindings(s.Queue, s.Read)...)
	rep.Add(out...)
	return rep
}

// retried are a group's findings about deliveries before its death: a
// permanent error retried (it died more than once, or a delivery limit
// shows it was requeued until the limit), and poison messages.
func (g *Group) retried(subject string) []findings.Finding {
	var out []findings.Finding
	pattern := text.Clip(g.ErrorPattern, 83, "...")
	switch {
	case g.Class != classify.NonRetryable:
	case g.DeathsMax > 1:
		out = append(out, ruleNonRetryableRetried.New(subject,
			fmt.Sprintf("%s failed with a permanent error (%s) and died up to %d times", msgs(g.Messages), pattern, g.DeathsMax),
			"error: "+g.Error, "classified by "+g.ClassRule))
	case g.DeliveryLimited > 0:
		out = append(out, ruleNonRetryableRetried.New(subject,
			fmt.Sprintf("%s failed with a permanent error (%s) and %s requeued until %s delivery limit dead-lettered %s",
				msgs(g.DeliveryLimited), pattern, english.Plural(g.DeliveryLimited, "was", "were"), queueOf(g.Queue),
				english.Plural(g.DeliveryLimited, "it", "them")),
			"error: "+g.Error, "classified by "+g.ClassRule))
	}
	if g.DeliveryLimited > 0 {
		why := "the error column is empty: a crash or a consumer timeout?"
		if g.Error != "" {
			why = "error: " + g.Error
		}
		out = append(out, ruleDeliveryLimit.New(subject,
			fmt.Sprintf("%s dead-lettered by %s delivery limit: each delivered limit + 1 times, the handler ran on every delivery",
				msgs(g.DeliveryLimited), queueOf(g.Queue)), why))
	}
	return out
}

// queueOf is "queue Q's" or, with no name, "its queue's".
func queueOf(q string) string {
	if q == "" {
		return "its queue's"
	}
	return fmt.Sprintf("queue %q's", q)
}

// shellQuote quotes a queue name for a command a user can paste.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == ':' || r == '/' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
