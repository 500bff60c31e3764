package cli_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/testenv/loggen"
)

// docSize is one HTML page size docs/reports.md quotes: the sentence
// around it (a pattern whose groups are the numbers it states) and how to
// measure them now.
type docSize struct {
	pattern string                                   // %s stands for each number
	measure func(t *testing.T, dir string) []float64 // the numbers, in order; the last is the page's size in kB
}

// TestReportSizesInDocs renders the pages whose sizes docs/reports.md
// quotes, in process, on the inputs docs/reports-screenshots.sh uses, and
// fails when a quoted size is stale (off by more than 1 kB and 2%, which
// the page's run-to-run changes stay under): a change of layout fails here
// until the docs follow. go test ./internal/cli -run TestReportSizesInDocs
// -update rewrites the numbers.
func TestReportSizesInDocs(t *testing.T) {
	dir := t.TempDir()
	page := func(t *testing.T, args ...string) (kB float64, js map[string]any) {
		t.Helper()
		html, jsonFile := filepath.Join(dir, "page.html"), filepath.Join(dir, "page.json")
		runToFile(t, append(args, "--html", html, "-o", "json="+jsonFile, "--fail-on", "none")...)
		fi, err := os.Stat(html)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(jsonFile)
		if err == nil {
			err = json.Unmarshal(b, &js)
		}
		if err != nil {
			t.Fatalf("the JSON of %v: %v", args, err)
		}
		return float64(fi.Size()) / 1000, js["data"].(map[string]any)
	}
	simple := func(args ...string) func(*testing.T, string) []float64 {
		return func(t *testing.T, _ string) []float64 {
			kB, _ := page(t, args...)
			return []float64{kB}
		}
	}
	fleet := func(t *testing.T) string { // the screenshots' fleet: bench/audit-logs/gen -jobs 400 -workers 4 -incident-every 40
		path := filepath.Join(dir, "fleet.log")
		if _, err := os.Stat(path); err == nil {
			return path
		}
		fh, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		c := loggen.Config{Seed: 1, Jobs: 400, Workers: 4, IncidentEvery: 40, Dialect: "camel"}
		if _, err := loggen.Write(c, loggen.Single(fh)); err != nil {
			t.Fatal(err)
		}
		return path
	}
	sizes := []docSize{
		{"`simulate crash` %s kB", simple("simulate", "crash")},
		{"`simulate lock-expiry` %s kB", simple("simulate", "lock-expiry")},
		{"`simulate unlock-no-token` %s kB", simple("simulate", "unlock-no-token")},
		{"`simulate matrix` (%s profiles x %s scenarios) %s kB", func(t *testing.T, _ string) []float64 {
			kB, data := page(t, "simulate", "matrix")
			profiles, scenarios := map[any]bool{}, map[any]bool{}
			for _, c := range data["cells"].([]any) {
				profiles[c.(map[string]any)["profile"]], scenarios[c.(map[string]any)["scenario"]] = true, true
			}
			return []float64{float64(len(profiles)), float64(len(scenarios)), kB}
		}},
		{"`inspect ttl` (2 job types) %s kB", func(t *testing.T, dir string) []float64 {
			csv := filepath.Join(dir, "durations.csv")
			var b strings.Builder
			b.WriteString("job_type,duration_ms\n")
			for i := 1; i <= 400; i++ {
				fmt.Fprintf(&b, "payment,%d\n", 100+i*i/20)
			}
			for i := 1; i <= 200; i++ {
				fmt.Fprintf(&b, "email,%d\n", 40+(i*37)%500)
			}
			if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			kB, _ := page(t, "inspect", "ttl", csv, "--ttl", "5s")
			return []float64{kB}
		}},
		{"`doctor` %s kB", simple("doctor")},
		{"one `audit logs --incident` (%s lines) %s kB", func(t *testing.T, _ string) []float64 {
			kB, data := page(t, "audit", "logs", fleet(t), "--incident", "ord-0000141")
			tl := data["timelines"].([]any)
			return []float64{float64(len(tl[0].(map[string]any)["rows"].([]any))), kB}
		}},
		{"`audit logs -v` (%s incidents, %s lines read) %s kB", func(t *testing.T, _ string) []float64 {
			kB, data := page(t, "audit", "logs", fleet(t), "-v")
			return []float64{float64(len(data["timelines"].([]any))), data["input"].(map[string]any)["lines"].(float64), kB}
		}},
	}
	const doc = "../../docs/reports.md"
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	number := `([0-9][0-9,.]*)`
	for _, s := range sizes {
		// The sentence may wrap anywhere a space is.
		quoted := strings.ReplaceAll(regexp.QuoteMeta(s.pattern), `%s`, number)
		re := regexp.MustCompile(regexp.MustCompile(`[ \n]+`).ReplaceAllString(quoted, `\s+`))
		loc := re.FindStringSubmatchIndex(text)
		if loc == nil {
			t.Errorf("docs/reports.md no longer says %q: put the sentence back or drop it here", s.pattern)
			continue
		}
		got := s.measure(t, dir)
		t.Logf("%s: %v", s.pattern, got)
		stale := false
		for i, v := range got {
			quotedNum, _ := strconv.ParseFloat(strings.ReplaceAll(text[loc[2+2*i]:loc[3+2*i]], ",", ""), 64)
			// A size is stale when it is off by more than 1 kB and 2%: a
			// page's size moves from run to run because every evidence
			// line cites the log by its path, and the test's temporary
			// directory's name is 9 or 10 digits long (audit logs -v:
			// 265.18 or 265.67 kB, the pages otherwise byte for byte the
			// same); a layout change moves it more. A count is stale when
			// it differs.
			tol := 0.0
			if i == len(got)-1 {
				tol = max(1, 0.02*v)
			}
			if math.Abs(quotedNum-v) > tol {
				stale = true
			}
		}
		if !stale {
			continue
		}
		words := s.pattern
		for _, v := range got {
			words = strings.Replace(words, "%s", formatCount(math.Round(v)), 1)
		}
		if *updateScripts {
			// Rewrite from the end, so the earlier offsets stay right.
			for i := len(got) - 1; i >= 0; i-- {
				text = text[:loc[2+2*i]] + formatCount(math.Round(got[i])) + text[loc[3+2*i]:]
			}
			continue
		}
		t.Errorf("docs/reports.md says %q, the page now gives %q (go test ./internal/cli -run TestReportSizesInDocs -update)",
			text[loc[0]:loc[1]], words)
	}
	if *updateScripts {
		if err := os.WriteFile(doc, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// formatCount writes a whole number with thousands separators, as the
// docs do (3,851).
func formatCount(v float64) string {
	s := strconv.FormatInt(int64(v), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
