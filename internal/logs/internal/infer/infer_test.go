package infer

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// fleet writes a synthetic fleet's records: instances (one source each, or
// one merged source) running lanes, each job a sequence of steps worded in
// words no vocabulary holds, with a thread-like field, a logger that
// follows the template, an MDC-like field that follows the key and a pid
// per instance.
type fleetOpts struct {
	instances, lanes, jobs int
	merged                 bool
	hints                  map[string]Role // template text's first word -> the reader's hint
}

type step struct {
	msg, logger, level string
}

var steps = []step{
	{"parcel %s arrived envelope=%s", "intake", "INFO"},            // received (message id)
	{"bolt engaged %s seal=%s", "bolts", "DEBUG"},                  // lock acquired (lock key, token)
	{"ledger has no trace of %s", "ledger", "DEBUG"},               // check (idempotency key)
	{"summoning courier for %s", "courier", "DEBUG"},               // about to
	{"courier departed for %s receipt=%s", "courier", "INFO"},      // side effect (fresh id)
	{"ledger inscribed %s", "ledger", "INFO"},                      // commit (idempotency key)
	{"bolt disengaged %s seal=%s", "bolts", "DEBUG"},               // lock released (token)
	{"parcel %s stamped envelope=%s", "intake", "DEBUG"},           // ack (message id)
	{"heartbeat %d parcels", "intake", "DEBUG"},                    // no key
	{"courier stumbled for %s: %s", "courier", "WARN"},             // failure
	{"parcel %s returned to sender envelope=%s", "intake", "WARN"}, // nack
}

func fleet(o fleetOpts) []Record {
	rng := rand.New(rand.NewSource(7))
	var recs []Record
	line := map[int]int64{}
	add := func(inst, lane int, key, text string, st step, extra ...KV) {
		src := inst
		if o.merged {
			src = 0
		}
		line[src]++
		fields := []KV{{"thread", fmt.Sprintf("pool-%d", lane)}, {"logger", "app." + st.logger}}
		if o.merged {
			fields = append(fields, KV{"host", fmt.Sprintf("node-%c", 'a'+inst)}, KV{"pid", fmt.Sprint(1000 + inst*7)})
		}
		if key != "" {
			fields = append(fields, KV{"@bracket.1", key})
		}
		r := Record{Source: src, Line: line[src], Fields: append(fields, extra...), Message: text, Level: st.level}
		for w, h := range o.hints {
			if strings.HasPrefix(text, w) {
				r.Hint = h
			}
		}
		recs = append(recs, r)
	}
	rnd := func(n int) string {
		const letters = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[rng.Intn(len(letters))]
		}
		return string(b)
	}
	for j := 0; j < o.jobs; j++ {
		inst, lane := j%o.instances, (j/o.instances)%o.lanes
		key := fmt.Sprintf("inv-%05d", 100+j*37)
		msg := fmt.Sprintf("%08x-aaaa-bbbb-cccc-%012x", j, j*31)
		tok := rnd(16)
		idem := "pay:" + key
		add(inst, lane, key, fmt.Sprintf(steps[0].msg, key, msg), steps[0])
		if j%9 == 4 { // the lock is busy: returned
			add(inst, lane, key, fmt.Sprintf(steps[10].msg, key, msg), steps[10])
			continue
		}
		add(inst, lane, key, fmt.Sprintf(steps[1].msg, "bolt:"+key, tok), steps[1])
		add(inst, lane, key, fmt.Sprintf(steps[2].msg, idem), steps[2])
		add(inst, lane, key, fmt.Sprintf(steps[3].msg, key), steps[3])
		if j%7 == 3 {
			add(inst, lane, key, fmt.Sprintf(steps[9].msg, key, "road closed"), steps[9])
			add(inst, lane, key, fmt.Sprintf(steps[3].msg, key), steps[3])
		}
		add(inst, lane, key, fmt.Sprintf(steps[4].msg, key, "rc_"+rnd(20)), steps[4])
		add(inst, lane, key, fmt.Sprintf(steps[5].msg, idem), steps[5])
		add(inst, lane, key, fmt.Sprintf(steps[6].msg, "bolt:"+key, tok), steps[6])
		add(inst, lane, key, fmt.Sprintf(steps[7].msg, key, msg), steps[7])
		if j%10 == 0 {
			add(inst, lane, "", fmt.Sprintf(steps[8].msg, j), steps[8])
		}
	}
	return recs
}

