package infer

import (
	"fmt"
	"sort"
	"strings"
)

// Which template records which step is decided from the vocabulary (a
// hint: a template whose lines the reader's phrases named) and from where
// the template sits in each job's sequence - the lines of one business key
// written by one worker, in order:
//   - the received line comes first and shares a value (the message id)
//     with the ack, which comes last;
//   - the lock's acquisition and its release share a value no other line
//     has (the token), inside the received ... ack span;
//   - the idempotency check and the commit share a value that holds the
//     key (the idempotency key): the check before the side effect, the
//     commit after it;
//   - the side effect is the step that runs once per successful job, after
//     the lock and the check, right before the commit (or the release, or
//     the ack), at an info level; a value on it that no other line holds
//     (the id the payment provider gave the charge) confirms it; a step
//     before it that also ends in failures is its attempt ("charging").

// Guess is the role given to one template, and why.
type Guess struct {
	Template *Template
	Role     Role
	// Qual qualifies a check: "miss" when the runs go on to the side
	// effect after it.
	Qual       string
	Confidence float64
	Evidence   string
	// Hinted: the vocabulary named the template's lines so.
	Hinted bool
}

// Wording is the roles of a sample's templates.
type Wording struct {
	Guesses []Guess
	// Candidates ranks templates for each flow role no template was
	// confidently given (the side effect, the commit ...), best first.
	Candidates map[Role][]Guess
	Sequences  int
}

// Confident is the confidence from which an inferred role is used.
const Confident = 0.6

// Role is the confident role of template t (RoleNone when none).
func (w *Wording) Role(t *Template) (Guess, bool) {
	for _, g := range w.Guesses {
		if g.Template == t {
			return g, true
		}
	}
	return Guess{}, false
}

// Of is the guess for role r with the highest confidence.
func (w *Wording) Of(r Role) (Guess, bool) {
	var best Guess
	ok := false
	for _, g := range w.Guesses {
		if g.Role == r && (!ok || g.Confidence > best.Confidence) {
			best, ok = g, true
		}
	}
	return best, ok
}

// RolesInput is what the wording inference reads: the records, each with
// its template, business key and worker ("" unknown: one sequence per file
// then).
type RolesInput struct {
	Records   []Record
	Templates []*Template
	Keys      []string
	Workers   []string
}

// tstat is what one template does across the sequences.
type tstat struct {
	t                    *Template
	lines, keyed         int
	hint                 Role
	hintShare            float64
	seqs, once, first    int
	last                 int
	pos                  float64
	warn                 int
	fresh                int
	prev                 map[*Template]int
	inRuns               int // sequences it is in that also hold an ack or a commit
	lexLock, lexIntent   bool
	failLex              bool
	before, after, delta map[*Template]int // pairs: shares a value with u; t's line first
	keyPair              map[*Template]int // the shared value holds the key
}

type seqLine struct {
	row int
	t   *Template
}

// InferRoles gives roles to the templates of a sample.
func InferRoles(in RolesInput) Wording {
	stats, seqs := sequenceStats(in)
	w := Wording{Candidates: map[Role][]Guess{}, Sequences: len(seqs)}
	var list []*tstat
	for _, s := range stats {
		list = append(list, s)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].t.ID < list[j].t.ID })
	given := map[*Template]Guess{}
	has := map[Role]*tstat{}
	for _, s := range list {
		if s.hint != RoleNone && s.hintShare >= 0.8 {
			given[s.t] = Guess{Template: s.t, Role: s.hint, Confidence: s.hintShare, Hinted: true,
				Evidence: fmt.Sprintf("the vocabulary names %d of its %d lines %s", int(s.hintShare*float64(s.lines)+0.5), s.lines, s.hint)}
			if has[s.hint] == nil || s.lines > has[s.hint].lines {
				has[s.hint] = s
			}
		}
	}
	jobs := jobTemplates(list, given)
	r := &roleInference{w: &w, given: given, has: has, jobs: jobs, seqs: len(seqs)}
	r.receivedAck()
	r.lockPair()
	r.checkCommit()
	r.sideEffect()
	for _, g := range given {
		w.Guesses = append(w.Guesses, g)
	}
	sort.Slice(w.Guesses, func(i, j int) bool { return w.Guesses[i].Template.ID < w.Guesses[j].Template.ID })
	return w
}

