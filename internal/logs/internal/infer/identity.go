package infer

import (
	"fmt"
	"sort"
	"strings"
)

// What each field of a line IS is decided from what it holds across the
// sample, never from where a layout puts it:
//   - a field whose value follows the business key (an MDC bracket, a
//     context field) is the key's context, never a worker;
//   - one whose value follows the message template is a logger (or a
//     component, a module);
//   - one with a single value everywhere is the app's name;
//   - one with a new value every line or two is an id (a message id, a
//     token);
//   - the rest name who wrote the line. Among those, the instance is the
//     field (or the shipper's prefix, or the file when files are one
//     instance each) that the others nest in; a field whose values nest in
//     it (each pid on one host) names its process; one whose values recur
//     under several instances (the thread "main", the consumer index 1) is
//     a lane inside a process: a thread, never a worker.

// Class is what a field holds.
type Class uint8

// The classes of a field.
const (
	ClassUnknown  Class = iota
	ClassInstance       // names the instance (pod, host, service, file): the worker
	ClassProcess        // names the process inside the instance (pid): part of the worker
	ClassLane           // a thread or consumer index inside a process
	ClassLogger         // follows the message template: a logger, component, module
	ClassConstant       // one value everywhere: the app's name
	ClassContext        // follows the business key: MDC, request context
	ClassKey            // the business key itself
	ClassID             // a new value every line or two: message ids, tokens
	numClasses
)

var classNames = [numClasses]string{"unknown", "instance", "process", "lane", "logger", "constant", "context", "business key", "id"}

func (c Class) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return "unknown"
}

// Fact is what one field was found to hold, and why.
type Fact struct {
	Key      string `json:"field"`
	Class    Class  `json:"-"`
	Kind     string `json:"class"`
	Lines    int    `json:"lines"`
	Distinct int    `json:"values"`
	Reason   string `json:"reason"`
}

// Identity is who wrote each line: the fields whose values, joined, name
// the worker (File for the file), and the lanes inside it.
type Identity struct {
	Worker []string
	Lane   []string
	// Known is false when no field qualifies as the worker: claims that
	// need one are not made.
	Known  bool
	Reason string
	Facts  []Fact
}

// IdentityInput is what the identity inference reads.
type IdentityInput struct {
	Records   []Record
	Templates []int    // per record: its template's id
	Keys      []string // per record: its business key ("" none)
	Sources   int
	// Rank is the rank of a field among the names the reader knows for a
	// worker (lower is likelier; -1: not one of them): a hint, used to
	// break ties the values leave.
	Rank func(key string) int
	// LaneName says a field is named as a thread or a consumer index is:
	// a hint, as Rank.
	LaneName func(key string) bool
	// OtherPart says a field is named as another part of a line is (its
	// attempt, job type, job or message id): a hint that it is not who
	// wrote the line, so it is no candidate (a redelivered flag nests the
	// attempt count as an instance nests its processes).
	OtherPart func(key string) bool
}

// fieldStats is what one field's values do across the sample.
type fieldStats struct {
	key      string
	lines    int
	values   map[string]*fieldValue
	keyed    int // lines with a business key
	equalKey int // lines whose value is (or holds) the line's key
}

type fieldValue struct {
	lines   int
	sources map[int]bool
	keys    map[string]bool
	tmpl    map[int]int
	rows    []int // record indexes (a bounded few)
}

// Identify decides what each field holds and who the worker is.
func Identify(in IdentityInput) Identity {
	stats := collectFields(in)
	var id Identity
	var cands []*fieldStats
	for _, fs := range stats {
		c, why := classify(fs, in)
		if c == ClassUnknown {
			// Who wrote a line is on (nearly) every line of it: a field on
			// few lines (the delivery count of received lines) is not.
			if fs.lines*10 >= len(in.Records)*4 && (in.OtherPart == nil || !in.OtherPart(fs.key)) {
				cands = append(cands, fs)
			}
			continue
		}
		id.Facts = append(id.Facts, Fact{Key: fs.key, Class: c, Lines: fs.lines, Distinct: len(fs.values), Reason: why})
	}
	if in.Sources > 1 {
		cands = append(cands, fileStats(in))
	}
	id.decide(cands, in)
	for i := range id.Facts {
		id.Facts[i].Kind = id.Facts[i].Class.String()
	}
	sort.SliceStable(id.Facts, func(i, j int) bool { return id.Facts[i].Key < id.Facts[j].Key })
	return id
}

