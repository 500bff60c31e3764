package logs

import (
	_ "embed"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"strings"
	"unsafe"
)

// builtinVocabulary is the message vocabulary (vocabulary.txt documents
// its syntax and sources).
//
//go:embed vocabulary.txt
var builtinVocabulary string

// classifyCap bounds the part of a message read for its kind: a step is
// named in the first words, and a 50 MB message must cost what a short
// one does.
const classifyCap = 1024

// maxGap is how many words a "*" in a phrase stands for at most.
const maxGap = 4

// qual are what a phrase says about a check: its answer and where it came
// from.
type qual uint8

const (
	qHit qual = 1 << iota
	qMiss
	qCache
	qDB
)

// phrase is one entry of the vocabulary.
type phrase struct {
	kind  Kind
	other bool // [other]: names no step; stops the search
	qual  qual
	text  string // as written, for --explain-mapping
	user  bool   // from --event or dupctl.yaml
	// learned: inferred from the input's own templates (Learn), tried
	// after the user's phrases and before the vocabulary's.
	learned bool
	words   int  // words matched (gaps not counted)
	anchor  bool // ^: only at the message's first word
	last    bool // $: only at its last word
}

// tnode is a node of a trie over word ids.
type tnode struct {
	keys []uint32 // children's word ids
	kids []int32
	gap  int32   // the node a "*" leads to, or -1
	ends []int32 // phrases that end here
}

type trie struct{ nodes []tnode }

func newTrie() trie { return trie{nodes: []tnode{{gap: -1}}} }

func (t *trie) child(n int32, id uint32) int32 {
	nd := &t.nodes[n]
	for i, k := range nd.keys {
		if k == id {
			return nd.kids[i]
		}
	}
	return -1
}

func (t *trie) add(ids []int64, p int32) {
	n := int32(0)
	for _, id := range ids {
		var next int32
		if id < 0 { // a gap
			next = t.nodes[n].gap
			if next < 0 {
				next = int32(len(t.nodes))
				t.nodes = append(t.nodes, tnode{gap: -1})
				t.nodes[n].gap = next
			}
		} else if next = t.child(n, uint32(id)); next < 0 {
			next = int32(len(t.nodes))
			t.nodes = append(t.nodes, tnode{gap: -1})
			t.nodes[n].keys = append(t.nodes[n].keys, uint32(id))
			t.nodes[n].kids = append(t.nodes[n].kids, next)
		}
		n = next
	}
	t.nodes[n].ends = append(t.nodes[n].ends, p)
}

// vocab is a compiled vocabulary: every word of every phrase gets an id,
// and the phrases are three tries over those ids (the user's, the
// built-in kinds, the qualifiers).
type vocab struct {
	words   map[string]uint32
	phrases []phrase
	user    trie
	learned trie
	kinds   trie
	quals   trie
}

// verdict is what a message says: the kind of step, a check's answer and
// source, and the phrase that decided (-1: none).
type verdict struct {
	kind   Kind
	hit    Tri
	cache  Tri
	phrase int32
}

var noVerdict = verdict{phrase: -1}

// vocabSource is one vocabulary text and whether a user wrote it.
type vocabSource struct {
	name string // for errors: "vocabulary.txt", "--event"
	text string
	user bool
}

// compileVocab parses the built-in vocabulary and the user's phrases
// (kind -> phrases) into one vocab.
func compileVocab(user map[string][]string) (*vocab, error) { return compileVocabWith(user, nil) }

