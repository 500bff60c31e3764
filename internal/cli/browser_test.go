package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/dupctl/dupctl/internal/cli"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/dupctl/dupctl/internal/testenv/loggen"
)

// page is what a browser saw of one HTML report: every request it made,
// every console error, and the picture's geometry.
type page struct {
	requests []string
	errors   []string
	svg      svgGeometry
	hist     histGeometry
	content  pageContent
	fit      phoneFit       // what a reader would have to scroll sideways for
	axe      []axeViolation // nil when axe-core could not be fetched
}

// histGeometry is inspect ttl's first histogram as the browser laid it out.
type histGeometry struct {
	Lo, Hi, X0, Width float64
	Markers           []struct {
		Class string
		Ms, X float64
	}
	Buckets []struct {
		Class    string
		From, To float64
		X        float64
	}
}

type svgGeometry struct {
	Start, End, X0, Width float64
	Lanes                 []string
	Marks                 []struct {
		Kind string
		T    float64
		X    float64
	}
	Bars []struct {
		Kind     string
		From, To float64
		X, W     float64
	}
}

// geometryJS reads back where the picture put each mark and bar, and the
// time each says it stands for.
const histogramJS = `(() => {
  const svg = document.querySelector('figure.histogram svg');
  if (!svg) return null;
  const num = (el, a) => parseFloat(el.getAttribute(a));
  return {
    Lo: num(svg, 'data-min-ms'), Hi: num(svg, 'data-max-ms'), X0: num(svg, 'data-x0'), Width: num(svg, 'data-width'),
    Markers: [...svg.querySelectorAll('g.marker')].map(g => ({
      Class: g.getAttribute('class'), Ms: num(g, 'data-ms'), X: num(g.querySelector('line'), 'x1')})),
    Buckets: [...svg.querySelectorAll('rect.bucket')].map(r => ({
      Class: r.getAttribute('class'), From: num(r, 'data-from-ms'), To: num(r, 'data-to-ms'), X: num(r, 'x')})),
  };
})()`

const geometryJS = `(() => {
  const svg = document.querySelector('figure.lanes svg');
  if (!svg) return null;
  const num = (el, a) => parseFloat(el.getAttribute(a));
  const markX = el => {
    if (el.tagName === 'circle') return num(el, 'cx');
    if (el.tagName === 'rect') return num(el, 'x') + num(el, 'width') / 2;
    const m = /translate\(([-0-9.]+)/.exec(el.getAttribute('transform') || '');
    return m ? parseFloat(m[1]) : NaN;
  };
  return {
    Start: num(svg, 'data-start-ms'), End: num(svg, 'data-end-ms'), X0: num(svg, 'data-x0'), Width: num(svg, 'data-width'),
    Lanes: [...svg.querySelectorAll('g.lane')].map(g => g.getAttribute('data-lane')),
    Marks: [...svg.querySelectorAll('.mark')].map(el => ({
      Kind: el.getAttribute('class').replace('mark ', ''), T: num(el, 'data-t-ms'), X: markX(el)})),
    Bars: [...svg.querySelectorAll('rect.bar')].map(el => ({
      Kind: el.getAttribute('class').replace('bar ', ''), From: num(el, 'data-from-ms'), To: num(el, 'data-to-ms'),
      X: num(el, 'x'), W: num(el, 'width')})),
  };
})()`

// view is one way a reader sees a page: a laptop or a phone, in the light
// or the dark scheme.
type view struct {
	width int64
	dark  bool
}

func (v view) String() string {
	if v.dark {
		return fmt.Sprintf("%dpx dark", v.width)
	}
	return fmt.Sprintf("%dpx light", v.width)
}

// views are the four every page is checked in.
var views = []view{{1400, false}, {390, false}, {1400, true}, {390, true}}

// openInChromium loads an HTML file in headless Chromium at 1400 px in the
// light scheme; see browse.
func openInChromium(t *testing.T, file, shot string) page {
	t.Helper()
	var out page
	browse(t, file, strings.TrimSuffix(shot, ".png"), []view{{1400, false}}, func(_ *testing.T, _ view, p page) { out = p })
	return out
}

// browse loads an HTML file in headless Chromium once per view, records
// every request and console error, reads the picture's geometry and
// content, runs axe-core on the light and dark laptop views when npm can
// fetch it, saves a screenshot per view beside the test's temporary files,
// and hands each page to check.
func browse(t *testing.T, file, name string, vs []view, check func(*testing.T, view, page)) {
	t.Helper()
	newTab(t).browse(t, file, name, vs, check)
}

