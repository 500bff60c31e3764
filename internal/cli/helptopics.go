package cli

import (
	"strings"

	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/spf13/cobra"
)

// helpCommand is `dupctl help [command]`: cobra's, except that an unknown
// topic is a usage error (exit 2) instead of a usage text and exit 0.
func helpCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command or topic",
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			var names []string
			cmd, _, _ := root.Find(args)
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
					names = append(names, sub.Name())
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := root.Find(args)
			if err != nil || cmd == nil || len(rest) > 0 {
				return exitcode.UsageErrorf("unknown help topic %q: run 'dupctl help' for the list", strings.Join(args, " "))
			}
			return cmd.Help()
		},
	}
}

// Help topics: `dupctl help exit-codes`, `dupctl help environment`.
func addHelpTopics(root *cobra.Command) {
	root.AddCommand(
		&cobra.Command{
			Use:   "exit-codes",
			Short: "Exit codes dupctl returns",
			Long: `dupctl's exit codes are a stable contract for scripts and CI:

  0    nothing at or above --fail-on (default: error)
  1    findings at or above --fail-on
  2    usage or input error: unknown flag or command, malformed value,
       unreadable or malformed input file
  3    a system could not be reached (Redis, PostgreSQL, RabbitMQ), the
       --timeout passed, or another runtime failure
  130  interrupted (Ctrl-C or SIGTERM)

--fail-on none makes findings never fail the run; with -o json the error, if
any, is a JSON object {"error": ..., "exit_code": ...} on stderr. On exit 2, 3
or 130 every output asked for (-o FORMAT, -o FORMAT=FILE, --html FILE) is still
written and carries the error: JUnit an <error> testcase, JSON an "error",
Markdown and HTML a banner.`,
		},
		&cobra.Command{
			Use:   "environment",
			Short: "Environment variables dupctl reads",
			Long: `Connection settings (a flag always wins; the DUPCTL_ variable wins over
the usual one):

  --redis-url      DUPCTL_REDIS_URL, REDIS_URL
  --database-url   DUPCTL_DATABASE_URL, DATABASE_URL
  --amqp-url       DUPCTL_AMQP_URL, AMQP_URL

Output:

  NO_COLOR         any non-empty value turns colour off (no-color.org)
  CLICOLOR=0       turns colour off
  CLICOLOR_FORCE   any value but 0 forces colour on, even when piped
  CI               any value turns progress off

Tuning:

  GOMAXPROCS       Go's processor count; dlq replay uses 1 unless it is set
                   (docs/dlq.md says why)

Passwords in URLs are never printed: every message shows them as xxxxx.`,
		},
	)
}