// sequenceStats cuts the keyed records into sequences (one key, one
// worker, in order) and measures each template in them.
func sequenceStats(in RolesInput) (map[*Template]*tstat, [][]seqLine) {
	stats := map[*Template]*tstat{}
	hints := map[*Template]map[Role]int{}
	counts := map[string]int{}
	for i := range in.Records {
		for _, v := range recordValues(&in.Records[i]) {
			counts[v]++
		}
	}
	bySeq := map[string]int{}
	var seqs [][]seqLine
	for i := range in.Records {
		r := &in.Records[i]
		t := in.Templates[i]
		s := stats[t]
		if s == nil {
			s = &tstat{t: t, prev: map[*Template]int{}, before: map[*Template]int{}, after: map[*Template]int{},
				delta: map[*Template]int{}, keyPair: map[*Template]int{}}
			s.lexLock, s.lexIntent, s.failLex = lexicon(t)
			stats[t] = s
			hints[t] = map[Role]int{}
		}
		s.lines++
		hints[t][r.Hint]++
		if isWarn(r.Level) {
			s.warn++
		}
		for _, v := range recordValues(r) {
			if counts[v] == 1 && len(v) >= 8 && in.Keys[i] != "" && !strings.Contains(v, in.Keys[i]) && !allDigits(v) {
				s.fresh++
				break
			}
		}
		if in.Keys[i] == "" {
			continue
		}
		s.keyed++
		id := in.Keys[i] + "\x00" + in.Workers[i]
		if in.Workers[i] == "" {
			id += "\x00" + itoa(r.Source)
		}
		n, ok := bySeq[id]
		if !ok {
			n = len(seqs)
			bySeq[id] = n
			seqs = append(seqs, nil)
		}
		seqs[n] = append(seqs[n], seqLine{row: i, t: t})
	}
	for t, h := range hints {
		s := stats[t]
		best, n := RoleNone, 0
		for role, c := range h {
			if role != RoleNone && c > n {
				best, n = role, c
			}
		}
		s.hint, s.hintShare = best, float64(n)/float64(s.lines)
	}
	for _, seq := range seqs {
		measure(seq, stats, in)
	}
	return stats, seqs
}

// measure adds one sequence's positions, neighbours and shared values.
func measure(seq []seqLine, stats map[*Template]*tstat, in RolesInput) {
	occ := map[*Template]int{}
	ends := false
	for _, l := range seq {
		occ[l.t]++
		if h := in.Records[l.row].Hint; h == RoleAcked || h == RoleCommitted {
			ends = true
		}
	}
	for t, c := range occ {
		s := stats[t]
		s.seqs++
		if c == 1 {
			s.once++
		}
		if ends {
			s.inRuns++
		}
	}
	for i, l := range seq {
		s := stats[l.t]
		if len(seq) > 1 {
			s.pos += float64(i) / float64(len(seq)-1)
		} else {
			s.pos += 0.5
		}
		if i == 0 {
			s.first++
		}
		if i == len(seq)-1 {
			s.last++
		}
		if i > 0 {
			s.prev[seq[i-1].t]++
		}
	}
	// Shared values: which templates hand a value on to which.
	key := in.Keys[seq[0].row]
	firstAt := map[string]seqLine{}
	for _, l := range seq {
		for _, v := range recordValues(&in.Records[l.row]) {
			if v == key || len(v) < 6 || allDigits(v) {
				continue
			}
			f, ok := firstAt[v]
			if !ok {
				firstAt[v] = l
				continue
			}
			if f.t == l.t {
				continue
			}
			if strings.Contains(v, key) {
				stats[f.t].keyPair[l.t]++
			} else {
				stats[f.t].before[l.t]++
			}
			stats[l.t].after[f.t]++
		}
	}
}

// recordValues are the values a record carries: its fields' (but the
// layout's own: time, level, prefix) and its message's variables.
func recordValues(r *Record) []string {
	var out []string
	add := func(v string) {
		for _, o := range out {
			if o == v {
				return
			}
		}
		out = append(out, v)
	}
	for _, kv := range r.Fields {
		if strings.HasPrefix(kv.Key, "@") && !strings.HasPrefix(kv.Key, "@bracket") {
			continue
		}
		add(kv.Value)
	}
	_, vals := Tokenize(r.Message)
	for _, v := range vals {
		add(v)
	}
	return out
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' {
			return false
		}
	}
	return true
}

