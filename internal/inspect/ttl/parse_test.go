package ttl

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		unit time.Duration
		want time.Duration
		err  string
	}{
		{"1500", time.Millisecond, 1500 * time.Millisecond, ""},
		{" 1.5 ", time.Second, 1500 * time.Millisecond, ""},
		{"0.25", time.Millisecond, 250 * time.Microsecond, ""},
		{"2", time.Minute, 2 * time.Minute, ""},
		{"1m30s", time.Millisecond, 90 * time.Second, ""},
		{"250ms", time.Second, 250 * time.Millisecond, ""},
		{"00:01:30.5", time.Millisecond, 90500 * time.Millisecond, ""},
		{"1 day 02:00:00", time.Millisecond, 26 * time.Hour, ""},
		{"3 days", time.Millisecond, 72 * time.Hour, ""},
		{"1e3", time.Millisecond, time.Second, ""},
		{"0", time.Second, 0, ""},
		{"", time.Second, 0, "empty"},
		{"-5", time.Second, 0, "non-negative"},
		{"-1s", time.Second, 0, "negative"},
		{"NaN", time.Second, 0, "non-negative"},
		{"Inf", time.Second, 0, "longer than a year"},
		{"400", 24 * time.Hour, 0, "longer than a year"},
		{"abc", time.Second, 0, "not a duration"},
		{"00:61:00", time.Second, 0, "not a duration"},
		{"99999999999999999999999", time.Nanosecond, 0, "longer than a year"},
	}
	for _, tc := range cases {
		got, err := ParseDuration([]byte(tc.in), tc.unit)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseDuration(%q) = %v, %v; want error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseDuration(%q, %s) = %v, %v; want %v", tc.in, tc.unit, got, err, tc.want)
		}
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"1500", "1.5", "1m30s", "00:01:30.5", "1 day 02:00:00", "-1", "1e400", "0x10", "١٢"} {
		f.Add([]byte(s), int64(time.Millisecond))
	}
	f.Fuzz(func(t *testing.T, b []byte, unit int64) {
		if unit <= 0 {
			unit = int64(time.Millisecond)
		}
		d, err := ParseDuration(b, time.Duration(unit))
		if err == nil && (d < 0 || d > maxDuration+time.Second) {
			t.Fatalf("ParseDuration(%q) = %v: out of range without an error", b, d)
		}
	})
}

func TestParseTTLSpec(t *testing.T) {
	tt, err := ParseTTLSpec("5m, payment=2m,settlement=10m")
	if err != nil {
		t.Fatal(err)
	}
	for typ, want := range map[string]time.Duration{"payment": 2 * time.Minute, "settlement": 10 * time.Minute, "email": 5 * time.Minute} {
		if got, src := tt.For(typ); got != want || src != SourceFlag {
			t.Errorf("For(%s) = %v %s, want %v flag", typ, got, src, want)
		}
	}
	for _, bad := range []string{"", ",", "payment=", "=2m", "2", "payment=-1m", "payment=0s", "x=1m,y"} {
		if _, err := ParseTTLSpec(bad); err == nil {
			t.Errorf("ParseTTLSpec(%q): no error", bad)
		}
	}
}

func FuzzParseTTLSpec(f *testing.F) {
	for _, s := range []string{"2m", "payment=2m,settlement=10m", "5m,payment=2m", "=", ",,", "a=b=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tt, err := ParseTTLSpec(s)
		if err != nil {
			return
		}
		if tt.Empty() || tt.Default < 0 {
			t.Fatalf("ParseTTLSpec(%q) = %+v without an error", s, tt)
		}
		for k, d := range tt.ByType {
			if d <= 0 || k == "" {
				t.Fatalf("ParseTTLSpec(%q): %q=%v", s, k, d)
			}
		}
	})
}

