package cmdutil

import (
	"fmt"
	"io"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/findings"
)

// WriteChecksDoc writes docs/checks.md: every finding code, what it means,
// how it leads to duplicates, the fix and how to allow it. The test in
// catalog_test.go fails when the file and the catalog disagree.
func WriteChecksDoc(w io.Writer, c *findings.Catalog) error {
	var b strings.Builder
	b.WriteString(`# Finding codes

Every dupctl check reports findings with a stable code from this list. Codes
are never reused. ` + "`dupctl explain CODE`" + ` prints the same text.

Severity is the default; ` + "`--fail-on`" + ` picks which severities make the exit code 1.

This file is generated from the rule catalog: run
` + "`go test ./internal/cli/cmdutil -run TestChecksDoc -update`" + ` after changing a rule.

| code | severity | title |
|---|---|---|
`)
	for _, r := range c.All() {
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %s |\n", r.Code, strings.ToLower(r.Code), r.Severity, r.Title)
	}
	for _, r := range c.All() {
		fmt.Fprintf(&b, "\n## %s\n\n**%s** (%s", r.Code, r.Title, r.Severity)
		if r.Since != "" {
			fmt.Fprintf(&b, ", since %s", r.Since)
		}
		b.WriteString(")\n\n")
		if r.Doc != "" {
			b.WriteString(strings.TrimSpace(r.Doc) + "\n\n")
		}
		fmt.Fprintf(&b, "**Fix:** %s\n", r.Fix)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
