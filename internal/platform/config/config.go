// Package config reads dupctl.yaml: the connections and job types of a
// system (queue, DLQ, lock pattern, idempotency table, TTL, cache pattern,
// log mapping) so commands need no retyped flags, and the allow-list of
// accepted findings, each with a reason and an expiry date.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"go.yaml.in/yaml/v3"
)

// DefaultPath is read when it exists and no --config is given.
const DefaultPath = "dupctl.yaml"

// Config is one dupctl.yaml.
type Config struct {
	Version     int         `yaml:"version" json:"version"`
	Connections Connections `yaml:"connections" json:"connections"`
	Jobs        []Job       `yaml:"jobs" json:"jobs"`
	Locks       Locks       `yaml:"locks" json:"locks"`
	Watch       Watch       `yaml:"watch" json:"watch"`
	Allow       []Allow     `yaml:"allow" json:"allow"`
	// Path is where it was read from.
	Path string `yaml:"-" json:"path"`
}

// Connections are URLs; flags and environment variables win over them.
type Connections struct {
	RedisURL      string  `yaml:"redis_url" json:"redis_url"`
	DatabaseURL   string  `yaml:"database_url" json:"database_url"`
	AMQPURL       URLList `yaml:"amqp_url" json:"amqp_url"`
	ManagementURL string  `yaml:"management_url" json:"management_url"`
}

// Job is one job type of the system.
type Job struct {
	Name         string      `yaml:"name" json:"name"`
	Queue        string      `yaml:"queue" json:"queue"`
	DLQ          string      `yaml:"dlq" json:"dlq"`
	RetryQueue   string      `yaml:"retry_queue" json:"retry_queue"`
	LockPattern  string      `yaml:"lock_pattern" json:"lock_pattern"`
	LockTTL      Duration    `yaml:"lock_ttl" json:"lock_ttl"`
	Idempotency  Idempotency `yaml:"idempotency" json:"idempotency"`
	CachePattern string      `yaml:"cache_pattern" json:"cache_pattern"`
	Logs         Logs        `yaml:"logs" json:"logs"`
	Durations    Durations   `yaml:"durations" json:"durations"`
	// Profile and Mitigations describe how the job's consumer is built
	// (a named simulator profile, then single switches such as idem: txn),
	// so doctor can test the crash scenarios against it.
	Profile     string            `yaml:"profile" json:"profile"`
	Mitigations map[string]string `yaml:"mitigations" json:"mitigations"`
	// Worker starts the job's own consumer, so that
	// `dupctl simulate <scenario> --worker` and doctor can run it under
	// real faults (docs/worker-chaos.md).
	Worker *Worker `yaml:"worker" json:"worker,omitempty"`
}

// Worker is how to run a job's consumer under faults: the command, its
// environment ({amqp}, {redis}, {postgres} name dupctl's proxies), where
// its messages go and how its side effects are counted.
type Worker struct {
	Command    string   `yaml:"command" json:"command"`
	Workers    int      `yaml:"workers" json:"workers"`
	Env        []string `yaml:"env" json:"env"`
	Publish    string   `yaml:"publish" json:"publish"`
	Body       string   `yaml:"body" json:"body"`
	EffectsSQL string   `yaml:"effects_sql" json:"effects_sql"`
	// EffectsLog counts the effects in logs instead ("-": the workers'
	// output), read with the job's logs mapping.
	EffectsLog string `yaml:"effects_log" json:"effects_log"`
	CacheKeys  string `yaml:"cache_keys" json:"cache_keys"`
}

// Idempotency names the idempotency table.
type Idempotency struct {
	Table             string `yaml:"table" json:"table"`
	KeyColumn         string `yaml:"key_column" json:"key_column"`
	StatusColumn      string `yaml:"status_column" json:"status_column"`
	BusinessKeyColumn string `yaml:"business_key_column" json:"business_key_column"`
}

// Logs is where the job's structured logs are, how their fields map and
// which phrases of their messages name a step (kind: [phrases], as
// --event KIND=PHRASE).
type Logs struct {
	Paths  []string            `yaml:"paths" json:"paths"`
	Fields map[string]string   `yaml:"fields" json:"fields"`
	Events map[string][]string `yaml:"events" json:"events"`
}

// Watch is `dupctl watch`'s schedule: every check's interval, and each
// check's own interval and timeout by its name (lock, dlq, store, cache).
// Flags win over it.
type Watch struct {
	Interval Duration              `yaml:"interval" json:"interval"`
	Checks   map[string]WatchCheck `yaml:"checks" json:"checks"`
}

