package judge

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
	"strconv"

	"github.com/cespare/xxhash/v2"
	"github.com/dupctl/dupctl/internal/platform/text"
)

// The bounded structures that keep memory constant however many keys a
// scan meets: a Bloom filter for SCAN's repeats, a log-scale histogram for
// TTL quantiles, a heavy-hitter sketch for owner values and a top-N heap
// for examples.

// logHist is a histogram of positive millisecond values in quarter-octave
// bins: quantiles within ~9%, constant size.
type logHist struct {
	bins  [200]int64
	count int64
}

func binOf(ms int64) int {
	if ms < 1 {
		return 0
	}
	b := int(math.Log2(float64(ms))*4) + 1
	return min(b, len(logHist{}.bins)-1)
}

// binLow is the smallest value of bin b.
func binLow(b int) int64 {
	if b == 0 {
		return 0
	}
	return int64(math.Ceil(math.Exp2(float64(b-1) / 4)))
}

func (h *logHist) add(ms int64) {
	h.bins[binOf(ms)]++
	h.count++
}

func (h *logHist) merge(o *logHist) {
	for i, c := range o.bins {
		h.bins[i] += c
	}
	h.count += o.count
}

// quantile returns the geometric middle of the bin holding quantile q
// (within ~9%).
func (h *logHist) quantile(q float64) int64 {
	if h.count == 0 {
		return 0
	}
	target := int64(math.Ceil(q * float64(h.count)))
	target = max(target, 1)
	var acc int64
	for b, c := range h.bins {
		acc += c
		if acc >= target {
			if b == 0 {
				return 0
			}
			return int64(math.Exp2((float64(b-1) + 0.5) / 4))
		}
	}
	return binLow(len(h.bins) - 1)
}

// countAbove counts values in bins whose lower edge is above v, and
// countBelow values in bins entirely below v: conservative outlier counts.
func (h *logHist) countAbove(v int64) int64 {
	var n int64
	for b := binOf(v) + 1; b < len(h.bins); b++ {
		n += h.bins[b]
	}
	return n
}

func (h *logHist) countBelow(v int64) int64 {
	var n int64
	for b := 0; b < binOf(v); b++ {
		n += h.bins[b]
	}
	return n
}

// repeats counts owner values exactly among the first distinct values a
// family meets (cap of them): enough to catch a process-wide id stored on
// many locks, which shows up early and often, in bounded memory. Values
// after the table is full are counted only when already in it.
type repeats struct {
	cap   int
	items map[uint64]*repeatItem
}

type repeatItem struct {
	value string
	count int64
}

func newRepeats(capacity int) *repeats {
	return &repeats{cap: capacity, items: map[uint64]*repeatItem{}}
}

func (h *repeats) add(v string) { h.addN(v, 1) }

func (h *repeats) addN(v string, n int64) {
	key := xxhash.Sum64String(v)
	if it, ok := h.items[key]; ok {
		it.count += n
		return
	}
	if len(h.items) < h.cap {
		h.items[key] = &repeatItem{value: text.Clip(v, MaxShown, "..."), count: n}
	}
}

func (h *repeats) merge(o *repeats) {
	for _, it := range o.items {
		h.addN(it.value, it.count)
	}
}

// repeated returns the values held by at least minKeys keys, most first.
func (h *repeats) repeated(minKeys int64) []repeatItem {
	var out []repeatItem
	for _, it := range h.items {
		if it.count >= minKeys {
			out = append(out, *it)
		}
	}
	slices.SortFunc(out, func(a, b repeatItem) int {
		return cmp.Or(cmp.Compare(b.count, a.count), cmp.Compare(a.value, b.value))
	})
	return out
}

// TopN keeps the n items that rank highest by less (a min-heap whose root
// is the weakest kept item).
type TopN[T any] struct {
	n     int
	items []T
	less  func(a, b T) bool // a ranks below b
}

func NewTopN[T any](n int, less func(a, b T) bool) *TopN[T] {
	return &TopN[T]{n: n, less: less}
}

func (t *TopN[T]) Len() int           { return len(t.items) }
func (t *TopN[T]) Less(i, j int) bool { return t.less(t.items[i], t.items[j]) }
func (t *TopN[T]) Swap(i, j int)      { t.items[i], t.items[j] = t.items[j], t.items[i] }
func (t *TopN[T]) Push(x any)         { t.items = append(t.items, x.(T)) }
func (t *TopN[T]) Pop() any {
	x := t.items[len(t.items)-1]
	t.items = t.items[:len(t.items)-1]
	return x
}

// Offer keeps v if it ranks among the top n.
func (t *TopN[T]) Offer(v T) {
	if t.n <= 0 {
		return
	}
	if len(t.items) < t.n {
		heap.Push(t, v)
		return
	}
	if t.less(t.items[0], v) {
		t.items[0] = v
		heap.Fix(t, 0)
	}
}

// Wants reports whether v would be kept (to skip building a full item).
func (t *TopN[T]) Wants(v T) bool {
	return t.n > 0 && (len(t.items) < t.n || t.less(t.items[0], v))
}

// Sorted returns the kept items, best first.
func (t *TopN[T]) Sorted() []T {
	out := slices.Clone(t.items)
	slices.SortFunc(out, func(a, b T) int {
		switch {
		case t.less(b, a):
			return -1
		case t.less(a, b):
			return 1
		}
		return 0
	})
	return out
}

// MaxShown bounds any key or value dupctl keeps or prints.
const MaxShown = 160

// Quote shows a value as a Go-quoted string, clipped: binary stays
// readable and a value cannot break a line of output.
func Quote(v string) string { return strconv.Quote(text.Clip(v, 64, "...")) }