// compileVocabWith is compileVocab with the phrases learned from the input
// (kind -> phrases) too.
func compileVocabWith(user, learned map[string][]string) (*vocab, error) {
	v := &vocab{words: map[string]uint32{}, user: newTrie(), learned: newTrie(), kinds: newTrie(), quals: newTrie()}
	if err := v.parse(vocabSource{name: "vocabulary.txt", text: builtinVocabulary}); err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(learned)) {
		sec, err := parseSection("[" + k + "]")
		if err != nil {
			return nil, &PhraseError{Kind: k, Err: err}
		}
		sec.learned = true
		for _, text := range learned[k] {
			if err := v.addPhrase(sec, text); err != nil {
				return nil, &PhraseError{Kind: k, Phrase: text, Err: err}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(user)) { // deterministic phrase order
		sec, err := parseSection("[" + k + "]")
		for _, text := range user[k] {
			if err == nil && strings.ContainsAny(text, "\n[]") {
				err = errors.New("a phrase is one line of words, without [ ]")
			}
			if err == nil {
				sec.user = true
				err = v.addPhrase(sec, text)
			}
			if err != nil {
				return nil, &PhraseError{Kind: k, Phrase: text, Err: err}
			}
		}
	}
	return v, nil
}

// PhraseError is a user's phrase (--event KIND=PHRASE, dupctl.yaml's
// logs.events) that cannot be used.
type PhraseError struct {
	Kind, Phrase string
	Err          error
}

func (e *PhraseError) Error() string { return e.Err.Error() }
func (e *PhraseError) Unwrap() error { return e.Err }

// parse adds the sections and phrases of one text.
func (v *vocab) parse(src vocabSource) error {
	var cur *phrase // the section's template
	for n, raw := range strings.Split(src.text, "\n") {
		line := strings.TrimSpace(raw)
		if i := strings.Index(line, "#"); i >= 0 && !src.user {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") {
			p, err := parseSection(line)
			if err != nil {
				return fmt.Errorf("%s:%d: %w", src.name, n+1, err)
			}
			p.user = src.user
			cur = &p
			continue
		}
		if cur == nil {
			return fmt.Errorf("%s:%d: phrase %q before any [section]", src.name, n+1, line)
		}
		if err := v.addPhrase(*cur, line); err != nil {
			return fmt.Errorf("%s:%d: phrase %q: %w", src.name, n+1, line, err)
		}
	}
	return nil
}

// parseSection reads "[kind qual...]", "[+qual]" or "[other]".
func parseSection(line string) (phrase, error) {
	if !strings.HasSuffix(line, "]") {
		return phrase{}, fmt.Errorf("section %q: want [kind] or [+hit]", line)
	}
	fields := strings.Fields(line[1 : len(line)-1])
	if len(fields) == 0 {
		return phrase{}, fmt.Errorf("empty section %q", line)
	}
	var p phrase
	head := fields[0]
	switch q, isQual := qualByName(strings.TrimPrefix(head, "+")); {
	case strings.HasPrefix(head, "+"):
		if !isQual || len(fields) > 1 {
			return phrase{}, fmt.Errorf("section %q: want one of [+hit] [+miss] [+cache] [+db]", line)
		}
		p.qual = q
		p.kind = KindOther
		return p, nil
	case isQual && len(fields) == 1:
		// A user's --event hit=PHRASE: a qualifier.
		p.qual = q
		return p, nil
	case normName(head) == "other":
		p.other = true
	default:
		k, ok := ParseKind(head)
		if !ok || k == KindOther {
			return phrase{}, fmt.Errorf("unknown event kind %q: want one of %s, hit, miss, cache, db or other", head,
				strings.Join(KindNames(), ", "))
		}
		p.kind = k
	}
	for _, f := range fields[1:] {
		q, ok := qualByName(f)
		if !ok {
			return phrase{}, fmt.Errorf("section %q: %q is not hit, miss, cache or db", line, f)
		}
		p.qual |= q
	}
	return p, nil
}

func qualByName(s string) (qual, bool) {
	switch normName(s) {
	case "hit":
		return qHit, true
	case "miss":
		return qMiss, true
	case "cache":
		return qCache, true
	case "db", "database":
		return qDB, true
	}
	return 0, false
}

// isQualSection: a section of qualifiers only ([+hit], or a user's hit=).
func (p *phrase) isQualOnly() bool { return p.kind == KindOther && !p.other && p.qual != 0 }

// addPhrase compiles one phrase of a section into its trie.
func (v *vocab) addPhrase(tmpl phrase, text string) error {
	p := tmpl
	p.text = text
	var ids []int64
	var buf []byte
	s := []byte(text)
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '*':
			if len(ids) == 0 || ids[len(ids)-1] < 0 {
				return errors.New(`"*" must stand between words`)
			}
			ids = append(ids, -1)
			i++
			continue
		case c == '^' && len(ids) == 0 && !p.anchor:
			p.anchor = true
			i++
			continue
		case c == '$':
			if strings.TrimSpace(text[i+1:]) != "" {
				return errors.New(`"$" must end the phrase`)
			}
			p.last = true
			i = len(s)
			continue
		case wordClass[c] == cSep:
			i++
			continue
		}
		var w []byte
		var masked bool
		w, masked, i = nextWord(s, i, buf)
		buf = w[:0]
		if masked {
			return fmt.Errorf("%q has a digit: ids and numbers vary, so a phrase holds words only", w)
		}
		id, ok := v.words[string(w)]
		if !ok {
			id = uint32(len(v.words) + 1)
			v.words[string(w)] = id
		}
		ids = append(ids, int64(id))
		p.words++
	}
	if p.words == 0 {
		return errors.New("no word in it")
	}
	if ids[len(ids)-1] < 0 {
		return errors.New(`"*" must stand between words`)
	}
	idx := int32(len(v.phrases))
	v.phrases = append(v.phrases, p)
	switch {
	case p.isQualOnly():
		v.quals.add(ids, idx)
	case p.user:
		v.user.add(ids, idx)
	case p.learned:
		v.learned.add(ids, idx)
	default:
		v.kinds.add(ids, idx)
	}
	return nil
}

