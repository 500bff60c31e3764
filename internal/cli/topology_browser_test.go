package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// TestTopologyPicturesInChromium opens the cluster maps in a real browser,
// in the four views: doctor's broker map, drawn from the management API
// recorded on a 3-node cluster with node c stopped
// (internal/doctor/topology/testdata; the queues' existence is asked of
// the test broker, which does not have them), and inspect lock's slot map
// of a real 3-master Redis Cluster. Each holds what every page holds (no
// request leaves the file, text of 11px and more, wide parts scroll in
// their box, the dark scheme, no serious axe-core violation), and the map
// is on the page.
func TestTopologyPicturesInChromium(t *testing.T) {
	amqpURL := testenv.Need(t, testenv.AMQP)
	testenv.Need(t, testenv.Redis)
	testenv.Chromium(t)
	dir := t.TempDir()
	t.Run("doctor broker map", func(t *testing.T) {
		mgmt := testenv.ManagementFixture(t, filepath.Join("..", "doctor", "topology", "testdata", "cluster-3.10.8", "node-c-down"))
		cfg := filepath.Join(dir, "dupctl.yaml")
		if err := os.WriteFile(cfg, []byte(`version: 1
jobs:
  - {name: payments, queue: payments, dlq: payments.dlq, retry_queue: payments.retry}
  - {name: emails, queue: emails, dlq: emails.dlq}
`), 0o644); err != nil {
			t.Fatal(err)
		}
		html := filepath.Join(dir, "doctor-broker.html")
		runToFile(t, "doctor", "--config", cfg, "--amqp-url", amqpURL, "--management-url", mgmt, "--html", html, "--fail-on", "none")
		b, err := os.ReadFile(html)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), `<li class="node-card`); n != 3 || strings.Count(string(b), `<tr class="flagged">`) != 4 {
			t.Fatalf("the page has %d node cards and %d flagged queues, want 3 and 4", n, strings.Count(string(b), `<tr class="flagged">`))
		}
		browse(t, html, "doctor-broker", views, func(t *testing.T, v view, p page) { checkScreen(t, v, p) })
	})
	t.Run("inspect lock slot map", func(t *testing.T) {
		addrs := testenv.RedisCluster(t, 3)
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
		defer c.Close()
		for i := range 30 {
			c.Set(context.Background(), fmt.Sprintf("lock:order:%d", i), fmt.Sprintf("%08x-3b2a-4c1d-9e8f-0a1b2c3d4e5f", i), time.Hour)
		}
		html := filepath.Join(dir, "lock-slots.html")
		runToFile(t, "inspect", "lock", "--redis-url", "redis://"+strings.Join(addrs, ","), "--html", html, "--fail-on", "none")
		b, err := os.ReadFile(html)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), `<rect class="slots read"`); n != 3 {
			t.Fatalf("the page has %d read slot bars, want one per master", n)
		}
		browse(t, html, "lock-slots", views, func(t *testing.T, v view, p page) { checkScreen(t, v, p) })
	})
}