// collectFields gathers each field's values, skipping fields on too few
// lines to judge.
func collectFields(in IdentityInput) []*fieldStats {
	byKey := map[string]*fieldStats{}
	var order []string
	for i := range in.Records {
		r := &in.Records[i]
		key := in.Keys[i]
		for _, kv := range r.Fields {
			if kv.Value == "" || kv.Key == "@time" || kv.Key == "@level" {
				continue
			}
			fs := byKey[kv.Key]
			if fs == nil {
				fs = &fieldStats{key: kv.Key, values: map[string]*fieldValue{}}
				byKey[kv.Key] = fs
				order = append(order, kv.Key)
			}
			fs.add(kv.Value, r.Source, key, in.Templates[i], i)
		}
	}
	var out []*fieldStats
	for _, k := range order {
		fs := byKey[k]
		if fs.lines >= 10 && fs.lines*50 >= len(in.Records) {
			out = append(out, fs)
		}
	}
	return out
}

func (fs *fieldStats) add(v string, source int, key string, tmpl, row int) {
	fv := fs.values[v]
	if fv == nil {
		fv = &fieldValue{sources: map[int]bool{}, keys: map[string]bool{}, tmpl: map[int]int{}}
		fs.values[v] = fv
	}
	fv.lines++
	fv.sources[source] = true
	fv.tmpl[tmpl]++
	if len(fv.rows) < 4096 {
		fv.rows = append(fv.rows, row)
	}
	fs.lines++
	if key != "" {
		fs.keyed++
		fv.keys[key] = true
		if v == key || strings.Contains(v, key) {
			fs.equalKey++
		}
	}
}

// fileStats is the file as a field: its value is the source.
func fileStats(in IdentityInput) *fieldStats {
	fs := &fieldStats{key: File, values: map[string]*fieldValue{}}
	for i := range in.Records {
		r := &in.Records[i]
		fs.add(itoa(r.Source), r.Source, in.Keys[i], in.Templates[i], i)
	}
	return fs
}

// classify decides what a field holds from its values alone; ClassUnknown
// leaves it a candidate for naming who wrote the line.
func classify(fs *fieldStats, in IdentityInput) (Class, string) {
	n, d := fs.lines, len(fs.values)
	if fs.keyed >= 5 && fs.equalKey*10 >= fs.keyed*8 {
		return ClassKey, fmt.Sprintf("holds the line's business key on %d of %d keyed lines", fs.equalKey, fs.keyed)
	}
	if d >= 5 && fs.keyed*2 >= n {
		one, lines := 0, 0
		for _, fv := range fs.values {
			if len(fv.keys) > 0 {
				lines += fv.lines
				if len(fv.keys) == 1 {
					one += fv.lines
				}
			}
		}
		if lines > 0 && one*10 >= lines*9 {
			return ClassContext, fmt.Sprintf("its value follows the business key (%d values, each on one key's lines): context, "+
				"never a worker", d)
		}
	}
	if d*3 >= n && d >= 5 {
		return ClassID, fmt.Sprintf("%d values on %d lines: a new value every line or two (an id)", d, n)
	}
	if d == 1 {
		for v := range fs.values {
			return ClassConstant, fmt.Sprintf("one value (%q) on every line that has it: an app or service name", clip(v, 40))
		}
	}
	if byTemplate(fs) {
		return ClassLogger, fmt.Sprintf("its value follows the message template (%d values): a logger or component", d)
	}
	return ClassUnknown, ""
}

// byTemplate reports whether a field's value is (almost) a function of the
// line's template, over templates seen on several lines and more templates
// than values.
func byTemplate(fs *fieldStats) bool {
	type tv struct{ top, all int }
	per := map[int]*tv{}
	for _, fv := range fs.values {
		for t, c := range fv.tmpl {
			x := per[t]
			if x == nil {
				x = &tv{}
				per[t] = x
			}
			x.all += c
			if c > x.top {
				x.top = c
			}
		}
	}
	top, all, multi := 0, 0, 0
	for _, x := range per {
		if x.all < 2 {
			continue
		}
		multi++
		top += x.top
		all += x.all
	}
	return multi > len(fs.values) && all > 0 && top*100 >= all*97
}

// nests reports whether each value of a sits under one value of b (on the
// lines that have both): a refines b.
func nests(a, b *fieldStats, in IdentityInput) bool {
	valueOf := func(fs *fieldStats, row int) (string, bool) {
		if fs.key == File {
			return itoa(in.Records[row].Source), true
		}
		return in.Records[row].Get(fs.key)
	}
	top, all := 0, 0
	for _, fv := range a.values {
		count := map[string]int{}
		for _, row := range fv.rows {
			if v, ok := valueOf(b, row); ok && v != "" {
				count[v]++
			}
		}
		best, sum := 0, 0
		for _, c := range count {
			sum += c
			best = max(best, c)
		}
		top += best
		all += sum
	}
	return all > 0 && top*100 >= all*98
}

