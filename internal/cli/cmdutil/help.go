package cmdutil

import (
	"fmt"
	"strings"

	"github.com/dupctl/dupctl/internal/platform/exitcode"
)

// ExitStatus is the EXIT STATUS block of a command's long help: every
// exit code with its standard meaning, where a command may say more
// precisely what the code means for it (own, by code). Indented
// continuation lines keep their place under the text.
func ExitStatus(own map[int]string) string {
	var b strings.Builder
	b.WriteString("\n\nEXIT STATUS")
	for _, code := range []int{exitcode.OK, exitcode.Findings, exitcode.Usage, exitcode.Unavailable, exitcode.Interrupted} {
		text := exitMeaning[code]
		if s, ok := own[code]; ok {
			text = s
		}
		fmt.Fprintf(&b, "\n  %-4d %s", code, strings.ReplaceAll(text, "\n", "\n       "))
	}
	return b.String()
}

// exitMeaning is what each code means for every command.
var exitMeaning = map[int]string{
	exitcode.OK:          "nothing at or above --fail-on",
	exitcode.Findings:    "findings at or above --fail-on",
	exitcode.Usage:       "usage or input error",
	exitcode.Unavailable: "a system could not be reached, or a runtime failure",
	exitcode.Interrupted: "interrupted",
}
