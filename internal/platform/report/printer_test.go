package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/buildinfo"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

var update = flag.Bool("update", false, "rewrite golden files")

var testRules = []findings.Rule{
	{Code: "LOCK_NO_TTL", Title: "lock key has no TTL", Severity: findings.Error, Fix: "set a TTL"},
	{Code: "LOCK_TOKEN_CONSTANT", Title: "lock value is not a token", Severity: findings.Warn, Fix: "use a random token"},
	{Code: "LOCK_FENCING_ABSENT", Title: "no fencing counter", Severity: findings.Info, Fix: "add a fencing counter"},
	{Code: "LOCK_CLEAN", Title: "never fires in this fixture", Severity: findings.Info, Fix: "nothing"},
}

func fixture() *findings.Report {
	r := &findings.Report{Command: "inspect lock",
		Checks: []string{"LOCK_NO_TTL", "LOCK_TOKEN_CONSTANT", "LOCK_FENCING_ABSENT", "LOCK_CLEAN"}}
	r.Add(
		testRules[2].New("lock:payment:*", "no fencing counter next to 3 locks"),
		testRules[1].New("lock:payment:order:42", `value "1" is a constant`, "GET lock:payment:order:42 = \"1\"", "same value on 12 live locks"),
		testRules[0].New("lock:payment:order:7", "lock never expires", "PTTL lock:payment:order:7 = -1",
			"connection redis://:hunter2@127.0.0.1:6379 <&>"),
		testRules[0].New("lock:payment:order:8", "lock never expires", "PTTL lock:payment:order:8 = -1"),
	)
	r.Data = map[string]any{"keys_scanned": 3}
	return r
}

func options(t findings.Threshold) Options {
	return Options{
		FailOn:  t,
		Tool:    buildinfo.Info{Version: "v0.0.0-test", Commit: "abc123"},
		Catalog: findings.NewCatalog(testRules),
	}
}

func render(t *testing.T, format string, o Options, text func(io.Writer, *Theme) error) string {
	t.Helper()
	p, err := NewPrinter(format, o)
	if err != nil {
		t.Fatal(err)
	}
	r := fixture()
	Prepare(r)
	var buf bytes.Buffer
	if err := p.Print(&buf, Document{Report: r, Text: text}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/platform/report -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestGolden(t *testing.T) {
	view := func(w io.Writer, th *Theme) error {
		tb := NewTable("FAMILY", "KEYS").AlignRight(1)
		tb.Row("lock:payment:order:{id}", "3")
		return tb.Render(w)
	}
	golden(t, "table.txt", render(t, FormatTable, options(findings.FailError), view))
	golden(t, "json.json", render(t, FormatJSON, options(findings.FailError), nil))
	golden(t, "junit.xml", render(t, FormatJUnit, options(findings.FailWarn), nil))
}

func TestNoSecretInAnyFormat(t *testing.T) {
	for _, f := range Formats {
		out := render(t, f, options(findings.FailError), nil)
		if strings.Contains(out, "hunter2") {
			t.Errorf("%s output leaks a password:\n%s", f, out)
		}
	}
}

func TestTableColor(t *testing.T) {
	o := options(findings.FailError)
	plain := render(t, FormatTable, o, nil)
	if strings.Contains(plain, "\x1b[") {
		t.Fatal("escape codes with colour off")
	}
	o.Color = true
	colored := render(t, FormatTable, o, nil)
	if !strings.Contains(colored, "\x1b[") {
		t.Fatal("no escape codes with colour on")
	}
}

func TestJUnitParsesBack(t *testing.T) {
	for _, th := range []findings.Threshold{findings.None, findings.FailInfo, findings.FailWarn, findings.FailError} {
		out := render(t, FormatJUnit, options(th), nil)
		var doc JUnitTestSuites
		if err := xml.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("fail-on %s: junit does not parse: %v", th, err)
		}
		if doc.Tests != 4 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 4 {
			t.Fatalf("fail-on %s: want 4 testcases, got %+v", th, doc)
		}
		wantFailures := map[findings.Threshold]int{findings.None: 0, findings.FailInfo: 3, findings.FailWarn: 2, findings.FailError: 1}[th]
		failures := 0
		for _, c := range doc.Suites[0].Cases {
			if c.Failure != nil {
				failures++
			}
		}
		// One <failure> per failed testcase (two LOCK_NO_TTL findings are
		// one failed check), and the counts say so.
		if elems := strings.Count(out, "<failure "); failures != wantFailures || doc.Failures != wantFailures ||
			doc.Suites[0].Failures != wantFailures || elems != wantFailures {
			t.Fatalf("fail-on %s: %d failed testcases, %d <failure> elements, suites say %d and %d, want %d",
				th, failures, elems, doc.Failures, doc.Suites[0].Failures, wantFailures)
		}
		if doc.Time == "" || doc.Suites[0].Time == "" || doc.Suites[0].Cases[0].Time == "" {
			t.Fatalf("fail-on %s: time attributes missing: %+v", th, doc)
		}
	}
}

// TestJSONContract pins the field names of the JSON report: renaming one
// breaks every consumer, so it must be a deliberate schema change.
func TestJSONContract(t *testing.T) {
	out := render(t, FormatJSON, options(findings.FailError), nil)
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"":         {"allowed", "checks", "command", "data", "fail_on", "findings", "schema_version", "summary", "tool"},
		"tool":     {"commit", "name", "version"},
		"summary":  {"checks", "error", "failed", "failed_checks", "findings", "info", "warn"},
		"checks":   {"code", "findings", "status", "title"},
		"findings": {"code", "evidence", "fix", "message", "severity", "subject"},
	}
	for path, fields := range want {
		obj := doc
		if path != "" {
			switch v := doc[path].(type) {
			case map[string]any:
				obj = v
			case []any:
				obj = v[0].(map[string]any)
			}
		}
		if got := keys(obj); !reflect.DeepEqual(got, fields) {
			t.Errorf("%q fields = %v, want %v", path, got, fields)
		}
	}
	if doc["schema_version"] != float64(SchemaVersion) {
		t.Errorf("schema_version = %v", doc["schema_version"])
	}
}