// WatchCheck is one check's schedule.
type WatchCheck struct {
	Interval Duration `yaml:"interval" json:"interval"`
	Timeout  Duration `yaml:"timeout" json:"timeout"`
}

// Durations says where real job durations come from.
type Durations struct {
	CSV   string `yaml:"csv" json:"csv"`
	Query string `yaml:"query" json:"query"`
}

// Locks tells `dupctl inspect lock` about the system's locks: patterns of
// keys that are locks whatever their shape (as --lock-pattern), and lock
// libraries the built-in catalogue does not know (docs/inspect-lock.md).
type Locks struct {
	Patterns  []string      `yaml:"patterns" json:"patterns"`
	Libraries []LockLibrary `yaml:"libraries" json:"libraries"`
}

// LockLibrary is one lock library: how its keys are named and what they
// hold. Only id, library and match are required.
type LockLibrary struct {
	ID      string   `yaml:"id" json:"id"`
	Library string   `yaml:"library" json:"library"`
	Role    string   `yaml:"role" json:"role"`     // lock (default) or dedup
	Match   []string `yaml:"match" json:"match"`   // Redis globs of its keys
	Type    string   `yaml:"type" json:"type"`     // string (default), hash or zset
	Format  string   `yaml:"format" json:"format"` // a value format of the catalogue; any (default)
	TTL     string   `yaml:"ttl" json:"ttl"`       // lease (default), renewed, optional, none-by-design
	// Shared says one token sits on many locks by design (no LOCK_TOKEN_SHARED).
	Shared bool `yaml:"shared" json:"shared"`
	// NameOnly makes a match name the library without confirming the
	// key is a lock (for values common elsewhere).
	NameOnly bool   `yaml:"name_only" json:"name_only"`
	Note     string `yaml:"note" json:"note"`
}

// Allow accepts findings of one code (optionally only for subjects
// matching a glob) until it expires.
type Allow struct {
	Code    string `yaml:"code" json:"code"`
	Subject string `yaml:"subject" json:"subject"`
	Reason  string `yaml:"reason" json:"reason"`
	Expires Date   `yaml:"expires" json:"expires"`
}

// Duration is a time.Duration written as "2m".
type Duration time.Duration

// UnmarshalYAML reads a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: %q is not a duration such as 30s or 2m", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration as people do.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// URLList is one URL, or several addresses of one cluster written as a
// YAML list (amqp_url: [amqp://u:p@h1:5672/, amqp://u:p@h2:5672/]), kept
// as the comma-separated list --amqp-url takes.
type URLList string

// UnmarshalYAML reads a string or a list of strings.
func (l *URLList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = URLList(n.Value)
		return nil
	case yaml.SequenceNode:
		var parts []string
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode || c.Value == "" {
				return fmt.Errorf("line %d: want a URL in the list", c.Line)
			}
			parts = append(parts, c.Value)
		}
		*l = URLList(strings.Join(parts, ","))
		return nil
	}
	return fmt.Errorf("line %d: want a URL or a list of URLs", n.Line)
}

// Date is a calendar day, written 2027-03-31.
type Date struct{ time.Time }

// UnmarshalYAML reads YYYY-MM-DD.
func (d *Date) UnmarshalYAML(n *yaml.Node) error {
	t, err := time.Parse(time.DateOnly, n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a date such as 2027-03-31", n.Line, n.Value)
	}
	d.Time = t
	return nil
}

// MarshalText writes YYYY-MM-DD.
func (d Date) MarshalText() ([]byte, error) {
	if d.IsZero() {
		return []byte(""), nil
	}
	return []byte(d.Format(time.DateOnly)), nil
}

// Load reads and checks a config file.
func Load(p string) (*Config, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	defer f.Close()
	c, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", p, err)
	}
	c.Path = p
	return c, nil
}

// Parse reads a config; unknown keys are errors, so a typo is not a
// silently ignored setting.
func Parse(r io.Reader) (*Config, error) {
	raw, err := io.ReadAll(io.LimitReader(r, 4<<20))
	if err != nil {
		return nil, err
	}
	c := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return nil, oneLine(err)
	}
	return c, c.validate()
}

func oneLine(err error) error {
	return errors.New(strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "yaml: ", "")), " "))
}

