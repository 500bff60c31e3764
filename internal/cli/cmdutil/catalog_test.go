package cmdutil_test

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"testing"

	"github.com/dupctl/dupctl/internal/cli"
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
)

var update = flag.Bool("update", false, "rewrite docs/checks.md")

// catalog is the rule catalogue as the root command assembles it.
func catalog() *findings.Catalog {
	ios, _, _, _ := iostreams.Test()
	f := cmdutil.NewFactory(ios)
	cli.NewCmdRoot(f)
	return f.Catalog
}

// TestChecksDoc fails when a finding code exists without its entry in
// docs/checks.md, or the entry says something else than the rule.
func TestChecksDoc(t *testing.T) {
	var buf bytes.Buffer
	if err := cmdutil.WriteChecksDoc(&buf, catalog()); err != nil {
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

// placeholder is an option named by its Options field ({MaxTTL}) that no
// command's flag words.
var placeholder = regexp.MustCompile(`\{[A-Z][A-Za-z0-9]*\}`)

func TestCatalogRulesComplete(t *testing.T) {
	all := catalog().All()
	if len(all) < 100 {
		t.Fatalf("only %d rules in the catalogue", len(all))
	}
	for _, r := range all {
		if r.Doc == "" || r.Since == "" {
			t.Errorf("%s: every rule needs Doc and Since", r.Code)
		}
		for _, s := range []string{r.Title, r.Doc, r.Fix} {
			if m := placeholder.FindString(s); m != "" {
				t.Errorf("%s names %s, which no flag of its command binds: name the field its command's Options has, "+
					"or bind it (cmdutil.FieldFlags)", r.Code, m)
			}
		}
	}
}