func TestLoadTTLFile(t *testing.T) {
	for _, in := range []string{"payment: 2m\nsettlement: 10m\ndefault: 1m\n", `{"payment": "2m", "settlement": "10m", "*": "1m"}`} {
		tt, err := LoadTTLFile(strings.NewReader(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if d, src := tt.For("payment"); d != 2*time.Minute || src != SourceConfig {
			t.Errorf("%q: payment %v %s", in, d, src)
		}
		if d, _ := tt.For("other"); d != time.Minute {
			t.Errorf("%q: default %v", in, d)
		}
		// --ttl wins over the file.
		flagTTL, _ := ParseTTLSpec("payment=3m")
		tt.Override(flagTTL)
		if d, src := tt.For("payment"); d != 3*time.Minute || src != SourceFlag {
			t.Errorf("override: payment %v %s", d, src)
		}
	}
	for in, want := range map[string]string{
		"payment: 90\n":           "want a positive duration with a unit",
		"- a\n- b\n":              "want a mapping",
		"":                        "no TTLs",
		"payment: {TTL: 2m}\n":    "want a mapping",
		"payment: 2m\nemail: x\n": "email: TTL",
	} {
		if _, err := LoadTTLFile(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadTTLFile(%q) = %v, want %q", in, err, want)
		}
	}
}

func TestRecommendAndFormat(t *testing.T) {
	for _, tc := range []struct {
		d      time.Duration
		buffer float64
		want   string
	}{
		{151347 * time.Millisecond, 1.5, "3m50s"}, // 227.0s -> 230s
		{870 * time.Millisecond, 1.5, "1.4s"},     // 1.305s -> 1.4s
		{40 * time.Second, 1, "40s"},
		{2*time.Hour + 7*time.Minute, 1.2, "2h33m"}, // 152.4m -> 2h33m
		{3 * time.Millisecond, 1.5, "5ms"},          // 4.5ms -> 5ms
	} {
		if got := FormatDuration(Recommend(tc.d, tc.buffer)); got != tc.want {
			t.Errorf("Recommend(%s, %g) = %s, want %s", tc.d, tc.buffer, got, tc.want)
		}
	}
	for d, want := range map[time.Duration]string{0: "0s", 420 * time.Microsecond: "420µs", 12 * time.Millisecond: "12ms",
		1500 * time.Millisecond: "1.5s", 2 * time.Second: "2s", 41 * time.Second: "41s", 151 * time.Second: "2m31s",
		2 * time.Minute: "2m", 80 * time.Minute: "1h20m", 3 * time.Hour: "3h"} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%s) = %s, want %s", d, got, want)
		}
	}
}

func readString(t *testing.T, in string, o CollectOptions, to TableOptions) (*Collector, error) {
	t.Helper()
	c := NewCollector(o)
	err := ReadCSV(context.Background(), strings.NewReader(in), "in.csv", to, c, nil)
	return c, err
}

func TestReadCSVLayouts(t *testing.T) {
	cases := []struct {
		name, in string
		o        CollectOptions
		to       TableOptions
		want     map[string][]time.Duration // sorted runs per type
		skipped  int64
	}{
		{"positional", "payment,1500\npayment,2500\r\nemail,20\n", CollectOptions{}, TableOptions{},
			map[string][]time.Duration{"payment": {1500 * time.Millisecond, 2500 * time.Millisecond}, "email": {20 * time.Millisecond}}, 0},
		{"one column, seconds, comments", "# export\n1.5\n\n2\n", CollectOptions{}, TableOptions{Unit: time.Second, DefaultType: "sync"},
			map[string][]time.Duration{"sync": {1500 * time.Millisecond, 2 * time.Second}}, 0},
		{"tsv with header and unit suffix", "queue\truntime_s\nmail\t3\n", CollectOptions{}, TableOptions{},
			map[string][]time.Duration{"mail": {3 * time.Second}}, 0},
		{"quoted", "job_type,duration\n\"pay, ment\",\"1m\"\n", CollectOptions{}, TableOptions{},
			map[string][]time.Duration{"pay, ment": {time.Minute}}, 0},
		{"timestamps and wait", "type,enqueued_at,started_at,finished_at\n" +
			"pay,2026-12-01T10:00:00Z,2026-12-01T10:00:30Z,2026-12-01T10:01:00Z\n" +
			"pay,1764583200,1764583201,1764583203.5\n",
			CollectOptions{IncludeWait: true}, TableOptions{},
			map[string][]time.Duration{"pay": {3500 * time.Millisecond, time.Minute}}, 0},
		{"wait column", "pay,1000,500\npay,1000\n", CollectOptions{IncludeWait: true}, TableOptions{},
			map[string][]time.Duration{"pay": {1500 * time.Millisecond}}, 1},
		{"bad rows counted", "pay,1000\npay,x\npay,-4\n,5\npay\n", CollectOptions{}, TableOptions{},
			map[string][]time.Duration{"pay": {time.Second}}, 4},
		{"postgres text", "type;duration\npay;00:00:02.5\n", CollectOptions{}, TableOptions{},
			map[string][]time.Duration{"pay": {2500 * time.Millisecond}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := readString(t, tc.in, tc.o, tc.to)
			if err != nil {
				t.Fatal(err)
			}
			if c.skipped.Rows != tc.skipped {
				t.Errorf("skipped %d (%v), want %d", c.skipped.Rows, c.skipped.Examples, tc.skipped)
			}
			assertRuns(t, c, tc.want)
		})
	}
}

