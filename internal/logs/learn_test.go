package logs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/logs/internal/infer"
)

// TestKindsAreRoles: the reader's kinds and the inference's roles are one
// list, in one order, under one name each.
func TestKindsAreRoles(t *testing.T) {
	if NumKinds != infer.NumRoles {
		t.Fatalf("%d kinds, %d roles", NumKinds, infer.NumRoles)
	}
	for k := Kind(0); int(k) < NumKinds; k++ {
		if r := infer.RoleByName(k.String()); int(r) != int(k) && k != KindOther {
			t.Errorf("kind %v is role %v", k, r)
		}
	}
}

// job is one job's lines, worded so that the vocabulary knows the
// received line and the ack but not the lock, the effect or the commit.
type fleetLine struct {
	step, msg string
	fields    [][2]string
}

func fleetLines(n int) []fleetLine {
	key := fmt.Sprintf("ord-%d", 4000+n*13)
	msg := fmt.Sprintf("%08x-1111-2222-3333-%012x", n, n*7)
	tok := fmt.Sprintf("Tk%dqX%dzR", n*31, n)
	return []fleetLine{
		{"received", "message received", [][2]string{{"order", key}, {"msg_id", msg}}},
		{"lock", "grabbed redis mutex", [][2]string{{"order", key}, {"mutex", "mx:" + key}, {"token", tok}}},
		{"check", "dedup key absent", [][2]string{{"order", key}, {"idem_key", "inv:" + key}}},
		{"effect", "invoice dispatched", [][2]string{{"order", key}, {"invoice", fmt.Sprintf("in_%dQw%dEr%d", n*97, n, n*3)}}},
		{"commit", "ledger row written", [][2]string{{"order", key}, {"idem_key", "inv:" + key}}},
		{"release", "dropped redis mutex", [][2]string{{"order", key}, {"mutex", "mx:" + key}, {"token", tok}}},
		{"ack", "message acked", [][2]string{{"order", key}, {"msg_id", msg}}},
	}
}

// writeFleet writes jobs of instances (each with a pid and three threads)
// through line(instance, pid, thread, time, fleetLine) into files: one per
// instance, or one for all.
func writeFleet(t *testing.T, perInstance bool, ext string, line func(inst, pid, thread int, at time.Time, l fleetLine) string) []Source {
	t.Helper()
	dir := t.TempDir()
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	var files [3]strings.Builder
	for n := 0; n < 60; n++ {
		inst := n % 3
		for _, l := range fleetLines(n) {
			at = at.Add(1500 * time.Millisecond)
			f := &files[0]
			if perInstance {
				f = &files[inst]
			}
			f.WriteString(line(inst, 100+inst*11, n%2+1, at, l) + "\n")
		}
	}
	var srcs []Source
	for i := range files {
		if files[i].Len() == 0 {
			continue
		}
		p := filepath.Join(dir, fmt.Sprintf("w-%d%s", i, ext))
		if err := os.WriteFile(p, []byte(files[i].String()), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := File(p)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, s)
	}
	return srcs
}

