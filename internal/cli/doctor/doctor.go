// Package doctor is `dupctl doctor`: the production checklist of
// duplicate-safe queue workers, run against the stack named by the
// connection flags and dupctl.yaml.
package doctor

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/doctor"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/spf13/cobra"
)

// Options are one doctor run.
type Options struct {
	Factory *cmdutil.Factory
	Doctor  doctor.Options
}

// NewCmdDoctor is `dupctl doctor`.
func NewCmdDoctor(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	var mgmt, vhost string
	var queues []string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Run the production checklist of duplicate-safe queue workers against a live stack",
		Long: `Doctor runs, line by line, the production checklist of duplicate-safe queue
workers against your stack: every check the given connections and
dupctl.yaml allow. Each line says pass, fail, warn or not checked, what was
checked and the evidence; the findings behind it follow, with their fixes.

Job types come from dupctl.yaml (queue, DLQ, retry queue, lock pattern,
idempotency table, TTL, cache pattern, logs, profile) or --queue. Nothing is
written anywhere.` + exitStatus,
		Example: `  dupctl doctor --config dupctl.yaml
  dupctl doctor --amqp-url amqp://guest:guest@localhost:5672/ --management-url http://guest:guest@localhost:15672 --queue payments
  dupctl doctor -o junit > doctor.xml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := &Options{Factory: f, Doctor: doctor.Options{ManagementURL: mgmt, Vhost: vhost}}
			// doctor's checks take their values from dupctl.yaml: an option
			// is named as the key it came from, then as doctor's own flag.
			f.Namer = cmdutil.Namer(doctor.ConfigKey).Or(cmdutil.Flags(cmd))
			o := &opts.Doctor
			if f.Config != nil {
				o.Jobs = append(o.Jobs, f.Config.Jobs...)
				o.Locks = f.Config.Locks
				if f.Global.Job != "" {
					// --job: the checklist of that one job.
					j, err := f.Job()
					if err != nil {
						return err
					}
					o.Jobs = []config.Job{*j}
				}
				if o.ManagementURL == "" {
					o.ManagementURL = f.Config.Connections.ManagementURL
				}
			}
			for _, q := range queues {
				o.Jobs = append(o.Jobs, config.Job{Name: q, Queue: q})
			}
			if o.ManagementURL == "" {
				o.ManagementURL = f.Getenv("DUPCTL_MANAGEMENT_URL")
			}
			if runF != nil {
				return runF(opts)
			}
			return run(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&mgmt, "management-url", "", "RabbitMQ management API, http://user:password@host:15672 (env DUPCTL_MANAGEMENT_URL)")
	cmd.Flags().StringVar(&vhost, "vhost", "", "RabbitMQ virtual host of the queues (default: the AMQP URL's, else /)")
	cmd.Flags().StringSliceVar(&queues, "queue", nil, "a work queue to check (besides dupctl.yaml's jobs)")
	cmdutil.FieldFlags(cmd, map[string]string{"Queues": "queue"})
	return cmd
}

var exitStatus = cmdutil.ExitStatus(map[int]string{2: "usage or input error (a broken dupctl.yaml)", 3: "a system could not be reached"})

func run(ctx context.Context, o *Options) error {
	f := o.Factory
	g := f.Global
	res, err := doctor.Run(ctx, doctor.Deps{
		RedisURL: g.RedisURL, DatabaseURL: g.DatabaseURL, AMQPURL: g.AMQPURL,
		Redis: f.Redis, Postgres: f.Postgres, AMQP: f.AMQP, LogSources: f.LogSources, Now: f.Now,
	}, o.Doctor)
	if res == nil || ctx.Err() != nil {
		return cmdutil.WordError(err, f.Namer.Or(cmdutil.Plain))
	}
	// A finding's text left unnamed is worded as its rule's command words
	// it; the checklist's reasons, in plain words.
	rep := res.Report()
	cmdutil.WordReport(rep, f.Namer, f.RuleNamer)
	cmdutil.WordData(res, f.Namer.Or(cmdutil.Plain))
	emitErr := o.Factory.Emit(ctx, report.Document{Report: rep,
		Text: func(w io.Writer, th *report.Theme) error {
			if err := writeChecklist(w, th, res, o.Factory.IO.Width()); err != nil || !clustered(res.Broker) {
				return err
			}
			fmt.Fprintln(w)
			return writeBrokerText(w, th, res.Broker)
		},
		Markdown: func(w io.Writer) error {
			io.WriteString(w, "| # | checklist line | state |\n|---:|---|---|\n")
			for _, it := range res.Items {
				fmt.Fprintf(w, "| %d | %s | %s |\n", it.ID, report.MarkdownText(it.Title), it.Status)
			}
			if !clustered(res.Broker) {
				return nil
			}
			io.WriteString(w, "\n")
			return report.TextMarkdown(w, func(w io.Writer, th *report.Theme) error { return writeBrokerText(w, th, res.Broker) })
		},
		HTML: func(w io.Writer) error { return writeChecklistHTML(w, res) },
	})
	if err != nil {
		// A system down: every line is printed, the ones whose check could
		// not run say why, and the run still fails (exit 3). Bad input (a
		// malformed URL, a broken dupctl.yaml) is a usage error: exit 2,
		// stdout empty, as for every command.
		code := cmdutil.ExitCode(err, exitcode.Unavailable)
		return &exitcode.Error{Code: code, Err: cmdutil.WordError(err, f.Namer.Or(cmdutil.Plain)), KeepOutput: code == exitcode.Unavailable}
	}
	return emitErr
}

// writeChecklist is the checklist table, its last column wrapped to the
// terminal's width; a partial line says what would complete it.
func writeChecklist(w io.Writer, th *report.Theme, res *doctor.Result, width int) error {
	fmt.Fprintf(w, "%s the production checklist of duplicate-safe queue workers\n\n", th.Strong("dupctl doctor:"))
	titleW, statusW := 0, len("not checked")
	for _, it := range res.Items {
		titleW = max(titleW, len(it.Title))
	}
	// The columns share the width: "#" and STATUS as they are, the title
	// up to 45% of the rest, CHECKED what is left (never under 20).
	avail := width - (2 + 2) - (statusW + 2)
	titleW = min(titleW, max(avail*45/100, 16))
	rest := max(avail-titleW-2, 20)
	t := report.NewTable("#", "CHECKLIST ITEM", "STATUS", "CHECKED").AlignRight(0)
	for _, it := range res.Items {
		status := string(it.Status)
		switch it.Status {
		case doctor.Pass:
			status = th.Pass(status)
		case doctor.Fail:
			status = th.Severity(findings.Error, status)
		case doctor.Warn, doctor.Partial:
			status = th.Severity(findings.Warn, status)
		default:
			status = th.Faint(status)
		}
		var checked string
		switch {
		case len(it.Checked) == 0:
			checked = th.Faint(report.Wrap(strings.Join(it.Skipped, "; "), rest))
		case it.Status == doctor.Partial:
			checked = report.Wrap(strings.Join(it.Checked, "; "), rest) + "\n" +
				th.Faint(report.Wrap("missing: "+strings.Join(it.Missing, "; "), rest))
		default:
			checked = report.Wrap(strings.Join(it.Checked, "; "), rest)
		}
		t.Row(fmt.Sprint(it.ID), report.Wrap(it.Title, titleW), status, checked)
	}
	return t.Render(w)
}

// writeChecklistHTML is the checklist as a table whose lines carry their
// state, what was checked, what is missing, and links to the findings
// behind them.
func writeChecklistHTML(w io.Writer, res *doctor.Result) error {
	writeOverviewHTML(w, res)
	writeBrokerHTML(w, res.Broker)
	io.WriteString(w, `<h2>Each line, with its evidence</h2><div class="scroll">`+
		`<table class="checklist"><thead><tr><th class="num" scope="col">#</th><th scope="col">checklist line</th>`+
		`<th scope="col">state</th><th scope="col">checked, missing and evidence</th></tr></thead><tbody>`+"\n")
	for _, it := range res.Items {
		class := strings.ReplaceAll(string(it.Status), " ", "")
		fmt.Fprintf(w, "<tr id=\"line-%d\"><td class=\"num\">%d</td><td>%s</td><td><span class=\"badge %s\">%s</span></td><td>", it.ID, it.ID,
			report.Escape(it.Title), class, report.Escape(string(it.Status)))
		list := func(label string, items []string) {
			if len(items) == 0 {
				return
			}
			fmt.Fprintf(w, "<div><strong>%s</strong><ul>", label)
			for _, s := range items {
				fmt.Fprintf(w, "<li>%s</li>", report.Escape(s))
			}
			io.WriteString(w, "</ul></div>")
		}
		list("checked", it.Checked)
		list("not checked", it.Skipped)
		if it.Status == doctor.Partial {
			list("missing", it.Missing)
		}
		if len(it.Evidence) > 0 {
			io.WriteString(w, "<div><strong>evidence</strong><ul>")
			for _, e := range it.Evidence {
				code, _, _ := strings.Cut(e, " ")
				fmt.Fprintf(w, "<li><a href=\"%s\">%s</a></li>", report.Escape(report.CodeAnchor(code)), report.Escape(e))
			}
			io.WriteString(w, "</ul></div>")
		}
		io.WriteString(w, "</td></tr>\n")
	}
	_, err := io.WriteString(w, "</tbody></table></div>\n")
	return err
}