// Word classes of the tokenizer.
const (
	cSep   = iota
	cLower // a-z
	cUpper // A-Z
	cDigit // 0-9
	cHigh  // a byte of a UTF-8 sequence: part of a word
)

var wordClass = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = cLower
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = cUpper
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = cDigit
	}
	for c := 0x80; c < 0x100; c++ {
		t[c] = cHigh
	}
	return t
}()

// nextWord returns the next word of s from i, lower-cased into dst: a run
// of letters, digits and UTF-8 bytes, cut where a lower-case letter meets
// an upper-case one (camelCase); masked says it holds a digit (an id, a
// number). next is where to continue; an empty word means s ends.
func nextWord(s []byte, i int, dst []byte) (word []byte, masked bool, next int) {
	for i < len(s) && wordClass[s[i]] == cSep {
		i++
	}
	dst = dst[:0]
	prev := uint8(cSep)
	for ; i < len(s); i++ {
		b := s[i]
		c := wordClass[b]
		if c == cSep || (c == cUpper && prev == cLower) {
			break
		}
		switch c {
		case cUpper:
			b += 'a' - 'A'
		case cDigit:
			masked = true
		}
		dst = append(dst, b)
		prev = c
	}
	return dst, masked, i
}

// wordIter reads the words of a message as the vocabulary sees them:
// nextWord's words, with a run of masked words (the parts of one id:
// "ord-42:90d80b9a-6632-adee-4a41") read as one - a word of hex letters
// only joined to a masked one by '-' or ':' is part of it.
type wordIter struct {
	s          []byte
	i          int
	buf        []byte
	lastMasked bool
	lastEnd    int // where the last word ended
}

// next returns the next word; ok is false at the end.
func (it *wordIter) next() (w []byte, masked, ok bool) {
	for {
		for it.i < len(it.s) && wordClass[it.s[it.i]] == cSep {
			it.i++
		}
		start := it.i
		w, masked, it.i = nextWord(it.s, it.i, it.buf)
		it.buf = w[:0]
		if len(w) == 0 {
			return nil, false, false
		}
		joined := it.lastMasked && start == it.lastEnd+1 && (it.s[it.lastEnd] == '-' || it.s[it.lastEnd] == ':')
		it.lastEnd = it.i
		if masked || (joined && hexLetters(w)) {
			if it.lastMasked {
				continue
			}
			it.lastMasked = true
			return w, true, true
		}
		it.lastMasked = false
		return w, false, true
	}
}

// hexLetters reports whether w is made of a-f only.
func hexLetters(w []byte) bool {
	for _, b := range w {
		if b < 'a' || b > 'f' {
			return false
		}
	}
	return true
}

