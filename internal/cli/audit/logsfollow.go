package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/dupctl/dupctl/internal/platform/report"
)

// validateFollow checks --follow and --window.
func validateFollow(o *LogsOptions) error {
	switch {
	case !o.Follow && o.windowGiven:
		return exitcode.UsageErrorf("--window goes with --follow")
	case !o.Follow:
		return nil
	case o.Window <= 0:
		return exitcode.UsageErrorf("--window must be positive, got %s", o.Window)
	case o.Incident != "":
		return exitcode.UsageErrorf("--incident does not go with --follow: run it on the log once written")
	case o.ExplainMapping != "":
		return exitcode.UsageErrorf("--explain-mapping does not go with --follow")
	}
	return nil
}

// runFollow is --follow: the sources are read as streams that do not end,
// each duplicate is written as it is found, and the summary when a signal,
// --timeout or the end of every source stops the follow (exit 0 or 1 by
// what was found, as a batch audit).
func runFollow(ctx context.Context, o *LogsOptions, m *logs.Mapping) error {
	f := o.Factory
	format, tz, err := o.Log.Reading()
	if err != nil {
		return err
	}
	srcs, err := f.LogStreams(o.Args)
	if err != nil {
		return err
	}
	if f.IO.IsStderrTTY() {
		fmt.Fprintf(f.IO.ErrOut, "following %s (window %s): Ctrl-C for the summary\n",
			english.Count(len(srcs), "source", "sources"), o.Window)
	}
	s := &followStream{w: f.IO.Out, format: f.Global.Output, th: report.NewTheme(f.IO.Out, f.IO.ColorEnabled())}
	res, err := auditlogs.Follow(ctx, srcs, auditlogs.FollowOptions{
		Options: auditlogs.Options{Mapping: m, Strict: o.Log.Strict, ClockSkew: o.ClockSkew, Format: format, TZ: tz, MaxLine: o.Log.MaxLine},
		Window:  o.Window,
		Rescan:  logs.Rescannable(o.Args),
		Found:   s.finding,
	})
	if err != nil {
		return cmdutil.LogError(err)
	}
	return f.Emit(ctx, report.Document{Report: res.Report(),
		Text: func(w io.Writer, th *report.Theme) error { return writeLogs(w, th, res, o) },
		HTML: func(w io.Writer) error { return writeLogsHTML(w, res, "") },
	})
}

// followStream writes each finding as it comes: a line on the terminal,
// or one JSON object a line with -o json (other formats: the summary only).
type followStream struct {
	w      io.Writer
	format string
	th     *report.Theme
}

// followLine is a finding as -o json streams it.
type followLine struct {
	Type string `json:"type"` // "duplicate"
	auditlogs.Finding
}

func (s *followStream) finding(fd auditlogs.Finding) error {
	var line string
	switch s.format {
	case report.FormatJSON:
		b, err := json.Marshal(followLine{Type: "duplicate", Finding: fd})
		if err != nil {
			return err
		}
		line = string(b)
	case report.FormatTable:
		line = fmt.Sprintf("%s  %s  %s  side effect ran %d times: %s (%s)", fd.At.UTC().Format("2006-01-02T15:04:05.000Z"),
			s.th.Mark(fd.Cause), fd.Key, fd.Effects, fd.Explanation, fd.Where)
	default:
		return nil
	}
	_, err := io.WriteString(s.w, redact.String(line)+"\n")
	return err
}

// writeFollowed is the summary's line about what a follow kept.
func writeFollowed(w io.Writer, th *report.Theme, fs *auditlogs.FollowStats) {
	until := "-"
	if !fs.StreamTime.IsZero() {
		until = fs.StreamTime.UTC().Format("2006-01-02T15:04:05Z")
	}
	fmt.Fprintf(w, "%s %s reported as found, %s %s duplicated; window %s: %s %s in it, %s left it; logs' time at the end %s\n",
		th.Strong("followed:"), count(fs.Findings), count(fs.DuplicateKeys), english.Plural(fs.DuplicateKeys, "key", "keys"),
		fs.Window, count(int64(fs.KeysInWindow)), english.Plural(fs.KeysInWindow, "key", "keys"), count(fs.KeysLeft), until)
	if fs.NotKept > 0 {
		fmt.Fprintf(w, "%s\n", th.Faint(fmt.Sprintf("the %s duplicated keys found first are counted above but not detailed below",
			count(fs.NotKept))))
	}
}
