// Package classify reads what a dead letter says about itself: the value
// of a field (header.NAME, body.PATH, prop.NAME), why it failed and
// whether that is worth retrying (the built-in rules and a --rules file),
// its stats group, whether it passes a replay's filters (--where, --reason,
// --group, --older-than), and where it came from, so where a replay sends
// it back (Router).
package classify

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/deadletter"
	"github.com/dupctl/dupctl/internal/platform/text"
	amqp "github.com/rabbitmq/amqp091-go"
)

// Class says whether a dead letter's failure is worth retrying.
type Class string

const (
	Retryable    Class = "retryable"
	NonRetryable Class = "non-retryable"
	Unclassified Class = "unknown"
)

// Rule classifies a message when Pattern matches its Field.
type Rule struct {
	Class   Class
	Field   string // error, reason, job-type, queue, or a Field (header.X, body.X, prop.X)
	Pattern *regexp.Regexp
	Source  string // "built-in" or FILE:LINE
	field   Field
}

func (r Rule) String() string {
	return fmt.Sprintf("%s %s %s (%s)", r.Class, r.Field, r.Pattern, r.Source)
}

// builtinRules are checked after the user's: the practice's split between
// temporary failures (retry with backoff) and permanent ones (invalid
// payload, entity missing, contract violation: never retry).
var builtinRules = []Rule{
	builtin(NonRetryable, "error", `(?i)(invalid|validation|malformed|unmarshal|deserializ|cannot parse|parse error|syntax error|`+
		`schema|not found|no such|does not exist|unknown (field|type|enum)|illegal ?argument|unsupported|forbidden|`+
		`unauthori[sz]ed|permission denied|constraint|duplicate key|conversion|classcast|nullpointer|contract|`+
		`\b(400|401|403|404|409|410|422)\b)`),
	builtin(Retryable, "error", `(?i)(timeout|timed out|deadline exceeded|connection (refused|reset|closed)|broken pipe|temporar|`+
		`unavailable|try again|too many requests|rate.?limit|throttl|deadlock|lock (wait|busy|not acquired)|`+
		`could not obtain lock|econnreset|etimedout|eai_again|\b(429|502|503|504)\b)`),
	builtin(Retryable, "reason", `^(expired|maxlen)$`),
}

func builtin(c Class, field, pattern string) Rule {
	return Rule{Class: c, Field: field, Pattern: regexp.MustCompile(pattern), Source: "built-in"}
}

var ruleFields = []string{"error", "reason", "job-type", "queue"}

// ParseRules reads a rules file: one rule per line,
//
//	CLASS FIELD REGEX
//
// CLASS is retryable or non-retryable; FIELD is error, reason, job-type,
// queue, header.NAME, body.PATH or prop.NAME; REGEX (Go syntax) is the
// rest of the line. Blank lines and lines starting with # are ignored.
func ParseRules(r io.Reader, name string) ([]Rule, error) {
	var out []Rule
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 {
			return nil, fmt.Errorf("%s:%d: want CLASS FIELD REGEX, got %q", name, n, line)
		}
		rule := Rule{Class: Class(fields[0]), Field: fields[1], Source: fmt.Sprintf("%s:%d", name, n)}
		if rule.Class != Retryable && rule.Class != NonRetryable {
			return nil, fmt.Errorf("%s:%d: class %q: want retryable or non-retryable", name, n, fields[0])
		}
		if !contains(ruleFields, rule.Field) {
			f, err := parseField(rule.Field)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: field %q: want %s, header.NAME, body.PATH or prop.NAME",
					name, n, rule.Field, strings.Join(ruleFields, ", "))
			}
			rule.field = f
		}
		// The pattern is the rest of the line after CLASS and FIELD, so it
		// may contain spaces.
		rest := strings.TrimSpace(line[len(fields[0]):])
		rest = strings.TrimSpace(rest[len(fields[1]):])
		re, err := regexp.Compile(rest)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		rule.Pattern = re
		out = append(out, rule)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// Analyzer derives what stats, filters and replay need from a message.
type Analyzer struct {
	ErrorFields   []Field
	JobTypeFields []Field
	Rules         []Rule // the user's, checked before builtinRules
}