// tab is a headless Chromium with one tab, which records the requests and
// console errors of the page it shows. A test that opens many pages opens
// them in one tab: starting Chromium costs more than loading a page.
type tab struct {
	ctx  context.Context
	mu   sync.Mutex
	seen page // the requests and errors since the last load
}

// newTab starts Chromium (skipping the test when there is none, see
// testenv.Chromium); it is stopped when the test ends.
func newTab(t *testing.T) *tab {
	t.Helper()
	exe := testenv.Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1400))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 120*time.Second)
	t.Cleanup(func() { cancelT(); cancel(); cancelA() })
	b := &tab{ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.seen.requests = append(b.seen.requests, e.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				b.seen.errors = append(b.seen.errors, "console.error")
			}
		case *runtime.EventExceptionThrown:
			b.seen.errors = append(b.seen.errors, e.ExceptionDetails.Text)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return b
}

// browse is browse in this tab.
func (b *tab) browse(t *testing.T, file, name string, vs []view, check func(*testing.T, view, page)) {
	t.Helper()
	for _, v := range vs {
		t.Run(v.String(), func(t *testing.T) {
			b.mu.Lock()
			b.seen = page{}
			b.mu.Unlock()
			got := load(t, b.ctx, file, v)
			if v.width == 1400 {
				got.axe = runAxe(t, b.ctx)
			}
			png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(90))
			if err != nil {
				t.Fatalf("screenshot of %s: %v", file, err)
			}
			shot := filepath.Join(filepath.Dir(file), fmt.Sprintf("%s-%d-%s.png", name, v.width,
				map[bool]string{true: "dark", false: "light"}[v.dark]))
			if err := os.WriteFile(shot, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot: %s", shot)
			b.mu.Lock()
			got.requests, got.errors = b.seen.requests, b.seen.errors
			b.mu.Unlock()
			check(t, v, got)
		})
	}
}

// load opens file in one view and reads the page back.
func load(t *testing.T, ctx context.Context, file string, v view) page {
	t.Helper()
	scheme := "light"
	if v.dark {
		scheme = "dark"
	}
	media := chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(v.width, 1400), media, chromedp.Navigate("file://"+file),
		chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium on %s: %v", file, err)
	}
	var p page
	for _, probe := range []struct {
		js   string
		into any
	}{{geometryJS, &p.svg}, {histogramJS, &p.hist}, {contentJS, &p.content}, {phoneJS, &p.fit}} {
		b, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](probe.js))
		if err != nil {
			t.Fatalf("chromium on %s: %v", file, err)
		}
		if err := json.Unmarshal(b, probe.into); err != nil && string(b) != "null" {
			t.Fatalf("reading the page back: %v (%s)", err, b)
		}
	}
	return p
}

// checkPage holds what every report page must hold: no request leaves the
// file, no console error, and every mark and bar sits where its time says.
func checkPage(t *testing.T, p page) {
	t.Helper()
	for _, u := range p.requests {
		if !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page requested %s: a report must need nothing outside its file", u)
		}
	}
	if len(p.errors) > 0 {
		t.Errorf("console errors: %v", p.errors)
	}
	g := p.svg
	x := func(ms float64) float64 {
		f := (ms - g.Start) / math.Max(g.End-g.Start, 1)
		return g.X0 + math.Max(0, math.Min(1, f))*g.Width
	}
	for _, m := range g.Marks {
		if math.Abs(m.X-x(m.T)) > 0.6 {
			t.Errorf("a %s mark for t=%.0fms is at x=%.1f, its time says x=%.1f", m.Kind, m.T, m.X, x(m.T))
		}
	}
	for _, b := range g.Bars {
		if math.Abs(b.X-x(b.From)) > 0.6 || b.W < math.Max(x(b.To)-x(b.From), 2)-0.6 || b.W > math.Max(x(b.To)-x(b.From), 2)+0.6 {
			t.Errorf("a %s bar for t=%.0f..%.0fms spans x=%.1f+%.1f, its times say x=%.1f..%.1f", b.Kind, b.From, b.To, b.X, b.W, x(b.From),
				x(b.To))
		}
	}
}

