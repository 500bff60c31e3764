package cmdutil

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/checks.md")

// TestChecksDoc fails when a finding code exists without its entry in
// docs/checks.md, or the entry says something else than the rule.
func TestChecksDoc(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteChecksDoc(&buf, Catalog()); err != nil {
		t.Fatal(err)
	}
	const path = "../../../docs/checks.md"
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatal("docs/checks.md is out of date with the rule catalog: run go test ./internal/cli/cmdutil -run TestChecksDoc -update")
	}
}

func TestCatalogRulesComplete(t *testing.T) {
	for _, r := range Catalog().All() {
		if r.Doc == "" || r.Since == "" {
			t.Errorf("%s: every rule needs Doc and Since", r.Code)
		}
	}
}
