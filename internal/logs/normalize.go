package logs

import (
	"strconv"
	"strings"
	"time"
)

// normalize fills the typed fields and the kind from the raw fields.
func (x *extractor) normalize(ev *Event) {
	f := &ev.Fields
	ev.Time = x.timeOf(f[Timestamp])
	ev.Attempt, ev.HasAttempt = 0, false
	if s := f[Attempt]; s != "" {
		ev.Attempt, ev.HasAttempt = atoiLoose(s), true
	} else if s := f[RetryCount]; s != "" {
		ev.Attempt, ev.HasAttempt = atoiLoose(s)+1, true
	}
	ev.LockTTL, ev.Duration = 0, 0
	if s := f[LockTTL]; s != "" {
		ev.LockTTL = parseDuration(s, x.unit[LockTTL], true)
	}
	if s := f[Duration]; s != "" {
		ev.Duration = parseDuration(s, x.unit[Duration], false)
	}
	ev.Redelivered = parseTri(f[Redelivered])
	ev.Hit = parseHit(f[Result])
	ev.FromCache = Unknown
	if src := f[CheckSource]; src != "" {
		ev.FromCache = sourceIsCache(src)
	}
	if ch := parseTri(f[CacheHit]); ch != Unknown && ev.FromCache == Unknown {
		// cache.hit=true: the answer came from the cache.
		ev.FromCache = ch
	}
	name := f[EventName]
	ev.Name = name
	if name == "" {
		ev.Name = f[Message]
	}
	x.kindOf(ev, name, f[Message])
	if x.m.learned != nil {
		x.m.learned.fillKeyed(ev)
	}
	if ev.Kind == KindDuplicate && ev.Hit == Unknown {
		ev.Hit = True
	}
}

// timeOf reads a line's time: RFC 3339 and the common layouts, an epoch
// number, or - completed with the year or date the source's clock fill
// knows - a time that leaves them out. A time without a zone is in the
// --tz zone (UTC by default).
func (x *extractor) timeOf(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, _ := parseTime(s, x.unit[Timestamp])
	if t.IsZero() && x.clock != nil {
		t, _ = x.clock.parse(s, x.tz)
		return t
	}
	if x.tz != nil && !t.IsZero() && !hasZone(s) {
		t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), x.tz).UTC()
	}
	return t
}

// hasZone reports whether a time as written says its zone (an epoch
// number is absolute; RFC 3339 ends in Z or an offset).
func hasZone(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' && !strings.ContainsAny(s, "-:/ ") {
		return true
	}
	if c := s[len(s)-1]; c == 'Z' || c == 'z' || strings.HasSuffix(s, "UTC") || strings.HasSuffix(s, "GMT") {
		return true
	}
	for _, n := range []int{6, 5, 3} { // +01:00, +0100, +01
		if len(s) > n+10 {
			if c := s[len(s)-n]; c == '+' || c == '-' {
				return true
			}
		}
	}
	return false
}

func atoiLoose(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || f > 1e9 {
			return 0
		}
		return int(f)
	}
	if n < 0 {
		return 0
	}
	return n
}

func parseTri(s string) Tri {
	switch s { // the usual spellings without folding
	case "":
		return Unknown
	case "true":
		return True
	case "false":
		return False
	}
	switch strings.ToLower(s) {
	case "":
		return Unknown
	case "true", "1", "yes", "y", "t":
		return True
	case "false", "0", "no", "n", "f":
		return False
	}
	return Unknown
}

// parseHit reads a check's answer: did it find the operation already done?
func parseHit(s string) Tri {
	if s == "" {
		return Unknown
	}
	switch normName(s) {
	case "":
		return Unknown
	case "hit", "found", "true", "duplicate", "alreadyprocessed", "exists", "done", "succeeded", "success", "completed",
		"yes", "skip", "skipped":
		return True
	case "miss", "notfound", "false", "new", "absent", "none", "no", "proceed", "processing", "pending", "unknown", "failed", "retryable":
		return False
	}
	return Unknown
}

func sourceIsCache(s string) Tri {
	n := normName(s)
	switch {
	case strings.Contains(n, "cache"), strings.Contains(n, "redis"), strings.Contains(n, "memcache"), n == "local", n == "memory":
		return True
	case strings.Contains(n, "db"), strings.Contains(n, "database"), strings.Contains(n, "postgres"),
		strings.Contains(n, "sql"), strings.Contains(n, "table"), n == "store":
		return False
	}
	return Unknown
}

// parseDuration reads "1.5s", "250ms", ISO-8601 "PT1.5S", or a bare
// number in the field's unit. A bare number of a field whose name gives
// no unit: a fraction is seconds (zap), an integer of at least 1e6 is
// nanoseconds (slog's time.Duration); smaller integers are milliseconds,
// or seconds for a lock TTL below 1000 (lockTtl: 30).
func parseDuration(s string, u unit, ttl bool) time.Duration {
	if s == "" {
		return 0
	}
	if c := s[len(s)-1]; (c < '0' || c > '9') && c != '.' {
		if strings.HasPrefix(s, "PT") || strings.HasPrefix(s, "pt") {
			return parseISODuration(s[2:])
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return 0
		}
		return d
	}
	var f float64
	if n, ok := atoiFast(s); ok {
		f = float64(n)
	} else {
		var err error
		f, err = strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || f > 1e19 {
			return 0
		}
	}
	switch u {
	case unitNs:
		return time.Duration(f)
	case unitUs:
		return time.Duration(f * 1e3)
	case unitMs:
		return time.Duration(f * 1e6)
	case unitS:
		return time.Duration(f * 1e9)
	}
	switch {
	case strings.Contains(s, "."):
		return time.Duration(f * 1e9)
	case f >= 1e6:
		return time.Duration(f)
	case ttl && f < 1000:
		return time.Duration(f * 1e9)
	}
	return time.Duration(f * 1e6)
}

