// Package keys finds idempotency keys that change between retries of one
// business operation (and so cannot recognise the retry), says which part
// of the key changes and what it is - a random UUID, a time-based id, a
// timestamp, the attempt counter, a delivery id, the consumer instance, a
// digest of something volatile - gives the key's template and the stable
// key to use instead. It also reports keys reused across business keys or
// payloads, side effects with no key, and keys that differ only by case.
//
// It reads normalized events (internal/logs): structured logs, JSON or
// CSV exports, or rows of a SQL query turned into JSON lines.
package keys

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/progress"
)

// Options shape one analysis.
type Options struct {
	Mapping  *logs.Mapping
	Strict   bool
	Progress progress.Meter
	// MaxKeysPerGroup caps the distinct keys remembered per business key.
	MaxKeysPerGroup int
	// Format forces the log format (FormatAuto: each file's own); TZ is
	// the zone of times written without one.
	Format logs.Format
	TZ     *time.Location
	// MaxLine is the longest line or export record read (0:
	// logs.DefaultMaxLine).
	MaxLine int
}

// Result is the data behind JSON output and the text view.
type Result struct {
	Input        logs.Stats    `json:"input"`
	Keys         int           `json:"idempotency_keys"`
	Groups       int           `json:"business_keys"`
	Unstable     []Unstable    `json:"unstable"`
	Reused       []Reused      `json:"reused"`
	Missing      []Missing     `json:"missing"`
	CaseVariants []CaseVariant `json:"case_variants"`
}

// Use is one key as an attempt used it.
type Use struct {
	Key      string    `json:"key"`
	Attempt  int       `json:"attempt"`
	JobID    string    `json:"job_id"`
	Message  string    `json:"message_id"`
	Consumer string    `json:"consumer"`
	Time     time.Time `json:"time,omitzero"`
	Where    string    `json:"where"`
	Effects  int       `json:"side_effects"`
	// logged says the line carried an attempt (a 0 may be the first of
	// a count from 0).
	logged bool
}

// Unstable is one business operation whose key changed between attempts.
type Unstable struct {
	BusinessKey string `json:"business_key"`
	JobType     string `json:"job_type"`
	Uses        []Use  `json:"uses"`
	// Confirmed says the uses are retries of one operation (same job or
	// message id, attempt > 1, redelivered), and why.
	Confirmed bool     `json:"confirmed"`
	Why       string   `json:"why"`
	Class     Class    `json:"class"`
	Detail    string   `json:"detail"`
	Values    []string `json:"varying"`
	Template  string   `json:"template"`
	Stable    string   `json:"suggested_key"`
	Effects   int      `json:"side_effects"`
}

// Reused is one key used by several business keys or payloads.
type Reused struct {
	Key          string   `json:"key"`
	BusinessKeys []string `json:"business_keys"`
	Payloads     []string `json:"payload_hashes"`
	Where        []string `json:"where"`
}

// Missing counts side effects without a key, per job type.
type Missing struct {
	JobType string   `json:"job_type"`
	Effects int64    `json:"side_effects"`
	Where   []string `json:"where"`
}

// CaseVariant is a key seen in spellings that differ only by case or
// surrounding blanks.
type CaseVariant struct {
	Keys  []string `json:"keys"`
	Where []string `json:"where"`
}

type groupAcc struct {
	business, jobType string
	uses              []Use
	effects           int
	redelivered       map[string]bool // key -> seen on a redelivery
}

type keyAcc struct {
	business, otherBusiness string
	payload, otherPayload   string
	where                   []string
}