// runToFile runs one dupctl command line and returns its exit code.
func runToFile(t *testing.T, args ...string) int {
	t.Helper()
	ios, _, _, stderr := iostreams.Test()
	code := cli.Run(context.Background(), args, ios)
	if code > 1 {
		t.Fatalf("dupctl %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return code
}

// TestHTMLReportInChromium opens the HTML of simulate crash and
// lock-expiry in a real browser: lanes for the workers, the leases with
// their tokens, the highlighted second side effect and the expired lease's
// holder still acting, all placed where the data says; no request leaves
// the page; no console error.
func TestHTMLReportInChromium(t *testing.T) {
	dir := t.TempDir()
	for _, sc := range []string{"crash", "lock-expiry"} {
		t.Run(sc, func(t *testing.T) {
			file := filepath.Join(dir, sc+".html")
			jsonFile := filepath.Join(dir, sc+".json")
			runToFile(t, "simulate", sc, "--html", file, "-o", "json="+jsonFile)
			var rep struct {
				Data struct {
					Profiles []struct {
						Counterexample *struct {
							Timeline struct {
								Effects []struct {
									T int64 `json:"t_ms"`
									N int   `json:"n"`
								} `json:"effects"`
								Leases []struct {
									Token    int    `json:"token"`
									Until    int64  `json:"until_ms"`
									Believed int64  `json:"believed_ms"`
									Ended    string `json:"ended"`
								} `json:"leases"`
							} `json:"timeline"`
						} `json:"counterexample"`
					} `json:"profiles"`
				} `json:"data"`
			}
			b, err := os.ReadFile(jsonFile)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatal(err)
			}
			tl := rep.Data.Profiles[0].Counterexample.Timeline
			p := openInChromium(t, file, sc+".png")
			checkPage(t, p)
			g := p.svg
			if len(g.Lanes) < 2 || g.Lanes[0] != "W1" {
				t.Errorf("lanes %v: want one per worker first", g.Lanes)
			}
			var dupAt []float64
			for _, m := range g.Marks {
				if m.Kind == "duplicate" {
					dupAt = append(dupAt, m.T)
				}
			}
			var want []float64
			for _, e := range tl.Effects {
				if e.N > 1 {
					want = append(want, float64(e.T))
				}
			}
			if len(want) == 0 || len(dupAt) != len(want) || dupAt[0] != want[0] {
				t.Errorf("second side effects drawn at %v, the timeline has them at %v", dupAt, want)
			}
			leases, believed := 0, 0
			for _, bar := range g.Bars {
				switch bar.Kind {
				case "lease":
					leases++
				case "believed":
					believed++
				}
			}
			wantBelieved := 0
			for _, l := range tl.Leases {
				if l.Ended != "" && l.Ended != "released" && l.Believed > l.Until {
					wantBelieved++
				}
			}
			// A hatch is drawn only where the holder could act: not while it
			// was paused or after it crashed (lock-expiry's W1 is paused past
			// the end of the run, so its outlived lease has none).
			if leases != len(tl.Leases) || believed > wantBelieved {
				t.Errorf("%d lease bars and %d 'still acting' bars, the timeline has %d leases, %d of them outlived", leases, believed, len(tl.Leases),
					wantBelieved)
			}
		})
	}
}

// TestIncidentAndHistogramInChromium: audit logs --incident on a generated
// fleet's log draws the key's lanes with the repeated side effect where its
// line's offset says, and inspect ttl draws each job type's histogram with
// the TTL, p99 and recommended lines at the x their values give on the log
// axis; no request leaves either page, no console error.
func TestIncidentAndHistogramInChromium(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "fleet.log")
	fh, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := loggen.Write(loggen.Config{Seed: 3, Jobs: 120, Workers: 4, IncidentEvery: 40}, loggen.Single(fh))
	fh.Close()
	if err != nil || len(sum.Incidents) == 0 {
		t.Fatalf("loggen: %v, %d incidents", err, len(sum.Incidents))
	}
	key := sum.Incidents[0].BusinessKey

	t.Run("audit logs --incident", func(t *testing.T) {
		html, js := filepath.Join(dir, "incident.html"), filepath.Join(dir, "incident.json")
		runToFile(t, "audit", "logs", logPath, "--incident", key, "--html", html, "-o", "json="+js)
		var rep struct {
			Data struct {
				Timelines []struct {
					Key  string `json:"key"`
					Rows []struct {
						Offset int64  `json:"offset_ns"`
						Event  string `json:"event"`
						Repeat bool   `json:"repeat"`
					} `json:"rows"`
				} `json:"timelines"`
			} `json:"data"`
		}
		b, _ := os.ReadFile(js)
		if err := json.Unmarshal(b, &rep); err != nil || len(rep.Data.Timelines) == 0 {
			t.Fatalf("no timeline for %s in the JSON (%v)", key, err)
		}
		var want []float64
		for _, r := range rep.Data.Timelines[0].Rows {
			if r.Event == "side_effect" && r.Repeat {
				want = append(want, float64(time.Duration(r.Offset).Milliseconds()))
			}
		}
		p := openInChromium(t, html, "incident.png")
		checkPage(t, p)
		var got []float64
		for _, m := range p.svg.Marks {
			if m.Kind == "duplicate" {
				got = append(got, m.T)
			}
		}
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("repeated side effects drawn at %v ms, the log has them at %v", got, want)
		}
		if len(p.svg.Lanes) < 2 {
			t.Errorf("lanes %v: an incident has at least two workers", p.svg.Lanes)
		}
	})

	t.Run("inspect ttl", func(t *testing.T) {
		csv := writeDurations(t, dir)
		html := filepath.Join(dir, "ttl.html")
		runToFile(t, "inspect", "ttl", csv, "--ttl", "5s", "--html", html)
		p := openInChromium(t, html, "ttl.png")
		checkPage(t, p)
		h := p.hist
		if len(h.Markers) < 3 {
			t.Fatalf("markers %+v: want the lock TTL, p99 and recommended", h.Markers)
		}
		logX := func(ms float64) float64 { return h.X0 + math.Log(math.Max(ms, h.Lo)/h.Lo)/math.Log(h.Hi/h.Lo)*h.Width }
		for _, m := range h.Markers {
			if math.Abs(m.X-logX(m.Ms)) > 0.6 {
				t.Errorf("%s line for %.0fms at x=%.1f, the log axis puts it at %.1f", m.Class, m.Ms, m.X, logX(m.Ms))
			}
			if m.Class == "marker ttl" && m.Ms != 5000 {
				t.Errorf("the TTL line says %.0fms, the TTL is 5s", m.Ms)
			}
		}
		for _, b := range h.Buckets {
			if math.Abs(b.X-logX(b.From)-0.5) > 0.6 {
				t.Errorf("bucket %.0f..%.0fms at x=%.1f, the log axis puts it at %.1f", b.From, b.To, b.X, logX(b.From)+0.5)
			}
			if beyond := strings.Contains(b.Class, "beyond-ttl"); beyond != (b.To > 5000) {
				t.Errorf("bucket %.0f..%.0fms: marked beyond the 5s TTL = %v", b.From, b.To, beyond)
			}
		}
	})
}

