package watch_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/dupctl/dupctl/internal/cli"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/testenv"
)

// freeAddr is a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// runWatch runs `dupctl watch args...` in-process until the test ends,
// then checks it stopped cleanly with exit 0.
func runWatch(t *testing.T, args ...string) string {
	t.Helper()
	addr := freeAddr(t)
	ios, _, _, _ := iostreams.Test()
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() { code <- cli.Run(ctx, append([]string{"watch", "--listen", addr}, args...), ios) }()
	t.Cleanup(func() {
		cancel()
		select {
		case c := <-code:
			if c != 0 {
				t.Errorf("dupctl watch exited %d after its context ended, want 0", c)
			}
		case <-time.After(15 * time.Second):
			t.Error("dupctl watch did not stop within 15s")
		}
	})
	return addr
}

// scrape polls /metrics until cond holds (10s at most).
func scrape(t *testing.T, addr, what string, cond func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var body string
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			if cond(body) {
				return body
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("after 10s: %s; metrics:\n%s", what, body)
	return ""
}

func value(metrics, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(metrics)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

func token() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// TestWatchRedisLockWithoutTTL plants a lock family in a Redis database of
// its own (six locks with a TTL, two without) and sees the lock check's
// gauge name the family's template - and no key.
func TestWatchRedisLockWithoutTTL(t *testing.T) {
	rdb := testenv.RedisDB(t)
	plantLocks(t, rdb)
	url := fmt.Sprintf("redis://%s/%d", rdb.Options().Addr, rdb.Options().DB)
	addr := runWatch(t, "--redis-url", url, "--interval", "1s")
	body := scrape(t, addr, "the lock family's keys without TTL", func(m string) bool {
		return value(m, `dupctl_lock_keys_without_ttl{certainty="likely",family="lock:payment:order:{int}"}`) == 2
	})
	if got := value(body, `dupctl_lock_keys{certainty="likely",family="lock:payment:order:{int}"}`); got != 8 {
		t.Errorf("lock keys of the family = %g, want 8", got)
	}
	if value(body, `dupctl_findings{check="lock",code="LOCK_NO_TTL",severity="error"}`) < 1 {
		t.Errorf("no LOCK_NO_TTL error finding counted:\n%s", grepLines(body, "dupctl_findings"))
	}
	if value(body, `dupctl_check_runs_total{check="lock",result="ok"}`) < 1 {
		t.Error("no ok run of the lock check counted")
	}
	if strings.Contains(body, "lock:payment:order:7") || strings.Contains(body, "lock:payment:order:8") {
		t.Error("a lock key is a label value")
	}
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestWatchFollowDuplicate follows a file a worker writes to: a charge
// redelivered after a crash and charged again raises
// dupctl_duplicates_total for its cause, as it is written.
func TestWatchFollowDuplicate(t *testing.T) {
	log := filepath.Join(t.TempDir(), "worker.log")
	// As audit logs' follow script: w1 charges and commits, then crashes
	// before its ack; w2 gets the message again and charges again.
	first := line("09:00:00.000", "received", "w1", 1) + line("09:00:00.100", "side_effect", "w1", 1) +
		line("09:00:00.200", "committed", "w1", 1) + line("09:00:00.300", "crash", "w1", 1)
	if err := os.WriteFile(log, []byte(first), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := runWatch(t, "--follow", log)
	const dup = `dupctl_duplicates_total{cause="DUP_EFFECT_REDELIVERY"}`
	body := scrape(t, addr, "the first lines counted", func(m string) bool {
		return value(m, `dupctl_log_side_effects_total{job_type="charge"}`) == 1
	})
	if v := value(body, dup); v > 0 {
		t.Fatalf("a duplicate counted before the second charge: %g", v)
	}
	if value(body, `dupctl_log_crashes_total`) != 1 || value(body, `dupctl_log_jobs_received_total{job_type="charge"}`) != 1 {
		t.Errorf("crash or received not counted:\n%s", grepLines(body, "dupctl_log_"))
	}
	appendFile(t, log, line("09:00:31.000", "received", "w2", 2)+line("09:00:31.100", "side_effect", "w2", 2))
	scrape(t, addr, "the duplicate counted by its cause", func(m string) bool { return value(m, dup) == 1 })
}

// line is one JSON log line of the charge of ord-1.
func line(at, event, worker string, attempt int) string {
	return fmt.Sprintf(`{"time":"2026-11-03T%sZ","event":%q,"consumerInstanceId":%q,"jobType":"charge","orderId":"ord-1",`+
		`"messageId":"m1","attempt":%d}`+"\n", at, event, worker, attempt)
}

// plantLocks writes a lock family: six locks with a TTL, two without.
func plantLocks(t *testing.T, rdb *redis.Client) {
	t.Helper()
	for i := 1; i <= 8; i++ {
		ttl := time.Hour
		if i > 6 {
			ttl = 0
		}
		if err := rdb.Set(context.Background(), fmt.Sprintf("lock:payment:order:%d", i), token(), ttl).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// appendFile appends s to the file at path, as a worker's logger does.
func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}