func isWarn(level string) bool {
	l := strings.ToLower(level)
	switch {
	case strings.HasPrefix(l, "warn"), strings.HasPrefix(l, "err"), strings.HasPrefix(l, "fatal"), strings.HasPrefix(l, "crit"),
		strings.HasPrefix(l, "sev"), l == "wrn", l == "w", l == "e", l == "f", l == "40", l == "50", l == "60":
		return true
	}
	return false
}

// lexicon reads a template's words for the few word classes the structure
// cannot tell: a lock (lock, mutex, lease, semaphore), an attempt about to
// happen (a first word ending in -ing: "charging", "creating charge"), a
// failure (fail, error, exception, timeout, unable, could not).
func lexicon(t *Template) (lock, intent, fail bool) {
	first := ""
	for _, w := range t.Words {
		for _, part := range splitWord(w) {
			switch {
			case strings.HasPrefix(part, "lock") || strings.HasPrefix(part, "unlock") || strings.HasPrefix(part, "mutex") ||
				strings.HasPrefix(part, "lease") || strings.HasPrefix(part, "semaphore"):
				lock = true
			case strings.HasPrefix(part, "fail") || strings.HasPrefix(part, "error") || strings.HasPrefix(part, "exception") ||
				part == "timeout" || part == "unable" || part == "cannot" || part == "could":
				fail = true
			}
			if first == "" && part != "*" {
				first = part
			}
		}
	}
	intent = len(first) > 4 && strings.HasSuffix(first, "ing") || first == "about" || first == "attempting" || first == "trying"
	return lock, intent, fail
}

// splitWord splits a template word into its parts: snake_case, dotted,
// kebab-case and camelCase ("charge_succeeded", "lockAcquired").
func splitWord(w string) []string {
	var out []string
	start := 0
	flush := func(i int) {
		if i > start {
			out = append(out, strings.ToLower(w[start:i]))
		}
		start = i
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c == '_' || c == '.' || c == '-' || c == ':' || c == '=' || c == '/':
			flush(i)
			start = i + 1
		case c >= 'A' && c <= 'Z' && i > start && w[i-1] >= 'a' && w[i-1] <= 'z':
			flush(i)
		}
	}
	flush(len(w))
	return out
}

// jobTemplates are the templates whose lines carry a business key.
func jobTemplates(list []*tstat, given map[*Template]Guess) []*tstat {
	var out []*tstat
	for _, s := range list {
		if s.keyed >= 3 && s.keyed*10 >= s.lines*6 && s.seqs > 0 {
			out = append(out, s)
		}
	}
	return out
}

type roleInference struct {
	w     *Wording
	given map[*Template]Guess
	has   map[Role]*tstat
	jobs  []*tstat
	seqs  int
}

func (r *roleInference) free(s *tstat) bool { _, ok := r.given[s.t]; return !ok }

func (r *roleInference) give(s *tstat, role Role, conf float64, why string) {
	g := Guess{Template: s.t, Role: role, Confidence: min(conf, 0.99), Evidence: why}
	if conf < Confident {
		r.w.Candidates[role] = append(r.w.Candidates[role], g)
		return
	}
	r.given[s.t] = g
	if r.has[role] == nil || s.lines > r.has[role].lines {
		r.has[role] = s
	}
}

func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// receivedAck: the template that opens the sequences and hands a value on
// to the one that closes them.
func (r *roleInference) receivedAck() {
	if r.has[RoleReceived] == nil {
		var best *tstat
		for _, s := range r.jobs {
			if !r.free(s) || share(s.first, s.seqs) < 0.6 || s.lexLock || s.failLex {
				continue
			}
			if best == nil || s.first > best.first {
				best = s
			}
		}
		if best != nil {
			conf := 0.4 + 0.3*share(best.first, best.seqs)
			if partner(best) != nil {
				conf += 0.2
			}
			r.give(best, RoleReceived, conf, fmt.Sprintf("first line of %d of the %d job sequences it is in%s", best.first, best.seqs,
				handsOn(best)))
		}
	}
	rec := r.has[RoleReceived]
	if r.has[RoleAcked] != nil || rec == nil {
		return
	}
	var best *tstat
	for _, s := range r.jobs {
		if !r.free(s) || rec.before[s.t] == 0 || share(s.last, s.seqs) < 0.5 || s.failLex || s.warn*2 > s.lines {
			continue
		}
		if best == nil || rec.before[s.t] > rec.before[best.t] {
			best = s
		}
	}
	if best != nil {
		r.give(best, RoleAcked, 0.5+0.4*share(best.last, best.seqs), fmt.Sprintf("last line of %d of the %d job sequences it is "+
			"in, and carries the value the received line %q did", best.last, best.seqs, rec.t.Text))
	}
}