// assertRuns checks every job type's runs, sorted.
func assertRuns(t *testing.T, c *Collector, want map[string][]time.Duration) {
	t.Helper()
	if len(c.types) != len(want) {
		t.Errorf("job types %v, want %v", c.types, want)
	}
	for typ, w := range want {
		s := c.types[typ]
		if s == nil {
			t.Fatalf("no job type %q", typ)
		}
		s.sortExact()
		if !slices.Equal(s.exact, w) {
			t.Errorf("%s: runs %v, want %v", typ, s.exact, w)
		}
	}
}

func TestReadCSVErrors(t *testing.T) {
	for in, want := range map[string]string{
		"name,owner\npay,bob\n": "neither a row nor a header",
		"pay,1000\n":            "{IncludeWait} needs the queue wait",
		"type,duration\n":       "", // a header alone: no error, no runs
	} {
		o := CollectOptions{IncludeWait: strings.HasPrefix(in, "pay")}
		c, err := readString(t, in, o, TableOptions{})
		if want == "" {
			if err != nil || c.Runs() != 0 {
				t.Errorf("%q: %v, %d runs", in, err, c.Runs())
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// Runs carry their own TTL (a ttl column, the logs' lockTtl): each run is
// judged against its own, the most common one is the job type's.
func TestPerRunTTL(t *testing.T) {
	c, err := readString(t, "type,duration,ttl\npay,90s,1m\npay,50s,1m\npay,150s,2m\n", CollectOptions{}, TableOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res := c.Analyze(AnalyzeOptions{MinSamples: 1})
	js := res.JobTypes[0]
	if js.Outlived != 2 || js.Judged != 3 || js.TTLMS != 60000 || js.TTLSource != SourceData || len(js.TTLsSeen) != 2 ||
		js.TTLsSeen[1] != (TTLCount{TTLMS: 120000, Runs: 1, TTL: 2 * time.Minute}) {
		t.Errorf("outlived %d/%d, ttl %vms from %s (seen %v); want 2/3, 60000 from data (1m x2, 2m x1)", js.Outlived, js.Judged, js.TTLMS,
			js.TTLSource, js.TTLsSeen)
	}
	// A configured TTL wins over the runs' own.
	c, _ = readString(t, "type,duration,ttl\npay,90s,1m\npay,50s,1m\npay,150s,2m\n",
		CollectOptions{TTLs: TTLs{Default: 100 * time.Second, DefaultSource: SourceFlag}}, TableOptions{})
	res = c.Analyze(AnalyzeOptions{MinSamples: 1})
	if js := res.JobTypes[0]; js.Outlived != 1 || js.TTLSource != SourceFlag {
		t.Errorf("with --ttl: outlived %d from %s, want 1 from flag", js.Outlived, js.TTLSource)
	}
}

func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{"payment,1500\nemail,20\n", "job_type,duration_ms,wait\npay,1,2\n", "1\n2\n3\n",
		"type\tenqueued_at\tstarted_at\tfinished_at\nx\t1\t2\t3\n", "\"a,\"b\",1\n", "type,duration,ttl\npay,1m,30s\n"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, in string, wait bool) {
		c := NewCollector(CollectOptions{IncludeWait: wait, ExactMax: 4})
		if err := ReadCSV(context.Background(), strings.NewReader(in), "fuzz", TableOptions{}, c, nil); err != nil {
			return
		}
		res := c.Analyze(AnalyzeOptions{MinSamples: 1})
		rep := res.Report()
		var sum int64
		for _, js := range res.JobTypes {
			var inHist int64
			for _, b := range js.Histogram {
				inHist += b.Runs
			}
			if inHist != js.Runs || js.MinMS < 0 || js.P50MS > js.MaxMS || js.P99MS > js.MaxMS || js.Outlived > js.Judged {
				t.Fatalf("inconsistent %+v", js)
			}
			sum += js.Runs
		}
		if sum != res.Runs || rep == nil {
			t.Fatalf("runs %d vs %d", sum, res.Runs)
		}
	})
}
