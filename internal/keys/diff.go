package keys

import "strings"

// separators split a key into its segments.
const separators = ":/|_.#@=-;,"

func isSep(c byte) bool { return strings.IndexByte(separators, c) >= 0 }

// split cuts keys into a common prefix, the varying middles and a common
// suffix, snapped to separator boundaries so that a segment is never cut
// in half (":12" vs ":13" varies in "12"/"13", not "2"/"3").
func split(keys []string) (prefix string, mids []string, suffix string) {
	p := keys[0]
	for _, k := range keys[1:] {
		n := 0
		for n < len(p) && n < len(k) && p[n] == k[n] {
			n++
		}
		p = p[:n]
	}
	// Snap back: the prefix ends at a separator or at a key's start.
	for i := len(p); i >= 0; i-- {
		if i == 0 || isSep(p[i-1]) {
			p = p[:i]
			break
		}
	}
	s := keys[0][len(p):]
	for _, k := range keys[1:] {
		k = k[len(p):]
		n := 0
		for n < len(s) && n < len(k) && s[len(s)-1-n] == k[len(k)-1-n] {
			n++
		}
		s = s[len(s)-n:]
	}
	for i := 0; i <= len(s); i++ {
		if i == len(s) || isSep(s[i]) {
			s = s[i:]
			break
		}
	}
	mids = make([]string, len(keys))
	for i, k := range keys {
		mids[i] = k[len(p) : len(k)-len(s)]
	}
	return p, mids, s
}

// tokens of the prefix or suffix, split at separators (separators kept
// as their own tokens), for widening a segment.
func tokens(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if isSep(s[i]) {
			if i > start {
				out = append(out, s[start:i])
			}
			out = append(out, s[i:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// segment is the varying part of a family of keys.
type segment struct {
	prefix, suffix string
	values         []string
	verdict        verdict
}

// analyse finds and classifies the varying segment. The segment may be
// widened into the common prefix and suffix, because a timestamp, a UUID
// or a "worker-2" shares some of its characters across keys
// ("…T09:00:00.123" vs "…T09:00:03.123" differ only in the seconds): of
// every widening, the most specific class wins, then the widest (the
// narrowest for shapes without meaning).
func analyse(keys []string, ctx []attemptCtx) segment {
	prefix, mids, suffix := split(keys)
	pt, st := tokens(prefix), tokens(suffix)
	var best segment
	bestScore := -1
	for l := 0; l <= min(len(pt), 8); l++ {
		for r := 0; r <= min(len(st), 6); r++ {
			left := strings.Join(pt[len(pt)-l:], "")
			right := strings.Join(st[:r], "")
			if (left != "" && isSep(left[0])) || (right != "" && isSep(right[len(right)-1])) {
				continue // a segment starts and ends inside a value
			}
			vals := make([]string, len(mids))
			for i, m := range mids {
				vals[i] = left + m + right
			}
			v := classifySegment(vals, ctx)
			// A decoded or matched value is best taken whole; a mere
			// shape is best kept as small as possible.
			score := specificity[v.class]*100 + l + r
			if specificity[v.class] < 4 {
				score = specificity[v.class]*100 - l - r
			}
			if score > bestScore {
				bestScore = score
				best = segment{prefix: prefix[:len(prefix)-len(left)], suffix: suffix[len(right):], values: vals, verdict: v}
			}
		}
	}
	return best
}

// specificity ranks classes: an exact match with the delivery or the
// instance explains most, a decoded time next, a bare counter less, a
// shape (digest, entropy) least.
var specificity = map[Class]int{
	ClassDelivery: 6, ClassInstance: 6, ClassTimeID: 5, ClassUnixTime: 5, ClassTimestamp: 5, ClassUUID4: 5,
	ClassAttempt: 4, ClassHash: 3, ClassRandom: 2, ClassOther: 0,
}

// template writes the key family with the business key and the varying
// segment as placeholders: payment:{businessKey}:{attempt}.
func (s segment) template(business string) string {
	sub := func(x string) string {
		if business == "" {
			return x
		}
		return strings.ReplaceAll(x, business, "{businessKey}")
	}
	return sub(s.prefix) + s.verdict.class.placeholder() + sub(s.suffix)
}

// stable is the suggested key: the template without the varying part.
func (s segment) stable(business string) string {
	p := strings.TrimRight(s.prefix, separators)
	q := strings.TrimLeft(s.suffix, separators)
	joined := p
	if q != "" {
		if joined != "" {
			joined += s.prefix[len(p) : len(p)+min(1, len(s.prefix)-len(p))]
		}
		joined += q
	}
	if business != "" {
		joined = strings.ReplaceAll(joined, business, "{businessKey}")
	}
	if joined == "" {
		return "{businessKey}"
	}
	return joined
}
