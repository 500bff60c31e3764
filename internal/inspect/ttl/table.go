package ttl

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/dupctl/dupctl/internal/platform/text"
	"strconv"
	"strings"
	"time"
)

// TableOptions say how to read rows of a table (CSV, a query's result).
type TableOptions struct {
	// Unit of durations written as bare numbers (default milliseconds);
	// a column named duration_s or wait_ms says its own unit.
	Unit time.Duration
	// DefaultType names the job type of rows without a job type column.
	DefaultType string
}

func (o TableOptions) unit() time.Duration {
	if o.Unit <= 0 {
		return time.Millisecond
	}
	return o.Unit
}

func (o TableOptions) defaultType() string {
	if o.DefaultType == "" {
		return "all"
	}
	return o.DefaultType
}

// The column roles a table may carry.
type role uint8

const (
	colNone role = iota
	colType
	colDuration
	colWait
	colEnqueued
	colStarted
	colFinished
	colTTL
)

// columnNames are the header names (normalised: lower case, no _ - space)
// each role answers to; a unit suffix (_ms, _s) is stripped first.
var columnNames = map[string]role{
	"jobtype": colType, "type": colType, "job": colType, "kind": colType, "task": colType, "tasktype": colType,
	"queue": colType, "class": colType, "jobclass": colType, "name": colType, "jobname": colType, "worker": colType,
	"duration": colDuration, "runtime": colDuration, "elapsed": colDuration, "took": colDuration, "runduration": colDuration,
	"jobduration": colDuration, "lockheld": colDuration, "held": colDuration,
	"wait": colWait, "queuewait": colWait, "waited": colWait, "queuetime": colWait, "queued": colWait, "latency": colWait,
	"enqueuedat": colEnqueued, "enqueued": colEnqueued, "queuedat": colEnqueued, "createdat": colEnqueued, "publishedat": colEnqueued,
	"startedat": colStarted, "started": colStarted, "start": colStarted, "starttime": colStarted, "acquiredat": colStarted,
	"finishedat": colFinished, "finished": colFinished, "endedat": colFinished, "end": colFinished, "endtime": colFinished,
	"completedat": colFinished, "releasedat": colFinished, "done": colFinished,
	"ttl": colTTL, "lockttl": colTTL,
}

// columns maps a table's columns to roles.
type columns struct {
	idx   [colTTL + 1]int // column index per role, -1 when absent
	unit  [colTTL + 1]time.Duration
	width int
}

func newColumns() columns {
	var c columns
	for i := range c.idx {
		c.idx[i] = -1
	}
	return c
}

func normColumn(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', ' ', '.', '"':
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(s)))
}

// byName maps header names to roles. ok is false when the names hold no
// duration (nor both start and finish): then they are not a header.
func byName(names []string) (columns, bool) {
	c := newColumns()
	c.width = len(names)
	for i, n := range names {
		name := strings.TrimSpace(n)
		u := unitSuffix(name)
		key := normColumn(name)
		r, ok := columnNames[key]
		if !ok && u != 0 {
			j := strings.LastIndexAny(name, "_-. ")
			r, ok = columnNames[normColumn(name[:j])]
		}
		if !ok || c.idx[r] >= 0 {
			continue
		}
		c.idx[r], c.unit[r] = i, u
	}
	return c, c.has(colDuration) || (c.has(colStarted) && c.has(colFinished))
}

// byPosition is the layout of a table without a header: duration; job
// type, duration; job type, duration, queue wait.
func byPosition(width int) columns {
	c := newColumns()
	c.width = width
	switch width {
	case 1:
		c.idx[colDuration] = 0
	case 2:
		c.idx[colType], c.idx[colDuration] = 0, 1
	default:
		c.idx[colType], c.idx[colDuration], c.idx[colWait] = 0, 1, 2
	}
	return c
}

func (c *columns) has(r role) bool { return c.idx[r] >= 0 }

// hasWait reports whether rows can carry a queue wait.
func (c *columns) hasWait() bool {
	return c.has(colWait) || (c.has(colEnqueued) && (c.has(colStarted) || c.has(colDuration) && c.has(colFinished)))
}

