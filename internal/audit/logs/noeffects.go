package logs

import (
	"fmt"
	"strings"

	logread "github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/text"
)

// unmatchedLines keeps the first lines that name a key but matched no
// event name and no phrase: the likeliest side-effect lines worded in a
// way the vocabulary does not know.
type unmatchedLines struct {
	samples []unmatched
}

type unmatched struct {
	where, text, template string
}

const maxUnmatched = 20

func (u *unmatchedLines) add(e *logread.Event) {
	if len(u.samples) >= maxUnmatched || e.Kind != logread.KindOther || e.Match.Phrase != 0 {
		return
	}
	if kind, _ := groupKey(e); kind != kBusiness && kind != kIdem {
		return
	}
	text := e.Get(logread.Message)
	if text == "" {
		text = e.Name
	}
	if text == "" {
		return
	}
	u.samples = append(u.samples, unmatched{where: e.Where(), text: strings.Clone(text), template: logread.TemplateOf(text)})
}

// phrase is an --event phrase for the commonest template among the
// samples: its first words that are not ids.
func (u *unmatchedLines) phrase() (string, unmatched) {
	count := map[string]int{}
	var best unmatched
	for _, s := range u.samples {
		count[s.template]++
		if count[s.template] > count[best.template] {
			best = s
		}
	}
	var words []string
	for _, w := range strings.Fields(best.template) {
		if w == "#" || strings.ContainsAny(w, "0123456789") {
			continue
		}
		words = append(words, w)
		if len(words) == 4 {
			break
		}
	}
	return strings.Join(words, " "), best
}

// noEffects is the input error of logs in which no line is a side effect:
// nothing can be judged, so it is never a pass. It names what was read,
// a line with a key that matched nothing, and the --event phrase that
// would read lines like it as side effects.
func noEffects(m *logread.Mapping, st logread.Stats, kinds []KindCount, u *unmatchedLines) error {
	var seen []string
	for _, k := range kinds {
		seen = append(seen, fmt.Sprintf("%s %s", k.Kind, english.Number(k.Events)))
	}
	why := fmt.Sprintf("none of the %s lines read is a side effect, so no duplicate can be found (read as %s: %s)",
		english.Number(st.Events), st.ReadAs(), strings.Join(seen, ", "))
	if changes := m.Changes(); len(changes) > 0 {
		why = fmt.Sprintf("with the mapping given (%s) none of the %s events is a side effect, so no duplicate can be found (%s)",
			strings.Join(changes, ", "), english.Number(st.Events), strings.Join(seen, ", "))
	}
	hint := "{ExplainMapping} shows which line became which event and which matched nothing"
	if phrase, ex := u.phrase(); phrase != "" {
		hint = fmt.Sprintf("lines with a key matched no step, e.g. %s %q: if such lines record the side effect, "+
			"name them with {Events} side_effect='%s' (a phrase: words, * for up to four others; not a regular expression); %s",
			ex.where, clipText(ex.text), phrase, hint)
	}
	return &problem.Input{Why: why, Hint: hint, Err: ErrMappingNoEffects}
}

func clipText(s string) string { return text.Clip(s, 80, "...") }
