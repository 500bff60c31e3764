// Command golog logs the fleet's event script through Go logging libraries
// (zap, zerolog, log/slog), worded as wording/go.md says, each library stamping
// its lines at the script's virtual time through its own clock hook.
//
//	go run ./cmd/golog -script ../script -out ../logs
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"time"

	"dupctl.test/heldoutlogs/script"
	"github.com/rs/zerolog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

type field struct {
	k string
	v any // string, int, bool, time.Duration, error
}

// words is wording/go.md: the message and fields of each step.
func words(e script.Event) (string, []field) {
	o := field{"order", e.Order}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	switch e.Step {
	case "start":
		return "worker started", []field{{"version", e.Version}, {"consumers", 3}}
	case "heartbeat":
		return "consumer stats", []field{{"processed", e.Processed}}
	case "received":
		return "message received", []field{o, {"msg_id", e.MsgID}, {"delivery", e.Delivery}, {"redelivered", e.Redelivered}}
	case "lock_acquired":
		return "obtained redis lock", []field{o, {"key", e.LockKey}, {"token", e.Token}, {"ttl", ms(e.TTLms)}}
	case "lock_busy":
		return "lock not obtained", []field{o, {"key", e.LockKey}}
	case "idem_check":
		return "idempotency key not found", []field{o, {"idem_key", e.IdemKey}, {"store", e.Source}}
	case "idem_seen":
		return "already processed, skipping", []field{o, {"idem_key", e.IdemKey}}
	case "charge_start":
		return "charging", []field{o, {"amount_cents", e.Amount}, {"currency", e.Currency}}
	case "charge":
		return "charge succeeded", []field{o, {"charge_id", e.ChargeID}, {"amount_cents", e.Amount},
			{"currency", e.Currency}, {"took", ms(e.ElapsedMs)}}
	case "charge_failed":
		return "charge failed", []field{o, {"error", errors.New(e.Error)}}
	case "commit":
		return "payment recorded", []field{o, {"idem_key", e.IdemKey}}
	case "commit_failed":
		return "recording payment failed", []field{o, {"error", errors.New(e.Error)}}
	case "receipt_failed":
		return "sending receipt failed", []field{o, {"error", errors.New(e.Error)}}
	case "retry":
		return "retrying", []field{o, {"attempt", e.Attempt}, {"backoff", ms(e.BackoffMs)}, {"error", errors.New(e.Error)}}
	case "lock_released":
		return "released redis lock", []field{o, {"key", e.LockKey}, {"token", e.Token}}
	case "lock_release_failed":
		return "releasing redis lock failed", []field{o, {"key", e.LockKey}, {"token", e.Token}, {"error", errors.New(e.Error)}}
	case "nack":
		return "message nacked", []field{o, {"msg_id", e.MsgID}, {"requeue", true}, {"error", errors.New(e.Error)}}
	case "ack":
		return "message acked", []field{o, {"msg_id", e.MsgID}}
	}
	panic("no wording for " + e.Step)
}

func loggerName(e script.Event) string {
	if e.Component == "app" {
		return "payments"
	}
	return map[string]string{"consumer": "payments.consumer", "lock": "payments.lock", "idempotency": "payments.idempotency",
		"payments": "payments.charge", "store": "payments.store", "notify": "payments.receipt"}[e.Component]
}

var loggerNames = []string{"payments", "payments.consumer", "payments.lock", "payments.idempotency", "payments.charge",
	"payments.store", "payments.receipt"}

// vclock is the virtual clock every library reads.
type vclock struct{ now time.Time }

func (c *vclock) Now() time.Time                         { return c.now }
func (c *vclock) NewTicker(d time.Duration) *time.Ticker { return time.NewTicker(d) }

// emitter logs one event for one instance's process.
type emitter func(w io.Writer, e script.Event, msg string, fs []field)

type lib struct {
	name, library, layout, placement, clock string
	emit                                    emitter
	workers                                 func(in script.Instance) []string
}

func pods(in script.Instance) []string { return []string{in.Pod} }

