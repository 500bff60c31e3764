package report

import (
	"bytes"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/english"
	"github.com/dupctl/dupctl/internal/platform/findings"
)

// HTML is one self-contained page per run, readable when mailed or
// attached to a ticket: inline CSS, inline SVG pictures from the command's
// view (Document.HTML), the findings with their evidence and fixes, no
// script, no request to anything outside the file. The palette is
// Okabe-Ito's (distinguishable with every common colour-vision
// deficiency), every mark in a picture has a text equivalent (its <title>
// and a table row), and the page prints on A4/Letter without its colours.

type htmlPrinter struct{ o Options }

// Palette is Okabe and Ito's colour-blind-safe set, by role.
// Views draw with CSS classes where they can (the page's colours follow
// the reader's light or dark scheme); these are the light values, as CSS
// custom properties, for a view's inline style ("fill:"+Palette.Error).
var Palette = struct {
	Error, Warn, Info, Pass, Lease, Delivery, Effect, Expired, Fault, Ink, Faint string
}{
	Error: "var(--error)", Warn: "var(--warn)", Info: "var(--info)", Pass: "var(--pass)",
	Lease: "var(--lease)", Delivery: "var(--delivery)", Effect: "var(--effect)", Expired: "var(--expired)",
	Fault: "var(--fault)", Ink: "var(--ink)", Faint: "var(--faint)",
}

type htmlFinding struct {
	findings.Finding
	Class string
	// Shown is the evidence listed (the first maxHTMLEvidence lines), More
	// how many lines -o json has besides.
	Shown []string
	More  int
	// Anchor is set on the first finding of each code (id="code-CODE"), so
	// a picture can link a line to the findings behind it (CodeAnchor).
	Anchor string
}

// maxHTMLEvidence bounds the evidence lines a finding lists on the page
// (a hot key's finding carries one per repeat).
const maxHTMLEvidence = 50

// CodeAnchor is the link to the first finding of a code on the page.
func CodeAnchor(code string) string { return "#code-" + code }

type htmlPage struct {
	Title    string
	Command  string
	Verdict  string
	Failed   bool
	Summary  string
	Tool     string
	Picture  template.HTML
	Findings []htmlFinding
	Allowed  []findings.AllowedFinding
	CSS      template.CSS
	// Failure, Label and Lead are a failed run's banner.
	Failure     *Failure
	Label, Lead string
}

func (p htmlPrinter) Print(w io.Writer, d Document) error {
	return emit(w, func(buf *bytes.Buffer) error {
		r := d.Report
		s := findings.Summarize(r, p.o.FailOn)
		page := htmlPage{Title: "dupctl " + r.Command, Command: r.Command, Failed: s.Failed, Tool: "dupctl " + p.o.Tool.Version,
			Allowed: r.Allowed, CSS: template.CSS(pageCSS)}
		page.Verdict = "CI verdict: passes at --fail-on " + p.o.FailOn.String()
		if s.Failed {
			page.Verdict = "CI verdict: fails at --fail-on " + p.o.FailOn.String()
		}
		if f := p.o.Failure; f != nil {
			page.Failed, page.Verdict, page.Failure, page.Label, page.Lead = true, f.title(), f, f.label(), f.lead()
		}
		switch {
		case nothingRan(r, p.o.Failure):
			page.Summary = "No check ran."
		case s.Findings == 0:
			page.Summary = "No findings (" + english.Count(len(checkList(r)), "check", "checks") + ")."
		default:
			page.Summary = english.Count(s.Findings, "finding", "findings") + ": " + english.Count(s.Errors, "error", "errors") + ", " +
				english.Count(s.Warnings, "warning", "warnings") + ", " + english.Count(s.Infos, "info", "infos") + "."
		}
		anchored := map[string]bool{}
		for _, f := range r.Findings {
			hf := htmlFinding{Finding: f, Class: f.Severity.String(), Shown: f.Evidence[:min(len(f.Evidence), maxHTMLEvidence)]}
			hf.More = len(f.Evidence) - len(hf.Shown)
			if !anchored[f.Code] {
				anchored[f.Code], hf.Anchor = true, "code-"+f.Code
			}
			page.Findings = append(page.Findings, hf)
		}
		draw := d.HTML
		if draw == nil && d.Text != nil {
			// No picture of its own: the page shows what the terminal does.
			draw = func(w io.Writer) error { return TextHTML(w, d.Text) }
		}
		if draw != nil {
			var pic bytes.Buffer
			if err := draw(&pic); err != nil {
				return err
			}
			page.Picture = template.HTML(pic.String()) // built by the view with Escape/SVG, which escape every outside value
		}
		var out strings.Builder
		if err := pageTemplate.Execute(&out, page); err != nil {
			return err
		}
		buf.WriteString(labelCells(out.String()))
		return nil
	})
}

