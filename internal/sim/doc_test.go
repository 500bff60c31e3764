package sim

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/dupctl/dupctl/internal/worker"
)

var update = flag.Bool("update", false, "rewrite the generated block of docs/simulate.md")

// expectedTable renders the documented expectation of every cell.
func expectedTable() string {
	var b strings.Builder
	b.WriteString("| profile |")
	for _, sc := range Scenarios() {
		b.WriteString(" " + sc.Name + " |")
	}
	b.WriteString("\n|---|")
	for range Scenarios() {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, p := range worker.Profiles() {
		b.WriteString("| `" + p.Name + "` |")
		for _, sc := range Scenarios() {
			b.WriteString(" " + sc.Expected(p.Name).String() + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestMatrixDoc keeps the table in docs/simulate.md identical to the
// expectations TestMatrixExpectations checks.
func TestMatrixDoc(t *testing.T) {
	const path = "../../docs/simulate.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	begin := strings.Index(doc, "<!-- matrix:begin")
	end := strings.Index(doc, "<!-- matrix:end -->")
	if begin < 0 || end < begin {
		t.Fatal("docs/simulate.md lacks the matrix markers")
	}
	nl := strings.Index(doc[begin:], "\n") + begin + 1
	want := doc[:nl] + expectedTable() + doc[end:]
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc != want {
		t.Fatal("docs/simulate.md's matrix differs from the scenario expectations: run go test ./internal/sim -run TestMatrixDoc -update")
	}
}