// pageContent is what a reader can see on a page, read back from the DOM.
type pageContent struct {
	Causes []struct{ Code, Text string }
	// IncidentKeys are the incident sections' keys, in the page's order.
	IncidentKeys []string
	Marks        []struct {
		Kind     string
		Evidence bool
		Title    string
	}
	LastMark  string // the kind of the last mark drawn (on top of the rest)
	Bars      []struct{ Kind, Title string }
	BarEnds   []string
	RowLabels []string
	Lanes     []string
	Strip     int // events in the event-order strip, 0 without one
	StripNos  []string
	Matrix    []struct{ Scenario, Profile, Outcome string }
	ViewRows  int // rows of the terminal view's tables
	Index     int // rows of the incidents index
	Sections  int // incident sections
	FirstH2   string
	MinFont   float64 // the smallest computed font size of any visible text
	Shrunk    []string
	Overflow  float64  // how far the page is wider than the window
	Wide      []string // the elements that make it so
	Bg, Ink   string
	Buckets   []struct{ Runs, From, To, H float64 }
}

const contentJS = `(() => {
  const main = document.querySelector('figure.lanes svg:not(.order)');
  const all = (root, sel) => root ? [...root.querySelectorAll(sel)] : [];
  const title = el => { const t = el.querySelector('title'); return t ? t.textContent : ''; };
  const marks = all(main, 'g.mark');
  let min = 1e9;
  for (const el of document.querySelectorAll('body *')) {
    if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
    if (el.closest('details:not([open])') || el.closest('title') || el.tagName === 'TITLE' || el.tagName === 'STYLE') continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    min = Math.min(min, parseFloat(getComputedStyle(el).fontSize));
  }
  const shrunk = [...document.querySelectorAll('.scroll > svg')]
    .filter(s => s.getBoundingClientRect().width + 1 < parseFloat(s.getAttribute('width')))
    .map(s => s.getAttribute('class') || 'svg');
  const strip = document.querySelector('svg.order');
  const cs = getComputedStyle(document.body);
  return {
    Causes: [...document.querySelectorAll('p.cause')].map(p => ({
      Code: (p.querySelector('code') || {}).textContent || '', Text: p.textContent})),
    IncidentKeys: [...document.querySelectorAll('section.incident > h2')].map(h => h.textContent),
    Marks: marks.map(g => ({
      Kind: g.getAttribute('class').replace('mark ', ''), Evidence: g.getAttribute('data-evidence') === '1', Title: title(g)})),
    LastMark: marks.length ? marks[marks.length - 1].getAttribute('class').replace('mark ', '') : '',
    Bars: all(main, 'rect.bar').map(r => ({Kind: r.getAttribute('class').replace('bar ', ''), Title: title(r)})),
    BarEnds: all(main, '.bar-end-label').map(t => t.textContent),
    RowLabels: all(main, '.row-label').map(t => t.lastChild.textContent),
    Lanes: all(main, 'g.lane').map(g => g.getAttribute('data-lane')),
    Strip: strip ? parseInt(strip.getAttribute('data-events')) : 0,
    StripNos: all(strip, '.step-no').map(t => t.textContent),
    Matrix: [...document.querySelectorAll('table.matrix td[data-scenario]')].map(td => ({
      Scenario: td.dataset.scenario, Profile: td.dataset.profile, Outcome: td.dataset.outcome})),
    ViewRows: document.querySelectorAll('table.view tbody tr').length,
    Index: document.querySelectorAll('nav.index tbody tr').length,
    Sections: document.querySelectorAll('section.incident').length,
    FirstH2: (document.querySelector('main h2') || {}).textContent || '',
    MinFont: min,
    Shrunk: shrunk,
    Overflow: document.documentElement.scrollWidth - window.innerWidth,
    Wide: [...document.querySelectorAll('body *')]
      .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && !(e.parentElement && e.parentElement.closest('.scroll')))
      .map(e => e.tagName.toLowerCase() + (e.className && typeof e.className === 'string' ? '.' + e.className : '') +
        ' to ' + Math.round(e.getBoundingClientRect().right) + 'px').slice(0, 6),
    Bg: cs.backgroundColor, Ink: cs.color,
    Buckets: [...document.querySelectorAll('figure.histogram rect.bucket')].map(r => ({
      Runs: parseFloat(r.dataset.runs), From: parseFloat(r.dataset.fromMs), To: parseFloat(r.dataset.toMs),
      H: parseFloat(r.getAttribute('height'))})),
  };
})()`

