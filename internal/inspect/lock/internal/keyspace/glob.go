package keyspace

import "fmt"

// Glob is a compiled Redis glob pattern (the MATCH syntax of SCAN and KEYS:
// * ? [abc] [^a-z] and \ escapes), matched client-side when several
// patterns share one SCAN pass. It follows Redis's stringmatchlen: bytes,
// not runes; an unterminated [ runs to the end of the pattern.
type Glob struct {
	src  string
	toks []globTok
}

type globTok struct {
	star  bool
	any   bool
	lit   byte
	class *[256]bool
}

// CompileGlob parses a pattern. Every string is a valid Redis pattern, so
// it only fails on an empty one.
func CompileGlob(p string) (Glob, error) {
	if p == "" {
		return Glob{}, fmt.Errorf("empty pattern")
	}
	g := Glob{src: p}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			if n := len(g.toks); n == 0 || !g.toks[n-1].star {
				g.toks = append(g.toks, globTok{star: true})
			}
		case '?':
			g.toks = append(g.toks, globTok{any: true})
		case '[':
			var cls [256]bool
			i = parseClass(p, i+1, &cls)
			g.toks = append(g.toks, globTok{class: &cls})
		case '\\':
			if i+1 < len(p) {
				i++
			}
			g.toks = append(g.toks, globTok{lit: p[i]})
		default:
			g.toks = append(g.toks, globTok{lit: c})
		}
	}
	return g, nil
}

// parseClass reads a [...] class starting after the '[' and returns the
// index of its closing ']' (or the last byte when there is none).
func parseClass(p string, i int, cls *[256]bool) int {
	not := i < len(p) && p[i] == '^'
	if not {
		i++
	}
	var set [256]bool
	for ; i < len(p) && p[i] != ']'; i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p):
			i++
			set[p[i]] = true
		case i+2 < len(p) && p[i+1] == '-':
			lo, hi := p[i], p[i+2]
			if lo > hi {
				lo, hi = hi, lo
			}
			for c := int(lo); c <= int(hi); c++ {
				set[c] = true
			}
			i += 2
		default:
			set[p[i]] = true
		}
	}
	for c := range set {
		cls[c] = set[c] != not
	}
	if i >= len(p) {
		return len(p) - 1
	}
	return i
}

func (g Glob) String() string { return g.src }

// Literal reports whether the pattern matches exactly one string.
func (g Glob) Literal() bool {
	for _, t := range g.toks {
		if t.star || t.any || t.class != nil {
			return false
		}
	}
	return true
}

// Match reports whether s matches. Every token but * consumes one byte, so
// backtracking to the last * alone is complete and linear-time per star.
func (g Glob) Match(s string) bool {
	ti, si := 0, 0
	starT, starS := -1, 0
	for si < len(s) {
		if ti < len(g.toks) {
			t := g.toks[ti]
			switch {
			case t.star:
				starT, starS = ti, si
				ti++
				continue
			case t.any, t.class != nil && t.class[s[si]], t.class == nil && !t.any && t.lit == s[si]:
				ti++
				si++
				continue
			}
		}
		if starT < 0 {
			return false
		}
		starS++
		ti, si = starT+1, starS
	}
	for ti < len(g.toks) && g.toks[ti].star {
		ti++
	}
	return ti == len(g.toks)
}

// Globs matches a key against any of several patterns.
type Globs []Glob

// Match reports whether any pattern matches s.
func (gs Globs) Match(s string) bool {
	for _, g := range gs {
		if g.Match(s) {
			return true
		}
	}
	return false
}
