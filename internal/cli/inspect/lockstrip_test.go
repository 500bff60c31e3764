package inspect_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/testenv"
)

// TestTTLStripShowsRareBuckets: among 300 locks with a TTL, 5 without one
// are drawn as a bar at least 4 px tall with their count written above it
// (issue 44: they were 1 px, like the empty buckets), empty buckets stay
// a faint baseline, and every bar's bucket and count are the run's JSON.
func TestTTLStripShowsRareBuckets(t *testing.T) {
	prefix := testenv.UniqueName("strip")
	c, url := adminClient(t, prefix)
	ctx := context.Background()
	token := func(i int) string {
		return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("tok-%012d", i*2654435761)))
	}
	for i := range 300 {
		c.Set(ctx, fmt.Sprintf("%s:lock:payment:order:%d", prefix, i), token(i), time.Hour)
	}
	for i := range 5 {
		c.Set(ctx, fmt.Sprintf("%s:lock:payment:order:%d", prefix, 1000+i), token(1000+i), 0)
	}
	page := filepath.Join(t.TempDir(), "lock.html")
	code, stdout, stderr := dupctl(t, "inspect", "lock", "--redis-url", url, "--pattern", prefix+":*", "-o", "json", "--html", page,
		"--fail-on", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := parse(t, stdout)
	if len(r.Data.Families) != 1 {
		t.Fatalf("want one family, got %+v", r.Data.Families)
	}
	hist := r.Data.Families[0].TTL.Histogram
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	bars := regexp.MustCompile(`<rect class="bucket( empty)?" x="\d+" y="\d+" width="\d+" height="(\d+)" fill="[^"]+" data-le="([^"]+)" `+
		`data-count="(\d+)">`).FindAllStringSubmatch(string(html), -1)
	if len(bars) != len(hist) {
		t.Fatalf("%d bars for %d buckets in the JSON", len(bars), len(hist))
	}
	sawNone := false
	for i, b := range bars {
		height, _ := strconv.Atoi(b[2])
		n, _ := strconv.ParseInt(b[4], 10, 64)
		if b[3] != hist[i].Le || n != hist[i].Count {
			t.Errorf("bar %d: bucket %s count %d, JSON %s %d", i, b[3], n, hist[i].Le, hist[i].Count)
		}
		switch {
		case n == 0 && (b[1] == "" || height != 1):
			t.Errorf("empty bucket %s drawn %d px, class %q", b[3], height, b[1])
		case n > 0 && (b[1] != "" || height < 4):
			t.Errorf("bucket %s of %d keys drawn %d px tall", b[3], n, height)
		}
		if b[3] == "none" {
			sawNone = n == 5
		}
	}
	if !sawNone {
		t.Errorf("no bar for the 5 locks without a TTL: %v", hist)
	}
	if !regexp.MustCompile(`<text class="count"[^>]*data-le="none">5</text>`).Match(html) {
		t.Errorf("the 5 locks without a TTL carry no label")
	}
}
