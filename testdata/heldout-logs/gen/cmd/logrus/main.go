// Command logrus logs the fleet's event script through github.com/sirupsen/logrus's
// TextFormatter, worded as wording/go-logrus.md says, each line stamped at the
// script's virtual time with logrus's own Entry.WithTime.
//
//	go run ./cmd/logrus -script ../script -out ../logs
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"dupctl.test/heldoutlogs/script"
	"github.com/sirupsen/logrus"
)

// modules is the `module` field each component logs under.
var modules = map[string]string{"app": "main", "consumer": "consumer", "lock": "locker", "idempotency": "dedupe",
	"payments": "billing", "store": "repository", "notify": "mailer"}

// words is wording/go-logrus.md: the message, fields and error of each step.
func words(e script.Event) (string, logrus.Fields, error) {
	o := logrus.Fields{"order_id": e.Order}
	with := func(kv ...any) logrus.Fields {
		f := logrus.Fields{"order_id": e.Order}
		for i := 0; i < len(kv); i += 2 {
			f[kv[i].(string)] = kv[i+1]
		}
		return f
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	var err error
	if e.Error != "" {
		err = errors.New(e.Error)
	}
	switch e.Step {
	case "start":
		return "Starting payment consumer", logrus.Fields{"version": e.Version, "prefetch": 3}, nil
	case "heartbeat":
		return "Consumer stats", logrus.Fields{"processed": e.Processed}, nil
	case "received":
		return fmt.Sprintf("Received delivery %d for order %s", e.Delivery, e.Order),
			with("message_id", e.MsgID, "redelivered", e.Redelivered), nil
	case "lock_acquired":
		return "Lock acquired", with("lock_key", e.LockKey, "token", e.Token, "ttl", ms(e.TTLms)), nil
	case "lock_busy":
		return "Could not acquire lock, order is being processed elsewhere", with("lock_key", e.LockKey), nil
	case "idem_check":
		return "No previous payment found", with("idempotency_key", e.IdemKey, "source", e.Source), nil
	case "idem_seen":
		return "Payment already exists, skipping", with("idempotency_key", e.IdemKey), nil
	case "charge_start":
		return fmt.Sprintf("Charging customer %.2f %s", float64(e.Amount)/100, e.Currency), o, nil
	case "charge":
		return "Customer charged successfully", with("charge_id", e.ChargeID, "amount", e.Amount, "currency", e.Currency,
			"duration", ms(e.ElapsedMs)), nil
	case "charge_failed":
		return "Charge attempt failed", o, err
	case "commit":
		return "Payment stored", with("idempotency_key", e.IdemKey), nil
	case "commit_failed":
		return "Failed to store payment", o, err
	case "receipt_failed":
		return "Failed to send receipt", o, err
	case "retry":
		return fmt.Sprintf("Retrying in %s (attempt %d)", ms(e.BackoffMs), e.Attempt), o, err
	case "lock_released":
		return "Lock released", with("lock_key", e.LockKey, "token", e.Token), nil
	case "lock_release_failed":
		return "Failed to release lock", with("lock_key", e.LockKey, "token", e.Token), err
	case "nack":
		return "Nacking message, it will be redelivered", with("message_id", e.MsgID), err
	case "ack":
		return "Message acknowledged", with("message_id", e.MsgID), nil
	}
	panic("no wording for " + e.Step)
}

func main() {
	dir := flag.String("script", "../script", "the event script's directory")
	out := flag.String("out", "../logs", "where the set's directory goes")
	flag.Parse()
	if err := run(*dir, filepath.Join(*out, "logrus-text")); err != nil {
		fmt.Fprintln(os.Stderr, "logrus:", err)
		os.Exit(1)
	}
}

func run(scriptDir, dir string) error {
	evs, inst, err := script.Load(scriptDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bufs := map[string]*bytes.Buffer{}
	loggers := map[string]*logrus.Logger{}
	for _, e := range evs {
		if e.Silent {
			continue
		}
		lg := loggers[e.Instance]
		if lg == nil {
			bufs[e.Instance] = &bytes.Buffer{}
			lg = logrus.New()
			lg.Out = bufs[e.Instance]
			lg.Level = logrus.DebugLevel
			lg.Formatter = &logrus.TextFormatter{DisableColors: true, FullTimestamp: true, TimestampFormat: time.RFC3339Nano}
			loggers[e.Instance] = lg
		}
		msg, fs, err := words(e)
		entry := lg.WithTime(e.T).WithField("module", modules[e.Component])
		if e.Thread >= 0 {
			entry = entry.WithField("goroutine", e.Thread+1)
		}
		entry = entry.WithFields(fs)
		if err != nil {
			entry = entry.WithError(err)
		}
		lvl := map[string]logrus.Level{"debug": logrus.DebugLevel, "info": logrus.InfoLevel, "warn": logrus.WarnLevel,
			"error": logrus.ErrorLevel}[e.Level]
		entry.Log(lvl, msg)
	}
	m := script.Manifest{Name: "logrus-text", Ecosystem: "go", Library: "github.com/sirupsen/logrus",
		Layout:    "logrus.TextFormatter{DisableColors: true, FullTimestamp: true, TimestampFormat: time.RFC3339Nano}",
		Placement: "per-instance", Clock: "virtual (logrus Entry.WithTime)",
		Threads: []string{"1", "2", "3"}, Other: []string{"order_id"}}
	for _, c := range modules {
		m.Loggers = append(m.Loggers, c)
	}
	sort.Strings(m.Loggers)
	var ids []string
	for id := range inst {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		m.Workers = append(m.Workers, inst[id].Pod)
		name := inst[id].Pod + ".log"
		if err := os.WriteFile(filepath.Join(dir, name), bufs[id].Bytes(), 0o644); err != nil {
			return err
		}
		m.Files = append(m.Files, name)
	}
	sort.Strings(m.Files)
	return script.WriteManifest(dir, m)
}
