package logs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	logread "github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/testenv/loggen"
)

// TestPrefilterSameReport holds the second pass's prefilter to its
// promise: the report is the same byte for byte with it and without it,
// on every generated dialect and format (one file, and a file per
// worker) and on the held-out logs real libraries wrote
// (testdata/heldout-logs), read with the built-in mapping and with a
// learned one, at two chunk sizes. And it is used: on the JSON dialects
// whose keys stand as members' values it passes over lines.
func TestPrefilterSameReport(t *testing.T) {
	type input struct {
		name  string
		files []string
		json  bool // a JSON dialect whose keys are members' values
	}
	var inputs []input
	for _, d := range append(loggen.Dialects(), loggen.Formats()...) {
		for _, perWorker := range []bool{false, true} {
			if !perWorker && !loggen.WorkerInLine(d) {
				continue
			}
			c := loggen.Config{Seed: 11, Jobs: 160, IncidentEvery: 8, Dialect: d, Pods: perWorker}
			dir := t.TempDir()
			writeCorpus(t, dir, c, perWorker)
			inputs = append(inputs, input{fmt.Sprintf("%s/per-worker=%v", d, perWorker), []string{dir}, d == loggen.Camel || d == loggen.CamelMsg})
		}
	}
	// The same fleet with lines the prefilter may not pass over in every
	// chunk: keys spelt with escapes (the same key to a JSON reader, other
	// bytes) and lines with only a job id. Their chunks must be read whole.
	awkward := t.TempDir()
	writeCorpus(t, awkward, loggen.Config{Seed: 11, Jobs: 160, IncidentEvery: 8, Dialect: loggen.Camel}, false)
	escapeSome(t, filepath.Join(awkward, "fleet.log"))
	inputs = append(inputs, input{"camel/escaped-keys+job-id-lines", []string{awkward}, true})
	for _, f := range []string{"listener-ids-only.jsonl", "logstash-mdc-ids.jsonl", "pino-bullmq.jsonl"} {
		inputs = append(inputs, input{"testdata/" + f, []string{filepath.Join("testdata", f)}, false})
	}
	const heldout = "../../../testdata/heldout-logs"
	raw, err := os.ReadFile(filepath.Join(heldout, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Filesets []struct {
			Dir   string   `json:"dir"`
			Files []string `json:"files"`
		} `json:"filesets"`
	}
	if err := json.Unmarshal(raw, &truth); err != nil || len(truth.Filesets) == 0 {
		t.Fatalf("held-out truth: %v (%d sets)", err, len(truth.Filesets))
	}
	for _, set := range truth.Filesets {
		var files []string
		for _, f := range set.Files {
			files = append(files, filepath.Join(heldout, set.Dir, f))
		}
		inputs = append(inputs, input{"heldout/" + filepath.Base(set.Dir), files, false})
	}
	used := map[string]int64{}
	learns, chunks := []bool{false, true}, []int{0, 8 << 10}
	if underRace {
		// Ten times slower: the learned mapping (the command's default)
		// at the size that makes several chunks.
		learns, chunks = []bool{true}, []int{8 << 10}
	}
	for _, in := range inputs {
		for _, learn := range learns {
			for _, chunk := range chunks {
				// A mapping of its own for each audit, as the command
				// compiles one: what a learned copy of Default() learns
				// is not kept apart from Default() (seen here: keys
				// counted differently audit to audit in one process).
				m, err := logread.Compile(logread.Config{})
				if err != nil {
					t.Fatal(err)
				}
				if learn {
					m = m.LearnFromInput(logread.LearnOptions{})
				}
				o := Options{Mapping: m, ClockSkew: 100 * time.Millisecond, ChunkSize: chunk, Timelines: true}
				off := o
				off.NoPrefilter = true
				name := fmt.Sprintf("%s learn=%v chunk=%d", in.name, learn, chunk)
				want, _, errOff := auditJSON(t, in.files, off)
				got, passed, errOn := auditJSON(t, in.files, o)
				if fmt.Sprint(errOff) != fmt.Sprint(errOn) {
					t.Errorf("%s: error %v with the prefilter, %v without", name, errOn, errOff)
					continue
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s: the report differs with the prefilter:\n%s", name, firstDiff(got, want))
				}
				used[in.name] += passed
			}
		}
	}
	for _, in := range inputs {
		if in.json && used[in.name] == 0 {
			t.Errorf("%s: the prefilter passed over no line", in.name)
		}
		t.Logf("%s: %d lines passed over", in.name, used[in.name])
	}
}

// auditJSON is an audit's report as JSON (the findings and the data),
// and how many lines the prefilter passed over.
func auditJSON(t *testing.T, files []string, o Options) ([]byte, int64, error) {
	srcs, err := logread.Expand(files, nil) // a source is read by one audit
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), srcs, o)
	if err != nil {
		return nil, 0, err
	}
	b, err := json.MarshalIndent(res.Report(), "", " ")
	return b, res.prefiltered, err
}

func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n with:    %s\n without: %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines against %d", len(la), len(lb))
}

// escapeSome rewrites the first third of a camel-dialect log: every 5th
// line spells its order ids with a JSON escape, every 9th keeps only its
// job id (the rest of the file stays as the prefilter can pass over it).
func escapeSome(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	escaped, bare := 0, 0
	for i, l := range lines[:len(lines)/3] {
		switch {
		case i%5 == 0 && strings.Contains(l, `ord-`):
			lines[i] = strings.ReplaceAll(l, `ord-`, `\u006frd-`)
			escaped++
		case i%9 == 0:
			for _, f := range []string{"orderId", "idempotencyKey", "lockKey"} {
				if at := strings.Index(l, `"`+f+`":"`); at >= 0 {
					end := at + len(f) + 4 + strings.IndexByte(l[at+len(f)+4:], '"')
					l = l[:at] + `"x` + f + `":""` + l[end+1:]
				}
			}
			lines[i] = l
			bare++
		}
	}
	if escaped == 0 || bare == 0 {
		t.Fatalf("nothing rewritten (%d escaped, %d bare)", escaped, bare)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