// templateHash identifies a message's template: its words in order (as
// wordIter reads them), each id or number one placeholder. Two messages
// with the same template get the same verdict (classify reads nothing
// else), so the verdict is cached by it. It is wordIter in one loop over
// the bytes, with no copy: the hot path of message-only logs
// (FuzzClassify checks the two agree).
func templateHash(s []byte) (h uint64, masked bool) {
	if len(s) > classifyCap {
		s = s[:classifyCap]
	}
	h = fnvOffset
	lastMasked, lastEnd := false, -2
	for i := 0; i < len(s); {
		if wordClass[s[i]] == cSep {
			i++
			continue
		}
		// A word: up to a separator or a lower-upper turn (camelCase).
		start, wh, digit, hex := i, uint64(fnvOffset), false, true
		prev := uint8(cSep)
		for ; i < len(s); i++ {
			b := s[i]
			c := wordClass[b]
			if c == cSep || c == cUpper && prev == cLower {
				break
			}
			switch c {
			case cUpper:
				b += 'a' - 'A'
			case cDigit:
				digit = true
			}
			hex = hex && b-'a' < 6
			wh = (wh ^ uint64(b)) * fnvPrime
			prev = c
		}
		// One value for the word, or one for a run of masked ones.
		joined := lastMasked && start == lastEnd+1 && (s[lastEnd] == '-' || s[lastEnd] == ':')
		if digit || joined && hex {
			if !lastMasked {
				h = (h ^ maskedWord) * fnvPrime
			}
			lastMasked, masked = true, true
		} else {
			h = (h ^ wh) * fnvPrime
			lastMasked = false
		}
		lastEnd = i
	}
	return h, masked
}

// FNV-1a's constants, and the value a masked word (or run) hashes as.
const (
	fnvOffset  = 14695981039346656037
	fnvPrime   = 1099511628211
	maskedWord = 0x9e3779b97f4a7c15
)

// classifier is one goroutine's state: scratch space and the verdicts of
// the templates seen.
type classifier struct {
	v     *vocab
	ids   []uint32
	buf   []byte
	cache map[uint64]verdict // by template
	// raw holds the verdicts of messages without ids by their bytes'
	// hash: "lock acquired", "ack sent" repeat as they are, and a hash
	// of the bytes (AES on amd64) costs a fraction of reading the words.
	raw map[uint64]verdict
}

var rawSeed = maphash.MakeSeed()

// maxTemplates bounds the verdict cache (a log with a new template per
// line still runs in bounded memory; it only loses the cache's speed).
const maxTemplates = 1 << 16

// classify returns the verdict of a message or an event name written as
// a sentence.
func (c *classifier) classify(text string) verdict {
	b := unsafeBytes(text)
	if len(b) > classifyCap {
		b = b[:classifyCap]
	}
	rh := maphash.Bytes(rawSeed, b)
	if v, ok := c.raw[rh]; ok {
		return v
	}
	h, masked := templateHash(b)
	v, ok := c.cache[h]
	if !ok {
		v = c.decide(b)
		if c.cache == nil || len(c.cache) >= maxTemplates {
			c.cache = make(map[uint64]verdict, 1024)
		}
		c.cache[h] = v
	}
	if !masked { // the same bytes will come again
		if c.raw == nil || len(c.raw) >= maxTemplates {
			c.raw = make(map[uint64]verdict, 1024)
		}
		c.raw[rh] = v
	}
	return v
}

// decide reads the words and matches the phrases: the user's first, then
// the built-in kinds; then the qualifiers a check's answer needs.
func (c *classifier) decide(s []byte) verdict {
	c.tokens(s)
	v := c.v
	out := noVerdict
	m, ok := v.first(&v.user, c.ids)
	if !ok && len(v.learned.nodes) > 1 {
		m, ok = v.first(&v.learned, c.ids)
	}
	if !ok {
		m, ok = v.first(&v.kinds, c.ids)
	}
	if !ok {
		return out
	}
	p := &v.phrases[m.phrase]
	out.phrase = m.phrase
	if p.other {
		return out
	}
	out.kind = p.kind
	out.hit, out.cache = qualTri(p.qual)
	if (out.kind == KindCheck || out.kind == KindDuplicate) && (out.hit == Unknown || out.cache == Unknown) {
		hit, cache := v.qualifiers(c.ids)
		if out.hit == Unknown {
			out.hit = hit
		}
		if out.cache == Unknown {
			out.cache = cache
		}
	}
	return out
}

// tokens reads the words of s (up to classifyCap) into c.ids: each word's
// id, 0 for a word no phrase holds.
func (c *classifier) tokens(s []byte) {
	if len(s) > classifyCap {
		s = s[:classifyCap]
	}
	c.ids = c.ids[:0]
	it := wordIter{s: s, buf: c.buf}
	for {
		w, masked, ok := it.next()
		if !ok {
			c.buf = it.buf
			return
		}
		id := uint32(0)
		if !masked {
			id = c.v.words[string(w)]
		}
		c.ids = append(c.ids, id)
	}
}

