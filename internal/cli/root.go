// Package cli is dupctl's command layer: thin cobra commands that turn flags
// into an options struct, call a capability package and hand its report to
// the shared renderers. No duplicate-detection logic lives here.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/dupctl/dupctl/internal/cli/audit"
	"github.com/dupctl/dupctl/internal/cli/catalog"
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/cli/dlq"
	"github.com/dupctl/dupctl/internal/cli/doctor"
	"github.com/dupctl/dupctl/internal/cli/inspect"
	"github.com/dupctl/dupctl/internal/cli/keys"
	"github.com/dupctl/dupctl/internal/cli/simulate"
	"github.com/dupctl/dupctl/internal/cli/watch"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/iostreams"
	"github.com/dupctl/dupctl/internal/platform/problem"
	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Main runs dupctl on the process's arguments and streams and returns the
// exit code.
func Main() int {
	ios := iostreams.System()
	ctx, stop := interruptContext(ios.ErrOut)
	defer stop()
	return Run(ctx, os.Args[1:], ios)
}

// Run executes one command line and maps its outcome to an exit code.
func Run(ctx context.Context, args []string, ios *iostreams.IOStreams) int {
	f := cmdutil.NewFactory(ios)
	root := NewCmdRootFor(f, args)
	root.SetArgs(args)
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)

	defer f.Cleanup()
	var ran bool
	wrapRunE(root, &ran)
	cmd, err := root.ExecuteContextC(ctx)
	if !ran {
		// A flag error stops parsing before -o is read: find it in args,
		// so the error still comes in the format, and the files, asked for.
		f.Global.Output, f.Global.Files = outputsFromArgs(args)
	}
	code, msg := exitcode.OK, ""
	if err != nil {
		code = classify(ctx, err, ran)
		msg = errorLine(f, cmd, err, code, !ran)
	}
	command := ""
	if cmd != nil && cmd != root {
		command = strings.TrimPrefix(cmd.CommandPath(), root.Name()+" ")
	}
	if ferr := f.Flush(command, err, code, msg); ferr != nil && err == nil {
		fmt.Fprintln(ios.ErrOut, "dupctl: write output: "+ferr.Error())
		return exitcode.Unavailable
	}
	if err != nil && !exitcode.IsSilent(err) {
		printError(f, msg, code)
	}
	return code
}

// outputsFromArgs reads -o/--output and --html from a command line that
// failed before they were parsed: the format for stdout and the files. A
// list that does not parse has no files and the last format it names for
// stdout, if it is one; anything it cannot read is the default, table.
func outputsFromArgs(args []string) (string, []cmdutil.OutputFile) {
	var values []string
	html := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			i = len(args)
		case (a == "-o" || a == "--output" || a == "--html") && i+1 < len(args):
			if a == "--html" {
				html = args[i+1]
			} else {
				values = append(values, args[i+1])
			}
			i++
		case strings.HasPrefix(a, "--output="):
			values = append(values, strings.TrimPrefix(a, "--output="))
		case strings.HasPrefix(a, "--html="):
			html = strings.TrimPrefix(a, "--html=")
		case strings.HasPrefix(a, "-o") && len(a) > 2:
			values = append(values, strings.TrimPrefix(strings.TrimPrefix(a, "-o"), "="))
		}
	}
	if out, files, err := cmdutil.ParseOutputs(values, html); err == nil {
		return out, files
	}
	out := report.FormatTable
	for _, v := range values {
		out = stdoutFormat(out, v)
	}
	if !slices.Contains(report.Formats, out) {
		return report.FormatTable, nil
	}
	return out, nil
}

// stdoutFormat is v when it names a format for stdout (no =PATH), else
// the format read so far.
func stdoutFormat(sofar, v string) string {
	if strings.Contains(v, "=") {
		return sofar
	}
	return v
}

// wrapRunE marks when a command's own code starts running, so an error
// raised before that (unknown command, bad flag, wrong arguments) is a
// usage error and one raised after is the command's.
func wrapRunE(c *cobra.Command, ran *bool) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			*ran = true
			return run(cmd, args)
		}
	}
	for _, sub := range c.Commands() {
		wrapRunE(sub, ran)
	}
}

func classify(ctx context.Context, err error, ran bool) int {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return exitcode.Interrupted
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return cmdutil.ExitCode(err, exitcode.Unavailable)
	}
	if !ran {
		return cmdutil.ExitCode(err, exitcode.Usage)
	}
	return cmdutil.ExitCode(err, exitcode.Unavailable)
}