// writeOverviewHTML is the checklist at a glance, before any evidence:
// each line's state, linked to its details.
func writeOverviewHTML(w io.Writer, res *doctor.Result) {
	counts := map[doctor.Status]int{}
	for _, it := range res.Items {
		counts[it.Status]++
	}
	var parts []string
	for _, st := range []doctor.Status{doctor.Pass, doctor.Fail, doctor.Warn, doctor.Partial, doctor.NotChecked} {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	fmt.Fprintf(w, "<h2>Overview</h2><p>%s.</p><div class=\"scroll\"><table class=\"overview\"><thead><tr><th class=\"num\" "+
		"scope=\"col\">#</th><th scope=\"col\">checklist line</th><th scope=\"col\">state</th></tr></thead><tbody>\n",
		report.Escape(strings.Join(parts, ", ")))
	for _, it := range res.Items {
		class := strings.ReplaceAll(string(it.Status), " ", "")
		fmt.Fprintf(w, "<tr><td class=\"num\">%d</td><td><a href=\"#line-%d\">%s</a></td><td><span class=\"badge %s\">%s</span></td></tr>\n",
			it.ID, it.ID, report.Escape(it.Title), class, report.Escape(string(it.Status)))
	}
	io.WriteString(w, "</tbody></table></div>\n")
}