// axeViolation is one rule axe-core found broken.
type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Nodes  int    `json:"nodes"`
	Help   string `json:"help"`
}

var (
	axeOnce   sync.Once
	axeSource string
)

// axeScript is axe-core from npm, installed once into a temporary
// directory; "" when npm or the registry is not there (the check is then
// skipped with a message).
func axeScript(t *testing.T) string {
	axeOnce.Do(func() {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Log("axe-core: no npm on PATH: the accessibility check is skipped")
			return
		}
		dir, err := os.MkdirTemp("", "dupctl-axe-")
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--silent", "axe-core@4")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("axe-core: npm install failed, the accessibility check is skipped: %v %s", err, out)
			return
		}
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
		if err == nil {
			axeSource = string(b)
		}
	})
	return axeSource
}

// runAxe runs axe-core's WCAG 2 A and AA rules on the loaded page.
func runAxe(t *testing.T, ctx context.Context) []axeViolation {
	src := axeScript(t)
	if src == "" {
		return nil
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](src+";0")); err != nil {
		t.Fatalf("injecting axe-core: %v", err)
	}
	const run = `axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa']}}).then(r =>
	  r.violations.map(v => ({id: v.id, impact: v.impact || '', nodes: v.nodes.length, help: v.help})))`
	b, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](run, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe-core: %v", err)
	}
	out := []axeViolation{}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("axe-core's answer: %v (%s)", err, b)
	}
	return out
}

// checkScreen holds what every page must hold in every view: besides
// checkPage, no text under 11 px, no picture shrunk to fit (it scrolls
// in its box), the page itself no wider than the window, dark where the
// reader asked for dark, and no serious or critical axe-core violation.
func checkScreen(t *testing.T, v view, p page) {
	t.Helper()
	checkPage(t, p)
	c := p.content
	if c.MinFont < 11 {
		t.Errorf("text at %.1fpx: the minimum is 11px", c.MinFont)
	}
	if len(c.Shrunk) > 0 {
		t.Errorf("pictures shrunk to the window instead of scrolling: %v", c.Shrunk)
	}
	if c.Overflow > 1 {
		t.Errorf("the page is %.0fpx wider than the %dpx window (%s): wide parts must scroll in their own box", c.Overflow, v.width,
			strings.Join(c.Wide, ", "))
	}
	if dark := strings.HasPrefix(c.Bg, "rgb(22, 24, 28"); dark != v.dark {
		t.Errorf("background %s, text %s: want the %s scheme", c.Bg, c.Ink, map[bool]string{true: "dark", false: "light"}[v.dark])
	}
	for _, a := range p.axe {
		if a.Impact == "serious" || a.Impact == "critical" {
			t.Errorf("axe-core: %s (%s, %d nodes): %s", a.ID, a.Impact, a.Nodes, a.Help)
		}
	}
}

