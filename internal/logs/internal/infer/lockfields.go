package infer

import (
	"fmt"
	"strings"
)

// LockFields finds, on the lines of the lock's acquisition, the field that
// holds the lock's key and the one that holds its token, by what their
// values look like: a key is named by a pattern (its values share a prefix
// ending in a separator, "lock:order:", or hold the line's business key),
// a token is random (no two lines but the acquisition and its release
// share one, and they share no prefix). Fields the reader already maps are
// not asked about (known).
func LockFields(recs []Record, tmpls []*Template, keys []string, w *Wording, known func(key string) bool) (key, token, why string) {
	type stat struct {
		values       []string
		keyed, equal int
	}
	byField := map[string]*stat{}
	var order []string
	lines := 0
	for i := range recs {
		g, ok := w.Role(tmpls[i])
		if !ok || g.Role != RoleLockAcquired {
			continue
		}
		lines++
		for _, kv := range recs[i].Fields {
			if strings.HasPrefix(kv.Key, "@") || known(kv.Key) {
				continue
			}
			s := byField[kv.Key]
			if s == nil {
				s = &stat{}
				byField[kv.Key] = s
				order = append(order, kv.Key)
			}
			s.values = append(s.values, kv.Value)
			switch k := keys[i]; {
			case k == "":
			case kv.Value == k:
				s.equal++ // the business key itself
			case strings.Contains(kv.Value, k):
				s.keyed++
			}
		}
	}
	if lines < 3 {
		return "", "", ""
	}
	for _, f := range order {
		s := byField[f]
		if len(s.values)*10 < lines*8 || s.equal*2 >= len(s.values) || distinct(s.values)*2 < len(s.values) {
			continue // not on (nearly) every acquisition, the business key, or the same few values (a host, a thread)
		}
		p := commonPrefix(s.values)
		switch {
		case key == "" && (len(p) >= 3 && strings.ContainsAny(p[len(p)-1:], ":/._-") || s.keyed*10 >= len(s.values)*8):
			key = f
			why = fmt.Sprintf("%q holds the lock's key (its values on the %d acquisitions share the prefix %q or hold the business key)",
				f, len(s.values), p)
		case token == "" && len(p) < 3 && distinct(s.values)*10 >= len(s.values)*9 && randomish(s.values):
			token = f
		}
	}
	if token != "" {
		why += fmt.Sprintf("; %q holds its token (a new random value on each acquisition)", token)
	}
	return key, token, strings.TrimPrefix(why, "; ")
}

func commonPrefix(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	p := vs[0]
	for _, v := range vs[1:] {
		for !strings.HasPrefix(v, p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

func distinct(vs []string) int {
	seen := map[string]bool{}
	for _, v := range vs {
		seen[v] = true
	}
	return len(seen)
}

// randomish: most values look generated (a digit or a mixed case, eight
// characters or more, no blank).
func randomish(vs []string) bool {
	n := 0
	for _, v := range vs {
		if len(v) >= 8 && !strings.ContainsAny(v, " ") && IsValue(v) {
			n++
		}
	}
	return n*10 >= len(vs)*8
}
