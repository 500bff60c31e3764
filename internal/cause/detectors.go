package cause

import (
	"fmt"
	"iter"
	"slices"
)

// Detectors is one source's detector per cause, held in precedence order.
// D is the source's own detector shape: what a detector reads (log lines,
// what the proxies saw) and what it answers is the source's business; the
// order they run in is this package's.
type Detectors[D any] struct {
	codes     []string
	detectors []D
	blind     []Blind
}

// Blind is a cause a source cannot see, and why: its evidence is not in
// what the source reads. A source says so by name rather than leaving the
// cause out of its table, so that forgetting a cause still fails.
type Blind struct {
	Code string
	Why  string
}

// NewDetectors orders a source's table, keyed by cause code, by the
// precedence. It panics when the table misses a cause that is not listed
// as blind, or holds a code that is not one: a source that could not
// detect a cause would silently shift the precedence, and that is a
// programming error every test of the source catches at start-up.
func NewDetectors[D any](byCode map[string]D, blind ...Blind) Detectors[D] {
	d := Detectors[D]{}
	for _, b := range blind {
		_, detected := byCode[b.Code]
		if detected || b.Why == "" || !slices.ContainsFunc(precedence, func(c *Cause) bool { return c.Code == b.Code }) {
			panic(fmt.Sprintf("cause: %s is listed as blind without a reason, with a detector, or is not a cause", b.Code))
		}
		d.blind = append(d.blind, b)
	}
	for _, c := range precedence {
		det, ok := byCode[c.Code]
		if !ok {
			if slices.ContainsFunc(blind, func(b Blind) bool { return b.Code == c.Code }) {
				continue
			}
			panic(fmt.Sprintf("cause: the detector table has no detector for %s", c.Code))
		}
		d.codes = append(d.codes, c.Code)
		d.detectors = append(d.detectors, det)
	}
	for code := range byCode {
		if !slices.Contains(d.codes, code) {
			panic(fmt.Sprintf("cause: the detector table holds %s, which is not a cause", code))
		}
	}
	return d
}

// Blind lists the causes the source cannot see, and why.
func (d Detectors[D]) Blind() []Blind { return slices.Clone(d.blind) }

// Codes lists the codes of the detectors in the order they run.
func (d Detectors[D]) Codes() []string { return slices.Clone(d.codes) }

// All yields each cause's code and its detector, in precedence order.
func (d Detectors[D]) All() iter.Seq2[string, D] {
	return func(yield func(string, D) bool) {
		for i, code := range d.codes {
			if !yield(code, d.detectors[i]) {
				return
			}
		}
	}
}