// errorLine words an error in one line, as printError shows it.
func errorLine(f *cmdutil.Factory, cmd *cobra.Command, err error, code int, beforeRun bool) string {
	msg := oneLine(cmdutil.Describe(cmd, err))
	if errors.Is(err, context.DeadlineExceeded) && f.Global.Timeout > 0 {
		msg += fmt.Sprintf(" (timed out after %s: raise --timeout)", f.Global.Timeout)
	}
	var coded *exitcode.Error
	var input *problem.Input
	if beforeRun && code == exitcode.Usage && cmd != nil && !errors.As(err, &coded) && !errors.As(err, &input) &&
		!strings.Contains(msg, "--help") {
		// cobra's own errors (unknown command, wrong arguments) say what
		// but not where to look.
		msg += fmt.Sprintf(" (see '%s --help')", cmd.CommandPath())
	}
	if code == exitcode.Interrupted {
		msg = "interrupted"
	}
	return redact.String(msg)
}

// printError writes the one-line error on stderr: plain text, or a JSON
// object with -o json so stdout stays parseable.
func printError(f *cmdutil.Factory, msg string, code int) {
	if f.Global.Output == report.FormatJSON {
		b, _ := json.Marshal(struct {
			Error    string `json:"error"`
			ExitCode int    `json:"exit_code"`
		}{msg, code})
		fmt.Fprintln(f.IO.ErrOut, string(b))
		return
	}
	fmt.Fprintln(f.IO.ErrOut, "dupctl: "+msg)
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// NewCmdRoot builds the whole command tree.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command { return newCmdRoot(f, false) }

// NewCmdRootFor is the command tree that parses args: with a scenario run
// on the user's worker (--worker), simulate's worker commands.
func NewCmdRootFor(f *cmdutil.Factory, args []string) *cobra.Command {
	return newCmdRoot(f, simulate.IsWorkerRun(args))
}

// newCmdRoot is the command tree; workerRun builds simulate's worker
// commands for a command line that runs a scenario on the user's worker.
// It assembles the rule catalogue unless the factory has one.
func newCmdRoot(f *cmdutil.Factory, workerRun bool) *cobra.Command {
	root := buildTree(f, workerRun)
	if f.Catalog == nil {
		// The catalogue's texts name the flags of both trees: simulate's
		// worker commands exist only in the tree of a --worker run.
		f.Catalog, f.RuleNamer = catalog.New(root, buildTree(cmdutil.NewFactory(f.IO), !workerRun))
	}
	return root
}

// buildTree builds the commands.
func buildTree(f *cmdutil.Factory, workerRun bool) *cobra.Command {
	g := f.Global
	var outputs []string
	var html string
	root := &cobra.Command{
		Use:   "dupctl",
		Short: "Audit and debug duplicate processing in queue + worker systems",
		Long: `dupctl audits and debugs duplicate processing in queue + worker systems:
RabbitMQ brokers, Redis locks and caches, PostgreSQL idempotency tables.

Queues deliver at least once, so a job WILL run more than once. dupctl shows
why a side effect ran twice and proves which mitigations stop it: every
command reports findings with a stable code, the evidence and the fix, as a
table, JSON or JUnit, and exits non-zero at --fail-on, so any command is a CI
check.` + exitStatusBlock,
		Example: `  # reproduce a crash-before-ack duplicate on the embedded simulator
  dupctl simulate crash

  # every scenario against every mitigation profile, as a CI gate
  dupctl simulate matrix --fail-on error -o junit > report.xml`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       f.BuildInfo().Version,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return prepare(cmd, f, outputs, html)
		},
	}
	root.SetVersionTemplate("dupctl {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return flagError(c, "%w", err)
	})

	pf := root.PersistentFlags()
	pf.StringArrayVarP(&outputs, "output", "o", []string{report.FormatTable}, "output format: "+strings.Join(report.Formats, ", ")+
		"; FORMAT=PATH writes it to a file (repeat for several, e.g. -o table -o junit=ci.xml)")
	pf.StringVar(&html, "html", "", "also write a self-contained HTML report to this file (as -o html=FILE)")
	pf.StringVar(&g.FailOn, "fail-on", "error", "exit 1 when a finding is at or above this severity: error, warn, info or none")
	pf.IntVar(&g.MarkdownLimit, "md-limit", 0,
		"keep -o markdown under this many bytes, e.g. 65536 for a PR comment (default and most: 1 MiB, GitHub's step summary limit)")
	pf.BoolVar(&g.NoColor, "no-color", false, "never colour the output (also NO_COLOR=1)")
	pf.BoolVarP(&g.Verbose, "verbose", "v", false, "show every detail (all evidence, per-key tables, timelines)")
	pf.DurationVar(&g.Timeout, "timeout", 0, "give up after this long, e.g. 30s or 5m (0: no limit)")
	pf.StringVar(&g.RedisURL, "redis-url", "", "Redis URL (env DUPCTL_REDIS_URL, REDIS_URL)")
	pf.StringVar(&g.DatabaseURL, "database-url", "", "PostgreSQL URL (env DUPCTL_DATABASE_URL, DATABASE_URL)")
	pf.StringVar(&g.AMQPURL, "amqp-url", "",
		"RabbitMQ AMQP URL; a cluster's addresses as amqp://u:p@h1:5672,h2:5672/vhost or comma-separated URLs (env DUPCTL_AMQP_URL, AMQP_URL)")
	pf.StringVar(&g.Job, "job", "", "a job of dupctl.yaml: its queue, DLQ, lock pattern, table, cache pattern, logs, TTL and durations "+
		"fill the flags not given (default: the only job, when there is one)")
	pf.StringVar(&g.ConfigPath, "config", "",
		"dupctl.yaml with connections, job types and the allow-list (env DUPCTL_CONFIG; default ./dupctl.yaml if present)")
	cmdutil.FieldFlags(root, map[string]string{"AMQPURL": "amqp-url"})
	_ = root.RegisterFlagCompletionFunc("output", fixedCompletion(report.Formats...))
	_ = root.RegisterFlagCompletionFunc("fail-on", fixedCompletion("error", "warn", "info", "none"))

	root.AddCommand(
		simulate.NewCmdSimulate(f, workerRun),
		doctor.NewCmdDoctor(f, nil),
		audit.NewCmdAudit(f),
		keys.NewCmdKeys(f),
		inspect.NewCmdInspect(f),
		dlq.NewCmdDLQ(f),
		watch.NewCmdWatch(f, nil),
		NewCmdVersion(f),
		NewCmdExplain(f),
	)
	addHelpTopics(root)
	root.SetHelpCommand(helpCommand(root))
	return root
}