// Run analyses the sources.
func Run(ctx context.Context, sources []logs.Source, o Options) (*Result, error) {
	if o.Mapping == nil {
		o.Mapping = logs.Default()
	}
	if o.MaxKeysPerGroup <= 0 {
		o.MaxKeysPerGroup = 16
	}
	readable := make([]logs.Source, len(sources))
	for i, s := range sources {
		readable[i] = exportAware(s, o.MaxLine)
	}
	c := &collector{o: o, groups: map[string]*groupAcc{}, keys: map[string]*keyAcc{}, lower: map[string][]string{},
		lowerWhere: map[string][]string{}, missing: map[string]*Missing{}}
	scan := logs.Options{Mapping: o.Mapping, Strict: o.Strict, Progress: o.Progress, Format: o.Format, TZ: o.TZ, MaxLine: o.MaxLine}
	st, err := logs.Scan(ctx, readable, scan, c.event)
	if err != nil {
		return nil, err
	}
	if err := logs.NotRead(st); err != nil {
		return nil, err
	}
	return c.result(st), nil
}

// collector gathers, line by line, how each business key's idempotency
// keys were spelled and where each key was used. Strings kept from an
// event are cloned: the event's are borrowed from the line.
type collector struct {
	o          Options
	groups     map[string]*groupAcc
	keys       map[string]*keyAcc
	lower      map[string][]string // folded key -> spellings (first two)
	lowerWhere map[string][]string
	missing    map[string]*Missing
}

func (c *collector) event(e *logs.Event) error {
	k := e.IdempotencyKey()
	if k == "" {
		if e.Kind == logs.KindSideEffect {
			c.noKey(e)
		}
		return nil
	}
	biz := e.BusinessKey()
	gk := "b:" + biz
	if biz == "" {
		if id := firstNonEmpty(e.JobID(), e.MessageID()); id != "" {
			gk = "j:" + id
		} else {
			gk = ""
		}
	}
	if gk != "" {
		c.use(e, gk, k, biz)
	}
	c.key(e, k, biz)
	return nil
}

// noKey counts a side effect logged without an idempotency key.
func (c *collector) noKey(e *logs.Event) {
	m := c.missing[e.JobType()]
	if m == nil {
		m = &Missing{JobType: strings.Clone(e.JobType())}
		c.missing[m.JobType] = m
	}
	m.Effects++
	if len(m.Where) < 3 {
		m.Where = append(m.Where, e.Where())
	}
}

// use records key k used by the group gk (a business key, or one job).
func (c *collector) use(e *logs.Event, gk, k, biz string) {
	g := c.groups[gk]
	if g == nil {
		g = &groupAcc{business: strings.Clone(biz), redelivered: map[string]bool{}}
		c.groups[strings.Clone(gk)] = g
	}
	if g.jobType == "" {
		g.jobType = strings.Clone(e.JobType())
	}
	i := slices.IndexFunc(g.uses, func(u Use) bool { return u.Key == k })
	if i < 0 && len(g.uses) < c.o.MaxKeysPerGroup {
		g.uses = append(g.uses, Use{Key: strings.Clone(k), Attempt: e.Attempt, logged: e.HasAttempt, JobID: strings.Clone(e.JobID()),
			Message: strings.Clone(e.MessageID()), Consumer: strings.Clone(e.Consumer()), Time: e.Time, Where: e.Where()})
		i = len(g.uses) - 1
	}
	if i >= 0 {
		u := &g.uses[i]
		if !u.logged && e.HasAttempt {
			u.Attempt, u.logged = e.Attempt, true
		}
		if e.Redelivered == logs.True {
			g.redelivered[u.Key] = true
		}
		if e.Kind == logs.KindSideEffect {
			u.Effects++
		}
	}
	if e.Kind == logs.KindSideEffect {
		g.effects++
	}
}

