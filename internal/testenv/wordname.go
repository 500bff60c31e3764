package testenv

import "strings"

// WordName is UniqueName with its digits spelled as letters: a unique key
// prefix that dupctl's key-family templates keep as a literal word (a
// segment with digits would become a varying {id}).
func WordName(prefix string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return 'a' + (r - '0')
		}
		return r
	}, UniqueName(prefix))
}