// KnownColumns lists header names, for error messages and docs.
const KnownColumns = "job_type (or type, job, task, queue), duration (or runtime, elapsed; duration_ms, duration_s), " +
	"wait (or queue_wait), enqueued_at, started_at, finished_at, ttl (or lock_ttl)"

// check fails when the layout cannot give what the options need.
func (c *columns) check(includeWait bool) error {
	if !c.has(colDuration) && !(c.has(colStarted) && c.has(colFinished)) {
		return fmt.Errorf("no duration column: name one of %s", KnownColumns)
	}
	if includeWait && !c.hasWait() {
		return errors.New("{IncludeWait} needs the queue wait: a wait column, or enqueued_at with started_at")
	}
	return nil
}

// decode turns one row's cells into a job type and a run.
func (c *columns) decode(cells [][]byte, unit time.Duration) ([]byte, JobRun, error) {
	var r JobRun
	get := func(ro role) []byte {
		if i := c.idx[ro]; i >= 0 && i < len(cells) {
			return bytes.TrimSpace(cells[i])
		}
		return nil
	}
	u := func(ro role) time.Duration {
		if c.unit[ro] != 0 {
			return c.unit[ro]
		}
		return unit
	}
	var typ []byte
	if c.has(colType) {
		typ = bytes.Trim(get(colType), `"`)
		if len(typ) == 0 {
			return nil, r, errors.New("empty job type")
		}
	}
	var started, finished, enqueued time.Time
	var err error
	if b := get(colStarted); len(b) > 0 {
		if started, err = parseTime(b); err != nil {
			return nil, r, fmt.Errorf("started_at: %w", err)
		}
	}
	if b := get(colDuration); c.has(colDuration) {
		if r.Duration, err = ParseDuration(b, u(colDuration)); err != nil {
			return nil, r, err
		}
	} else {
		if finished, err = parseTime(get(colFinished)); err != nil {
			return nil, r, fmt.Errorf("finished_at: %w", err)
		}
		if started.IsZero() {
			return nil, r, errors.New("no started_at")
		}
		r.Duration = finished.Sub(started)
		if r.Duration < 0 {
			return nil, r, errors.New("finished_at is before started_at")
		}
	}
	if b := get(colWait); len(b) > 0 {
		if r.Wait, err = ParseDuration(b, u(colWait)); err != nil {
			return nil, r, fmt.Errorf("wait: %w", err)
		}
		r.HasWait = true
	} else if b := get(colEnqueued); len(b) > 0 {
		if enqueued, err = parseTime(b); err != nil {
			return nil, r, fmt.Errorf("enqueued_at: %w", err)
		}
		start := started
		if start.IsZero() && !finished.IsZero() {
			start = finished.Add(-r.Duration)
		}
		if !start.IsZero() {
			r.Wait, r.HasWait = start.Sub(enqueued), true
		}
	}
	if b := get(colTTL); len(b) > 0 {
		if r.TTL, err = ParseDuration(b, u(colTTL)); err != nil {
			return nil, r, fmt.Errorf("ttl: %w", err)
		}
	}
	return typ, r, nil
}

// timeLayouts are the timestamp forms a table may use: RFC 3339 and
// PostgreSQL's text output, with or without a zone.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999Z07",
	"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"}

// parseTime reads a timestamp: one of timeLayouts (UTC when no zone) or
// Unix epoch seconds, milliseconds, microseconds or nanoseconds, told
// apart by magnitude.
func parseTime(b []byte) (time.Time, error) {
	s := strings.Trim(string(bytes.TrimSpace(b)), `"`)
	if s == "" {
		return time.Time{}, errors.New("empty timestamp")
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil && v > 0 {
		switch {
		case v < 1e11:
			return time.Unix(0, int64(v*1e9)), nil
		case v < 1e14:
			return time.UnixMilli(int64(v)), nil
		case v < 1e17:
			return time.UnixMicro(int64(v)), nil
		default:
			return time.Unix(0, int64(v)), nil
		}
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a timestamp: want RFC 3339 or Unix epoch", text.Clip(s, 43, "..."))
}