func jsonFields(l fleetLine, extra ...string) string {
	var parts []string
	for i := 0; i+1 < len(extra); i += 2 {
		parts = append(parts, fmt.Sprintf("%q: %s", extra[i], extra[i+1]))
	}
	for _, f := range l.fields {
		parts = append(parts, fmt.Sprintf("%q: %q", f[0], f[1]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func kv(l fleetLine) string {
	var parts []string
	for _, f := range l.fields {
		parts = append(parts, f[0]+"="+f[1])
	}
	return strings.Join(parts, " ")
}

// TestLearnLayouts: each layout is read with no flags - the worker is the
// instance (never a thread or a consumer index), every line of a job has
// its key, the steps the vocabulary does not know are learned from where
// they sit, and each line has its time.
func TestLearnLayouts(t *testing.T) {
	for _, c := range []struct {
		name        string
		perInstance bool
		opts        LearnOptions
		line        func(inst, pid, thread int, at time.Time, l fleetLine) string
		worker      string // instance 0's worker
	}{
		{name: "kubectl + zap console", worker: "pod-0", line: func(inst, pid, thread int, at time.Time, l fleetLine) string {
			return fmt.Sprintf("[pod/pod-%d/app] %s\tINFO\tpayments\tmain.go:12\t%s\t%s", inst, at.Format("2006-01-02T15:04:05.000Z0700"),
				l.msg, jsonFields(l, "consumer", fmt.Sprint(thread)))
		}},
		{name: "compose + json", worker: "svc-0", line: func(inst, pid, thread int, at time.Time, l fleetLine) string {
			return fmt.Sprintf("svc-%d  | %s", inst, jsonFields(l, "time", `"`+at.Format(time.RFC3339Nano)+`"`, "msg", `"`+l.msg+`"`,
				"thread", `"pool-`+fmt.Sprint(thread)+`"`))
		}},
		{name: "syslog 3164, year given", opts: LearnOptions{Year: 2026}, worker: "host-0", // one pid each: another name of the host
			line: func(inst, pid, thread int, at time.Time, l fleetLine) string {
				return fmt.Sprintf("%s host-%d pay[%d]: %s: %s %s", at.Format(time.Stamp), inst, pid, l.fields[0][1], l.msg,
					strings.Join(func() []string {
						var v []string
						for _, f := range l.fields[1:] {
							v = append(v, f[1])
						}
						return v
					}(), " "))
			}},
		{name: "logback per file, MDC", perInstance: true, worker: "w-0.log",
			line: func(inst, pid, thread int, at time.Time, l fleetLine) string {
				return fmt.Sprintf("%s [pool-%d] INFO  c.a.Worker [%s] - %s %s", at.Format("2006-01-02 15:04:05,000"), thread,
					l.fields[0][1], l.msg, kv(fleetLine{fields: l.fields[1:]}))
			}},
		{name: "java.util.logging, two lines", perInstance: true, worker: "w-0.log",
			line: func(inst, pid, thread int, at time.Time, l fleetLine) string {
				return fmt.Sprintf("%s com.acme.Worker handle\nINFO: %s %s", at.Format("Jan 2, 2006 3:04:05 PM"), l.msg, kv(l))
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ext := ".log"
			srcs := writeFleet(t, c.perInstance, ext, c.line)
			l, err := Learn(context.Background(), srcs, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			effects, noKey, untimed := 0, 0, 0
			workers := map[string]bool{}
			_, err = Scan(context.Background(), srcs, Options{Mapping: l.Mapping()}, func(e *Event) error {
				if e.Kind == KindSideEffect {
					effects++
				}
				if e.BusinessKey() == "" {
					noKey++
				}
				if e.Time.IsZero() {
					untimed++
				}
				workers[strings.Clone(e.Consumer())] = true
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if effects != 60 || noKey != 0 || untimed != 0 {
				t.Errorf("%d side effects (want 60), %d lines without a key, %d without a time; learned %+v %+v", effects, noKey, untimed,
					l.Worker, l.Roles)
			}
			if !workers[c.worker] || len(workers) > 3 {
				t.Errorf("workers %v, want %s among 3 (%s)", workers, c.worker, l.Worker.Reason)
			}
			for w := range workers {
				if strings.Contains(w, "pool") || w == "1" || w == "2" {
					t.Errorf("a thread named as the worker: %q", w)
				}
			}
		})
	}
}

// TestLearnNoYear: RFC 3164 times with no year anywhere and no file time to
// go by are not read (the lines stay in place, untimed) rather than given a
// year.
func TestLearnClockFill(t *testing.T) {
	f := &clockFill{}
	if _, ok := f.parse("Mar 14 09:00:20", nil); ok {
		t.Error("a time without a year read with no year known")
	}
	f = &clockFill{ref: time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC)}
	if got, ok := f.parse("Dec 31 23:59:00", nil); !ok || got.Year() != 2026 {
		t.Errorf("Dec 31 before a file written on Jan 2 2027: %v %v", got, ok)
	}
}

func TestJSONArrayStart(t *testing.T) {
	for in, want := range map[string]bool{`[{"a":1}]`: true, "[\n  {": true, `[]`: true, `[1,2]`: true, `[true, false]`: true, `[null]`: true,
		"[pod/w-1/app] {}": false, "[main] INFO x": false, "[nullable] x": false, "[": true} {
		if got := jsonArrayStart([]byte(in)); got != want {
			t.Errorf("jsonArrayStart(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestLearnConsoleFieldsAfterMessage: zerolog's console writer puts a line's
// fields after its message ("INF grabbed redis mutex key=lock:order:ord-1
// order=ord-1 token=..."). Each field is read once a line, so the learning
// judges the lock's key by its real values: an order locked twice repeats
// its key, which must not make the key look like a field of a few values
// (a host) - else "key" is read as the idempotency key, and two runs with
// different lock keys would read as an idempotency key that changed.
func TestLearnConsoleFieldsAfterMessage(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	var files [3]strings.Builder
	for n := 0; n < 90; n++ {
		inst := n % 3
		for _, l := range fleetLines(n) {
			at = at.Add(1500 * time.Millisecond)
			var fs []string
			for _, f := range l.fields {
				switch f[0] {
				case "order":
					f[1] = fmt.Sprintf("ord-%d", 4000+n/2*13) // each order runs twice
				case "mutex":
					f = [2]string{"key", fmt.Sprintf("lock:order:ord-%d", 4000+n/2*13)}
				}
				fs = append(fs, f[0]+"="+f[1])
			}
			fmt.Fprintf(&files[inst], "%s INF %s component=payments consumer=%d %s\n", at.Format(time.RFC3339), l.msg, n%2+1,
				strings.Join(fs, " "))
		}
	}
	var srcs []Source
	for i := range files {
		p := filepath.Join(dir, fmt.Sprintf("pod-%d.log", i))
		if err := os.WriteFile(p, []byte(files[i].String()), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := File(p)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, s)
	}
	l, err := Learn(context.Background(), srcs, LearnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Config().Fields["lockKey"]; len(got) != 1 || got[0] != "key" {
		t.Fatalf("lockKey learned from %v, want [key]; facts %+v", got, l.Fields)
	}
	locks := 0
	_, err = Scan(context.Background(), srcs, Options{Mapping: l.Mapping()}, func(e *Event) error {
		if strings.HasPrefix(e.Fields[LockKey], "lock:order:") {
			locks++
		}
		if strings.HasPrefix(e.Fields[IdempotencyKey], "lock:") {
			t.Errorf("the lock's key read as the idempotency key: %q", e.Fields[IdempotencyKey])
			return fmt.Errorf("stop")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if locks != 180 { // the acquisition and the release of each of the 90 jobs
		t.Errorf("%d lines with the lock's key, want 180", locks)
	}
}

// TestLearnKeyedValues: a sentence that names the lock's key and the
// idempotency key by position alone ("grabbed redis mutex mx:ord-1 Tk..",
// no key= or noun before them) has them read, by the prefix their values
// share on the lines of their steps - also a lock keyed by the job's id
// (mx:job:<id>), which holds no business key - and only on those steps'
// lines (the effect's line names the idempotency key's value too).
func TestLearnKeyedValues(t *testing.T) {
	jobLocked := func(n int) bool { return n%5 == 0 }
	dir := t.TempDir()
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	var b strings.Builder
	for n := 0; n < 60; n++ {
		for _, l := range fleetLines(n) {
			at = at.Add(1500 * time.Millisecond)
			var vs []string
			for _, f := range l.fields[1:] {
				if f[0] == "mutex" && jobLocked(n) {
					f[1] = "mx:job:" + l.fields[0][1][4:] + "x" + fmt.Sprint(n*7)
				}
				vs = append(vs, f[1])
			}
			if l.step == "effect" {
				vs = append(vs, "for inv:"+l.fields[0][1]) // the key named on another step's line
			}
			fmt.Fprintf(&b, "%s host-%d pay[%d]: %s: %s %s\n", at.Format(time.Stamp), n%3, 100+n%3, l.fields[0][1], l.msg,
				strings.Join(vs, " "))
		}
	}
	p := filepath.Join(dir, "syslog")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := File(p)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Learn(context.Background(), []Source{src}, LearnOptions{Year: 2026})
	if err != nil {
		t.Fatal(err)
	}
	locks, idems := 0, 0
	_, err = Scan(context.Background(), []Source{src}, Options{Mapping: l.Mapping()}, func(e *Event) error {
		lock, idem := e.Fields[LockKey], e.Fields[IdempotencyKey]
		switch msg := e.Fields[Message]; {
		case strings.Contains(msg, "redis mutex"):
			if strings.HasPrefix(lock, "mx:") {
				locks++
			}
		case strings.Contains(msg, "dedup key absent"), strings.Contains(msg, "ledger row written"):
			if idem == "inv:"+e.BusinessKey() {
				idems++
			}
		default:
			if lock != "" || idem != "" {
				t.Errorf("a %v line read with lock key %q, idempotency key %q: %q", e.Kind, lock, idem, msg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if locks != 120 || idems != 120 { // acquisition and release, check and commit, of 60 jobs
		t.Errorf("%d lock lines with the lock's key, %d check and commit lines with the idempotency key, want 120 each; learned %+v",
			locks, idems, l.Fields)
	}
}
