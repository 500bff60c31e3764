package ttl

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/text"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ParseUnit reads --unit: the unit of durations written as bare numbers.
func ParseUnit(s string) (time.Duration, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "ns":
		return time.Nanosecond, nil
	case "us", "µs":
		return time.Microsecond, nil
	case "ms":
		return time.Millisecond, nil
	case "s", "sec", "seconds":
		return time.Second, nil
	case "m", "min", "minutes":
		return time.Minute, nil
	case "h", "hours":
		return time.Hour, nil
	}
	return 0, problem.Inputf("Unit", "unknown unit %q: want ns, us, ms, s, m or h", s)
}

// unitSuffix is the unit a column name spells (duration_ms, wait_s), or 0.
func unitSuffix(name string) time.Duration {
	i := strings.LastIndexAny(name, "_-. ")
	if i < 0 {
		return 0
	}
	switch strings.ToLower(name[i+1:]) {
	case "ns", "nanos":
		return time.Nanosecond
	case "us", "micros":
		return time.Microsecond
	case "ms", "millis":
		return time.Millisecond
	case "s", "sec", "secs", "seconds":
		return time.Second
	}
	return 0
}

var errNotDuration = errors.New("not a duration")

// ParseDuration reads a duration cell: a bare number in unit (1500, 1.5),
// a Go duration (1m30s, 250ms) or a clock reading as PostgreSQL prints
// intervals (00:01:30.5, 1 day 02:00:00). Negative, NaN and absurd values
// are errors.
func ParseDuration(b []byte, unit time.Duration) (time.Duration, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0, errors.New("empty duration")
	}
	if v, ok := parseDecimal(b); ok {
		return scale(v, unit)
	}
	s := string(b)
	d, err := time.ParseDuration(s)
	if err != nil {
		var ok bool
		if d, ok = parseClock(s); !ok {
			v, ferr := strconv.ParseFloat(s, 64)
			if ferr != nil {
				return 0, fmt.Errorf("%q is %w: want a number (in {Unit}), a Go duration such as 1m30s, or HH:MM:SS", text.Clip(s, 43, "..."),
					errNotDuration)
			}
			return scale(v, unit)
		}
	}
	switch {
	case d < 0:
		return 0, fmt.Errorf("negative duration %q", text.Clip(s, 43, "..."))
	case d > maxDuration:
		return 0, fmt.Errorf("duration %q is longer than a year", text.Clip(s, 43, "..."))
	}
	return d, nil
}

// parseDecimal is the fast path for the common cell: digits with an
// optional fraction, no sign, no exponent.
func parseDecimal(b []byte) (float64, bool) {
	var whole uint64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if whole > (math.MaxUint64-9)/10 {
			return 0, false
		}
		whole = whole*10 + uint64(b[i]-'0')
	}
	if i == 0 {
		return 0, false
	}
	v := float64(whole)
	if i == len(b) {
		return v, true
	}
	if b[i] != '.' {
		return 0, false
	}
	i++
	if i == len(b) {
		return 0, false
	}
	frac, scaleF := 0.0, 1.0
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if scaleF < 1e15 {
			frac = frac*10 + float64(c-'0')
			scaleF *= 10
		}
	}
	return v + frac/scaleF, true
}

// maxDuration is a year: a job "duration" beyond that is a broken row,
// not a job.
const maxDuration = 366 * 24 * time.Hour

func scale(v float64, unit time.Duration) (time.Duration, error) {
	if math.IsNaN(v) || v < 0 {
		return 0, fmt.Errorf("duration %v is not a non-negative number", v)
	}
	d := v * float64(unit)
	if d > float64(maxDuration) {
		return 0, fmt.Errorf("duration %v×%s is longer than a year", v, unit)
	}
	return time.Duration(math.Round(d)), nil
}