// Escape escapes outside data for HTML text and attributes.
func Escape(s string) string { return template.HTMLEscapeString(Cell(s, 0)) }

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>{{.Title}}</title>
<style>{{.CSS}}</style>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
<p class="verdict {{if .Failed}}fail{{else}}pass{{end}}"><strong>{{.Verdict}}</strong>. {{.Summary}}</p>
</header>
{{with .Failure}}<section class="failure" role="alert"><p><strong>{{$.Label}}:</strong> {{$.Lead}}</p>
{{- if .NotRun}}<ul>{{range .NotRun}}<li><strong>{{.Check}}</strong>: {{.Message}}</li>{{end}}</ul>{{end}}</section>
{{end}}{{if .Picture}}<main>{{.Picture}}</main>{{end}}
{{if .Findings}}<section class="findings">
<h2>Findings</h2>
<div class="scroll"><table>
<thead><tr><th scope="col">Severity</th><th scope="col">Code</th><th scope="col">Subject</th><th scope="col">Message</th></tr></thead>
<tbody>
{{range $i, $f := .Findings}}<tr class="sev-{{$f.Class}}" id="finding-{{$i}}">` +
	`<td><span class="badge {{$f.Class}}">{{$f.Severity}}</span></td>` +
	`<td><code{{if $f.Anchor}} id="{{$f.Anchor}}"{{end}}>{{$f.Code}}</code></td><td>{{$f.Subject}}</td>` +
	`<td class="message">{{$f.Message}}{{if or $f.Evidence $f.Fix}}
<details><summary>evidence and fix</summary><ul>{{range $f.Shown}}<li>{{.}}</li>{{end}}
{{- if $f.More}}<li class="note">{{$f.More}} more evidence lines are in -o json</li>{{end}}</ul>` +
	`{{if $f.Fix}}<p class="fix"><strong>Fix:</strong> {{$f.Fix}}</p>{{end}}</details>{{end}}</td></tr>
{{end}}</tbody>
</table></div>
</section>{{end}}
{{if .Allowed}}<section class="allowed"><h2>Accepted by the allow-list (not counted)</h2><ul>
{{range .Allowed}}<li>{{.Severity}} <code>{{.Code}}</code> {{.Subject}}: {{.Message}} (until {{.Expires}}: {{.Reason}})</li>
{{end}}</ul></section>{{end}}
<footer>{{.Tool}}</footer>
</body>
</html>
`))

// pageCSS: system fonts, the palette as custom properties (light, and
// dark under prefers-color-scheme), text never below 12px: a wide picture
// or table scrolls sideways in its box instead of shrinking; one incident
// per printed page, badges printed as outlined words. Every text colour
// keeps 4.5:1 against its background and every mark 3:1 (WCAG AA), in
// both schemes (TestPaletteContrast).
var pageCSS = cssVars(lightScheme, ":root") + "@media (prefers-color-scheme: dark) {\n" + cssVars(darkScheme, ":root") + "}\n" + `
:root { color-scheme: light dark; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; overflow-wrap: break-word;
  color: var(--ink); background: var(--bg); margin: 1.5rem auto; max-width: 84rem; padding: 0 1rem; }
