// Package text holds the small string helpers every printer and error
// message needs, written once: shortening a value for a table cell or an
// error without cutting a character in half.
package text

import "unicode/utf8"

// Clip shortens s to at most limit bytes, cut on a rune boundary and ending
// in mark when it cut (mark counts toward limit). s is returned unchanged
// when it fits.
func Clip(s string, limit int, mark string) string {
	if len(s) <= limit {
		return s
	}
	cut := limit - len(mark)
	if cut <= 0 {
		return mark[:max(0, min(len(mark), limit))]
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// ClipRunes shortens s to at most limit runes (what a terminal column
// counts), ending in mark when it cut (mark counts toward limit).
func ClipRunes(s string, limit int, mark string) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	keep := limit - utf8.RuneCountInString(mark)
	if keep <= 0 {
		return mark
	}
	i := 0
	for n := 0; n < keep; n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + mark
}
