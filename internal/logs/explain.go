package logs

import (
	"bytes"
	"cmp"
	"context"
	textutil "github.com/dupctl/dupctl/internal/platform/text"
	"slices"
	"strings"
	"sync"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// Explanation is how a mapping read a log: which JSON path gave each
// field, which lines became which kind of event and by what (an event
// name, or a phrase found in the name or the message), and which lines
// matched nothing, grouped by message template - so a user sees why a
// step is missing and what phrase to add.
type Explanation struct {
	Input  Stats       `json:"input"`
	Fields []FieldUse  `json:"fields"`
	Kinds  []KindUse   `json:"kinds"`
	Other  []Unmatched `json:"unmatched"`
	// OtherLines counts the lines that matched nothing; OtherTemplates
	// their distinct templates (the list keeps the commonest).
	OtherLines     int64 `json:"unmatched_lines"`
	OtherTemplates int   `json:"unmatched_templates"`
	// Prefilter is what an audit's second pass may pass over with a byte
	// test instead of reading it.
	Prefilter PrefilterUse `json:"prefilter"`
}

// PrefilterUse counts the lines whose business (else idempotency) key
// stands verbatim as a member's string value (MemberValue) - an audit's
// second pass passes over, with a byte test, the lines of a chunk made
// only of such lines that hold no duplicated key - and the others, which
// have their chunk read whole.
type PrefilterUse struct {
	Verbatim int64 `json:"verbatim_key_lines"`
	Other    int64 `json:"other_lines"`
	// Members are the member names the keys stood under, most lines first.
	Members []string `json:"members"`
}

// FieldUse is one field and the path it was read from.
type FieldUse struct {
	Field string `json:"field"`
	Path  string `json:"path"`
	Lines int64  `json:"lines"`
}

// KindUse is one way lines got a kind.
type KindUse struct {
	Kind    string `json:"kind"`
	By      string `json:"by"` // "event name", "phrase", "your phrase", "learned phrase"
	In      string `json:"in"` // the field it was found in: event or message
	Phrase  string `json:"phrase"`
	Lines   int64  `json:"lines"`
	Example string `json:"example"` // file:line
	Text    string `json:"text"`    // the example's name or message
}

// Unmatched is a message template no phrase and no event name matched.
type Unmatched struct {
	Template string `json:"template"`
	Lines    int64  `json:"lines"`
	Example  string `json:"example"`
	Text     string `json:"text"`
}

// maxTemplates bounds the unmatched templates kept while scanning.
const maxExplainTemplates = 10_000

// Explain scans the sources with o's mapping and says how it read them;
// top bounds each list shown (0: 20).
func Explain(ctx context.Context, sources []Source, o Options, top int) (*Explanation, error) {
	if top <= 0 {
		top = 20
	}
	if o.Mapping == nil {
		o.Mapping = Default()
	}
	o.RecordPaths = true
	x := &explainer{mapping: o.Mapping, fields: map[explainField]int64{}, kinds: map[explainKind]*KindUse{}, other: map[string]*Unmatched{},
		members: map[string]int64{}}
	o.PrepareLine = x.prepareLine
	st, err := Scan(ctx, sources, o, x.event)
	x.res.Input = st
	if err != nil {
		return nil, err
	}
	return x.result(top), nil
}

type explainField struct {
	f    Field
	path string
}

type explainKind struct {
	kind   Kind
	in     Field
	phrase int32
	name   string // the event name, for exact names
}

// explainer counts which path each field was read from and which words
// made each kind of event. The event borrows the scan's buffers: what is
// kept is cloned.
type explainer struct {
	mapping *Mapping
	res     Explanation
	fields  map[explainField]int64
	kinds   map[explainKind]*KindUse
	other   map[string]*Unmatched
	// members counts the member names keys stood under verbatim (written
	// by the parsing goroutines).
	mu      sync.Mutex
	members map[string]int64
}

// prepareLine tags (Tag 1) an event whose key stands verbatim in its line.
func (x *explainer) prepareLine(e *Event, line []byte) {
	key := e.Fields[BusinessKey]
	if key == "" {
		key = e.Fields[IdempotencyKey]
	}
	name, ok := MemberValue(line, key)
	if !ok {
		return
	}
	e.Tag = 1
	name = name[1:]
	if q := bytes.IndexByte(name, '"'); q >= 0 {
		name = name[:q]
	}
	x.mu.Lock()
	x.members[string(name)]++
	x.mu.Unlock()
}

func (x *explainer) event(e *Event) error {
	if e.Tag == 1 {
		x.res.Prefilter.Verbatim++
	} else {
		x.res.Prefilter.Other++
	}
	if e.Paths != nil {
		for f, p := range e.Paths {
			if p != "" {
				x.fields[explainField{Field(f), p}]++
			}
		}
	}
	text := e.Name
	if e.Match.In == Message {
		text = e.Get(Message)
	}
	if e.Kind == KindOther && e.Match.Phrase == 0 {
		x.unmatched(e, text)
		return nil
	}
	k := explainKind{kind: e.Kind, in: e.Match.In, phrase: e.Match.Phrase}
	if k.phrase == 0 {
		k.name = normName(text)
	}
	u := x.kinds[k]
	if u == nil {
		text = strings.Clone(text)
		u = &KindUse{Kind: e.Kind.String(), In: fieldSpecs[e.Match.In].name, Example: e.Where(), Text: textutil.Clip(text, 83, "..."),
			By: "event name", Phrase: text}
		m := x.mapping.reading()
		if ph, user := m.Phrase(e.Match); ph != "" {
			u.By, u.Phrase = "phrase", ph
			switch {
			case user:
				u.By = "your phrase"
			case m.Learned(e.Match):
				u.By = "learned phrase"
			}
		}
		u.Phrase = textutil.Clip(u.Phrase, 83, "...")
		x.kinds[k] = u
	}
	u.Lines++
	return nil
}

// unmatched counts a line no event rule matched, by its template.
func (x *explainer) unmatched(e *Event, text string) {
	x.res.OtherLines++
	tmpl := TemplateOf(text)
	u := x.other[tmpl]
	if u == nil {
		if len(x.other) >= maxExplainTemplates {
			return
		}
		u = &Unmatched{Template: tmpl, Example: e.Where(), Text: textutil.Clip(strings.Clone(text), 83, "...")}
		x.other[tmpl] = u
	}
	u.Lines++
}

// result sorts the counts: fields and kinds in their order, most lines
// first; the top unmatched templates.
func (x *explainer) result(top int) *Explanation {
	r := &x.res
	r.Fields, r.Kinds, r.Other = []FieldUse{}, []KindUse{}, []Unmatched{}
	for k, n := range x.fields {
		r.Fields = append(r.Fields, FieldUse{Field: k.f.String(), Path: k.path, Lines: n})
	}
	slices.SortFunc(r.Fields, func(a, b FieldUse) int {
		fa, _ := ParseField(a.Field)
		fb, _ := ParseField(b.Field)
		return cmp.Or(cmp.Compare(fa, fb), cmp.Compare(b.Lines, a.Lines), cmp.Compare(a.Path, b.Path))
	})
	for _, u := range x.kinds {
		r.Kinds = append(r.Kinds, *u)
	}
	slices.SortFunc(r.Kinds, func(a, b KindUse) int {
		ka, _ := ParseKind(a.Kind)
		kb, _ := ParseKind(b.Kind)
		return cmp.Or(cmp.Compare(ka, kb), cmp.Compare(b.Lines, a.Lines), cmp.Compare(a.Phrase, b.Phrase))
	})
	r.OtherTemplates = len(x.other)
	for _, u := range x.other {
		r.Other = append(r.Other, *u)
	}
	slices.SortFunc(r.Other, func(a, b Unmatched) int {
		return cmp.Or(cmp.Compare(b.Lines, a.Lines), cmp.Compare(a.Template, b.Template))
	})
	if len(r.Other) > top {
		r.Other = r.Other[:top]
	}
	r.Prefilter.Members = []string{}
	for name := range x.members {
		r.Prefilter.Members = append(r.Prefilter.Members, name)
	}
	slices.SortFunc(r.Prefilter.Members, func(a, b string) int {
		return cmp.Or(cmp.Compare(x.members[b], x.members[a]), cmp.Compare(a, b))
	})
	return r
}

// TemplateOf is a message's template as the vocabulary reads it: its
// words in lower case, "#" for a word with a digit ("Charged ord-42" is
// "charged ord #"), up to the part a verdict reads.
func TemplateOf(text string) string {
	b := unsafeBytes(text)
	if len(b) > classifyCap {
		b = b[:classifyCap]
	}
	var out strings.Builder
	it := wordIter{s: b}
	for {
		w, masked, ok := it.next()
		if !ok {
			return out.String()
		}
		if out.Len() > 0 {
			out.WriteByte(' ')
		}
		if masked {
			out.WriteByte('#')
		} else {
			out.Write(w)
		}
	}
}

// Report is the explanation's findings: the input checks.
func (x *Explanation) Report() *findings.Report {
	rep := &findings.Report{Command: "audit logs", Data: x}
	for _, r := range Rules() {
		rep.Check(r.Code)
	}
	rep.Add(InputFindings(x.Input)...)
	return rep
}
