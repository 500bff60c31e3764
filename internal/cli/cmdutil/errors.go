package cmdutil

import (
	"errors"
	"strings"
	"unicode"

	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/spf13/cobra"
)

// ExitCode is the one mapping from an error to dupctl's exit status: an
// error that carries its code keeps it, bad input is 2, a system's failure
// is 3, and anything else gets fallback.
func ExitCode(err error, fallback int) int {
	if err == nil {
		return exitcode.OK
	}
	var coded *exitcode.Error
	var in *problem.Input
	var un *problem.Unavailable
	switch {
	case errors.As(err, &coded):
		return coded.Code
	case errors.As(err, &in):
		return exitcode.Usage
	case errors.As(err, &un):
		return exitcode.Unavailable
	}
	return fallback
}

// FieldFlags records, on a command, which flag sets an Options field whose
// flag name is not the field's name in kebab case (Patterns -> pattern).
func FieldFlags(cmd *cobra.Command, fieldToFlag map[string]string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	for field, flag := range fieldToFlag {
		cmd.Annotations[fieldAnnotation+field] = flag
	}
}

const fieldAnnotation = "dupctl/field:"

// Describe words err for the command line: option placeholders ({Field})
// become the flag that sets them on cmd (--key-column), or the option's
// plain name when cmd has no such flag (it came from dupctl.yaml).
func Describe(cmd *cobra.Command, err error) string {
	return problem.Expand(err.Error(), FlagNamer(cmd))
}

// FlagNamer turns an Options field name into the flag that sets it on cmd,
// or the option's plain name when cmd has no such flag.
func FlagNamer(cmd *cobra.Command) func(field string) string {
	return func(field string) string {
		if flag, ok := FlagName(cmd, field); ok {
			return flag
		}
		return flagFor(cmd, field)
	}
}

// Namer words an Options field for a reader ("--key-column", or a
// dupctl.yaml key); ok is false when it does not know the field, and the
// next Namer (Or) is asked.
type Namer func(field string) (name string, ok bool)

// Or asks n first, then next.
func (n Namer) Or(next Namer) Namer {
	switch {
	case n == nil:
		return next
	case next == nil:
		return n
	}
	return func(field string) (string, bool) {
		if s, ok := n(field); ok {
			return s, true
		}
		return next(field)
	}
}

// Flags is the Namer of cmd's flags.
func Flags(cmd *cobra.Command) Namer {
	if cmd == nil {
		return nil
	}
	return func(field string) (string, bool) { return FlagName(cmd, field) }
}

// FlagName is the flag that sets field on cmd ("--key-column"), and
// whether cmd (or a parent) has it.
func FlagName(cmd *cobra.Command, field string) (string, bool) {
	if cmd == nil {
		return "", false
	}
	name := flagFor(cmd, field)
	if cmd.Flags().Lookup(name) != nil || cmd.InheritedFlags().Lookup(name) != nil {
		return "--" + name, true
	}
	return "", false
}

// flagFor is the name of the flag bound to field on cmd: its FieldFlags
// entry on cmd or a parent, else the field in kebab case.
func flagFor(cmd *cobra.Command, field string) string {
	for c := cmd; c != nil; c = c.Parent() {
		if flag, ok := c.Annotations[fieldAnnotation+field]; ok {
			return flag
		}
	}
	return Kebab(field)
}

// Kebab turns a Go field name into a flag name: KeyColumn -> key-column,
// TTLFile -> ttl-file, AMQPURL -> amqp-url.
func Kebab(field string) string {
	rs := []rune(field)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 {
			prevLower := unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || (unicode.IsUpper(rs[i-1]) && nextLower) {
				b.WriteByte('-')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// NonEmpty refuses a flag that was given an empty value (a script whose
// variable was unset), where an empty value would silently mean "detect"
// or "all".
func NonEmpty(cmd *cobra.Command, names ...string) error {
	for _, name := range names {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed && strings.TrimSpace(strings.Trim(fl.Value.String(), "[]")) == "" {
			return exitcode.UsageErrorf("--%s must not be empty: leave the flag out to let dupctl look", name)
		}
	}
	return nil
}
