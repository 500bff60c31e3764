package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/dupctl/dupctl/internal/cli"
	"github.com/dupctl/dupctl/internal/logs/loggen"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/testenv"
)

// page is what a browser saw of one HTML report: every request it made,
// every console error, and the picture's geometry.
type page struct {
	requests []string
	errors   []string
	svg      svgGeometry
	hist     histGeometry
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
    Markers: [...svg.querySelectorAll('g.marker')].map(g => ({Class: g.getAttribute('class'), Ms: num(g, 'data-ms'), X: num(g.querySelector('line'), 'x1')})),
    Buckets: [...svg.querySelectorAll('rect.bucket')].map(r => ({Class: r.getAttribute('class'), From: num(r, 'data-from-ms'), To: num(r, 'data-to-ms'), X: num(r, 'x')})),
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
    Marks: [...svg.querySelectorAll('.mark')].map(el => ({Kind: el.getAttribute('class').replace('mark ', ''), T: num(el, 'data-t-ms'), X: markX(el)})),
    Bars: [...svg.querySelectorAll('rect.bar')].map(el => ({Kind: el.getAttribute('class').replace('bar ', ''), From: num(el, 'data-from-ms'), To: num(el, 'data-to-ms'), X: num(el, 'x'), W: num(el, 'width')})),
  };
})()`

// openInChromium loads an HTML file in headless Chromium, records every
// request and console error, reads the picture's geometry and saves a
// screenshot beside the test's temporary files.
func openInChromium(t *testing.T, file, shot string) page {
	t.Helper()
	exe := testenv.Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1100, 1400))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	var mu sync.Mutex
	var p page
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			p.requests = append(p.requests, e.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				p.errors = append(p.errors, "console.error")
			}
		case *runtime.EventExceptionThrown:
			p.errors = append(p.errors, e.ExceptionDetails.Text)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+file), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium on %s: %v", file, err)
	}
	geo, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](geometryJS))
	if err != nil {
		t.Fatalf("chromium on %s: %v", file, err)
	}
	hist, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](histogramJS))
	if err != nil {
		t.Fatalf("chromium on %s: %v", file, err)
	}
	if err := json.Unmarshal(hist, &p.hist); err != nil && string(hist) != "null" {
		t.Fatalf("histogram geometry: %v (%s)", err, hist)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(90))
	if err != nil {
		t.Fatalf("screenshot of %s: %v", file, err)
	}
	if err := json.Unmarshal(geo, &p.svg); err != nil && string(geo) != "null" {
		t.Fatalf("geometry: %v (%s)", err, geo)
	}
	path := filepath.Join(filepath.Dir(file), shot)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	mu.Lock()
	defer mu.Unlock()
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
			t.Errorf("a %s bar for t=%.0f..%.0fms spans x=%.1f+%.1f, its times say x=%.1f..%.1f", b.Kind, b.From, b.To, b.X, b.W, x(b.From), x(b.To))
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
			if leases != len(tl.Leases) || believed != wantBelieved {
				t.Errorf("%d lease bars and %d 'still acting' bars, the timeline has %d leases, %d of them outlived", leases, believed, len(tl.Leases), wantBelieved)
			}
			if sc == "lock-expiry" && wantBelieved == 0 {
				t.Error("lock-expiry: no lease outlived by its holder: the picture's point is missing")
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
		csv := filepath.Join(dir, "durations.csv")
		var b strings.Builder
		b.WriteString("job_type,duration_ms\n")
		for i := 1; i <= 400; i++ {
			fmt.Fprintf(&b, "payment,%d\n", 100+i*i/20)
		}
		if err := os.WriteFile(csv, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
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
