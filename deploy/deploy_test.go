package deploy_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/deploy"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/dupctl/dupctl/internal/watch"
)

// TestRulesPromtool runs promtool's unit tests of the alert rules: series
// that must fire each alert and series that must not.
func TestRulesPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		msg := "no promtool on PATH: apt-get install -y prometheus"
		if testenv.Required() {
			t.Fatalf("DUPCTL_INTEGRATION=required: %s", msg)
		}
		t.Skip(msg)
	}
	for _, args := range [][]string{
		{"check", "rules", "dupctl-rules.yml"},
		{"test", "rules", "dupctl-rules.test.yml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "prometheus"
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if !strings.Contains(string(out), "SUCCESS") {
			t.Fatalf("promtool %s said no SUCCESS:\n%s", strings.Join(args, " "), out)
		}
	}
}

// metricRef is a name in a PromQL expression that may be a metric.
var metricRef = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)

// exported is whether name is a metric watch serves, a histogram's
// _bucket, _sum or _count included.
func exported(names []string, name string) bool {
	for _, suffix := range []string{"", "_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && slices.Contains(names, base) {
			return true
		}
	}
	return false
}

// dupctlMetrics are the dupctl_ names an expression uses.
func dupctlMetrics(expr string) []string {
	var out []string
	for _, m := range metricRef.FindAllString(expr, -1) {
		if strings.HasPrefix(m, "dupctl_") {
			out = append(out, m)
		}
	}
	return out
}

// TestDashboardNamesExportedMetrics checks that every panel queries at
// least one metric and names only metrics dupctl watch serves, as read
// from its collectors.
func TestDashboardNamesExportedMetrics(t *testing.T) {
	names := watch.MetricNames()
	if len(names) < 20 {
		t.Fatalf("only %d metric names from watch: %v", len(names), names)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(deploy.GrafanaDashboard, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Panels) == 0 {
		t.Fatal("no panels")
	}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			used := dupctlMetrics(tg.Expr)
			if len(used) == 0 {
				t.Errorf("panel %q: %q names no dupctl metric", p.Title, tg.Expr)
			}
			for _, m := range used {
				if !exported(names, m) {
					t.Errorf("panel %q: %s is not a metric dupctl watch serves", p.Title, m)
				}
			}
		}
	}
}

// TestRulesNameExportedMetrics holds the rules to the same: an alert on a
// metric renamed away would never fire.
func TestRulesNameExportedMetrics(t *testing.T) {
	names := watch.MetricNames()
	rules, err := os.ReadFile("prometheus/dupctl-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	exprs := regexp.MustCompile(`(?m)^\s+expr: (.+)$`).FindAllStringSubmatch(string(rules), -1)
	if len(exprs) < 6 {
		t.Fatalf("only %d rule expressions", len(exprs))
	}
	for _, e := range exprs {
		for _, m := range dupctlMetrics(e[1]) {
			if !exported(names, m) {
				t.Errorf("rule %q: %s is not a metric dupctl watch serves", e[1], m)
			}
		}
	}
	if string(rules) != string(deploy.PrometheusRules) {
		t.Error("the embedded rules differ from the file")
	}
}
