package report

import (
	"bytes"
	"html/template"
	"io"
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
var Palette = struct {
	Error, Warn, Info, Pass, Lease, Delivery, Effect, Expired, Fault, Ink, Faint string
}{
	Error: "#D55E00", Warn: "#E69F00", Info: "#0072B2", Pass: "#009E73",
	Lease: "#56B4E9", Delivery: "#0072B2", Effect: "#009E73", Expired: "#F0E442",
	Fault: "#CC79A7", Ink: "#222222", Faint: "#777777",
}

type htmlFinding struct {
	findings.Finding
	Class string
	// Anchor is set on the first finding of each code (id="code-CODE"), so
	// a picture can link a line to the findings behind it (CodeAnchor).
	Anchor string
}

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
}

func (p htmlPrinter) Print(w io.Writer, d Document) error {
	return emit(w, func(buf *bytes.Buffer) error {
		r := d.Report
		s := findings.Summarize(r, p.o.FailOn)
		page := htmlPage{Title: "dupctl " + r.Command, Command: r.Command, Failed: s.Failed, Tool: "dupctl " + p.o.Tool.Version,
			Allowed: r.Allowed, CSS: template.CSS(pageCSS)}
		page.Verdict = "passes at --fail-on " + p.o.FailOn.String()
		if s.Failed {
			page.Verdict = "fails at --fail-on " + p.o.FailOn.String()
		}
		if s.Findings == 0 {
			page.Summary = "No findings (" + english.Count(len(checkList(r)), "check", "checks") + ")."
		} else {
			page.Summary = english.Count(s.Findings, "finding", "findings") + ": " + english.Count(s.Errors, "error", "errors") + ", " +
				english.Count(s.Warnings, "warning", "warnings") + ", " + english.Count(s.Infos, "info", "infos") + "."
		}
		anchored := map[string]bool{}
		for _, f := range r.Findings {
			hf := htmlFinding{Finding: f, Class: f.Severity.String()}
			if !anchored[f.Code] {
				anchored[f.Code], hf.Anchor = true, "code-"+f.Code
			}
			page.Findings = append(page.Findings, hf)
		}
		if d.HTML != nil {
			var pic bytes.Buffer
			if err := d.HTML(&pic); err != nil {
				return err
			}
			page.Picture = template.HTML(pic.String()) // built by the view with Escape/SVG, which escape every outside value
		}
		return pageTemplate.Execute(buf, page)
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
{{if .Picture}}<main>{{.Picture}}</main>{{end}}
{{if .Findings}}<section class="findings">
<h2>Findings</h2>
<table>
<thead><tr><th scope="col">Severity</th><th scope="col">Code</th><th scope="col">Subject</th><th scope="col">Message</th></tr></thead>
<tbody>
{{range $i, $f := .Findings}}<tr class="sev-{{$f.Class}}" id="finding-{{$i}}"><td><span class="badge {{$f.Class}}">{{$f.Severity}}</span></td><td><code{{if $f.Anchor}} id="{{$f.Anchor}}"{{end}}>{{$f.Code}}</code></td><td>{{$f.Subject}}</td><td>{{$f.Message}}{{if or $f.Evidence $f.Fix}}
<details><summary>evidence and fix</summary><ul>{{range $f.Evidence}}<li>{{.}}</li>{{end}}</ul>{{if $f.Fix}}<p class="fix"><strong>Fix:</strong> {{$f.Fix}}</p>{{end}}</details>{{end}}</td></tr>
{{end}}</tbody>
</table>
</section>{{end}}
{{if .Allowed}}<section class="allowed"><h2>Accepted by the allow-list (not counted)</h2><ul>
{{range .Allowed}}<li>{{.Severity}} <code>{{.Code}}</code> {{.Subject}}: {{.Message}} (until {{.Expires}}: {{.Reason}})</li>
{{end}}</ul></section>{{end}}
<footer>{{.Tool}}</footer>
</body>
</html>
`))

// pageCSS: system fonts, the palette, wide tables that scroll on screen
// and wrap on paper, one incident per printed page.
var pageCSS = strings.NewReplacer(
	"ERROR", Palette.Error, "WARN", Palette.Warn, "INFO", Palette.Info, "PASS", Palette.Pass, "INK", Palette.Ink, "FAINT", Palette.Faint,
).Replace(`
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: INK; margin: 1.5rem auto; max-width: 78rem; padding: 0 1rem; }
h1 { font-size: 1.4rem; margin: 0 0 .3rem; } h2 { font-size: 1.1rem; margin: 1.4rem 0 .5rem; } h3 { font-size: 1rem; margin: 1rem 0 .4rem; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
.verdict.fail strong { color: ERROR; } .verdict.pass strong { color: PASS; }
table { border-collapse: collapse; width: 100%; margin: .4rem 0 1rem; }
th, td { text-align: left; vertical-align: top; padding: .25rem .5rem; border-bottom: 1px solid #ddd; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; padding: 0 .4rem; border-radius: .2rem; color: #fff; font-size: 12px; white-space: nowrap; }
.badge.error { background: ERROR; } .badge.warn { background: WARN; color: INK; } .badge.info { background: INFO; }
.badge.pass { background: PASS; } .badge.fail { background: ERROR; } .badge.partial { background: WARN; color: INK; } .badge.notchecked { background: FAINT; }
details summary { cursor: pointer; color: FAINT; } .fix { margin: .3rem 0; }
figure { margin: 1rem 0; } figcaption { color: FAINT; font-size: 12.5px; }
svg { max-width: 100%; height: auto; } svg text { font: 11px system-ui, sans-serif; fill: INK; }
.legend span { display: inline-block; margin-right: 1rem; font-size: 12.5px; }
.note { color: FAINT; } .note code { word-break: break-all; }
tr:target { outline: 2px solid INFO; }
footer { color: FAINT; font-size: 12px; margin-top: 2rem; }
@media print { body { margin: 0; max-width: none; font-size: 11px; } details { display: block; } details > summary { display: none; } main { break-after: page; } a { color: inherit; text-decoration: none; } }
`)
