package report

import (
	"bufio"
	"io"

	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/redact"
)

// SchemaVersion is the version of the JSON report documented in
// docs/report-schema.md. It changes only when a field changes meaning or
// disappears; new fields do not bump it.
const SchemaVersion = 1

// JSONReport is the one object `-o json` writes. Field names are a public
// contract (see the contract test).
type JSONReport struct {
	SchemaVersion int                       `json:"schema_version"`
	Tool          JSONTool                  `json:"tool"`
	Command       string                    `json:"command"`
	FailOn        string                    `json:"fail_on"`
	Summary       findings.Summary          `json:"summary"`
	Checks        []JSONCheck               `json:"checks"`
	Findings      []findings.Finding        `json:"findings"`
	Allowed       []findings.AllowedFinding `json:"allowed"`
	Data          any                       `json:"data"`
	// Error is why the run did not end well (exit 2, 3 or 130); absent
	// when it did (exit 0 or 1).
	Error *JSONError `json:"error,omitempty"`
}

// JSONError is the error of a run that did not end well: the one-line
// message stderr shows, the exit code, and the checks that could not run.
type JSONError struct {
	Message  string       `json:"message"`
	ExitCode int          `json:"exit_code"`
	NotRun   []JSONNotRun `json:"not_run"`
}

// JSONNotRun is one check that could not run, and why.
type JSONNotRun struct {
	Check   string `json:"check"`
	Message string `json:"message"`
}

// JSONTool names the build that wrote the report.
type JSONTool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Commit  string `json:"commit"`
}

// JSONCheck is one evaluated rule and its outcome at --fail-on.
type JSONCheck struct {
	Code     string `json:"code"`
	Title    string `json:"title"`
	Status   string `json:"status"` // "pass" or "fail"
	Findings int    `json:"findings"`
}

type jsonPrinter struct{ o Options }

// build returns the JSON object of a report.
func (p jsonPrinter) build(r *findings.Report) JSONReport {
	out := JSONReport{
		SchemaVersion: SchemaVersion,
		Tool:          JSONTool{Name: "dupctl", Version: p.o.Tool.Version, Commit: p.o.Tool.Commit},
		Command:       r.Command,
		FailOn:        p.o.FailOn.String(),
		Summary:       findings.Summarize(r, p.o.FailOn),
		Checks:        []JSONCheck{},
		Findings:      r.Findings,
		Data:          r.Data,
	}
	if out.Findings == nil {
		out.Findings = []findings.Finding{}
	}
	out.Allowed = r.Allowed
	if out.Allowed == nil {
		out.Allowed = []findings.AllowedFinding{}
	}
	for _, code := range checkList(r) {
		c := JSONCheck{Code: code, Status: "pass"}
		if rule, ok := lookup(p.o.Catalog, code); ok {
			c.Title = rule.Title
		}
		for _, f := range r.Findings {
			if f.Code != code {
				continue
			}
			c.Findings++
			if p.o.FailOn.Fails(f.Severity) {
				c.Status = "fail"
			}
		}
		out.Checks = append(out.Checks, c)
	}
	if f := p.o.Failure; f != nil {
		out.Error = &JSONError{Message: f.Message, ExitCode: f.ExitCode, NotRun: []JSONNotRun{}}
		for _, n := range f.NotRun {
			out.Error.NotRun = append(out.Error.NotRun, JSONNotRun(n))
		}
	}
	return out
}

func lookup(c *findings.Catalog, code string) (findings.Rule, bool) {
	if c == nil {
		return findings.Rule{}, false
	}
	return c.Lookup(code)
}

func (p jsonPrinter) Print(w io.Writer, d Document) error {
	rw := redact.NewWriter(w)
	bw := bufio.NewWriterSize(rw, 64<<10)
	if err := streamJSON(bw, p.build(d.Report)); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return rw.Close()
}