func fixedCompletion(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// prepare validates the global flags, reads connection settings from the
// environment and applies --timeout and output decisions before any
// command runs.
func prepare(cmd *cobra.Command, f *cmdutil.Factory, outputs []string, html string) error {
	g := f.Global
	var err error
	if g.Output, g.Files, err = cmdutil.ParseOutputs(outputs, html); err != nil {
		return flagError(cmd, "%w", err)
	}
	if err := f.ParseFailOn(); err != nil {
		return flagError(cmd, "%w", err)
	}
	if g.Timeout < 0 {
		return flagError(cmd, "--timeout must not be negative, got %s", g.Timeout)
	}
	if err := f.LoadConfig(); err != nil {
		return err
	}
	if _, err := f.Job(); err != nil {
		return err
	}
	flags := cmd.Flags()
	var conns config.Connections
	if f.Config != nil {
		conns = f.Config.Connections
	}
	resolveEnv(flags, f, "redis-url", &g.RedisURL, conns.RedisURL, "DUPCTL_REDIS_URL", "REDIS_URL")
	resolveEnv(flags, f, "database-url", &g.DatabaseURL, conns.DatabaseURL, "DUPCTL_DATABASE_URL", "DATABASE_URL")
	resolveEnv(flags, f, "amqp-url", &g.AMQPURL, string(conns.AMQPURL), "DUPCTL_AMQP_URL", "AMQP_URL")
	f.Namer = cmdutil.Flags(cmd)
	f.IO.SetNoColor(g.NoColor)
	f.IO.SetMachineOutput(g.Output != report.FormatTable)
	if g.Timeout > 0 {
		ctx, cancel := context.WithTimeout(cmd.Context(), g.Timeout)
		cmd.SetContext(ctx)
		f.AddCleanup(cancel)
	}
	return nil
}

// resolveEnv fills a connection setting when its flag was not given: the
// DUPCTL_ variable first, then the usual one, then the config file.
func resolveEnv(flags *pflag.FlagSet, f *cmdutil.Factory, flag string, dst *string, fromConfig string, envs ...string) {
	if fl := flags.Lookup(flag); fl != nil && fl.Changed {
		return
	}
	for _, e := range envs {
		if v := f.Getenv(e); v != "" {
			*dst = v
			return
		}
	}
	*dst = fromConfig
}

var exitStatusBlock = cmdutil.ExitStatus(nil)

// flagError is a usage error about a flag, pointing at the command's help.
func flagError(cmd *cobra.Command, format string, args ...any) error {
	return &exitcode.Error{Code: exitcode.Usage, Err: fmt.Errorf(format, args...), Hint: "see '" + cmd.CommandPath() + " --help'"}
}