// parseISODuration reads the time part of an ISO-8601 duration after
// "PT" (Java's Duration.toString): 1H2M3.5S.
func parseISODuration(s string) time.Duration {
	var d time.Duration
	for s != "" {
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
			i++
		}
		if i == 0 || i == len(s) {
			return 0
		}
		f, err := strconv.ParseFloat(s[:i], 64)
		if err != nil {
			return 0
		}
		switch s[i] {
		case 'H', 'h':
			d += time.Duration(f * float64(time.Hour))
		case 'M', 'm':
			d += time.Duration(f * float64(time.Minute))
		case 'S', 's':
			d += time.Duration(f * float64(time.Second))
		default:
			return 0
		}
		s = s[i+1:]
	}
	return d
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02 15:04:05,999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	time.RFC1123Z,
	time.RFC1123,
}

// parseTime reads RFC 3339 (fast path), common log layouts, or an epoch
// number whose unit comes from the field name or its magnitude.
func parseTime(s string, u unit) (time.Time, bool) {
	if t, ok := parseRFC3339(s); ok {
		return t, true
	}
	if len(s) > 0 && (s[0] >= '0' && s[0] <= '9') && !strings.ContainsAny(s, "-:/ ") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f <= 0 {
			return time.Time{}, false
		}
		if u == unitAuto {
			switch {
			case f < 1e11:
				u = unitS
			case f < 1e14:
				u = unitMs
			case f < 1e17:
				u = unitUs
			default:
				u = unitNs
			}
		}
		switch u {
		case unitS:
			// Decimal digits, not float arithmetic: zap's 1793696400.123
			// must stay .123.
			ip, fp, _ := strings.Cut(s, ".")
			sec, err := strconv.ParseInt(ip, 10, 64)
			if err != nil {
				return time.Time{}, false
			}
			ns := int64(0)
			for i := 0; i < 9; i++ {
				ns *= 10
				if i < len(fp) && fp[i] >= '0' && fp[i] <= '9' {
					ns += int64(fp[i] - '0')
				}
			}
			return time.Unix(sec, ns).UTC(), true
		case unitMs:
			ms := int64(f)
			return time.Unix(ms/1e3, (ms%1e3)*1e6).UTC(), true
		case unitUs:
			us := int64(f)
			return time.Unix(us/1e6, (us%1e6)*1e3).UTC(), true
		default:
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				n = int64(f)
			}
			return time.Unix(0, n).UTC(), true
		}
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseRFC3339 is a fast path for YYYY-MM-DD[T ]hh:mm:ss[.frac][Z|±hh:mm];
// a time without zone is UTC. Every timestamp goes through it, so it stays
// whole, over the size limits on purpose: BenchmarkParseRFC3339 against
// BenchmarkTimeParse is what it saves over time.Parse.
func parseRFC3339(s string) (time.Time, bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ' && s[10] != 't') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	num := func(a, b int) (int, bool) {
		n := 0
		for i := a; i < b; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 7)
	d, ok3 := num(8, 10)
	h, ok4 := num(11, 13)
	mi, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 {
		return time.Time{}, false
	}
	i := 19
	ns := 0
	if i < len(s) && (s[i] == '.' || s[i] == ',') {
		i++
		digits := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if digits < 9 {
				ns = ns*10 + int(s[i]-'0')
				digits++
			}
			i++
		}
		if digits == 0 {
			return time.Time{}, false
		}
		for ; digits < 9; digits++ {
			ns *= 10
		}
	}
	off := 0
	switch {
	case i == len(s):
	case s[i] == 'Z' || s[i] == 'z':
		if i+1 != len(s) {
			return time.Time{}, false
		}
	case s[i] == '+' || s[i] == '-':
		rest := s[i+1:]
		var oh, om int
		var ok bool
		switch len(rest) {
		case 5:
			if rest[2] != ':' {
				return time.Time{}, false
			}
			rest = rest[:2] + rest[3:]
			fallthrough
		case 4:
			oh, ok = atoi2(rest[:2])
			if !ok {
				return time.Time{}, false
			}
			om, ok = atoi2(rest[2:])
		case 2:
			oh, ok = atoi2(rest)
		default:
			return time.Time{}, false
		}
		if !ok || oh > 23 || om > 59 {
			return time.Time{}, false
		}
		off = oh*3600 + om*60
		if s[i] == '-' {
			off = -off
		}
	default:
		return time.Time{}, false
	}
	if d > daysIn(mo, y) {
		return time.Time{}, false
	}
	unix := daysFromCivil(y, mo, d)*86400 + int64(h*3600+mi*60+sec) - int64(off)
	return time.Unix(unix, int64(ns)).UTC(), true
}

func atoi2(s string) (int, bool) {
	if len(s) != 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	return int(s[0]-'0')*10 + int(s[1]-'0'), true
}

// daysFromCivil is the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (Howard Hinnant's algorithm): cheaper than
// time.Date on the hot path.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

func daysIn(m, y int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// atoiFast reads a plain non-negative decimal integer.
func atoiFast(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