func markKinds(c pageContent) map[string]int {
	out := map[string]int{}
	for _, m := range c.Marks {
		out[m.Kind]++
	}
	return out
}

func anyContains(xs []string, sub string) bool {
	for _, x := range xs {
		if strings.Contains(x, sub) {
			return true
		}
	}
	return false
}

// TestSimulatePicturesInChromium: each scenario's picture names its cause
// above it, draws the evidence that decides it as its own marks, names
// each lease's lock key and ends it where the key was deleted or expired
// or its holder paused or crashed, and draws the second side effect last;
// unlock-no-token's nine steps at t=0 are each visible in the event-order
// strip. In four views each.
func TestSimulatePicturesInChromium(t *testing.T) {
	dir := t.TempDir()
	for _, sc := range []struct {
		name, cause string
		check       func(*testing.T, pageContent)
	}{
		{"lock-expiry", "DUP_EFFECT_LOCK_EXPIRY", func(t *testing.T, c pageContent) {
			if !slices.Contains(c.BarEnds, "W1 paused") || !slices.Contains(c.BarEnds, "expired") {
				t.Errorf("lease ends %q: W1's lease must end where W1 paused, its key where it expired", c.BarEnds)
			}
			for _, b := range c.Bars {
				if b.Kind == "believed" && strings.Contains(b.Title, "W1 acted") {
					t.Errorf("a hatch says W1 acted as holder while W1 was paused: %s", b.Title)
				}
			}
			if !anyKind(c, "orphan") || !anyKind(c, "paused") {
				t.Error("no dashed key-left bar or no pause bar for W1")
			}
		}},
		{"unlock-no-token", "DUP_EFFECT_UNLOCK_NO_TOKEN", func(t *testing.T, c pageContent) {
			if n := evidenceOf(c, "foreign-del"); n < 2 {
				t.Errorf("%d DELs of another's lock drawn as evidence, the run has 2", n)
			}
			if markKinds(c)["lock-failed"] == 0 {
				t.Error("the failed lock (busy) is not drawn")
			}
			if c.Strip == 0 {
				t.Fatal("steps 1-9 stack at t=0 and no event-order strip is drawn")
			}
			for i := 1; i <= 9; i++ {
				if !slices.Contains(c.StripNos, fmt.Sprint(i)) {
					t.Errorf("step %d is not in the event-order strip %v", i, c.StripNos)
				}
			}
			if !slices.Contains(c.BarEnds, "deleted by W2") {
				t.Errorf("lease ends %q: W1's lease ends where W2 deleted it", c.BarEnds)
			}
		}},
		{"crash", "DUP_EFFECT_REDELIVERY", func(t *testing.T, c pageContent) {
			if evidenceOf(c, "redelivery") == 0 || evidenceOf(c, "crash") == 0 {
				t.Errorf("marks %v: the crash and the redelivery are the evidence", markKinds(c))
			}
		}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			file := filepath.Join(dir, sc.name+".html")
			runToFile(t, "simulate", sc.name, "--html", file)
			browse(t, file, "simulate-"+sc.name, views, func(t *testing.T, v view, p page) {
				checkScreen(t, v, p)
				c := p.content
				if len(c.Causes) == 0 || c.Causes[0].Code != sc.cause {
					t.Errorf("causes above the picture %+v, want %s", c.Causes, sc.cause)
				}
				if !anyContains(c.RowLabels, "lock:payment:order:1") {
					t.Errorf("row labels %q: each lease names its lock key", c.RowLabels)
				}
				if c.LastMark != "duplicate" {
					t.Errorf("the last mark drawn is a %s: the second side effect goes on top", c.LastMark)
				}
				sc.check(t, c)
			})
		})
	}
}

func anyKind(c pageContent, kind string) bool {
	for _, b := range c.Bars {
		if b.Kind == kind {
			return true
		}
	}
	return false
}

func evidenceOf(c pageContent, kind string) int {
	n := 0
	for _, m := range c.Marks {
		if m.Kind == kind && m.Evidence {
			n++
		}
	}
	return n
}

