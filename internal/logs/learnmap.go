package logs

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/logs/internal/infer"
)

// infer runs the inference on the gathered sample and compiles what it
// found into the scan's mapping.
func (l *learner) infer(nsrc int) (*Learned, error) {
	out := &Learned{Sources: l.layouts, Lines: len(l.recs), Fields: []infer.Fact{}, Roles: []LearnedRole{}, Missing: []MissingRole{}}
	ids := make([]int, len(l.recs))
	for i := range l.recs {
		if t := l.miner.Lookup(l.recs[i].Message); t != nil {
			l.tmpls[i] = t
		}
		ids[i] = l.tmpls[i].ID
	}
	key := infer.FindKey(l.recs, ids)
	keys := make([]string, len(l.recs))
	for i := range l.recs {
		keys[i] = key.KeyOf(&l.recs[i])
	}
	ident := infer.Identify(infer.IdentityInput{Records: l.recs, Templates: ids, Keys: keys, Sources: nsrc, Rank: l.rank,
		LaneName: l.laneName, OtherPart: l.otherPart})
	workers := make([]string, len(l.recs))
	for i := range l.recs {
		workers[i] = workerKey(&l.recs[i], ident)
	}
	wording := infer.InferRoles(infer.RolesInput{Records: l.recs, Templates: l.tmpls, Keys: keys, Workers: workers})
	out.Fields = append(out.Fields, ident.Facts...)
	out.Worker = LearnedWorker{Fields: nonNil(ident.Worker), Lanes: nonNil(ident.Lane), Known: ident.Known, Reason: ident.Reason}
	if !l.decidesWorker() {
		out.Worker = LearnedWorker{Fields: []string{}, Lanes: []string{}, Reason: fmt.Sprintf(
			"worker: %d lines are too few for their values to say who wrote them (%d or more): read by the field names",
			len(l.recs), minWorkerSample)}
	}
	out.Key = LearnedKey{Field: key.Field, Shape: key.Shape.String(), Mapped: key.Mapped, Reason: key.Reason}
	lf, cfg := l.fields(ident, key)
	l.lockFields(&wording, keys, &lf, &cfg, out)
	hints := &readHints{fills: l.fills(out), worker: l.decidesWorker()}
	if key.Shape.Valid() {
		hints.keyShape = key.Shape
	}
	l.keyedFields(&wording, keys, hints, out)
	hints.msgShape = infer.LearnIDShape(l.msgIDs)
	if hints.msgShape.Valid() {
		out.MessageIDs = hints.msgShape.String()
	}
	phrases := l.phrases(&wording, out)
	m, dropped, err := l.compileChecked(lf, phrases, hints)
	if err != nil {
		return nil, err
	}
	out.Dropped = dropped
	for kind, ps := range phrases {
		cfg.Events[kind] = ps
	}
	out.config, out.mapping = cfg, m
	l.missing(&wording, out)
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// rank is a field's rank among the worker's built-in names (-1: none).
func (l *learner) rank(key string) int {
	if s, ok := l.user.lookup([]byte(key)); ok && s.field == Consumer {
		return int(s.rank)
	}
	return -1
}

// laneName: a field named as threads are.
func (l *learner) laneName(key string) bool {
	s, ok := l.user.lookup([]byte(key))
	return ok && s.field == Lane
}

// otherPart: a field named as a part of the line that is not who wrote it.
func (l *learner) otherPart(key string) bool {
	s, ok := l.user.lookup([]byte(key))
	if !ok {
		return false
	}
	switch s.field {
	case Consumer, Process, Lane:
		return false
	}
	return true
}

// minWorkerSample is the fewest sampled lines whose values decide who
// wrote them (a field is judged on 10 lines or more).
const minWorkerSample = 50

// decidesWorker: the sample is large enough for its values to decide
// which fields name the worker.
func (l *learner) decidesWorker() bool { return len(l.recs) >= minWorkerSample }

// judgedNotWorker: a field the built-in names take for the worker was
// judged by its values to be another part of the line. Where none was
// (too few lines to judge), the built-in names stand.
func (l *learner) judgedNotWorker(id infer.Identity) bool {
	for _, f := range id.Facts {
		if l.rank(f.Key) >= 0 && f.Class != infer.ClassInstance && f.Class != infer.ClassProcess {
			return true
		}
	}
	return false
}

// workerKey is who wrote a record: the worker's fields' values and its
// lanes', joined ("" when unknown).
func workerKey(r *infer.Record, id infer.Identity) string {
	if !id.Known {
		return ""
	}
	var b strings.Builder
	for _, k := range append(append([]string(nil), id.Worker...), id.Lane...) {
		if k == infer.File {
			fmt.Fprintf(&b, "%d", r.Source)
		} else if v, ok := r.Get(k); ok {
			b.WriteString(v)
		}
		b.WriteByte(0)
	}
	return b.String()
}

// fields are the learned field paths: the worker, its process and lanes in
// place of the built-in worker names, the business key where the built-in
// names found none.
func (l *learner) fields(id infer.Identity, key infer.KeyFinding) (learnedFields, Config) {
	lf := learnedFields{replace: map[Field][]string{}, add: map[Field][]string{}}
	cfg := Config{Fields: map[string][]string{}, Events: map[string][]string{}}
	set := func(f Field, paths []string, replace bool) {
		if len(paths) == 0 {
			return
		}
		if replace {
			lf.replace[f] = paths
		} else {
			lf.add[f] = append(lf.add[f], paths...)
		}
		cfg.Fields[f.String()] = append(cfg.Fields[f.String()], paths...)
	}
	switch {
	case !l.decidesWorker():
		// Too few lines for values to say who wrote them: the built-in
		// reading stands.
	case id.Known:
		set(Consumer, id.Worker[:1], true)
		set(Process, id.Worker[1:], true)
	case l.judgedNotWorker(id):
		// The field the built-in names take for the worker was judged to
		// be something else (a logger, the key, a constant): none is taken.
		lf.replace[Consumer] = nil
	}
	if l.decidesWorker() {
		set(Lane, id.Lane, true)
	}
	if key.Field != "" && !key.Mapped {
		set(BusinessKey, []string{key.Field}, false)
	}
	for _, f := range id.Facts {
		if f.Class == infer.ClassKey && f.Key != key.Field && strings.HasPrefix(f.Key, "@") {
			set(BusinessKey, []string{f.Key}, false) // an MDC bracket that holds the key
		}
	}
	return lf, cfg
}

// lockFields maps the fields of the lock's lines that hold its key and its
// token where the built-in names do not.
func (l *learner) lockFields(w *infer.Wording, keys []string, lf *learnedFields, cfg *Config, out *Learned) {
	// A field the built-in names give a part (a message id, a job id) is
	// not the lock's key or token, and where a named field already reads
	// them nothing is learned in its place.
	known := func(k string) bool {
		_, ok := l.user.lookup([]byte(k))
		return ok
	}
	key, token, why := infer.LockFields(l.recs, l.tmpls, keys, w, known)
	for _, f := range []struct {
		field Field
		path  string
		read  int
	}{{LockKey, key, l.lockRead[0]}, {LockToken, token, l.lockRead[1]}} {
		if f.path == "" || f.read > 0 {
			continue
		}
		if _, mine := l.user.overrides[f.field]; mine {
			continue
		}
		lf.add[f.field] = append(lf.add[f.field], f.path)
		cfg.Fields[f.field.String()] = append(cfg.Fields[f.field.String()], f.path)
	}
	if why != "" {
		out.Fields = append(out.Fields, infer.Fact{Key: key + "," + token, Kind: "lock", Reason: why})
	}
}

// KeyedPrefixFact is the class of a learned fact that a field is read by
// its values' prefix inside sentences (a layout's position, which no
// mapping path names).
const KeyedPrefixFact = "keyed prefix"

// keyedFields reads the lock's key and the idempotency key where the
// sentences name them by position alone, by the prefix their values share
// (infer.KeyedPrefixes); never for a field the user mapped.
func (l *learner) keyedFields(w *infer.Wording, keys []string, hints *readHints, out *Learned) {
	lock, idem := infer.KeyedPrefixes(l.recs, l.tmpls, keys, w)
	for _, kp := range []keyedPrefix{{LockKey, lock}, {IdempotencyKey, idem}} {
		if kp.prefix == "" {
			continue
		}
		if _, mine := l.user.overrides[kp.field]; mine {
			continue
		}
		hints.keyed = append(hints.keyed, kp)
		out.Fields = append(out.Fields, infer.Fact{Key: kp.field.String(), Kind: KeyedPrefixFact, Reason: fmt.Sprintf(
			"%s by its prefix (%s) inside sentences: such values hold the business key on its step's lines", kp.field, kp.prefix)})
	}
}

// fills completes each source's times that leave out their year or date:
// from the flags, a whole time on a neighbouring line of the same file, the
// file's name (a date) or its modification time (a year).
func (l *learner) fills(out *Learned) map[string]*clockFill {
	fills := map[string]*clockFill{}
	for i, st := range l.times {
		if st.partial == 0 {
			continue
		}
		f := &clockFill{year: l.o.Year, date: l.o.Date}
		name := l.names[i]
		switch {
		case f.year > 0:
			f.from = fmt.Sprintf("year %d given", f.year)
		case st.year > 0:
			f.year, f.from = st.year, fmt.Sprintf("year %d from a neighbouring line", st.year)
		case !st.mtime.IsZero():
			f.ref, f.from = st.mtime, fmt.Sprintf("year from the file's modification time (%s)", st.mtime.UTC().Format(time.DateOnly))
		}
		if !st.monthDayOnly {
			switch d, ok := infer.DateIn(filepath.Base(name)); {
			case !f.date.IsZero():
				f.from = "date given"
			case ok:
				f.date, f.from = d, "date "+d.Format(time.DateOnly)+" from the file's name"
			case !st.date.IsZero():
				f.date, f.from = st.date, "date "+st.date.Format(time.DateOnly)+" from a neighbouring line"
			default:
				f.from = "times of day without a date: not read (give the date)"
			}
		}
		if f.from == "" {
			f.from = "times without a year: not read (give the year)"
		}
		fills[name] = f
		out.Sources[i].Times = f.from
	}
	return fills
}

// phrases are the learned phrases per kind section ("side_effect",
// "check miss"), one per confidently given template that the vocabulary
// did not name, each the most specific one that reads all its template's
// sampled lines and no line of another step.
func (l *learner) phrases(w *infer.Wording, out *Learned) map[string][]string {
	byT := l.examples()
	phrases := map[string][]string{}
	for _, g := range w.Guesses {
		lr := LearnedRole{Role: g.Role.String(), Template: g.Template.Text, Lines: g.Template.Count, Confidence: round2(g.Confidence),
			Evidence: g.Evidence, By: "inferred", Example: g.Template.Example}
		if g.Hinted {
			lr.By = "vocabulary"
			out.Roles = append(out.Roles, lr)
			continue
		}
		if g.Role == infer.RoleNone || g.Confidence < infer.Confident {
			continue
		}
		kind := g.Role.String()
		if g.Qual != "" {
			kind += " " + g.Qual
		}
		p := l.phraseFor(g.Template, kind, byT, w)
		if p == "" {
			lr.Evidence += "; no phrase reads its lines alone: not used"
			out.Roles = append(out.Roles, lr)
			continue
		}
		lr.Phrase = p
		out.Roles = append(out.Roles, lr)
		phrases[kind] = append(phrases[kind], p)
	}
	return phrases
}

func round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

// examples are a few sampled messages of each template.
func (l *learner) examples() map[*infer.Template][]string {
	out := map[*infer.Template][]string{}
	for i, t := range l.tmpls {
		if len(out[t]) < 12 && !slices.Contains(out[t], l.recs[i].Message) {
			out[t] = append(out[t], l.recs[i].Message)
		}
	}
	return out
}

// phraseFor is the most specific phrase of a template that reads all its
// examples as kind and changes no other template's step ("" when none).
func (l *learner) phraseFor(t *infer.Template, kind string, byT map[*infer.Template][]string, w *infer.Wording) string {
	want, _ := ParseKind(strings.Fields(kind)[0])
	for _, p := range candidatePhrases(t) {
		v, err := compileVocabWith(nil, map[string][]string{kind: {p}})
		if err != nil {
			continue
		}
		c := classifier{v: v}
		ok := true
		for other, msgs := range byT {
			for _, msg := range msgs {
				got := c.decide([]byte(msg))
				learned := got.phrase >= 0 && v.phrases[got.phrase].learned
				switch {
				case other == t && (!learned || got.kind != want):
					ok = false
				case other != t && learned && roleOf(other, w) != infer.RoleByName(want.String()):
					ok = false
				}
			}
			if !ok {
				break
			}
		}
		if ok {
			return p
		}
	}
	return ""
}

// roleOf is the role a template was given (RoleNone when none).
func roleOf(t *infer.Template, w *infer.Wording) infer.Role {
	if g, ok := w.Role(t); ok && (g.Hinted || g.Confidence >= infer.Confident) {
		return g.Role
	}
	return infer.RoleNone
}

// candidatePhrases are a template's phrases, most specific first: its
// constant words with "*" for each value; then its longest run of constant
// words; then each run of two words or more.
func candidatePhrases(t *infer.Template) []string {
	var runs [][]string
	var cur []string
	var all []string
	for _, w := range t.Words {
		if w == "*" {
			if len(cur) > 0 {
				runs = append(runs, cur)
				cur = nil
			}
			if len(all) > 0 && all[len(all)-1] != "*" {
				all = append(all, "*")
			}
			continue
		}
		w = strings.TrimSuffix(w, "=")
		if !hasWordChar(w) {
			continue
		}
		cur = append(cur, w)
		all = append(all, w)
	}
	if len(cur) > 0 {
		runs = append(runs, cur)
	}
	for len(all) > 0 && all[len(all)-1] == "*" {
		all = all[:len(all)-1]
	}
	var out []string
	for n := len(all); n > 0; n-- { // the whole phrase, then shorter ones: a value may hold more words than "*" skips
		if all[n-1] == "*" || n < len(all) && n < 2 {
			continue
		}
		if p := strings.Join(all[:n], " "); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	sort.SliceStable(runs, func(i, j int) bool { return len(runs[i]) > len(runs[j]) })
	for _, r := range runs {
		p := strings.Join(r, " ")
		if !slices.Contains(out, p) && (len(r) >= 2 || len(runs) == 1) {
			out = append(out, p)
		}
	}
	return out
}

func hasWordChar(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 {
			return true
		}
	}
	return false
}

// compileChecked compiles the learned mapping and drops a learned phrase
// that reads a sampled line of another step (a phrase checked alone can
// still lose to another learned one).
func (l *learner) compileChecked(lf learnedFields, phrases map[string][]string, hints *readHints) (*Mapping, []string, error) {
	var dropped []string
	for round := 0; ; round++ {
		m, err := compile(l.o.Config, lf, phrases)
		if err != nil {
			return nil, nil, err
		}
		m.learned = hints
		bad := l.conflict(m)
		if bad == "" || round > 8 {
			return m, dropped, nil
		}
		dropped = append(dropped, bad)
		for k, ps := range phrases {
			phrases[k] = slices.DeleteFunc(ps, func(p string) bool { return k+"="+p == bad })
		}
	}
}

// conflict is a learned phrase ("kind=phrase") that gives a sampled line a
// step its template's other lines do not have, or "".
func (l *learner) conflict(m *Mapping) string {
	c := classifier{v: m.vocab}
	seen := map[*infer.Template]Kind{}
	for i, t := range l.tmpls {
		v := c.decide([]byte(l.recs[i].Message))
		if v.phrase < 0 || !m.vocab.phrases[v.phrase].learned {
			continue
		}
		if k, ok := seen[t]; ok && k != v.kind || l.recs[i].Hint != infer.RoleNone && infer.RoleByName(v.kind.String()) != l.recs[i].Hint {
			p := m.vocab.phrases[v.phrase]
			return sectionOf(p) + "=" + p.text
		}
		seen[t] = v.kind
	}
	return ""
}

func sectionOf(p phrase) string {
	s := p.kind.String()
	if p.qual&qMiss != 0 {
		s += " miss"
	}
	return s
}

// missing lists the flow's steps no template was given, with the
// templates that fit best and the phrase that would name each.
func (l *learner) missing(w *infer.Wording, out *Learned) {
	for _, role := range []infer.Role{infer.RoleSideEffect} {
		if _, ok := w.Of(role); ok {
			continue
		}
		mr := MissingRole{Role: role.String(), Candidates: []LearnedRole{}}
		for _, g := range w.Candidates[role] {
			p := ""
			if ps := candidatePhrases(g.Template); len(ps) > 0 {
				p = ps[0]
			}
			mr.Candidates = append(mr.Candidates, LearnedRole{Role: role.String(), Template: g.Template.Text, Phrase: p,
				Lines: g.Template.Count, Confidence: round2(g.Confidence), Evidence: g.Evidence, By: "inferred",
				Example: g.Template.Example})
			if len(mr.Candidates) == 5 {
				break
			}
		}
		out.Missing = append(out.Missing, mr)
	}
}
