package cli_test

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWatchStopsOnSIGTERM: the signal Kubernetes sends a pod. dupctl watch,
// serving and following a log, ends within its --shutdown-timeout with
// exit 0 and says it stopped; /metrics answered before.
func TestWatchStopsOnSIGTERM(t *testing.T) {
	log := filepath.Join(t.TempDir(), "fleet.log")
	if err := os.WriteFile(log, []byte(`{"time":"2026-11-03T09:00:00.000Z","event":"received","orderId":"ord-1","messageId":"m1"}`+"\n"),
		0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(dupctlBinary(t), "watch", "--listen", "127.0.0.1:0", "--follow", log, "--shutdown-timeout", "5s")
	cmd.Env = append(os.Environ(), "DUPCTL_REDIS_URL=", "DUPCTL_DATABASE_URL=", "DUPCTL_AMQP_URL=", "DUPCTL_CONFIG=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		done <- cmd.Wait()
	}()
	serving := regexp.MustCompile(`serving (http://127\.0\.0\.1:[0-9]+/metrics)`)
	var url string
	for url == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("dupctl watch ended before it served: %v", <-done)
			}
			if m := serving.FindStringSubmatch(l); m != nil {
				url = m[1]
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatal("dupctl watch did not say it serves within 30s")
		}
	}
	resp, err := http.Get(url)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %v %v", url, resp, err)
	}
	resp.Body.Close()
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for l := range lines {
		rest = append(rest, l)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("dupctl watch after SIGTERM: %v (stderr %q), want exit 0", err, rest)
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("dupctl watch did not end within 30s of SIGTERM")
	}
	// The bound is the process's own (--shutdown-timeout 5s); the slack
	// is for a loaded machine's scheduling, not a speed claim.
	if took := time.Since(sent); took > 10*time.Second {
		t.Errorf("ended %s after SIGTERM, want within --shutdown-timeout 5s (and slack)", took)
	}
	if !strings.Contains(strings.Join(rest, "\n"), "dupctl watch: stopped") {
		t.Errorf("stderr after SIGTERM %q: want it to say it stopped", rest)
	}
}