// TestIncidentPicturesInChromium: audit logs -v over a fleet with one
// incident of each cause draws an index, then per incident its cause
// (the one in the JSON), the deciding lines ringed, every lock bar named by
// its key and ended where the lines end it - never "until the end of the
// log" - and full worker names.
func TestIncidentPicturesInChromium(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "fleet.log")
	fh, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := loggen.Write(loggen.Config{Seed: 3, Jobs: 400, Workers: 4, IncidentEvery: 40}, loggen.Single(fh))
	fh.Close()
	if err != nil || len(sum.Incidents) < 8 {
		t.Fatalf("loggen: %v, %d incidents", err, len(sum.Incidents))
	}
	html, js := filepath.Join(dir, "incidents.html"), filepath.Join(dir, "incidents.json")
	runToFile(t, "audit", "logs", logPath, "-v", "--html", html, "-o", "json="+js)
	var rep struct {
		Data struct {
			Duplicates []struct{ Key, Cause string } `json:"duplicates"`
			Timelines  []struct {
				Key     string   `json:"key"`
				Workers []string `json:"workers"`
			} `json:"timelines"`
		} `json:"data"`
	}
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	browse(t, html, "audit-logs-v", views, func(t *testing.T, v view, p page) {
		checkScreen(t, v, p)
		c := p.content
		if c.Index != len(rep.Data.Timelines) || c.Sections != len(rep.Data.Timelines) {
			t.Errorf("index of %d rows, %d sections: want one per timeline (%d)", c.Index, c.Sections, len(rep.Data.Timelines))
		}
		if len(c.Causes) != c.Sections {
			t.Errorf("%d causes written for %d sections", len(c.Causes), c.Sections)
		}
		// Sections are matched by key: the page lists decided causes
		// before undetermined ones, the JSON keeps the capability's order.
		cause := map[string]string{}
		for _, d := range rep.Data.Duplicates {
			cause[d.Key] = d.Cause
		}
		if len(c.IncidentKeys) != len(c.Causes) {
			t.Errorf("%d incident keys for %d causes", len(c.IncidentKeys), len(c.Causes))
		}
		for i, key := range c.IncidentKeys[:min(len(c.IncidentKeys), len(c.Causes))] {
			if want, ok := cause[key]; ok && c.Causes[i].Code != want {
				t.Errorf("section %d (%s): cause %s on the page, %s in the JSON", i, key, c.Causes[i].Code, want)
			}
		}
		if !anyContains(c.RowLabels, "lock:") {
			t.Errorf("row labels %q: lock bars are named by their key", c.RowLabels)
		}
		if anyContains(c.BarEnds, "end of the log") {
			t.Errorf("a bar ends 'at the end of the log': %q", c.BarEnds)
		}
		if len(c.Lanes) == 0 || c.Lanes[0] != rep.Data.Timelines[0].Workers[0] {
			t.Errorf("lanes %q: want the full worker names %q", c.Lanes, rep.Data.Timelines[0].Workers)
		}
		if c.LastMark != "duplicate" {
			t.Errorf("the last mark drawn is a %s: the second side effect goes on top", c.LastMark)
		}
	})
}