func partner(s *tstat) *Template {
	var best *Template
	for t, n := range s.before {
		if best == nil || n > s.before[best] || n == s.before[best] && t.ID < best.ID {
			best = t
		}
	}
	return best
}

func handsOn(s *tstat) string {
	if p := partner(s); p != nil {
		return fmt.Sprintf(", and hands a value on to %q", p.Text)
	}
	return ""
}

// lockPair: two templates that name a lock and share a value (the token,
// or the lock's key), the first handing it on to the second; where the
// vocabulary named one of them, the other is the lock template it hands a
// value on to, or gets one from.
func (r *roleInference) lockPair() {
	acq, rel := r.has[RoleLockAcquired], r.has[RoleLockReleased]
	if acq != nil && rel != nil {
		return
	}
	a, b, n := r.bestLockPair(acq, rel)
	if a == nil {
		return
	}
	seqs := min(a.seqs, b.seqs)
	why := fmt.Sprintf("%q hands a value (a token, the lock's key) on to %q in %d of the %d sequences they are in, inside the job",
		a.t.Text, b.t.Text, min(n, seqs), seqs)
	conf := 0.4 + 0.4*share(min(n, seqs), seqs)
	if a.lexLock || b.lexLock {
		conf += 0.15
		why += ", and they name a lock"
	}
	if acq == nil {
		r.give(a, RoleLockAcquired, conf, why)
	}
	if rel == nil {
		r.give(b, RoleLockReleased, conf, why)
	}
}

// bestLockPair is the pair of templates inside the job that hand a value
// on the most (acq or rel, when known, fixed), and how often.
func (r *roleInference) bestLockPair(acq, rel *tstat) (bestA, bestB *tstat, best int) {
	rec := r.has[RoleReceived]
	// A token (a random value, no key in it) ties any two templates; the
	// lock's key (a value holding the business key) only two that name a
	// lock.
	link := func(a, b *tstat) int {
		if a.lexLock && b.lexLock {
			return a.before[b.t] + a.keyPair[b.t]
		}
		return a.before[b.t]
	}
	inside := func(s *tstat) bool {
		return !s.failLex && s.warn*2 <= s.lines && (rec == nil || s.t != rec.t) && share(s.first, s.seqs) < 0.5 &&
			share(s.last, s.seqs) < 0.5
	}
	fits := func(s, known *tstat) bool { return inside(s) && (known == nil && r.free(s) || s == known) }
	for _, a := range r.jobs {
		if !fits(a, acq) {
			continue
		}
		for _, b := range r.jobs {
			if b != a && fits(b, rel) {
				if n := link(a, b); n > best {
					bestA, bestB, best = a, b, n
				}
			}
		}
	}
	return bestA, bestB, best
}

// checkCommit: the templates that carry the key-holding value the check
// reads before the side effect and the commit writes after it.
func (r *roleInference) checkCommit() {
	carriers := r.keyCarriers()
	if len(carriers) < 2 {
		return
	}
	received := func(s *tstat) int {
		n := 0
		for _, o := range carriers {
			n += o.keyPair[s.t]
		}
		return n
	}
	commit := r.has[RoleCommitted]
	if commit == nil {
		for _, s := range carriers {
			if r.free(s) && received(s) > 0 && (commit == nil || received(s) > received(commit) ||
				received(s) == received(commit) && meanPos(s) > meanPos(commit)) {
				commit = s
			}
		}
		if commit == nil {
			return
		}
		n := min(received(commit), commit.seqs)
		r.give(commit, RoleCommitted, 0.5+0.4*share(n, commit.seqs),
			fmt.Sprintf("the key-holding value (the idempotency key) an earlier line carried comes back on it, last, in %d of the %d "+
				"sequences it is in", n, commit.seqs))
	}
	for _, s := range carriers {
		if s == commit || !r.free(s) || share(s.keyPair[commit.t], s.seqs) < 0.3 || share(commit.prev[s.t], s.seqs) >= 0.5 {
			continue
		}
		n := min(s.keyPair[commit.t], s.seqs)
		r.give(s, RoleCheck, 0.5+0.4*share(n, s.seqs), fmt.Sprintf("carries the key-holding value (the idempotency key) the commit "+
			"%q carries again later, in %d of the %d sequences it is in", commit.t.Text, n, s.seqs))
		if g, ok := r.given[s.t]; ok {
			g.Qual = "miss"
			r.given[s.t] = g
		}
	}
}

