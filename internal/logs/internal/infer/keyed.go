package infer

import "strings"

// KeyedPrefixes finds where a sentence names the lock's key and the
// idempotency key by position alone ("locked lock:order:ord-1 token ...",
// "not paid yet (charge:ord-1, db)"), with no key= or noun before them to
// say so. What tells them: on the lines of a step, a value that holds the
// line's business key after a prefix ending in a separator. The lock's key
// is the one on (nearly) every acquisition, the idempotency key the one on
// (nearly) every check and commit. The prefix's first segment ("lock:",
// "charge:") is returned, which also finds the values that hold no business
// key (a lock keyed by the job's id, "lock:job:<id>"). A prefix both steps
// carry says nothing and is not returned.
func KeyedPrefixes(recs []Record, tmpls []*Template, keys []string, w *Wording) (lock, idem string) {
	type group struct {
		lines  int
		counts map[string]int
	}
	var acq, rec group
	acq.counts, rec.counts = map[string]int{}, map[string]int{}
	for i := range recs {
		k := keys[i]
		if k == "" {
			continue
		}
		role := recs[i].Hint
		if g, ok := w.Role(tmpls[i]); ok {
			role = g.Role
		}
		var g *group
		switch role {
		case RoleLockAcquired:
			g = &acq
		case RoleCheck, RoleCommitted:
			g = &rec
		default:
			continue
		}
		g.lines++
		_, values := Tokenize(recs[i].Message)
		seen := map[string]bool{}
		for _, v := range values {
			if p := keyedPrefix(v, k); p != "" && !seen[p] {
				seen[p] = true
				g.counts[p]++
			}
		}
	}
	best := func(g group) string {
		if g.lines < 3 {
			return ""
		}
		for p, n := range g.counts {
			if n*10 >= g.lines*8 {
				return p
			}
		}
		return ""
	}
	lock, idem = best(acq), best(rec)
	if lock == idem {
		return "", ""
	}
	return lock, idem
}

// keyedPrefix is the first segment ("lock:") of v when v holds the business
// key k after a prefix that ends in a separator ("lock:order:ord-1"), else "".
func keyedPrefix(v, k string) string {
	i := strings.Index(v, k)
	if i <= 0 || !strings.ContainsAny(v[i-1:i], ":/.") {
		return ""
	}
	j := strings.IndexAny(v[:i], ":/.")
	if j < 2 {
		return ""
	}
	for _, c := range v[:j] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
			return "" // a word names the kind of key; a number or id does not
		}
	}
	return v[:j+1]
}
