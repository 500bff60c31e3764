package lock

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
	"strconv"

	"github.com/cespare/xxhash/v2"
)

// The bounded structures that keep memory constant however many keys a
// scan meets: a Bloom filter for SCAN's repeats, a log-scale histogram for
// TTL quantiles, a heavy-hitter sketch for owner values and a top-N heap
// for examples.

// seen is a fixed-size Bloom filter that remembers which keys SCAN already
// returned (SCAN may return a key twice while the server rehashes). Its
// size does not grow with the keyspace: beyond a few million keys per node
// a new key may rarely be taken for a repeat, and FalseDropEstimate says
// how many that might have been.
type seen struct {
	bits []uint64
	k    int
	n    int64
}

// seenBits is the filter size: 2^27 bits (16 MiB). FalseDropEstimate
// gives the expected number of keys wrongly taken for repeats: ~0.01 at
// 1M keys per node; at 8M a test measured 1,491 (0.02%), estimated 1,305.
const seenBits = 1 << 27

// blockBits index the filter's 2^18 blocks of 512 bits.
const blockBits = 18

func newSeen() *seen { return &seen{bits: make([]uint64, seenBits/64), k: 6} }

// add records key and reports whether it was (probably) seen before. All
// k bits sit in one 512-bit block (a cache line): one memory miss per key.
func (s *seen) add(key string) bool {
	h := xxhash.Sum64String(key)
	// The block from the top 18 bits; the bit positions from the low bits
	// remixed, so keys sharing a block do not share positions.
	block := (h >> (64 - blockBits)) * 8
	m := h * 0x9E3779B97F4A7C15
	present := true
	for i := 0; i < s.k; i++ {
		bit := (m >> (9 * i)) & 511
		w, m := block+bit/64, uint64(1)<<(bit%64)
		if s.bits[w]&m == 0 {
			present = false
			s.bits[w] |= m
		}
	}
	if !present {
		s.n++
	}
	return present
}

// FalseDropEstimate is the expected number of distinct keys taken for
// repeats: for each insertion, the chance that its k bits were already set
// in its block, with blocks filled as a Poisson draw of the keys so far.
func (s *seen) FalseDropEstimate() float64 {
	const blocks = seenBits / 512
	n, k := float64(s.n), float64(s.k)
	const steps = 64
	total := 0.0
	for j := 0; j < steps; j++ {
		perBlock := n * (float64(j) + 0.5) / steps / blocks
		// Expected false-positive rate of a 512-bit block holding a Poisson
		// number of keys with mean perBlock, summed over 0..40 keys.
		rate, p := 0.0, math.Exp(-perBlock)
		for x := 0; x <= 40; x++ {
			if x > 0 {
				p *= perBlock / float64(x)
			}
			rate += p * math.Pow(1-math.Pow(1-1.0/512, k*float64(x)), k)
		}
		total += rate * n / steps
	}
	return total
}

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
		h.items[key] = &repeatItem{value: clip(v, maxShown), count: n}
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

// topN keeps the n items that rank highest by less (a min-heap whose root
// is the weakest kept item).
type topN[T any] struct {
	n     int
	items []T
	less  func(a, b T) bool // a ranks below b
}

func newTopN[T any](n int, less func(a, b T) bool) *topN[T] {
	return &topN[T]{n: n, less: less}
}

func (t *topN[T]) Len() int           { return len(t.items) }
func (t *topN[T]) Less(i, j int) bool { return t.less(t.items[i], t.items[j]) }
func (t *topN[T]) Swap(i, j int)      { t.items[i], t.items[j] = t.items[j], t.items[i] }
func (t *topN[T]) Push(x any)         { t.items = append(t.items, x.(T)) }
func (t *topN[T]) Pop() any {
	x := t.items[len(t.items)-1]
	t.items = t.items[:len(t.items)-1]
	return x
}

// offer keeps v if it ranks among the top n.
func (t *topN[T]) offer(v T) {
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

// wants reports whether v would be kept (to skip building a full item).
func (t *topN[T]) wants(v T) bool {
	return t.n > 0 && (len(t.items) < t.n || t.less(t.items[0], v))
}

// sorted returns the kept items, best first.
func (t *topN[T]) sorted() []T {
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

// maxShown bounds any key or value dupctl keeps or prints.
const maxShown = 160

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}

// quote shows a value as a Go-quoted string, clipped: binary stays
// readable and a value cannot break a line of output.
func quote(v string) string { return strconv.Quote(clip(v, 64)) }