// TestTablePicturesInChromium: simulate matrix draws its grid (every cell,
// as the JSON has it), inspect ttl its per-job table and bars whose height
// is a density, doctor its overview first, and a command without a picture
// (simulate risk) its terminal tables.
func TestTablePicturesInChromium(t *testing.T) {
	dir := t.TempDir()
	t.Run("simulate matrix", func(t *testing.T) {
		html := filepath.Join(dir, "matrix.html")
		runToFile(t, "simulate", "matrix", "crash", "unlock-no-token", "--profile", "naive,lock-del,safe", "--html", html)
		browse(t, html, "simulate-matrix", views[:2], func(t *testing.T, v view, p page) {
			checkScreen(t, v, p)
			cells := p.content.Matrix
			if len(cells) != 6 {
				t.Fatalf("%d matrix cells, want 2 scenarios x 3 profiles", len(cells))
			}
			for _, c := range cells {
				want := "DUP"
				if c.Profile == "safe" {
					want = "ok"
				}
				if c.Outcome != want {
					t.Errorf("cell %s under %s: %s, want %s", c.Scenario, c.Profile, c.Outcome, want)
				}
			}
		})
	})
	t.Run("inspect ttl", func(t *testing.T) {
		csv := writeDurations(t, dir)
		html := filepath.Join(dir, "ttl.html")
		runToFile(t, "inspect", "ttl", csv, "--ttl", "5s", "--html", html)
		browse(t, html, "inspect-ttl", views, func(t *testing.T, v view, p page) {
			checkScreen(t, v, p)
			if p.content.ViewRows != 1 {
				t.Errorf("%d rows in the per-job table, want 1", p.content.ViewRows)
			}
			var ratio float64
			for _, bk := range p.content.Buckets {
				d := bk.Runs / math.Log2(bk.To/bk.From)
				if r := bk.H / d; ratio == 0 {
					ratio = r
				} else if math.Abs(r-ratio) > 0.02*ratio+0.5/d {
					t.Errorf("bucket %.0f..%.0fms: height %.1f for %.0f runs is not its density", bk.From, bk.To, bk.H, bk.Runs)
				}
			}
		})
	})
	t.Run("doctor", func(t *testing.T) {
		html := filepath.Join(dir, "doctor.html")
		runToFile(t, "doctor", "--html", html, "--fail-on", "none")
		browse(t, html, "doctor", views[:2], func(t *testing.T, v view, p page) {
			checkScreen(t, v, p)
			if p.content.FirstH2 != "Overview" {
				t.Errorf("the first heading is %q: the overview comes first", p.content.FirstH2)
			}
		})
	})
	t.Run("simulate risk", func(t *testing.T) {
		html := filepath.Join(dir, "risk.html")
		runToFile(t, "simulate", "risk", "--job-duration", "p50=30s,p99=5m", "--lock-ttl", "2m", "--jobs", "20000", "--html", html, "--fail-on",
			"none")
		browse(t, html, "simulate-risk", views[:2], func(t *testing.T, v view, p page) {
			checkScreen(t, v, p)
			if p.content.ViewRows == 0 {
				t.Error("simulate risk's page has no table: its terminal shows one per profile")
			}
		})
	})
}

// TestHotKeySizes: a hot key of 10,000 and of 50,000 log lines draws a
// page of bounded size - counts per column, not one mark per repeat - and
// Markdown under GitHub's 1 MiB (and under --md-limit 65536).
func TestHotKeySizes(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{10_000, 50_000} {
		logPath := filepath.Join(dir, fmt.Sprintf("hot%d.log", n))
		var b strings.Builder
		t0 := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
		for i := 0; i < n; i++ {
			job := i / 7
			ev := []string{"received", "lock_acquired", "idempotency_check", "side_effect", "committed", "lock_released", "acked"}[i%7]
			fmt.Fprintf(&b, `{"ts":%q,"event":%q,"jobId":"job-%d","messageId":"msg-%d","orderId":"ord-hot","jobType":"payment",`+
				`"idempotencyKey":"payment:ord-hot","lockKey":"lock:payment:ord-hot","lockToken":"t%d","result":"miss",`+
				`"consumerInstanceId":"payments-worker-7d9f8b6c4-x2k%d"}`+"\n",
				t0.Add(time.Duration(i)*3*time.Millisecond).Format("2006-01-02T15:04:05.000Z"), ev, job, job, job, job%4)
		}
		if err := os.WriteFile(logPath, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		html, md, md64 := logPath+".html", logPath+".md", logPath+".64k.md"
		runToFile(t, "audit", "logs", logPath, "--incident", "ord-hot", "--html", html, "-o", "markdown="+md)
		runToFile(t, "audit", "logs", logPath, "--incident", "ord-hot", "--md-limit", "65536", "-o", "markdown="+md64)
		for file, most := range map[string]int64{html: 1 << 20, md: 1 << 20, md64: 65536} {
			fi, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			// A small page is only a pass when it shows the hot key's
			// duplicate (a reader that lost the key writes a tiny one).
			if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), "ord-hot") ||
				!strings.Contains(string(b), fmt.Sprintf("ran %d times", (n+6)/7)) {
				t.Errorf("%d lines: %s does not show ord-hot's side effect running %d times", n, filepath.Base(file), (n+6)/7)
			}
			t.Logf("%d lines: %s is %d bytes", n, filepath.Base(file), fi.Size())
			if fi.Size() > most {
				t.Errorf("%d lines: %s is %d bytes, over %d", n, filepath.Base(file), fi.Size(), most)
			}
		}
	}
}

// writeDurations writes 400 payment runs whose durations spread from 100ms
// to 8s, a quarter of them past a 5s TTL.
func writeDurations(t *testing.T, dir string) string {
	t.Helper()
	csv := filepath.Join(dir, "durations.csv")
	var b strings.Builder
	b.WriteString("job_type,duration_ms\n")
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&b, "payment,%d\n", 100+i*i/20)
	}
	if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return csv
}
