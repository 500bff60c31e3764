package infer

import (
	"bytes"
	"time"
)

// Times that do not say everything: syslog's RFC 3164 has no year
// ("Mar 14 09:00:43"), java.util.logging's SimpleFormatter writes
// "Mar 14, 2026 9:00:43 AM", zerolog's ConsoleWriter defaults to Go's
// Kitchen layout ("9:07AM": no date, no seconds), logback's default
// pattern to a time of day ("09:07:50.215"). ParseClock reads them; what
// they leave out (the year, the date) is filled by the caller from a flag,
// the file or a neighbouring line, or the time is not read at all.

// Clock is a time as a line wrote it, with what it left out.
type Clock struct {
	Year, Month, Day int // 0 when not written
	Sec              int // seconds since midnight
	Nanos            int
	// Precision is the unit of the last written digit (time.Second for
	// syslog, time.Minute for Kitchen).
	Precision time.Duration
}

// HasDate reports whether the clock wrote its month and day; HasYear its
// year too.
func (c Clock) HasDate() bool { return c.Month > 0 && c.Day > 0 }
func (c Clock) HasYear() bool { return c.Year > 0 }

// Complete is the time with the year (when the clock has its date but no
// year) or the date (when it has neither) filled in, in loc (UTC when nil);
// ok is false when what is missing was not given.
func (c Clock) Complete(year int, date time.Time, loc *time.Location) (time.Time, bool) {
	if loc == nil {
		loc = time.UTC
	}
	y, m, d := c.Year, c.Month, c.Day
	switch {
	case c.HasYear() && c.HasDate():
	case c.HasDate():
		if year <= 0 {
			return time.Time{}, false
		}
		y = year
	default:
		if date.IsZero() {
			return time.Time{}, false
		}
		var mo time.Month
		y, mo, d = date.Date()
		m = int(mo)
	}
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, loc).Add(time.Duration(c.Sec)*time.Second + time.Duration(c.Nanos)).UTC(), true
}

// YearBefore is the year that puts month/day on or before ref (within a
// day): what a syslog line without a year was written in, given a time
// the file was written at or after (its modification time).
func YearBefore(month, day int, ref time.Time) int {
	y := ref.Year()
	if time.Date(y, time.Month(month), day, 0, 0, 0, 0, time.UTC).After(ref.Add(24 * time.Hour)) {
		y--
	}
	return y
}

// ParseClock reads the incomplete and the uncommon time layouts: RFC 3164
// ("Mmm dd hh:mm:ss"), java.util.logging's ("Mmm d, yyyy h:mm:ss AM"),
// Kitchen ("3:04PM"), and a time of day ("15:04:05", ".000" or ",000").
func ParseClock(s []byte) (Clock, bool) {
	s = bytes.TrimSpace(s)
	if len(s) >= 3 && monthIndex(s[:3]) > 0 {
		return parseMonthFirst(s)
	}
	return parseTimeOfDay(s)
}

// ClockLen is the length of such a time at the start of s (0: none): what
// a layout's tokenizer takes before the rest of the line.
func ClockLen(s []byte) int {
	if len(s) >= 3 && monthIndex(s[:3]) > 0 {
		// Mmm dd hh:mm:ss | Mmm d, yyyy h:mm:ss AM
		if n := syslogTimeLen(s); n > 0 {
			return n
		}
		if n := julLen(s); n > 0 {
			return n
		}
		return 0
	}
	n := todLen(s)
	return n
}

func parseMonthFirst(s []byte) (Clock, bool) {
	c := Clock{Month: monthIndex(s[:3]), Precision: time.Second}
	if n := syslogTimeLen(s); n > 0 && n == len(s) {
		c.Day = int(digitsVal(bytes.TrimLeft(s[4:6], " ")))
		sec, ok := hmsLoose(s[7:15])
		c.Sec = sec
		return c, ok && c.Day >= 1 && c.Day <= 31
	}
	if n := julLen(s); n > 0 && n == len(s) {
		rest := s[4:]
		day, rest, _ := bytes.Cut(rest, []byte(", "))
		year, rest, _ := bytes.Cut(rest, []byte(" "))
		clock, ampm, _ := bytes.Cut(rest, []byte(" "))
		c.Day, c.Year = int(digitsVal(day)), int(digitsVal(year))
		sec, ok := hmsLoose(clock)
		if !ok {
			return Clock{}, false
		}
		c.Sec = twelveHour(sec, ampm)
		return c, c.Day >= 1 && c.Day <= 31 && c.Year > 0
	}
	return Clock{}, false
}

// julLen: "Mmm d, yyyy h:mm:ss AM" (day and hour with or without a leading
// zero).
func julLen(s []byte) int {
	if len(s) < 4 || s[3] != ' ' {
		return 0
	}
	i := 4
	d := countDigits(s[i:])
	if d < 1 || d > 2 {
		return 0
	}
	i += d
	if i+2 > len(s) || s[i] != ',' || s[i+1] != ' ' {
		return 0
	}
	i += 2
	if countDigits(s[i:]) != 4 || i+4 >= len(s) || s[i+4] != ' ' {
		return 0
	}
	i += 5
	n := hmsLen(s[i:])
	if n == 0 {
		return 0
	}
	i += n
	if i+3 > len(s) || s[i] != ' ' || !isAMPM(s[i+1:i+3]) {
		return 0
	}
	return i + 3
}