// parseClock reads [N day[s] ]HH:MM:SS[.frac], PostgreSQL's interval text.
func parseClock(s string) (time.Duration, bool) {
	var days int64
	if before, after, ok := strings.Cut(s, " day"); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(before), 10, 32)
		if err != nil || n < 0 || n > 366 {
			return 0, false
		}
		days = n
		after = strings.TrimPrefix(after, "s")
		s = strings.TrimSpace(after)
		if s == "" {
			return time.Duration(days) * 24 * time.Hour, true
		}
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return 0, false
	}
	h, err1 := strconv.ParseUint(parts[0], 10, 32)
	m, err2 := strconv.ParseUint(parts[1], 10, 8)
	sec, err3 := strconv.ParseFloat(parts[2], 64)
	if err1 != nil || err2 != nil || err3 != nil || m > 59 || sec < 0 || sec >= 60 || math.IsNaN(sec) || h > 24*366 {
		return 0, false
	}
	return time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute +
		time.Duration(math.Round(sec*float64(time.Second))), true
}

// Where a TTL came from.
const (
	SourceFlag   = "flag"   // --ttl
	SourceConfig = "config" // --ttl-file
	SourceData   = "data"   // the input: logs' lockTtl, a ttl column
)

// TTLs are configured lock TTLs: one for every job type, and per job type.
type TTLs struct {
	Default       time.Duration
	DefaultSource string
	ByType        map[string]time.Duration
	TypeSource    map[string]string
}

// For returns the TTL configured for a job type and its source.
func (t TTLs) For(jobType string) (time.Duration, string) {
	if d, ok := t.ByType[jobType]; ok {
		return d, t.TypeSource[jobType]
	}
	return t.Default, t.DefaultSource
}

// Empty reports whether no TTL is configured.
func (t TTLs) Empty() bool { return t.Default == 0 && len(t.ByType) == 0 }

func (t *TTLs) set(jobType string, d time.Duration, source string) {
	if jobType == "*" || jobType == "default" {
		t.Default, t.DefaultSource = d, source
		return
	}
	if t.ByType == nil {
		t.ByType, t.TypeSource = map[string]time.Duration{}, map[string]string{}
	}
	t.ByType[jobType], t.TypeSource[jobType] = d, source
}

// Override sets every TTL of o over t's.
func (t *TTLs) Override(o TTLs) {
	if o.Default > 0 {
		t.Default, t.DefaultSource = o.Default, o.DefaultSource
	}
	for k, d := range o.ByType {
		t.set(k, d, o.TypeSource[k])
	}
}

// ParseTTLSpec reads --ttl: one TTL for every job type ("2m"), per job
// type ("payment=2m,settlement=10m"), or both ("5m,payment=2m").
func ParseTTLSpec(spec string) (TTLs, error) {
	var t TTLs
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, per := strings.Cut(part, "=")
		if !per {
			name, val = "*", part
		}
		name = strings.TrimSpace(name)
		if name == "" {
			return TTLs{}, problem.Inputf("TTLs", "{TTLs} %q: %q names no job type", spec, part)
		}
		d, err := parseTTL(val)
		if err != nil {
			return TTLs{}, problem.Inputf("TTLs", "{TTLs} %q: %w", spec, err)
		}
		t.set(name, d, SourceFlag)
	}
	if t.Empty() {
		return TTLs{}, problem.Inputf("TTLs", "{TTLs} %q: give a TTL such as 2m or payment=2m,settlement=10m", spec)
	}
	return t, nil
}

func parseTTL(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("TTL %q: want a positive duration with a unit, such as 90s or 2m", text.Clip(s, 43, "..."))
	}
	return d, nil
}

// LoadTTLFile reads a config file mapping job type to TTL, in YAML or
// JSON (a JSON object is YAML too):
//
//	payment: 2m
//	settlement: 10m
//	default: 1m
func LoadTTLFile(r io.Reader) (TTLs, error) {
	raw, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return TTLs{}, err
	}
	var m map[string]string
	if err := yaml.Unmarshal(raw, &m); err != nil {
		return TTLs{}, fmt.Errorf("want a mapping of job type to TTL (payment: 2m): %s", firstLine(err.Error()))
	}
	if len(m) == 0 {
		return TTLs{}, errors.New("no TTLs in it: want a mapping of job type to TTL (payment: 2m)")
	}
	var t TTLs
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		d, err := parseTTL(m[k])
		if err != nil {
			return TTLs{}, fmt.Errorf("%s: %w", k, err)
		}
		t.set(k, d, SourceConfig)
	}
	return t, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
