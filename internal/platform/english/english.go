// Package english holds the few wording helpers every report shares, so a
// count reads "1 run" and "3 runs" the same way in every command.
package english

import "strconv"

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
