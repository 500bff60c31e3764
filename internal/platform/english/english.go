// Package english holds the few wording helpers every report shares, so a
// count reads "1 run" and "3 runs" the same way in every command.
package english

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Integer is any integer type a count comes in.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Plural returns one when n is 1 and many otherwise.
func Plural[N Integer](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Count returns n followed by the noun in the right number: "1 run",
// "3 runs".
func Count[N Integer](n N, one, many string) string {
	return Number(n) + " " + Plural(n, one, many)
}

// Number formats n with thousands separators: 1,234,567.
func Number[N Integer](n N) string {
	s := strconv.FormatInt(int64(n), 10)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	if neg {
		out = append(out, '-')
	}
	for i := 0; i < len(s); i++ {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// Duration is a duration as people write it: 15m, 2h30m, 3d4h.
func Duration(d time.Duration) string {
	if d >= 48*time.Hour {
		days := d / (24 * time.Hour)
		return fmt.Sprintf("%dd%dh", days, (d-days*24*time.Hour)/time.Hour)
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