h1 { font-size: 1.4rem; margin: 0 0 .3rem; } h2 { font-size: 1.15rem; margin: 1.4rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .4rem; }
a { color: var(--link); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.verdict.fail strong { color: var(--error-text); } .verdict.pass strong { color: var(--pass-text); }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: .4rem 0 1rem; min-width: 100%; }
th, td { text-align: left; vertical-align: top; padding: .25rem .5rem; border-bottom: 1px solid var(--rule); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td, th { overflow-wrap: break-word; } td.num, th.num { white-space: nowrap; }
.badge { display: inline-block; padding: 0 .4rem; border-radius: .2rem; color: var(--on-badge); font-size: 13px; white-space: nowrap;
  border: 1px solid transparent; }
.badge.error, .badge.fail { background: var(--error); } .badge.warn, .badge.partial { background: var(--warn-bg); color: var(--on-warn); }
.badge.info { background: var(--info); } .badge.pass { background: var(--pass); } .badge.notchecked { background: var(--faint); }
details summary { cursor: pointer; color: var(--faint); } .fix { margin: .3rem 0; }
figure { margin: 1rem 0; } figcaption { color: var(--faint); font-size: 13px; }
svg { height: auto; } .scroll > svg { max-width: none; display: block; }
svg text { font: 12px system-ui, sans-serif; fill: var(--ink); }
svg .lane-name { font-weight: bold; } svg .mark-label, svg .bar-label, svg .bar-end-label, svg .step-no { font-size: 11px; }
svg .bar-label { fill: var(--on-lease); }
svg .mark-label, svg .bar-end-label { paint-order: stroke; stroke: var(--bg); stroke-width: 3px; stroke-linejoin: round; }
svg .tick, svg .t0 { fill: var(--faint); }
svg .rule { stroke: var(--rule); } svg .grid { stroke: var(--grid); } svg .axis-line { stroke: var(--faint); }
svg .bar.delivery { fill: var(--delivery); } svg .bar.lease { fill: var(--lease); stroke: var(--lease-edge); stroke-width: 1.5; }
svg .bar.believed { stroke: var(--error); stroke-width: 1.5; } svg .hatch-bg { fill: var(--expired); }
svg .hatch-line { stroke: var(--error); }
svg .bar.orphan { fill: none; stroke: var(--lease-edge); stroke-width: 1.5; stroke-dasharray: 4 3; }
svg .bar.paused { fill: var(--fault); } svg .bar-end { stroke: var(--ink); stroke-width: 2; }
svg .overlap { fill: var(--error); fill-opacity: .16; } svg .bin { fill: var(--faint); }
svg .mark { stroke: var(--ink); fill: var(--faint); }
svg .mark .ring { fill: none; stroke: var(--ink); stroke-width: 1.5; stroke-dasharray: 2 2; }
svg .mark.effect { fill: var(--effect); stroke: none; } svg .mark.duplicate { fill: var(--error); stroke: var(--ink); }
svg .mark.crash, svg .mark.pause { stroke: var(--fault); } svg .mark.ack { stroke: var(--pass); }
svg .mark.expire, svg .mark.deadline { stroke: var(--warn); }
svg .mark.foreign-del { fill: var(--error); stroke: var(--ink); } svg .mark.lock-failed { stroke: var(--warn); fill: none; }
svg .mark.check { fill: var(--info); stroke: var(--ink); } svg .mark.cache-read { fill: var(--bg); stroke: var(--fault); }
svg .mark.key-changed { fill: var(--warn); stroke: var(--ink); } svg .mark.redelivery { stroke: var(--delivery); fill: var(--delivery); }
svg .mark.other { fill: var(--faint); stroke: none; }
.legend span { display: inline-block; margin-right: 1rem; font-size: 13px; }
.legend .sw { display: inline-block; width: 1.6em; height: .8em; margin-right: .3em; vertical-align: middle; ` +
	`border: 1px solid var(--ink); }
.sw-delivery { background: var(--delivery); } .sw-lease { background: var(--lease); } .sw-paused { background: var(--fault); }
.sw-believed { background: repeating-linear-gradient(45deg, var(--expired) 0 3px, var(--error) 3px 5px); }
.sw-orphan { border-style: dashed !important; }
.legend svg.glyph { vertical-align: middle; margin-right: .3em; overflow: visible; }
.cause { border-left: 4px solid var(--error); padding: .3rem .6rem; margin: .6rem 0; }
.failure { border: 2px solid var(--error); border-left-width: 6px; padding: .3rem .8rem; margin: .8rem 0; }
.failure p { margin: .3rem 0; } .failure strong { color: var(--error-text); }
.cause-label { text-transform: uppercase; font-size: 12px; color: var(--faint); letter-spacing: .05em; }
.strip-title { color: var(--faint); font-size: 13px; margin: .4rem 0 .2rem; }
.vs-error { color: var(--error-text); font-weight: bold; } .vs-warn { color: var(--warn); font-weight: bold; }
.vs-info { color: var(--info); }
figure.histogram rect.bucket { stroke: var(--lease-edge); stroke-width: 1; }
.st-pass { color: var(--pass-text); } .st-strong { font-weight: bold; } .st-faint { color: var(--faint); }
.st-mark { background: var(--error); color: var(--on-badge); padding: 0 .2em; font-weight: bold; }
pre.view { font-size: 13px; margin: .2rem 0; } p.view { margin: .25rem 0; } table.view { min-width: 0; }
table.matrix { min-width: 0; } table.matrix td { text-align: center; font-weight: bold; border: 2px solid var(--bg); }
.cell-dup, .cell-loss { background: var(--error); color: var(--on-badge); } .cell-ok { background: var(--pass); color: var(--on-badge); }
.cell-none { color: var(--faint); } .cell-differs { outline: 3px dashed var(--ink); outline-offset: -4px; }
.note { color: var(--faint); } .note code { word-break: break-all; }
tr:target { outline: 2px solid var(--info); }
ul.nodes { list-style: none; padding: 0; margin: .4rem 0; display: flex; flex-wrap: wrap; gap: .5rem; }
ul.nodes li { border: 1px solid var(--faint); border-radius: .3rem; padding: .3rem .6rem; }
ul.nodes li.error { border: 2px dashed var(--error); }
table.topology { min-width: 0; } table.topology caption { text-align: left; color: var(--faint); font-size: 13px; }
table.topology td.cell { text-align: center; white-space: nowrap; } table.topology td.leader { font-weight: bold; }
table.topology tr.flagged th[scope=row] { box-shadow: inset 4px 0 var(--error); }
table.topology th .note { font-weight: normal; font-size: 13px; } table.topology thead code, .nobr { white-space: nowrap; }
svg .slots.read { fill: var(--pass); } svg .slots.unread { fill: var(--bg); stroke: var(--error); stroke-width: 2; stroke-dasharray: 5 3; }
.sw-read { background: var(--pass); } .sw-unread { border: 2px dashed var(--error) !important; }
footer { color: var(--faint); font-size: 13px; margin-top: 2rem; }
@media (max-width: 600px) { body { padding: 0 .5rem; margin: .8rem auto; } }
` + cardCSS + `@media print {
  :root { --bg: #fff; --ink: #000; --faint: #333; }
  body { margin: 0; max-width: none; font-size: 11pt; color: #000; background: #fff; }
  .scroll { overflow: visible; } .scroll > svg { max-width: 100%; }
  details { display: block; } details > summary { display: none; } main, section.incident { break-after: page; }
figure, tr { break-inside: avoid; }
  a { color: inherit; text-decoration: none; }
  .badge { background: #fff !important; color: #000 !important; border: 1px solid #000; font-weight: bold; }
}
`

// A colour scheme: every custom property the page and its pictures use.
type scheme map[string]string

var lightScheme = scheme{
	"bg": "#ffffff", "ink": "#1a1a1a", "faint": "#595959", "rule": "#d6d6d6", "grid": "#e4e4e4", "link": "#0067A0",
	"error": "#C05300", "error-text": "#B24E00", "warn": "#9A6700", "warn-bg": "#E69F00", "on-warn": "#1a1a1a",
	"info": "#0072B2", "pass": "#007A5A", "pass-text": "#007A5A", "on-badge": "#ffffff",
	"delivery": "#0072B2", "lease": "#56B4E9", "lease-edge": "#0072B2", "on-lease": "#1a1a1a",
	"effect": "#007A5A", "expired": "#F0E442", "fault": "#A63F87",
}

var darkScheme = scheme{
	"bg": "#16181c", "ink": "#e6e6e6", "faint": "#a8a8a8", "rule": "#3a3d44", "grid": "#2a2d33", "link": "#7cc4f0",
	"error": "#FF8A3D", "error-text": "#FF8A3D", "warn": "#E69F00", "warn-bg": "#E69F00", "on-warn": "#16181c",
	"info": "#56B4E9", "pass": "#3FC8A0", "pass-text": "#3FC8A0", "on-badge": "#16181c",
	"delivery": "#56B4E9", "lease": "#0072B2", "lease-edge": "#56B4E9", "on-lease": "#ffffff",
	"effect": "#3FC8A0", "expired": "#8a7f1c", "fault": "#CC79A7",
}

func cssVars(s scheme, selector string) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(selector + " {")
	for _, k := range keys {
		b.WriteString(" --" + k + ": " + s[k] + ";")
	}
	b.WriteString(" }\n")
	return b.String()
}