// key records which business keys and payloads key k was used for, and
// its spelling folded to lower case.
func (c *collector) key(e *logs.Event, k, biz string) {
	ka := c.keys[k]
	if ka == nil {
		ka = &keyAcc{business: strings.Clone(biz), payload: strings.Clone(e.Get(logs.PayloadHash)), where: []string{e.Where()}}
		c.keys[strings.Clone(k)] = ka
		// ToLower may return its (borrowed) argument: clone.
		f := strings.Clone(strings.ToLower(strings.TrimSpace(k)))
		if sp := c.lower[f]; len(sp) < 2 {
			c.lower[f] = append(sp, strings.Clone(k))
			c.lowerWhere[f] = append(c.lowerWhere[f], e.Where())
		}
	}
	if biz != "" && ka.business != biz && ka.otherBusiness == "" {
		if ka.business == "" {
			ka.business = strings.Clone(biz)
		} else {
			ka.otherBusiness = strings.Clone(biz)
			ka.where = append(ka.where, e.Where())
		}
	}
	if p := e.Get(logs.PayloadHash); p != "" && ka.payload != p && ka.otherPayload == "" {
		if ka.payload == "" {
			ka.payload = strings.Clone(p)
		} else {
			ka.otherPayload = strings.Clone(p)
			ka.where = append(ka.where, e.Where())
		}
	}
}

// result sorts what was gathered into the result.
func (c *collector) result(st logs.Stats) *Result {
	res := &Result{Input: st, Keys: len(c.keys), Groups: len(c.groups), Unstable: []Unstable{}, Reused: []Reused{}, Missing: []Missing{},
		CaseVariants: []CaseVariant{}}
	for _, g := range c.groups {
		if u, ok := unstable(g); ok {
			res.Unstable = append(res.Unstable, u)
		}
	}
	slices.SortFunc(res.Unstable, func(a, b Unstable) int {
		return strings.Compare(a.BusinessKey+a.Uses[0].Key, b.BusinessKey+b.Uses[0].Key)
	})
	for k, ka := range c.keys {
		if ka.otherBusiness != "" || ka.otherPayload != "" {
			r := Reused{Key: k, BusinessKeys: nonEmpty(ka.business, ka.otherBusiness), Payloads: nonEmpty(ka.payload, ka.otherPayload),
				Where: ka.where}
			res.Reused = append(res.Reused, r)
		}
	}
	slices.SortFunc(res.Reused, func(a, b Reused) int { return strings.Compare(a.Key, b.Key) })
	for f, sp := range c.lower {
		if len(sp) > 1 {
			res.CaseVariants = append(res.CaseVariants, CaseVariant{Keys: sp, Where: c.lowerWhere[f]})
		}
	}
	slices.SortFunc(res.CaseVariants, func(a, b CaseVariant) int { return strings.Compare(a.Keys[0], b.Keys[0]) })
	for _, m := range c.missing {
		res.Missing = append(res.Missing, *m)
	}
	slices.SortFunc(res.Missing, func(a, b Missing) int { return strings.Compare(a.JobType, b.JobType) })
	return res
}