func TestJSONEmptyIsArrays(t *testing.T) {
	p, _ := NewPrinter(FormatJSON, options(findings.FailError))
	var buf bytes.Buffer
	if err := p.Print(&buf, Document{Report: &findings.Report{Command: "x"}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"findings": []`) || !strings.Contains(buf.String(), `"checks": []`) {
		t.Fatalf("empty report must have [] not null:\n%s", buf.String())
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestUnknownFormat(t *testing.T) {
	if _, err := NewPrinter("yaml", Options{}); err == nil || !strings.Contains(err.Error(), "table, json, junit, markdown, html") {
		t.Fatalf("err = %v", err)
	}
}

func TestDetailLimit(t *testing.T) {
	r := &findings.Report{}
	for i := range 12 {
		r.Add(testRules[0].New(fmt.Sprintf("k%02d", i), "m", "e"))
	}
	Prepare(r)
	var buf bytes.Buffer
	p, _ := NewPrinter(FormatTable, options(findings.FailError))
	if err := p.Print(&buf, Document{Report: r}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "(2 more findings with evidence: use -v to show all)") {
		t.Fatalf("no truncation note:\n%s", buf.String())
	}
}

func TestJUnitBinarySubject(t *testing.T) {
	r := &findings.Report{Command: "dlq peek"}
	r.Add(testRules[0].New("msg\x00\x01id", "body \x1b[31m\xff", "raw \x07"))
	Prepare(r)
	var buf bytes.Buffer
	p, _ := NewPrinter(FormatJUnit, options(findings.FailError))
	if err := p.Print(&buf, Document{Report: r}); err != nil {
		t.Fatal(err)
	}
	var doc JUnitTestSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("junit with control characters does not parse: %v\n%s", err, buf.String())
	}
}

// TestMarkdownAndHTMLEscapeOutsideData: a finding's text cannot inject
// markup into the Markdown summary or the HTML page.
func TestMarkdownAndHTMLEscapeOutsideData(t *testing.T) {
	evil := `<script>alert(1)</script> | **bold** [x](http://evil)`
	r := &findings.Report{Command: "inspect lock"}
	r.Add(testRules[0].New("lock:<img src=x onerror=alert(1)>", evil, "evidence "+evil))
	Prepare(r)
	for _, format := range []string{FormatMarkdown, FormatHTML} {
		p, _ := NewPrinter(format, options(findings.FailError))
		var buf bytes.Buffer
		if err := p.Print(&buf, Document{Report: r}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		bad := []string{"<script", "<img"}
		if format == FormatMarkdown {
			bad = append(bad, "x](http://evil)", "| **bold**") // markup that would render (escaped: x\\](, \\*\\*)
		} else {
			bad = append(bad, `href="http`, `src="http`, "<link", "@import") // requests that leave the page
		}
		for _, b := range bad {
			if strings.Contains(out, b) {
				t.Errorf("%s: %q came through:\n%s", format, b, out)
			}
		}
	}
}