// learnAll runs the inference as the reader does.
func learnAll(t *testing.T, recs []Record, sources int) (KeyFinding, Identity, Wording, []*Template) {
	t.Helper()
	m := NewMiner()
	tmpls := make([]*Template, len(recs))
	ids := make([]int, len(recs))
	for i := range recs {
		tmpls[i], _ = m.Add(recs[i].Message)
		ids[i] = tmpls[i].ID
	}
	key := FindKey(recs, ids)
	keys := make([]string, len(recs))
	for i := range recs {
		keys[i] = key.KeyOf(&recs[i])
	}
	id := Identify(IdentityInput{Records: recs, Templates: ids, Keys: keys, Sources: sources,
		Rank: func(k string) int { return map[string]int{"host": 3}[k] - 1 }})
	workers := make([]string, len(recs))
	for i := range recs {
		var b strings.Builder
		for _, k := range append(append([]string(nil), id.Worker...), id.Lane...) {
			if k == File {
				fmt.Fprint(&b, recs[i].Source)
			}
			v, _ := recs[i].Get(k)
			b.WriteString(v + "|")
		}
		workers[i] = b.String()
	}
	w := InferRoles(RolesInput{Records: recs, Templates: tmpls, Keys: keys, Workers: workers})
	return key, id, w, tmpls
}

func roleOfText(w Wording, prefix string) Role {
	for _, g := range w.Guesses {
		if strings.HasPrefix(g.Template.Text, prefix) && (g.Hinted || g.Confidence >= Confident) {
			return g.Role
		}
	}
	return RoleNone
}

func TestInferPerInstanceFiles(t *testing.T) {
	recs := fleet(fleetOpts{instances: 4, lanes: 3, jobs: 120})
	key, id, w, _ := learnAll(t, recs, 4)
	if key.Shape.Prefix != "inv-" {
		t.Errorf("key shape %+v (%s)", key.Shape, key.Reason)
	}
	if !slices.Equal(id.Worker, []string{File}) || !slices.Contains(id.Lane, "thread") {
		t.Errorf("worker %v lanes %v: %s", id.Worker, id.Lane, id.Reason)
	}
	classOf := func(k string) Class {
		for _, f := range id.Facts {
			if f.Key == k {
				return f.Class
			}
		}
		return ClassUnknown
	}
	if c := classOf("logger"); c != ClassLogger {
		t.Errorf("logger is %v", c)
	}
	if c := classOf("@bracket.1"); c != ClassKey {
		t.Errorf("the MDC bracket is %v", c)
	}
	for prefix, want := range map[string]Role{"parcel * arrived": RoleReceived, "bolt engaged": RoleLockAcquired,
		"ledger has no trace": RoleCheck, "courier departed": RoleSideEffect, "ledger inscribed": RoleCommitted,
		"bolt disengaged": RoleLockReleased, "parcel * stamped": RoleAcked, "summoning courier": RoleNone} {
		if got := roleOfText(w, prefix); got != want {
			t.Errorf("%q: %v, want %v", prefix, got, want)
		}
	}
}

func TestInferMergedFile(t *testing.T) {
	recs := fleet(fleetOpts{instances: 5, lanes: 3, jobs: 150, merged: true,
		hints: map[string]Role{"parcel * arrived": RoleNone, "bolt engaged": RoleLockAcquired}})
	_, id, w, _ := learnAll(t, recs, 1)
	if !slices.Equal(id.Worker, []string{"host", "pid"}) && !slices.Equal(id.Worker, []string{"host"}) {
		t.Errorf("worker %v lanes %v: %s", id.Worker, id.Lane, id.Reason)
	}
	if slices.Contains(id.Worker, "thread") || !slices.Contains(id.Lane, "thread") {
		t.Errorf("the thread is not a lane: worker %v lanes %v", id.Worker, id.Lane)
	}
	if got := roleOfText(w, "courier departed"); got != RoleSideEffect {
		t.Errorf("side effect: %v", got)
	}
}

func TestInferNoSideEffect(t *testing.T) {
	// Without the effect's line, nothing is called a side effect; the
	// candidates are ranked, the likeliest first.
	recs := fleet(fleetOpts{instances: 3, lanes: 2, jobs: 60})
	recs = slices.DeleteFunc(recs, func(r Record) bool { return strings.HasPrefix(r.Message, "courier departed") })
	_, _, w, _ := learnAll(t, recs, 3)
	if g, ok := w.Of(RoleSideEffect); ok {
		t.Errorf("%q called the side effect (%.2f: %s)", g.Template.Text, g.Confidence, g.Evidence)
	}
	if len(w.Candidates[RoleSideEffect]) == 0 {
		t.Fatal("no candidates ranked")
	}
}

