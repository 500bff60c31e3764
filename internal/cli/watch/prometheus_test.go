package watch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/dupctl/dupctl/deploy"
	"github.com/dupctl/dupctl/internal/testenv"
)

// TestPrometheusFiresRules is the end to end: a real Prometheus
// server (Debian's) scrapes dupctl watch on loopback with the shipped
// rules - their for: shortened to 1s, the expressions as shipped - while
// watch checks a Redis database holding a lock family with keys without a
// TTL and follows a worker log that then charges an order twice; both
// alerts go to firing through Prometheus's API.
func TestPrometheusFiresRules(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		msg := "no prometheus on PATH: apt-get install -y prometheus"
		if testenv.Required() {
			t.Fatalf("DUPCTL_INTEGRATION=required: %s", msg)
		}
		t.Skip(msg)
	}
	rdb := testenv.RedisDB(t)
	plantLocks(t, rdb)
	dir := t.TempDir()
	log := filepath.Join(dir, "worker.log")
	first := line("09:00:00.000", "received", "w1", 1) + line("09:00:00.100", "side_effect", "w1", 1) +
		line("09:00:00.200", "committed", "w1", 1) + line("09:00:00.300", "crash", "w1", 1)
	if err := os.WriteFile(log, []byte(first), 0o644); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("redis://%s/%d", rdb.Options().Addr, rdb.Options().DB)
	target := runWatch(t, "--redis-url", url, "--interval", "1s", "--follow", log)

	rules := regexp.MustCompile(`(?m)^(\s+for: )\S+$`).ReplaceAll(deploy.PrometheusRules, []byte("${1}1s"))
	cfg := fmt.Sprintf("global: {scrape_interval: 1s, evaluation_interval: 1s}\nrule_files: [rules.yml]\n"+
		"scrape_configs:\n  - job_name: dupctl\n    static_configs: [{targets: [%q]}]\n", target)
	for name, body := range map[string][]byte{"rules.yml": rules, "prometheus.yml": []byte(cfg)} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	web := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	prom := exec.CommandContext(ctx, bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+web)
	promLog, _ := os.Create(filepath.Join(dir, "prometheus.log"))
	prom.Stdout, prom.Stderr = promLog, promLog
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = prom.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Logf("prometheus log:\n%s", b)
		}
	})
	// The lock family fires on its own; the duplicate needs a scrape of
	// its counter at 0 first, so it is written once Prometheus has one.
	waitAlert(t, web, "DupctlLockFamilyWithoutTTL", "lock:payment:order:{int}")
	if firing(t, web, "DupctlDuplicateSideEffects", "DUP_EFFECT_REDELIVERY") {
		t.Fatal("duplicates alert firing before the second charge was written")
	}
	appendFile(t, log, line("09:00:31.000", "received", "w2", 2)+line("09:00:31.100", "side_effect", "w2", 2))
	waitAlert(t, web, "DupctlDuplicateSideEffects", "DUP_EFFECT_REDELIVERY")
}

// firing is whether Prometheus's /api/v1/alerts has alert firing with a
// label value of want.
func firing(t *testing.T, web, alert, want string) bool {
	t.Helper()
	resp, err := http.Get("http://" + web + "/api/v1/alerts")
	if err != nil {
		return false // not up yet
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("/api/v1/alerts: %v", err)
	}
	for _, a := range out.Data.Alerts {
		if a.Labels["alertname"] != alert || a.State != "firing" {
			continue
		}
		for _, v := range a.Labels {
			if v == want {
				return true
			}
		}
	}
	return false
}

func waitAlert(t *testing.T, web, alert, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !firing(t, web, alert, want) {
		if time.Now().After(deadline) {
			t.Fatalf("%s{…%s…} not firing after 30s", alert, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