func nonEmpty(s ...string) []string {
	out := []string{}
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// unstable decides whether a business key's keys are one operation's
// changing key, and classifies the change.
func unstable(g *groupAcc) (Unstable, bool) {
	if len(g.uses) < 2 {
		return Unstable{}, false
	}
	uses := slices.Clone(g.uses)
	slices.SortStableFunc(uses, func(a, b Use) int { return a.Time.Compare(b.Time) })
	// Spellings that differ only by case are a normalisation problem,
	// reported as case variants, not as an unstable key.
	folded := map[string]bool{}
	for _, u := range uses {
		folded[strings.ToLower(strings.TrimSpace(u.Key))] = true
	}
	if len(folded) < 2 {
		return Unstable{}, false
	}
	keys := make([]string, len(uses))
	ctx := make([]attemptCtx, len(uses))
	for i, u := range uses {
		keys[i] = u.Key
		ctx[i] = attemptCtx{attempt: u.Attempt, time: u.Time, consumer: u.Consumer, delivery: u.Message, message: u.Message}
	}
	confirmed, why := retries(uses, g.redelivered)
	seg := analyse(keys, ctx)
	u := Unstable{BusinessKey: g.business, JobType: g.jobType, Uses: uses, Confirmed: confirmed, Why: why,
		Class: seg.verdict.class, Detail: seg.verdict.detail, Values: seg.values,
		Template: seg.template(g.business), Stable: seg.stable(g.business), Effects: g.effects}
	if u.BusinessKey == "" {
		u.BusinessKey = "job " + firstNonEmpty(uses[0].JobID, uses[0].Message)
	}
	return u, true
}

// retries says whether the uses are attempts of one operation.
func retries(uses []Use, redelivered map[string]bool) (bool, string) {
	for i := 1; i < len(uses); i++ {
		for j := 0; j < i; j++ {
			a, b := uses[j], uses[i]
			if a.JobID != "" && a.JobID == b.JobID {
				return true, "same job id " + a.JobID
			}
			if a.Message != "" && a.Message == b.Message {
				return true, "same message id " + a.Message
			}
		}
	}
	for i, u := range uses[1:] {
		for _, prev := range uses[:i+1] {
			if u.logged && prev.logged && u.Attempt > prev.Attempt {
				return true, fmt.Sprintf("a later key was used by attempt %d, an earlier one by attempt %d", u.Attempt, prev.Attempt)
			}
		}
		if u.logged && u.Attempt > 1 {
			return true, fmt.Sprintf("a later key was used by attempt %d", u.Attempt)
		}
		if redelivered[u.Key] {
			return true, "a later key was used by a redelivery"
		}
	}
	return false, "different jobs or messages and no attempt > 1: may be separate operations"
}

// Report turns a result into findings.
func (r *Result) Report() *findings.Report {
	rep := &findings.Report{Command: "keys unstable", Data: r}
	for _, rule := range append(Rules(), logs.Rules()...) {
		rep.Check(rule.Code)
	}
	rep.Add(logs.InputFindings(r.Input)...)
	for _, u := range r.Unstable {
		rule := RuleUnconfirmed
		if u.Confirmed {
			rule = classRule[u.Class]
		}
		ev := []string{}
		for _, x := range u.Uses {
			s := fmt.Sprintf("%s key=%s", x.Where, x.Key)
			if x.logged {
				s += fmt.Sprintf(" attempt=%d", x.Attempt)
			}
			if x.JobID != "" {
				s += " job=" + x.JobID
			}
			if x.Effects > 0 {
				s += fmt.Sprintf(" side_effects=%d", x.Effects)
			}
			ev = append(ev, s)
		}
		ev = append(ev, "varying part: "+strings.Join(u.Values, ", ")+" ("+u.Detail+")", "retries of one operation: "+u.Why)
		f := rule.New(u.BusinessKey, fmt.Sprintf("%d keys for one operation, template %s; use %s", len(u.Uses), u.Template, u.Stable), ev...)
		if u.Confirmed && u.Effects > 1 {
			f.Severity = findings.Error
			f.Message += fmt.Sprintf(" (the side effect ran %d times)", u.Effects)
		}
		rep.Add(f)
	}
	for _, k := range r.Reused {
		what := "business keys " + strings.Join(k.BusinessKeys, ", ")
		if len(k.BusinessKeys) < 2 {
			what = "payloads " + strings.Join(k.Payloads, ", ")
		}
		rep.Add(RuleReused.New(k.Key, "one key used for different "+what, k.Where...))
	}
	for _, m := range r.Missing {
		jt := m.JobType
		if jt == "" {
			jt = "(no job type)"
		}
		rep.Add(RuleMissing.New(jt, fmt.Sprintf("%d side effects carry no idempotency key", m.Effects), m.Where...))
	}
	for _, c := range r.CaseVariants {
		ev := make([]string, len(c.Keys))
		for i, k := range c.Keys {
			ev[i] = fmt.Sprintf("%s key=%q", c.Where[i], k)
		}
		rep.Add(RuleCase.New(c.Keys[0], "the same key in spellings that differ only by case or blanks", ev...))
	}
	return rep
}
