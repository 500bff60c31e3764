package cmdutil

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/spf13/cobra"
)

func TestKebab(t *testing.T) {
	for in, want := range map[string]string{
		"Table": "table", "KeyColumn": "key-column", "TTLFile": "ttl-file",
		"MaxTTL": "max-ttl", "TTL": "ttl", "Window": "window", "IdleAfter": "idle-after",
	} {
		if got := Kebab(in); got != want {
			t.Errorf("Kebab(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDescribeNamesFlags(t *testing.T) {
	root := &cobra.Command{Use: "dupctl"}
	root.PersistentFlags().String("timeout", "", "")
	cmd := &cobra.Command{Use: "lock"}
	cmd.Flags().String("key-column", "", "")
	cmd.Flags().StringArray("pattern", nil, "")
	FieldFlags(cmd, map[string]string{"Patterns": "pattern"})
	root.AddCommand(cmd)

	in := problem.Inputf("KeyColumn", "%s has no column %s", "jobs", "x").WithHint("give {Patterns}, {Timeout} or {LockTTL}; job:{key} stays")
	wrapped := fmt.Errorf("job payment: %w", in)
	got := Describe(cmd, wrapped)
	want := `job payment: --key-column: jobs has no column x (give --pattern, --timeout or lock-ttl; job:{key} stays)`
	if got != want {
		t.Fatalf("Describe = %q\nwant       %q", got, want)
	}
	if ExitCode(wrapped, 3) != exitcode.Usage {
		t.Fatalf("an input error is exit %d", ExitCode(wrapped, 3))
	}
	if c := ExitCode(fmt.Errorf("x: %w", problem.System(errors.New("down"), "")), exitcode.Usage); c != exitcode.Unavailable {
		t.Fatalf("a system error is exit %d, want 3", c)
	}
	if c := ExitCode(errors.New("plain"), 7); c != 7 {
		t.Fatalf("a plain error is exit %d, want the fallback", c)
	}
}
