package iostreams

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/platform/progress"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestColorEnabled(t *testing.T) {
	tests := []struct {
		name    string
		tty     bool
		env     map[string]string
		noColor bool
		want    bool
	}{
		{"terminal", true, nil, false, true},
		{"pipe", false, nil, false, false},
		{"NO_COLOR any value", true, map[string]string{"NO_COLOR": "0"}, false, false},
		{"NO_COLOR=1", true, map[string]string{"NO_COLOR": "1"}, false, false},
		{"NO_COLOR empty is unset", true, map[string]string{"NO_COLOR": ""}, false, true},
		{"--no-color", true, nil, true, false},
		{"CLICOLOR=0", true, map[string]string{"CLICOLOR": "0"}, false, false},
		{"CLICOLOR_FORCE on pipe", false, map[string]string{"CLICOLOR_FORCE": "1"}, false, true},
		{"CLICOLOR_FORCE=0", false, map[string]string{"CLICOLOR_FORCE": "0"}, false, false},
		{"NO_COLOR beats force", false, map[string]string{"CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, false, false},
		{"dumb terminal", true, map[string]string{"TERM": "dumb"}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := Test()
			ios.Getenv = envOf(tt.env)
			ios.SetStdoutTTY(tt.tty)
			ios.SetNoColor(tt.noColor)
			if got := ios.ColorEnabled(); got != tt.want {
				t.Fatalf("ColorEnabled() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProgressEnabled(t *testing.T) {
	ios, _, _, _ := Test()
	if ios.ProgressEnabled() {
		t.Fatal("progress on a non-terminal stderr")
	}
	ios.SetStderrTTY(true)
	if !ios.ProgressEnabled() {
		t.Fatal("no progress on a terminal stderr")
	}
	ios.Getenv = envOf(map[string]string{"CI": "true"})
	if ios.ProgressEnabled() {
		t.Fatal("progress in CI")
	}
	ios.Getenv = envOf(nil)
	ios.SetMachineOutput(true)
	if ios.ProgressEnabled() {
		t.Fatal("progress with machine output")
	}
	if m := ios.StartProgress("x", "keys"); m != progress.Nop {
		t.Fatalf("StartProgress with machine output = %T, want Nop", m)
	}
}

func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	l := newLine(&buf, "scan", "keys", func() time.Time { return now })
	l.SetTotal(1000)
	now = now.Add(time.Second)
	l.Add(250)
	got := buf.String()
	if !strings.Contains(got, "scan: 250/1,000 keys (250/s, ETA 3s)") {
		t.Fatalf("progress line = %q", got)
	}
	l.Done()
	if !strings.HasSuffix(buf.String(), "\r\x1b[K") {
		t.Fatalf("Done did not clear the line: %q", buf.String())
	}
}