// qualTri turns a phrase's qualifiers into answers.
func qualTri(q qual) (hit, cache Tri) {
	switch {
	case q&qHit != 0:
		hit = True
	case q&qMiss != 0:
		hit = False
	}
	switch {
	case q&qCache != 0:
		cache = True
	case q&qDB != 0:
		cache = False
	}
	return hit, cache
}

// match is a phrase found in a message's words.
type match struct {
	phrase     int32
	start, end int
	gaps       int
}

// better orders two matches at one start: fewer skipped words, more
// words, the phrase written first.
func (v *vocab) better(a, b match) bool {
	if a.gaps != b.gaps {
		return a.gaps < b.gaps
	}
	if wa, wb := v.phrases[a.phrase].words, v.phrases[b.phrase].words; wa != wb {
		return wa > wb
	}
	return a.phrase < b.phrase
}

// first finds the best match at the first word where any phrase of t
// matches.
func (v *vocab) first(t *trie, ids []uint32) (match, bool) {
	for i := range ids {
		if m, ok := v.at(t, ids, i); ok {
			return m, true
		}
	}
	return match{}, false
}

// at finds the best match of t starting at word i.
func (v *vocab) at(t *trie, ids []uint32, i int) (match, bool) {
	if ids[i] == 0 || t.child(0, ids[i]) < 0 {
		return match{}, false
	}
	best := match{phrase: -1}
	v.walk(t, ids, 0, i, i, 0, &best)
	return best, best.phrase >= 0
}

// walk follows the trie from node n at word pos (the phrase began at
// start, having skipped gaps words so far).
func (v *vocab) walk(t *trie, ids []uint32, n int32, start, pos, gaps int, best *match) {
	nd := &t.nodes[n]
	for _, p := range nd.ends {
		ph := &v.phrases[p]
		if (ph.anchor && start != 0) || (ph.last && pos != len(ids)) {
			continue
		}
		m := match{phrase: p, start: start, end: pos, gaps: gaps}
		if best.phrase < 0 || v.better(m, *best) {
			*best = m
		}
	}
	if pos < len(ids) {
		if k := t.child(n, ids[pos]); k >= 0 {
			v.walk(t, ids, k, start, pos+1, gaps, best)
		}
	}
	if nd.gap >= 0 {
		g := nd.gap
		for skip := 0; skip <= maxGap && pos+skip < len(ids); skip++ {
			if k := t.child(g, ids[pos+skip]); k >= 0 {
				v.walk(t, ids, k, start, pos+skip+1, gaps+skip, best)
			}
		}
	}
}

// qualifiers reads a check's answer and source from the words: the last
// answer said (a message ends with it: "...: not found") and the first
// source.
func (v *vocab) qualifiers(ids []uint32) (hit, cache Tri) {
	for i := 0; i < len(ids); {
		m, ok := v.at(&v.quals, ids, i)
		if !ok {
			i++
			continue
		}
		h, c := qualTri(v.phrases[m.phrase].qual)
		if h != Unknown {
			hit = h
		}
		if c != Unknown && cache == Unknown {
			cache = c
		}
		i = m.end
	}
	return hit, cache
}

// unsafeBytes views a string's bytes without copying (read only).
func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// hasUser reports whether the user added phrases.
func (v *vocab) hasUser() bool { return len(v.user.nodes) > 1 }

// qualifiers reads a check's answer and source from a message, cached by
// template like classify.
func (c *classifier) qualifiers(text string) (hit, cache Tri) {
	b := unsafeBytes(text)
	h, _ := templateHash(b)
	h ^= 0x5bd1e9955bd1e995 // not the key of the message's verdict
	if v, ok := c.cache[h]; ok {
		return v.hit, v.cache
	}
	c.tokens(b)
	v := noVerdict
	v.hit, v.cache = c.v.qualifiers(c.ids)
	if c.cache == nil || len(c.cache) >= maxTemplates {
		c.cache = make(map[uint64]verdict, 1024)
	}
	c.cache[h] = v
	return v.hit, v.cache
}