func main() {
	dir := flag.String("script", "../script", "the event script's directory")
	out := flag.String("out", "../logs", "where each library's directory goes")
	flag.Parse()
	evs, inst, err := script.Load(*dir)
	for id, in := range inst {
		podOf[id] = in.Pod
	}
	if err == nil {
		for _, l := range libs() {
			if err = run(l, evs, inst, *out); err != nil {
				break
			}
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "golog:", err)
		os.Exit(1)
	}
}

func run(l lib, evs []script.Event, inst map[string]script.Instance, out string) error {
	dir := filepath.Join(out, l.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bufs := map[string]*bytes.Buffer{}
	merged := &bytes.Buffer{}
	for _, e := range evs {
		if e.Silent {
			continue
		}
		w := merged
		if l.placement != "merged" {
			if bufs[e.Instance] == nil {
				bufs[e.Instance] = &bytes.Buffer{}
			}
			w = bufs[e.Instance]
		}
		msg, fs := words(e)
		l.emit(w, e, msg, fs)
	}
	m := script.Manifest{Name: l.name, Ecosystem: "go", Library: l.library, Layout: l.layout, Placement: l.placement,
		Clock: l.clock, Threads: []string{"1", "2", "3"}, Loggers: loggerNames}
	ids := sortedIDs(inst)
	for _, id := range ids {
		m.Workers = append(m.Workers, l.workers(inst[id])...)
	}
	var files map[string][]byte
	switch l.placement {
	case "merged":
		files = map[string][]byte{l.name + ".log": merged.Bytes()}
	case "per-instance":
		files = map[string][]byte{}
		for id, b := range bufs {
			files[inst[id].Pod+".log"] = b.Bytes()
		}
	case "kubectl":
		var all bytes.Buffer
		for _, id := range ids {
			all.Write(script.KubectlPrefix(inst[id].Pod, "worker", bufs[id].Bytes()))
		}
		files = map[string][]byte{"kubectl-logs.log": all.Bytes()}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
		m.Files = append(m.Files, name)
	}
	sort.Strings(m.Files)
	return script.WriteManifest(dir, m)
}

func sortedIDs(inst map[string]script.Instance) []string {
	var ids []string
	for id := range inst {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func libs() []lib {
	return []lib{
		{name: "zap-json", library: "go.uber.org/zap", layout: "zap.NewProductionConfig JSON (ts as epoch seconds, caller), level debug",
			placement: "per-instance", clock: "virtual (zap.WithClock)", emit: zapEmitter(false), workers: pods},
		{name: "zap-console", library: "go.uber.org/zap", layout: "zap.NewDevelopmentConfig console (ISO8601 time, tab-separated, JSON fields)",
			placement: "kubectl", clock: "virtual (zap.WithClock)", emit: zapEmitter(true), workers: pods},
		{name: "zerolog-json", library: "github.com/rs/zerolog", layout: "zerolog JSON, time RFC3339 (seconds), host and pid fields",
			placement: "merged", clock: "virtual (zerolog.TimestampFunc)", emit: zerologEmitter(false),
			workers: func(in script.Instance) []string {
				out := []string{in.Pod}
				for _, p := range in.Pids {
					out = append(out, fmt.Sprint(p))
				}
				return out
			}},
		{name: "zerolog-console", library: "github.com/rs/zerolog", layout: "zerolog.ConsoleWriter{TimeFormat: time.RFC3339, NoColor: true}",
			placement: "per-instance", clock: "virtual (zerolog.TimestampFunc)", emit: zerologEmitter(true), workers: pods},
		{name: "slog-text", library: "log/slog", layout: "slog.TextHandler, level debug",
			placement: "per-instance", clock: "virtual (slog.Record time given to the handler)", emit: slogEmitter(false), workers: pods},
		{name: "slog-json", library: "log/slog", layout: "slog.JSONHandler, level debug",
			placement: "kubectl", clock: "virtual (slog.Record time given to the handler)", emit: slogEmitter(true), workers: pods},
	}
}

func zapEmitter(dev bool) emitter {
	clk := &vclock{}
	loggers := map[io.Writer]*zap.Logger{}
	return func(w io.Writer, e script.Event, msg string, fs []field) {
		lg := loggers[w]
		if lg == nil {
			var enc zapcore.Encoder
			if dev {
				ec := zap.NewDevelopmentEncoderConfig()
				ec.EncodeTime = zapcore.ISO8601TimeEncoder
				enc = zapcore.NewConsoleEncoder(ec)
			} else {
				enc = zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
			}
			core := zapcore.NewCore(enc, zapcore.AddSync(w), zapcore.DebugLevel)
			lg = zap.New(core, zap.WithClock(clk), zap.AddCaller())
			loggers[w] = lg
		}
		clk.now = e.T
		l := lg.Named(loggerName(e))
		zf := make([]zap.Field, 0, len(fs)+1)
		if e.Thread >= 0 {
			zf = append(zf, zap.Int("consumer", e.Thread+1))
		}
		for _, f := range fs {
			switch v := f.v.(type) {
			case error:
				zf = append(zf, zap.Error(v))
			default:
				zf = append(zf, zap.Any(f.k, v))
			}
		}
		switch e.Level {
		case "debug":
			l.Debug(msg, zf...)
		case "warn":
			l.Warn(msg, zf...)
		case "error":
			l.Error(msg, zf...)
		default:
			l.Info(msg, zf...)
		}
	}
}

func zerologEmitter(console bool) emitter {
	clk := &vclock{}
	zerolog.SetGlobalLevel(zerolog.DebugLevel)
	return func(w io.Writer, e script.Event, msg string, fs []field) {
		clk.now = e.T
		zerolog.TimestampFunc = clk.Now
		var out io.Writer = w
		if console {
			out = zerolog.ConsoleWriter{Out: w, TimeFormat: time.RFC3339, NoColor: true}
		}
		ctx := zerolog.New(out).With().Timestamp().Str("component", loggerName(e))
		if !console {
			ctx = ctx.Str("host", podOf[e.Instance]).Int("pid", e.Pid)
		}
		if e.Thread >= 0 {
			ctx = ctx.Int("consumer", e.Thread+1)
		}
		lg := ctx.Logger()
		var ev *zerolog.Event
		switch e.Level {
		case "debug":
			ev = lg.Debug()
		case "warn":
			ev = lg.Warn()
		case "error":
			ev = lg.Error()
		default:
			ev = lg.Info()
		}
		for _, f := range fs {
			switch v := f.v.(type) {
			case error:
				ev = ev.Err(v)
			case time.Duration:
				ev = ev.Dur(f.k, v)
			default:
				ev = ev.Interface(f.k, v)
			}
		}
		ev.Msg(msg)
	}
}

// podOf is filled from the fleet truth before zerolog's JSON runs.
var podOf = map[string]string{}

func slogEmitter(jsonOut bool) emitter {
	handlers := map[io.Writer]slog.Handler{}
	return func(w io.Writer, e script.Event, msg string, fs []field) {
		h := handlers[w]
		if h == nil {
			opts := &slog.HandlerOptions{Level: slog.LevelDebug}
			if jsonOut {
				h = slog.NewJSONHandler(w, opts)
			} else {
				h = slog.NewTextHandler(w, opts)
			}
			handlers[w] = h
		}
		attrs := []slog.Attr{slog.String("component", loggerName(e))}
		if e.Thread >= 0 {
			attrs = append(attrs, slog.Int("consumer", e.Thread+1))
		}
		hh := h.WithAttrs(attrs)
		lvl := map[string]slog.Level{"debug": slog.LevelDebug, "warn": slog.LevelWarn, "error": slog.LevelError}[e.Level]
		rec := slog.NewRecord(e.T, lvl, msg, 0)
		for _, f := range fs {
			switch v := f.v.(type) {
			case error:
				rec.AddAttrs(slog.String(f.k, v.Error()))
			default:
				rec.AddAttrs(slog.Any(f.k, v))
			}
		}
		if err := hh.Handle(context.Background(), rec); err != nil {
			panic(err)
		}
	}
}
