package infer

import (
	"sort"
	"strings"
)

// Message templates, the way the Drain family of log parsers mines them
// (He et al., "Drain: An Online Log Parsing Approach with Fixed Depth Tree",
// ICWS 2017): a message is split into tokens; a token that holds a value (a
// digit, a random-looking id, the value of key=value) is a variable; the
// constant tokens, in order, with one '*' for each run of variables, are the
// template. Messages whose templates differ only in one position that takes
// many different words across otherwise equal templates (a currency, a
// status) are merged, that position becoming a variable.

// Template is one mined message template.
type Template struct {
	ID int
	// Text is the constant words, lower case, '*' for each run of
	// variables: "charging * eur for order *".
	Text string
	// Words are Text's tokens.
	Words []string
	// Count is how many sample lines have it; Example is one of them.
	Count   int
	Example string
}

// Variable reports whether Words[i] stands for values.
func (t *Template) Variable(i int) bool { return t.Words[i] == "*" }

// Miner mines templates from messages.
type Miner struct {
	byText map[string]*Template
	list   []*Template
	// merged maps a template's text to the template it was merged into.
	merged map[string]*Template
}

// NewMiner returns an empty miner.
func NewMiner() *Miner {
	return &Miner{byText: map[string]*Template{}, merged: map[string]*Template{}}
}

// Add mines one message: its template and the values its variables hold
// (trimmed of punctuation; the value of key=value alone).
func (m *Miner) Add(msg string) (*Template, []string) {
	words, values := Tokenize(msg)
	text := strings.Join(words, " ")
	if t := m.merged[text]; t != nil {
		t.Count++
		return t, values
	}
	t := m.byText[text]
	if t == nil {
		t = &Template{ID: len(m.list), Text: text, Words: words, Example: clip(msg, 200)}
		m.byText[text] = t
		m.list = append(m.list, t)
	}
	t.Count++
	return t, values
}

// Templates returns the templates, commonest first (ties by first seen).
func (m *Miner) Templates() []*Template {
	out := make([]*Template, 0, len(m.list))
	for _, t := range m.list {
		if m.merged[t.Text] == nil || m.merged[t.Text] == t {
			out = append(out, t)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

// Lookup is the template a message has, after Merge (nil when the miner
// never saw its template).
func (m *Miner) Lookup(msg string) *Template {
	words, _ := Tokenize(msg)
	text := strings.Join(words, " ")
	if t := m.merged[text]; t != nil {
		return t
	}
	return m.byText[text]
}

// Merge joins templates that differ in exactly one constant position when
// at least minSiblings of them do (that position holds a value with no digit:
// a currency, a status word). It returns how many were merged.
func (m *Miner) Merge(minSiblings int) int {
	groups := map[string][]*Template{}
	for _, t := range m.list {
		for i, w := range t.Words {
			if w == "*" {
				continue
			}
			k := strings.Join(t.Words[:i], " ") + "\x00" + strings.Join(t.Words[i+1:], " ") + "\x00" + itoa(len(t.Words))
			groups[k] = append(groups[k], t)
		}
	}
	n := 0
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g := groups[k]
		if len(g) < minSiblings {
			continue
		}
		// The position that varies: where the first two differ.
		pos := -1
		for i := range g[0].Words {
			if g[0].Words[i] != g[1].Words[i] {
				pos = i
				break
			}
		}
		if pos < 0 {
			continue
		}
		words := append([]string(nil), g[0].Words...)
		words[pos] = "*"
		words = collapse(words)
		text := strings.Join(words, " ")
		into := m.byText[text]
		if into == nil {
			into = &Template{ID: len(m.list), Text: text, Words: words, Example: g[0].Example}
			m.byText[text] = into
			m.list = append(m.list, into)
		}
		for _, t := range g {
			if t == into || m.merged[t.Text] != nil {
				continue
			}
			into.Count += t.Count
			m.merged[t.Text] = into
			n++
		}
		m.merged[into.Text] = into
	}
	return n
}

func collapse(words []string) []string {
	out := words[:0]
	for _, w := range words {
		if w == "*" && len(out) > 0 && out[len(out)-1] == "*" {
			continue
		}
		out = append(out, w)
	}
	return out
}

// Tokenize splits a message into its template words (lower case, constant
// words only, '*' for each run of variables) and its variables' values.
func Tokenize(msg string) (words, values []string) {
	msg = clip(msg, 1024)
	for _, tok := range strings.Fields(msg) {
		if k, v, ok := strings.Cut(strings.TrimLeft(tok, "([{<\"'"), "="); ok && k != "" && isWordy(k) {
			words = appendWord(words, strings.ToLower(trimPunct(k))+"=")
			// An empty value (zerolog's "token=" for an empty string) is
			// the field left empty this time, still a variable: the line
			// keeps its siblings' template (a release that carried no
			// token is a release), only no value is seen.
			words = appendWord(words, "*")
			if v = trimPunct(v); v != "" {
				values = append(values, v)
			}
			continue
		}
		t := trimPunct(tok)
		if t == "" {
			continue
		}
		if IsValue(t) {
			words = appendWord(words, "*")
			values = append(values, strings.TrimLeft(t, "#"))
			continue
		}
		words = appendWord(words, strings.ToLower(t))
	}
	return words, values
}

func appendWord(words []string, w string) []string {
	if w == "*" && len(words) > 0 && words[len(words)-1] == "*" {
		return words
	}
	return append(words, w)
}

// IsValue reports whether a token holds a value rather than a word: it has a
// digit, or it looks random (a long token whose letters switch case often,
// as generated ids do), or it is quoted.
func IsValue(t string) bool {
	if len(t) == 0 {
		return false
	}
	switches := 0
	prevUpper, letters := false, 0
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= '0' && c <= '9':
			return true
		case c >= 'A' && c <= 'Z':
			if letters > 0 && !prevUpper {
				switches++
			}
			prevUpper = true
			letters++
		case c >= 'a' && c <= 'z':
			if letters > 0 && prevUpper {
				switches++
			}
			prevUpper = false
			letters++
		}
	}
	if t[0] == '"' || t[0] == '\'' {
		return true
	}
	return len(t) >= 12 && switches >= 4
}

// isWordy: a key of key=value is a word (letters, digits, _ . -).
func isWordy(k string) bool {
	if k == "" || len(k) > 64 {
		return false
	}
	c := k[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// trimPunct trims the punctuation that stands around a word or a value in a
// sentence: brackets, quotes, commas, a final full stop or colon, a '#'
// before an id.
func trimPunct(s string) string {
	s = strings.TrimLeft(s, "([{<\"'#")
	s = strings.TrimRight(s, ")]}>\"',;:.!?")
	return s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n]
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