func (c *Config) validate() error {
	if c.Version != 0 && c.Version != 1 {
		return fmt.Errorf("version %d: this dupctl reads version 1", c.Version)
	}
	seen := map[string]bool{}
	for i, j := range c.Jobs {
		if j.Name == "" {
			return fmt.Errorf("jobs[%d]: name is required", i)
		}
		if seen[j.Name] {
			return fmt.Errorf("jobs[%d]: job %q is defined twice", i, j.Name)
		}
		seen[j.Name] = true
	}
	for i, l := range c.Locks.Libraries {
		if l.ID == "" || l.Library == "" || len(l.Match) == 0 {
			return fmt.Errorf("locks.libraries[%d]: id, library and match are required", i)
		}
	}
	for i, a := range c.Allow {
		switch {
		case a.Code == "":
			return fmt.Errorf("allow[%d]: code is required", i)
		case strings.TrimSpace(a.Reason) == "":
			return fmt.Errorf("allow[%d] (%s): a reason is required: say why the finding is accepted", i, a.Code)
		case a.Expires.IsZero():
			return fmt.Errorf("allow[%d] (%s): an expiry date is required (expires: 2027-03-31): accepted risks must be looked at again", i, a.Code)
		}
		if _, err := path.Match(a.Subject, ""); err != nil {
			return fmt.Errorf("allow[%d] (%s): subject %q is not a valid glob", i, a.Code, a.Subject)
		}
	}
	return nil
}

// Job returns the job type with this name.
func (c *Config) Job(name string) (Job, bool) {
	for _, j := range c.Jobs {
		if j.Name == name {
			return j, true
		}
	}
	return Job{}, false
}

// Match returns the allow entry covering a finding, if any. An expired
// entry is returned with expired set: the finding stands again.
func (c *Config) Match(f findings.Finding, now time.Time) (a Allow, expired, ok bool) {
	if c == nil {
		return Allow{}, false, false
	}
	for _, a := range c.Allow {
		if !strings.EqualFold(a.Code, f.Code) {
			continue
		}
		if a.Subject != "" {
			if m, _ := path.Match(a.Subject, f.Subject); !m {
				continue
			}
		}
		// An entry is valid through the whole expiry day.
		return a, !now.Before(a.Expires.AddDate(0, 0, 1)), true
	}
	return Allow{}, false, false
}

// RuleAllowExpired is reported when an allow-list entry that covers a
// finding has passed its expiry date.
var RuleAllowExpired = findings.Rule{
	Code: "CONFIG_ALLOW_EXPIRED", Severity: findings.Warn, Since: "v0.1.0",
	Title: "an allow-list entry has expired; the finding it covered is reported again",
	Doc: `dupctl.yaml accepts findings with a reason and an expiry date. After the
date the finding counts again and this warning says which entry ran out, so
an accepted risk cannot stay accepted by forgetting.`,
	Fix: "Fix the finding, or renew the entry in dupctl.yaml with a new reason and expiry date.",
}

// Rules lists the config's rules.
func Rules() []findings.Rule { return []findings.Rule{RuleAllowExpired} }

// ApplyAllow moves findings covered by a valid allow entry to r.Allowed
// and adds a CONFIG_ALLOW_EXPIRED warning for each expired entry that
// matched.
func (c *Config) ApplyAllow(r *findings.Report, now time.Time) {
	if c == nil || len(c.Allow) == 0 {
		return
	}
	kept := r.Findings[:0]
	var expired []findings.Finding
	warned := map[string]bool{}
	for _, f := range r.Findings {
		a, isExpired, ok := c.Match(f, now)
		switch {
		case !ok:
			kept = append(kept, f)
		case isExpired:
			kept = append(kept, f)
			id := a.Code + "|" + a.Subject
			if !warned[id] {
				warned[id] = true
				subject := a.Code
				if a.Subject != "" {
					subject += " " + a.Subject
				}
				expired = append(expired, RuleAllowExpired.New(subject,
					fmt.Sprintf("allow entry expired on %s (%s)", a.Expires.Format(time.DateOnly), a.Reason), "config: "+c.Path))
			}
		default:
			r.Allowed = append(r.Allowed, findings.AllowedFinding{Finding: f, Reason: a.Reason, Expires: a.Expires.Format(time.DateOnly)})
		}
	}
	r.Findings = append(kept, expired...)
	if len(expired) > 0 {
		r.Check(RuleAllowExpired.Code)
	}
}
