package cli_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	cdpage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The README's picture (docs/img/simulate-crash.png) is a screenshot of
// the part of simulate crash's HTML page that shows the shortest failing
// schedule: its heading, the replay line and the lanes. Beside it,
// docs/img/simulate-crash.png.sum holds the SHA-256 of that part's HTML
// as the picture was shot from it.
const (
	readmeImage    = "../../docs/img/simulate-crash.png"
	readmeImageSum = readmeImage + ".sum"
)

// TestReadmeImage renders simulate crash's page in process and fails when
// the part the README's picture shows is not the HTML the picture was shot
// from: a change of that picture's layout or words fails here until the
// picture follows. go test ./internal/cli -run TestReadmeImage -update
// shoots it again in Chromium (1400 px wide, light) and records the sum.
// The page's stylesheet is not in the sum (a change of colour or spacing
// alone passes).
func TestReadmeImage(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "crash.html")
	runToFile(t, "simulate", "crash", "--html", file, "--fail-on", "none")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	shown, err := readmePart(string(b))
	if err != nil {
		t.Fatal(err)
	}
	sum := fmt.Sprintf("%x", sha256.Sum256([]byte(shown)))
	want, _ := os.ReadFile(readmeImageSum)
	if strings.TrimSpace(string(want)) == sum {
		return
	}
	if !*updateScripts {
		t.Fatalf("docs/img/simulate-crash.png was shot from another page than simulate crash writes today (recorded sum %q, "+
			"today's %s): go test ./internal/cli -run TestReadmeImage -update shoots it again (needs chromium)",
			strings.TrimSpace(string(want)), sum)
	}
	png := shootReadmePart(t, file)
	if err := os.WriteFile(readmeImage, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(readmeImageSum, []byte(sum+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes) and its sum", readmeImage, len(png))
}

// readmePart is the HTML the README's picture shows: from the schedule's
// heading to the end of its lanes.
func readmePart(html string) (string, error) {
	start := strings.Index(html, "<main>")
	if start < 0 {
		return "", fmt.Errorf("simulate crash's page has no <main>")
	}
	h2 := strings.Index(html[start:], "<h2")
	lanes := strings.Index(html[start:], `<figure class="lanes"`)
	if h2 < 0 || lanes < 0 {
		return "", fmt.Errorf("simulate crash's page has no schedule heading or no lanes")
	}
	end := strings.Index(html[start+lanes:], "</figure>")
	if end < 0 || h2 > lanes {
		return "", fmt.Errorf("simulate crash's page: the lanes do not follow the heading")
	}
	return html[start+h2 : start+lanes+end], nil
}

// shootReadmePart screenshots the schedule's heading down to the lanes'
// caption at 1400 px, the desktop width the lanes are drawn for.
func shootReadmePart(t *testing.T, file string) []byte {
	t.Helper()
	b := newTab(t)
	load(t, b.ctx, file, view{width: 1400})
	const boxJS = `(() => {
	  const h = document.querySelector('main h2'), f = document.querySelector('main figure.lanes');
	  return {Top: h.getBoundingClientRect().top + window.scrollY, Bottom: f.getBoundingClientRect().bottom + window.scrollY};
	})()`
	box, err := chromedp.Run(b.ctx, chromedp.Evaluate[struct{ Top, Bottom float64 }](boxJS))
	if err != nil {
		t.Fatal(err)
	}
	beyond := true
	shot, err := chromedp.Call(b.ctx, cdpage.CaptureScreenshot, cdpage.CaptureScreenshotParams{
		Format: cdpage.CaptureScreenshotFormatPng, CaptureBeyondViewport: &beyond,
		Clip: &cdpage.Viewport{X: 0, Y: box.Top - 12, Width: 1400, Height: box.Bottom - box.Top + 24, Scale: 1}})
	if err != nil {
		t.Fatal(err)
	}
	png := shot.Data
	return png
}