// decide picks the instance among the candidates, then its process field
// and the lanes.
func (id *Identity) decide(cands []*fieldStats, in IdentityInput) {
	if len(cands) == 0 {
		id.Reason = "no field names who wrote the lines, and there is one file: worker unknown"
		return
	}
	root := pickRoot(cands, in)
	id.Known = true
	id.Worker = []string{root.key}
	id.Facts = append(id.Facts, Fact{Key: root.key, Class: ClassInstance, Lines: root.lines, Distinct: len(root.values),
		Reason: rootReason(root, cands, in)})
	var process *fieldStats
	for _, c := range cands {
		if c == root {
			continue
		}
		switch {
		case nests(c, root, in) && nests(root, c, in):
			// Another name of the same instance (a hostname per file).
			id.Facts = append(id.Facts, Fact{Key: c.key, Class: ClassInstance, Lines: c.lines, Distinct: len(c.values),
				Reason: "another name of the instance (one value per " + nameOf(root.key) + ")"})
		case nests(c, root, in) && (process == nil || len(c.values) > len(process.values)):
			process = c
		default:
			id.Lane = append(id.Lane, c.key)
			id.Facts = append(id.Facts, Fact{Key: c.key, Class: ClassLane, Lines: c.lines, Distinct: len(c.values),
				Reason: fmt.Sprintf("its values recur under several values of %s: a thread or consumer inside a process, never a worker",
					nameOf(root.key))})
		}
	}
	for _, c := range cands {
		if c == root || c == process || slices_contains(id.Lane, c.key) || !nests(c, root, in) || nests(root, c, in) {
			continue
		}
		id.Facts = append(id.Facts, Fact{Key: c.key, Class: ClassLane, Lines: c.lines, Distinct: len(c.values),
			Reason: "nests in the instance like its process field, which has more values"})
		id.Lane = append(id.Lane, c.key)
	}
	if process != nil {
		id.Worker = append(id.Worker, process.key)
		id.Facts = append(id.Facts, Fact{Key: process.key, Class: ClassProcess, Lines: process.lines, Distinct: len(process.values),
			Reason: fmt.Sprintf("each of its %d values stands under one value of %s: the process inside the instance", len(process.values),
				nameOf(root.key))})
	}
	id.Reason = "worker: " + nameOf(root.key)
	if process != nil {
		id.Reason += " with " + nameOf(process.key)
	}
	if len(id.Lane) > 0 {
		id.Reason += "; lanes (threads, not workers): " + strings.Join(mapNames(id.Lane), ", ")
	}
}

// pickRoot is the instance: a shipper's prefix, else the file when each
// file holds one instance, else the candidate the most others nest in.
func pickRoot(cands []*fieldStats, in IdentityInput) *fieldStats {
	for _, c := range cands {
		if c.key == "@prefix.instance" {
			return c
		}
	}
	var file *fieldStats
	for _, c := range cands {
		if c.key == File {
			file = c
		}
	}
	score := func(c *fieldStats) int {
		n := 0
		for _, o := range cands {
			if o != c && nests(o, c, in) && !nests(c, o, in) {
				n++
			}
		}
		return n
	}
	best := -1
	var root *fieldStats
	for _, c := range cands {
		if c == file {
			continue
		}
		if in.LaneName != nil && in.LaneName(c.key) {
			continue
		}
		if file != nil && !nests(file, c, in) {
			continue // its values recur across files: inside an instance, not one
		}
		s := score(c)
		better := s > best
		if s == best && in.Rank != nil {
			ri, rr := in.Rank(c.key), in.Rank(root.key)
			better = ri >= 0 && (rr < 0 || ri < rr)
		}
		if better {
			best, root = s, c
		}
	}
	switch {
	case root != nil && (file == nil || nests(root, file, in) || best > 0):
		return root
	case file != nil:
		return file
	}
	return cands[0]
}

func rootReason(root *fieldStats, cands []*fieldStats, in IdentityInput) string {
	switch root.key {
	case "@prefix.instance":
		return "the shipper's prefix names the instance that wrote each line"
	case File:
		return fmt.Sprintf("each of the %d files is one instance: no field of the lines names one across files", in.Sources)
	}
	return fmt.Sprintf("%d values; the other fields that name who wrote a line nest in it", len(root.values))
}

func nameOf(key string) string {
	switch key {
	case File:
		return "the file"
	case "@prefix.instance":
		return "the prefix's instance"
	case "@prefix.pid":
		return "the prefix's pid"
	}
	return fmt.Sprintf("%q", key)
}

func mapNames(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = nameOf(k)
	}
	return out
}

func slices_contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