func TestTokenize(t *testing.T) {
	for in, want := range map[string]string{
		"Charge ch_4T9X1rOvG64NvxrXpPRNem6s succeeded for order ord-39322 (1111 ms)":     "charge * succeeded for order * ms",
		"Acquired lock lock:order:ord-1 (token=Mz1i2R15zZzLoHt1dtMU, leaseTime=10000ms)": "acquired lock * token= * leasetime= *",
		"charge_succeeded     [payments] amount=25731 thread=Main":                       "charge_succeeded payments amount= * thread= *",
		"Stripe::Charge ch_bbiWqxTlCyQst created":                                        "stripe::charge * created",
		// zerolog's console writes an empty string as "token=": the same
		// template as a release that carried one.
		"released redis lock key=lock:order:ord-1 order=ord-1 token=": "released redis lock key= * order= * token= *",
	} {
		words, _ := Tokenize(in)
		if got := strings.Join(words, " "); got != want {
			t.Errorf("Tokenize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKeyShapeFind(t *testing.T) {
	s := KeyShape{Prefix: "ord-", Digits: 2}
	for in, want := range map[string]string{"lock:order:ord-41495": "ord-41495", "ord-61835: charging": "ord-61835", "word-12": "",
		"for order #ord-9 x": "", "Xord-123": "", "(ord-12)": "ord-12"} {
		got, _ := s.Find(in)
		if got != want {
			t.Errorf("Find(%q) = %q, want %q", in, got, want)
		}
	}
	u := IDShape{UUID: true}
	if got, _ := u.Find("lock:job:af9237ec-5929-4743-afef-f2261fe1f3b5"); got != "af9237ec-5929-4743-afef-f2261fe1f3b5" {
		t.Errorf("uuid in a lock key: %q", got)
	}
	if got := LearnIDShape([]string{"a", "b", "c", "d", "e"}); got.Valid() {
		t.Errorf("ids with no shape: %+v", got)
	}
}

// TestMappedKeyStandsWhateverItsShape: one hot key ("ord-hot", no shape to
// learn) that the mapping names on every line is the key; the job id that
// ties the templates together is not taken in its place.
func TestMappedKeyStandsWhateverItsShape(t *testing.T) {
	var recs []Record
	var ids []int
	for i := 0; i < 70; i++ {
		job := fmt.Sprintf("job-%d", i/7)
		recs = append(recs, Record{Key: "ord-hot", Message: fmt.Sprintf("step %d", i%7),
			Fields: []KV{{Key: "jobId", Value: job}}})
		ids = append(ids, i%7)
	}
	k := FindKey(recs, ids)
	if !k.Mapped || k.Field != "" {
		t.Fatalf("FindKey = %+v, want the mapped key to stand", k)
	}
}

// TestKeyedPrefix: a value holds the business key after a prefix whose
// first segment is a word; the key alone, an id before it or no
// separator before the key is not such a value.
func TestKeyedPrefix(t *testing.T) {
	for _, c := range []struct{ v, k, want string }{
		{"lock:order:ord-1", "ord-1", "lock:"},
		{"charge:ord-1:1773478843916", "ord-1", "charge:"},
		{"locks/ord-1", "ord-1", "locks/"},
		{"ord-1", "ord-1", ""},
		{"xord-1", "ord-1", ""},
		{"42:ord-1", "ord-1", ""},
		{"a:ord-1", "ord-1", ""},
	} {
		if got := keyedPrefix(c.v, c.k); got != c.want {
			t.Errorf("keyedPrefix(%q, %q) = %q, want %q", c.v, c.k, got, c.want)
		}
	}
}

// TestKeyedPrefixes: the lock's key is the keyed value on the
// acquisitions, the idempotency key the one on the checks and commits;
// a prefix both carry names neither.
func TestKeyedPrefixes(t *testing.T) {
	run := func(lockVal, idemVal string) (string, string) {
		var recs []Record
		var keys []string
		for n := 0; n < 10; n++ {
			k := fmt.Sprintf("ord-%d", 100+n)
			recs = append(recs,
				Record{Message: "locked " + fmt.Sprintf(lockVal, k) + " token Zx81kQ", Hint: RoleLockAcquired},
				Record{Message: "not paid yet (" + fmt.Sprintf(idemVal, k) + ", db)", Hint: RoleCheck},
				Record{Message: "charged 12.50 EUR id ch_9Qw", Hint: RoleSideEffect})
			keys = append(keys, k, k, k)
		}
		return KeyedPrefixes(recs, make([]*Template, len(recs)), keys, &Wording{})
	}
	if lock, idem := run("lock:order:%s", "charge:%s"); lock != "lock:" || idem != "charge:" {
		t.Errorf("lock %q, idempotency %q; want \"lock:\", \"charge:\"", lock, idem)
	}
	if lock, idem := run("pay:lock:%s", "pay:idem:%s"); lock != "" || idem != "" {
		t.Errorf("one prefix for both read as lock %q, idempotency %q", lock, idem)
	}
}