// keyCarriers are the job templates that share a value holding the key
// (not the lock's) with another: the check, the commit, a duplicate
// caught.
func (r *roleInference) keyCarriers() []*tstat {
	var carriers []*tstat
	for _, s := range r.jobs {
		if s.lexLock || s.failLex || s.warn*2 > s.lines || isLockRole(r.given[s.t].Role) {
			continue
		}
		n := 0
		for _, c := range s.keyPair {
			n += c
		}
		for _, o := range r.jobs {
			n += o.keyPair[s.t]
		}
		if n > 0 {
			carriers = append(carriers, s)
		}
	}
	return carriers
}

func meanPos(s *tstat) float64 { return s.pos / float64(max(s.keyed, 1)) }

func isLockRole(r Role) bool {
	return r == RoleLockAcquired || r == RoleLockReleased || r == RoleLockFailed || r == RoleLockLost
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// sideEffect: the step right before the commit (or the release, or the
// ack) that runs once per job at an info level; its attempt line ("-ing")
// comes before it.
func (r *roleInference) sideEffect() {
	if r.has[RoleSideEffect] != nil {
		return
	}
	var next *tstat
	var nextRole Role
	for _, role := range []Role{RoleCommitted, RoleLockReleased, RoleAcked} {
		if r.has[role] != nil {
			next, nextRole = r.has[role], role
			break
		}
	}
	var cands []Guess
	var best *tstat
	bestScore := 0.0
	for _, s := range r.jobs {
		if !r.free(s) {
			continue
		}
		score, why := r.effectScore(s, next, nextRole)
		cands = append(cands, Guess{Template: s.t, Role: RoleSideEffect, Confidence: score, Evidence: why})
		if score > bestScore {
			best, bestScore = s, score
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Confidence > cands[j].Confidence })
	if best != nil && bestScore >= Confident {
		r.give(best, RoleSideEffect, bestScore, cands[0].Evidence)
		cands = cands[1:]
	}
	r.w.Candidates[RoleSideEffect] = cands
}

// effectScore is how well a template fits the side effect, and why.
func (r *roleInference) effectScore(s, next *tstat, nextRole Role) (float64, string) {
	var why []string
	score := 0.0
	if next != nil && s.seqs > 0 {
		if p := share(next.prev[s.t], s.seqs); p >= 0.5 {
			score += 0.35 * p
			why = append(why, fmt.Sprintf("right before the %s line in %d of the %d sequences it is in", nextRole, next.prev[s.t], s.seqs))
		}
	}
	if o := share(s.once, s.seqs); o >= 0.8 {
		score += 0.15
		why = append(why, fmt.Sprintf("once in %.0f%% of them", o*100))
	}
	if f := share(s.fresh, s.lines); f >= 0.5 {
		score += 0.25 * f
		why = append(why, fmt.Sprintf("%d of its %d lines carry a value no other line holds (an id it was given)", s.fresh, s.lines))
	}
	if check := r.has[RoleCheck]; check != nil && next != nil && meanPos(s) > meanPos(check) {
		score += 0.1
		why = append(why, "after the check")
	}
	switch {
	case s.warn*2 > s.lines:
		score -= 0.5
		why = append(why, "mostly at a warn or error level")
	case s.failLex:
		score -= 0.4
		why = append(why, "worded as a failure")
	}
	if s.lexIntent {
		score -= 0.3
		why = append(why, "worded as about to happen")
	}
	if s.lexLock {
		score -= 0.3
		why = append(why, "names a lock")
	}
	if len(why) == 0 {
		why = append(why, "no sign of a side effect")
	}
	return max(score, 0), strings.Join(why, "; ")
}