// Info is what dupctl knows about one dead letter.
type Info struct {
	Origin      deadletter.Origin
	Reason      string
	Queue       string // where it died last
	Exchange    string // the exchange it was first published to
	RoutingKeys []string
	Error       string
	ErrorNorm   string // the error with ids and numbers replaced, for grouping
	JobType     string
	Class       Class
	ClassRule   string
	Group       string // stable id of the stats group
	DiedAt      time.Time
}

// Origin reads only what routing and the loop guards need (no error,
// class or group: those cost regular expressions per message).
func (a *Analyzer) Origin(m *deadletter.Message) Info {
	o := deadletter.ReadOrigin(m.Props.Headers)
	in := Info{Origin: o, Reason: o.Reason(), Queue: o.SourceQueue(), DiedAt: o.DiedAt()}
	in.Exchange, in.RoutingKeys, _ = o.Route()
	return in
}

// Analyze reads a message's death history, error, job type and class.
func (a *Analyzer) Analyze(m *deadletter.Message) Info {
	in := a.Origin(m)
	errFields := a.ErrorFields
	if errFields == nil {
		errFields = defaultErrorFields
	}
	jobFields := a.JobTypeFields
	if jobFields == nil {
		jobFields = defaultJobTypeFields
	}
	in.Error, _, _ = FirstOf(m, errFields)
	if in.Error == "" {
		in.Error = errorFromHistory(m, errFields)
	}
	in.Error = firstLine(in.Error)
	in.ErrorNorm = normalizeError(in.Error)
	in.JobType, _, _ = FirstOf(m, jobFields)
	in.Class, in.ClassRule = a.classify(m, &in)
	in.Group = groupID(&in)
	return in
}

// errorFromHistory looks for the error in the newest entry of
// dupctl-death. A replay moves Spring's x-exception-* headers there; when
// the replayed message fails again and the broker dead-letters it (which
// adds only x-death), the error it carries is still that one, and without
// this the message would lose its classification after one replay.
func errorFromHistory(m *deadletter.Message, fields []Field) string {
	hist, _ := m.Props.Headers[deadletter.HeaderDeath].([]any)
	if len(hist) == 0 {
		return ""
	}
	moved, ok := hist[0].(amqp.Table)
	if !ok {
		return ""
	}
	var headers []Field
	for _, f := range fields {
		if f.Kind == "header" {
			headers = append(headers, f)
		}
	}
	v, _, _ := FirstOf(&deadletter.Message{Props: deadletter.Properties{Headers: moved}}, headers)
	return v
}

func (a *Analyzer) classify(m *deadletter.Message, in *Info) (Class, string) {
	for _, rules := range [][]Rule{a.Rules, builtinRules} {
		for _, r := range rules {
			var v string
			var ok bool
			switch r.Field {
			case "error":
				v, ok = in.Error, in.Error != ""
			case "reason":
				v, ok = in.Reason, true
			case "job-type":
				v, ok = in.JobType, in.JobType != ""
			case "queue":
				v, ok = in.Queue, in.Queue != ""
			default:
				v, ok = r.field.lookup(m)
			}
			if ok {
				if loc := r.Pattern.FindStringIndex(v); loc != nil {
					return r.Class, fmt.Sprintf("%s rule: %s matches %q", r.Source, r.Field, text.Clip(v[loc[0]:loc[1]], 63, "..."))
				}
			}
		}
	}
	return Unclassified, ""
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return text.Clip(s, 303, "...")
}

var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`), "<uuid>"},
	{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?`), "<time>"},
	{regexp.MustCompile(`\b[0-9a-fA-F]*[0-9][0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*\b|` +
		`\b[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*[0-9][0-9a-fA-F]*\b`), "<hex>"},
	{regexp.MustCompile(`\d+`), "<n>"},
}

// normalizeError replaces the parts of an error message that differ per
// job (ids, numbers, times) so one failure mode is one group.
func normalizeError(s string) string {
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

// groupID is the stable id of a message's stats group: same last death
// (reason, queue, original route), same job type, same normalized error.
// `dlq replay --group ID` replays one group.
func groupID(in *Info) string {
	h := sha256.New()
	for _, s := range []string{in.Reason, in.Queue, in.Exchange, strings.Join(in.RoutingKeys, ","), in.JobType, in.ErrorNorm} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:8]
}
