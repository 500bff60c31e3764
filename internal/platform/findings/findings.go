// Package findings is the one model every dupctl check reports in: a Finding
// has a stable Code from a Rule, a Severity, the Subject it is about (a key,
// a table, a message id), a Message, the Evidence that backs it and a
// concrete Fix. A Report is what one command produced. Renderers live in
// internal/platform/report; this package has no dependencies so every capability can
// use it.
package findings

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severity of a finding. The zero value is invalid.
type Severity uint8

const (
	Info Severity = iota + 1
	Warn
	Error
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warn:
		return "warn"
	case Error:
		return "error"
	}
	return fmt.Sprintf("severity(%d)", uint8(s))
}

// MarshalText writes the severity's name, so JSON carries "error", not 3.
func (s Severity) MarshalText() ([]byte, error) {
	if s < Info || s > Error {
		return nil, fmt.Errorf("invalid severity %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a severity name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ParseSeverity reads "error", "warn" (or "warning") or "info".
func ParseSeverity(v string) (Severity, error) {
	switch strings.ToLower(v) {
	case "error":
		return Error, nil
	case "warn", "warning":
		return Warn, nil
	case "info":
		return Info, nil
	}
	return 0, fmt.Errorf("unknown severity %q: want error, warn or info", v)
}

// Threshold is --fail-on: findings at or above it make the exit code 1.
// The zero value is None: nothing fails.
type Threshold uint8

const (
	None      Threshold = 0
	FailInfo            = Threshold(Info)
	FailWarn            = Threshold(Warn)
	FailError           = Threshold(Error)
)

// ParseThreshold reads "error", "warn", "info" or "none".
func ParseThreshold(v string) (Threshold, error) {
	if strings.EqualFold(v, "none") {
		return None, nil
	}
	s, err := ParseSeverity(v)
	if err != nil {
		return None, fmt.Errorf("unknown --fail-on level %q: want error, warn, info or none", v)
	}
	return Threshold(s), nil
}

func (t Threshold) String() string {
	if t == None {
		return "none"
	}
	return Severity(t).String()
}

// Fails reports whether a finding of severity s is at or above t.
func (t Threshold) Fails(s Severity) bool {
	return t != None && s >= Severity(t)
}

// Finding is one thing a check found.
type Finding struct {
	Code     string   `json:"code"`
	Severity Severity `json:"severity"`
	Subject  string   `json:"subject"`
	Message  string   `json:"message"`
	Evidence []string `json:"evidence"`
	Fix      string   `json:"fix"`
}

// Rule documents one finding code. Codes are stable and never reused.
type Rule struct {
	Code     string
	Title    string   // one line: what was found
	Severity Severity // default severity
	Doc      string   // what it means and how it leads to duplicates
	Fix      string   // the concrete fix, from the safe consumer flow
	Since    string   // dupctl version that introduced it
}

// New returns a finding of this rule with its default severity and fix.
func (r Rule) New(subject, message string, evidence ...string) Finding {
	return Finding{Code: r.Code, Severity: r.Severity, Subject: subject, Message: message, Evidence: evidence, Fix: r.Fix}
}

// Catalog is the set of rules a build knows, in a stable order.
type Catalog struct {
	rules []Rule
	index map[string]int
}

// NewCatalog builds a catalog. It panics on a duplicate or malformed code:
// that is a programming error caught by any test that builds the catalog.
func NewCatalog(groups ...[]Rule) *Catalog {
	c := &Catalog{index: map[string]int{}}
	for _, g := range groups {
		for _, r := range g {
			if r.Code == "" || r.Code != strings.ToUpper(r.Code) || strings.ContainsAny(r.Code, " \t") {
				panic(fmt.Sprintf("findings: malformed rule code %q", r.Code))
			}
			if _, dup := c.index[r.Code]; dup {
				panic(fmt.Sprintf("findings: duplicate rule code %q", r.Code))
			}
			if r.Severity < Info || r.Severity > Error || r.Title == "" || r.Fix == "" {
				panic(fmt.Sprintf("findings: rule %s lacks a severity, title or fix", r.Code))
			}
			c.index[r.Code] = len(c.rules)
			c.rules = append(c.rules, r)
		}
	}
	return c
}

// Lookup returns the rule with this code; a nil catalog knows none.
func (c *Catalog) Lookup(code string) (Rule, bool) {
	if c == nil {
		return Rule{}, false
	}
	i, ok := c.index[strings.ToUpper(code)]
	if !ok {
		return Rule{}, false
	}
	return c.rules[i], true
}

// All returns every rule, sorted by code.
func (c *Catalog) All() []Rule {
	if c == nil {
		return nil
	}
	out := slices.Clone(c.rules)
	slices.SortFunc(out, func(a, b Rule) int { return cmp.Compare(a.Code, b.Code) })
	return out
}

// Report is everything one command run produced.
type Report struct {
	// Command is the command line's verb path, e.g. "simulate crash".
	Command string
	// Checks are the rule codes this run evaluated, in order: each is a
	// JUnit testcase, passed when no finding of that code fails the run.
	Checks []string
	// Findings found.
	Findings []Finding
	// Data is the command's own result, carried under "data" in JSON.
	Data any
	// Allowed are findings an allow-list entry accepts: shown, not
	// counted toward --fail-on.
	Allowed []AllowedFinding
}

// AllowedFinding is a finding accepted by the allow-list, with why and
// until when.
type AllowedFinding struct {
	Finding
	Reason  string `json:"allowed_reason"`
	Expires string `json:"allowed_until"`
}

// Add appends findings.
func (r *Report) Add(fs ...Finding) { r.Findings = append(r.Findings, fs...) }

// Check records that a rule was evaluated (once).
func (r *Report) Check(codes ...string) {
	for _, c := range codes {
		if !slices.Contains(r.Checks, c) {
			r.Checks = append(r.Checks, c)
		}
	}
}

// Sort orders findings by severity (worst first), then code, then subject,
// then message: the one order every renderer shows.
func (r *Report) Sort() {
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(b.Severity, a.Severity),
			cmp.Compare(a.Code, b.Code),
			cmp.Compare(a.Subject, b.Subject),
			cmp.Compare(a.Message, b.Message),
		)
	})
}

// Summary counts a report's findings against a threshold.
type Summary struct {
	Findings     int  `json:"findings"`
	Errors       int  `json:"error"`
	Warnings     int  `json:"warn"`
	Infos        int  `json:"info"`
	Checks       int  `json:"checks"`
	FailedChecks int  `json:"failed_checks"`
	Failed       bool `json:"failed"`
}

// Summarize counts r's findings; Failed is true when any is at or above t.
func Summarize(r *Report, t Threshold) Summary {
	s := Summary{Findings: len(r.Findings), Checks: len(r.Checks)}
	failedCodes := map[string]bool{}
	for _, f := range r.Findings {
		switch f.Severity {
		case Error:
			s.Errors++
		case Warn:
			s.Warnings++
		case Info:
			s.Infos++
		}
		if t.Fails(f.Severity) {
			s.Failed = true
			failedCodes[f.Code] = true
		}
	}
	for _, c := range r.Checks {
		if failedCodes[c] {
			s.FailedChecks++
		}
	}
	return s
}