func isAMPM(b []byte) bool {
	return len(b) == 2 && (b[0] == 'A' || b[0] == 'P' || b[0] == 'a' || b[0] == 'p') && (b[1] == 'M' || b[1] == 'm')
}

// hmsLen: h:mm:ss or hh:mm:ss.
func hmsLen(s []byte) int {
	h := countDigits(s)
	if h < 1 || h > 2 || len(s) < h+6 || s[h] != ':' || countDigits(s[h+1:]) != 2 || s[h+3] != ':' || countDigits(s[h+4:]) < 2 {
		return 0
	}
	return h + 6
}

func hmsLoose(s []byte) (int, bool) {
	parts := bytes.Split(s, []byte(":"))
	if len(parts) != 3 {
		return 0, false
	}
	h, m, sec := digitsVal(parts[0]), digitsVal(parts[1]), digitsVal(parts[2])
	if h < 0 || m < 0 || sec < 0 || h > 23 || m > 59 || sec > 60 {
		return 0, false
	}
	return int(h*3600 + m*60 + sec), true
}

func twelveHour(sec int, ampm []byte) int {
	h := sec / 3600
	rest := sec % 3600
	pm := len(ampm) > 0 && (ampm[0] == 'P' || ampm[0] == 'p')
	switch {
	case h == 12 && !pm:
		h = 0
	case h < 12 && pm:
		h += 12
	}
	return h*3600 + rest
}

// todLen is the length of a time of day at the start of s: hh:mm:ss with
// an optional .fff or ,fff, or Kitchen's h:mmAM.
func todLen(s []byte) int {
	h := countDigits(s)
	if h < 1 || h > 2 || len(s) < h+3 || s[h] != ':' || countDigits(s[h+1:]) != 2 {
		return 0
	}
	i := h + 3
	if i+2 <= len(s) && isAMPM(s[i:i+2]) {
		return i + 2 // Kitchen
	}
	if h != 2 || i+3 > len(s) || s[i] != ':' || countDigits(s[i+1:]) != 2 {
		return 0
	}
	i += 3
	if i+1 < len(s) && (s[i] == '.' || s[i] == ',') && isDigit(s[i+1]) {
		i++
		i += countDigits(s[i:])
	}
	return i
}

func parseTimeOfDay(s []byte) (Clock, bool) {
	n := todLen(s)
	if n == 0 || n != len(s) {
		return Clock{}, false
	}
	h := countDigits(s)
	hour, min := int(digitsVal(s[:h])), int(digitsVal(s[h+1:h+3]))
	if isAMPM(s[h+3:]) {
		if hour < 1 || hour > 12 || min > 59 {
			return Clock{}, false
		}
		return Clock{Sec: twelveHour(hour*3600+min*60, s[h+3:]), Precision: time.Minute}, true
	}
	sec := int(digitsVal(s[h+4 : h+6]))
	if hour > 23 || min > 59 || sec > 60 {
		return Clock{}, false
	}
	c := Clock{Sec: hour*3600 + min*60 + sec, Precision: time.Second}
	if len(s) > h+7 {
		frac := s[h+7:]
		ns := 0
		for i := 0; i < 9; i++ {
			ns *= 10
			if i < len(frac) {
				ns += int(frac[i] - '0')
			}
		}
		c.Nanos = ns
		c.Precision = time.Millisecond
	}
	return c, true
}

func countDigits(s []byte) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}

// digitsVal is the value of a run of digits (-1 when s is not one).
func digitsVal(s []byte) int64 {
	if len(s) == 0 || len(s) > 18 {
		return -1
	}
	var n int64
	for _, c := range s {
		if !isDigit(c) {
			return -1
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// DateIn finds a date (yyyy-mm-dd, yyyy/mm/dd or yyyymmdd between
// non-digits) in s: a file's name, a line.
func DateIn(s string) (time.Time, bool) {
	for i := 0; i+8 <= len(s); i++ {
		if i > 0 && isDigit(s[i-1]) || !isDigit(s[i]) {
			continue
		}
		b := []byte(s[i:])
		var y, m, d int64
		switch {
		case len(b) >= 10 && countDigits(b) == 4 && (b[4] == '-' || b[4] == '/') && countDigits(b[5:]) == 2 && b[7] == b[4] &&
			countDigits(b[8:]) == 2:
			y, m, d = digitsVal(b[:4]), digitsVal(b[5:7]), digitsVal(b[8:10])
		case countDigits(b) == 8:
			y, m, d = digitsVal(b[:4]), digitsVal(b[4:6]), digitsVal(b[6:8])
		default:
			continue
		}
		if y < 1970 || y > 2200 || m < 1 || m > 12 || d < 1 || d > 31 {
			continue
		}
		return time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC), true
	}
	return time.Time{}, false
}
