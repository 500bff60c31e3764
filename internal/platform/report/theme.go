// Package report renders findings.Reports for people (an aligned table with
// severity colour), for programs (versioned JSON) and for CI (JUnit XML).
// It owns every styling decision: lipgloss and tablewriter are used only
// here, and every byte a printer writes passes through internal/platform/redact.
package report

import (
	"io"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/muesli/termenv"
)

// Theme styles text for a terminal, or leaves it plain when colour is off.
type Theme struct {
	color    bool
	html     bool // TextHTML: styles as classes
	renderer *lipgloss.Renderer
	err      lipgloss.Style
	warn     lipgloss.Style
	info     lipgloss.Style
	pass     lipgloss.Style
	strong   lipgloss.Style
	faint    lipgloss.Style
	mark     lipgloss.Style
}

// NewTheme returns the one dupctl theme. With color false every method
// returns its input unchanged, so golden files stay plain.
func NewTheme(w io.Writer, color bool) *Theme {
	r := lipgloss.NewRenderer(w)
	if color {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	// Adaptive colours read well on light and dark backgrounds.
	return &Theme{
		color:    color,
		renderer: r,
		err:      r.NewStyle().Bold(true).Foreground(lipgloss.AdaptiveColor{Light: "160", Dark: "203"}),
		warn:     r.NewStyle().Bold(true).Foreground(lipgloss.AdaptiveColor{Light: "130", Dark: "214"}),
		info:     r.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "25", Dark: "75"}),
		pass:     r.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "28", Dark: "78"}),
		strong:   r.NewStyle().Bold(true),
		faint:    r.NewStyle().Faint(true),
		mark:     r.NewStyle().Bold(true).Reverse(true),
	}
}

// styled is s in a style: ANSI on a terminal, a class in TextHTML.
func (t *Theme) styled(class string, st lipgloss.Style, s string) string {
	if t.html && s != "" {
		return styleOpen + class + styleMid + s + styleClose
	}
	return t.apply(st, s)
}

// Color reports whether the theme emits ANSI escapes.
func (t *Theme) Color() bool { return t.color }

func (t *Theme) apply(st lipgloss.Style, s string) string {
	if !t.color || s == "" {
		return s
	}
	return st.Render(s)
}

// Severity styles s in the colour of sev.
func (t *Theme) Severity(sev findings.Severity, s string) string {
	switch sev {
	case findings.Error:
		return t.styled("vs-error", t.err, s)
	case findings.Warn:
		return t.styled("vs-warn", t.warn, s)
	default:
		return t.styled("vs-info", t.info, s)
	}
}

// Pass styles a success marker.
func (t *Theme) Pass(s string) string { return t.styled("st-pass", t.pass, s) }

// Strong styles headings.
func (t *Theme) Strong(s string) string { return t.styled("st-strong", t.strong, s) }

// Faint styles secondary text.
func (t *Theme) Faint(s string) string { return t.styled("st-faint", t.faint, s) }

// Mark highlights the one thing the reader must see (the second side
// effect, the runs beyond a TTL).
func (t *Theme) Mark(s string) string { return t.styled("st-mark", t.mark, s) }

// sequences are the escape sequences the theme writes (empty without
// colour): the only ones a table passes to the terminal as they are.
func (t *Theme) sequences() []string {
	if !t.color {
		return nil
	}
	const marker = "\uE000"
	seen := map[string]bool{}
	var out []string
	for _, st := range []lipgloss.Style{t.err, t.warn, t.info, t.pass, t.strong, t.faint, t.mark} {
		pre, post, _ := strings.Cut(st.Render(marker), marker)
		for _, seq := range splitEscapes(pre + post) {
			if !seen[seq] {
				seen[seq] = true
				out = append(out, seq)
			}
		}
	}
	return out
}

// splitEscapes cuts a run of ANSI CSI sequences into single sequences.
func splitEscapes(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			return out
		}
		j := strings.IndexFunc(s[i+2:], func(r rune) bool { return r >= 0x40 && r <= 0x7e })
		if j < 0 {
			return out
		}
		out = append(out, s[i:i+2+j+1])
		s = s[i+2+j+1:]
	}
}
