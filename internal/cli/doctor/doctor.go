// Package doctor is `dupctl doctor`: the seed's production checklist run
// against the stack named by the connection flags and dupctl.yaml.
package doctor

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/doctor"
	"github.com/dupctl/dupctl/internal/doctor/topology"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/connect"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/platform/report"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/sim/chaos"
	"github.com/dupctl/dupctl/internal/worker"
	"github.com/spf13/cobra"
)

// Options are one doctor run.
type Options struct {
	Factory       *cmdutil.Factory
	ManagementURL string
	Vhost         string
	Jobs          []config.Job
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
			o := &Options{Factory: f, ManagementURL: mgmt, Vhost: vhost}
			if f.Config != nil {
				o.Jobs = append(o.Jobs, f.Config.Jobs...)
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
				return runF(o)
			}
			return run(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&mgmt, "management-url", "", "RabbitMQ management API, http://user:password@host:15672 (env DUPCTL_MANAGEMENT_URL)")
	cmd.Flags().StringVar(&vhost, "vhost", "/", "RabbitMQ virtual host of the queues")
	cmd.Flags().StringSliceVar(&queues, "queue", nil, "a work queue to check (besides dupctl.yaml's jobs)")
	return cmd
}

var exitStatus = cmdutil.ExitStatus(map[int]string{2: "usage or input error (a broken dupctl.yaml)", 3: "a system could not be reached"})

// checks builds every check the connections and config allow.
func checks(o *Options) []doctor.Check {
	var out []doctor.Check
	out = append(out, topologyCheck(o))
	if !slices.ContainsFunc(o.Jobs, func(j config.Job) bool { return j.RetryQueue != "" }) {
		out = append(out, doctor.Check{Items: []int{6}, Name: "retry queues", Skip: "no retry_queue in dupctl.yaml"})
	}
	patterned := false
	for _, j := range o.Jobs {
		patterned = patterned || j.LockPattern != ""
	}
	tabled := false
	for _, j := range o.Jobs {
		tabled = tabled || j.Idempotency.Table != ""
	}
	if !patterned {
		// No job names its lock keys: look at every key shaped like a lock.
		out = append(out, lockCheck(o, config.Job{Name: "any"}))
	}
	if !tabled {
		// No job names its table: look for tables that look like one.
		out = append(out, storeCheck(o, config.Job{Name: "any"}))
	}
	if len(o.Jobs) == 0 {
		for _, it := range []struct {
			items []int
			name  string
		}{{[]int{4}, "inspect ttl"}, {[]int{5}, "dlq stats"}, {[]int{8}, "audit cache"}, {[]int{1, 9}, "audit logs"}} {
			out = append(out, doctor.Check{Items: it.items, Name: it.name, Skip: "no job types: describe them in dupctl.yaml"})
		}
	}
	for _, j := range o.Jobs {
		if j.LockPattern != "" {
			out = append(out, lockCheck(o, j))
		}
		if j.Idempotency.Table != "" {
			out = append(out, storeCheck(o, j))
		}
		out = append(out, ttlCheck(o, j), dlqCheck(o, j), cacheCheck(o, j))
		out = append(out, logsChecks(o, j)...)
	}
	out = append(out, simulateChecks(o)...)
	return out
}

func topologyCheck(o *Options) doctor.Check {
	var jobs []topology.Job
	for _, j := range o.Jobs {
		if j.Queue != "" {
			jobs = append(jobs, topology.Job{Name: j.Name, Queue: j.Queue, DLQ: j.DLQ, RetryQueue: j.RetryQueue})
		}
	}
	retries := false
	for _, j := range jobs {
		retries = retries || j.RetryQueue != ""
	}
	items := []int{7}
	if retries {
		items = []int{6, 7}
	}
	c := doctor.Check{Items: items, Name: "broker topology", PartialWhen: map[string][]int{topology.RuleManagementUnavailable.Code: items}, ItemOf: map[string]int{
		topology.RuleRetryMissing.Code: 6, topology.RuleNoDLX.Code: 7, topology.RuleDLXUnrouted.Code: 7, topology.RuleDLQMissing.Code: 7,
		topology.RuleNoDeliveryLimit.Code: 7, topology.RuleAutoAck.Code: 7,
	}}
	switch {
	case o.Factory.Global.AMQPURL == "":
		c.Skip = "no --amqp-url"
		return c
	case len(jobs) == 0:
		c.Skip = "no queue: name jobs in dupctl.yaml or pass --queue"
		return c
	}
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Queue
	}
	c.Name = "broker topology of " + strings.Join(names, ", ")
	c.Run = func(ctx context.Context) (*findings.Report, error) {
		conn, err := o.Factory.AMQP(ctx)
		if err != nil {
			return nil, err
		}
		var mgmt *topology.Management
		if o.ManagementURL != "" {
			if mgmt, err = topology.NewManagement(o.ManagementURL, o.Vhost); err != nil {
				return nil, exitcode.UsageErrorf("%w", err)
			}
		}
		r, err := topology.Check(ctx, topology.Prober{Conn: conn}, mgmt, jobs)
		if err != nil {
			return nil, exitcode.UnavailableError(err, "check the broker and the management URL")
		}
		return r, nil
	}
	return c
}

// simulateChecks: the simulator's own matrix, and each job's declared
// consumer profile under the crash scenarios.
func simulateChecks(o *Options) []doctor.Check {
	// The simulator checking its own documented matrix says nothing about
	// the user's system: it runs under no checklist line, and only its
	// findings (a claim that no longer holds) are reported.
	out := []doctor.Check{{Name: "simulate matrix (the simulator's own documented claims)", Run: func(ctx context.Context) (*findings.Report, error) {
		m, err := sim.RunMatrix(ctx, sim.Scenarios(), worker.Profiles(), 5_000_000, sim.Shard{})
		if err != nil {
			return nil, err
		}
		return m.Report(), nil
	}}}
	for _, j := range o.Jobs {
		if j.Worker != nil {
			out = append(out, workerCheck(o, j))
		}
	}
	if !slices.ContainsFunc(o.Jobs, func(j config.Job) bool { return j.Profile != "" || len(j.Mitigations) > 0 || j.Worker != nil }) {
		out = append(out, doctor.Check{Items: []int{10}, Name: "crash scenarios",
			Skip: "no job names its worker or consumer profile: give jobs[].worker (its own consumer under real faults) or jobs[].profile in dupctl.yaml"})
	}
	for _, j := range o.Jobs {
		if j.Profile == "" && len(j.Mitigations) == 0 {
			continue
		}
		out = append(out, doctor.Check{Items: []int{10}, Name: "simulate crash, lock-expiry, redelivery under job " + j.Name + "'s declared profile",
			Partial: "job " + j.Name + ": a model of the declared profile, not the worker: run the job's own worker under the same faults (jobs[].worker in dupctl.yaml, or dupctl simulate crash --worker)",
			Run: func(ctx context.Context) (*findings.Report, error) {
				p, err := jobProfile(j)
				if err != nil {
					return nil, err
				}
				r := &findings.Report{}
				r.Check(sim.RuleDuplicate.Code, sim.RuleLoss.Code)
				for _, name := range []string{"crash", "lock-expiry", "redelivery"} {
					sc, _ := sim.ScenarioByName(name)
					res, err := sim.Run(ctx, sim.Options{Scenario: sc, Profiles: []worker.Profile{p}, Tune: jobTune(j)})
					if err != nil {
						return nil, err
					}
					pr := res.Profiles[0]
					var ev []string
					if pr.Example != nil {
						ev = []string{"replay: dupctl simulate replay " + pr.Example.Token}
					}
					subject := "job " + j.Name + " (" + name + ")"
					if pr.Found.Has(sim.VDuplicate) {
						r.Add(sim.RuleDuplicate.New(subject, fmt.Sprintf("the job's consumer (%s) runs a side effect twice when %s", p.Describe(), sc.Title), ev...))
					}
					if pr.Found.Has(sim.VLoss) {
						r.Add(sim.RuleLoss.New(subject, fmt.Sprintf("the job's consumer (%s) loses a job when %s", p.Describe(), sc.Title), ev...))
					}
				}
				return r, nil
			}})
	}
	return out
}

// workerCheck runs the job's own worker (jobs[].worker) through the crash
// and lock-expiry faults on the real services: evidence about the user's
// consumer itself, the only kind that can pass line 10.
func workerCheck(o *Options, j config.Job) doctor.Check {
	g := o.Factory.Global
	c := doctor.Check{Items: []int{10}, Name: "job " + j.Name + "'s worker under real faults (" + j.Worker.Command + ")"}
	switch {
	case g.AMQPURL == "":
		c.Skip = "no --amqp-url for the worker's queue"
		return c
	case g.DatabaseURL == "":
		c.Skip = "no --database-url for the worker's effects query"
		return c
	}
	c.Run = func(ctx context.Context) (*findings.Report, error) {
		var d chaos.Deps
		var err error
		if d.AMQP, err = o.Factory.AMQP(connect.WithAMQPName(ctx, "doctor worker "+j.Name)); err != nil {
			return nil, err
		}
		if d.Postgres, err = o.Factory.Postgres(ctx, connect.PostgresOptions{MaxConns: 4}); err != nil {
			return nil, err
		}
		if g.RedisURL != "" {
			if d.Redis, err = o.Factory.Redis(ctx); err != nil {
				return nil, err
			}
		}
		proof, err := chaos.ProveJob(ctx, d, j, chaos.Options{AMQPURL: g.AMQPURL, RedisURL: g.RedisURL, DatabaseURL: g.DatabaseURL})
		if err != nil {
			return nil, err
		}
		rep := proof.Report()
		if !proof.Passed() && len(rep.Findings) == 0 {
			// A fault point never reached is no proof either way.
			return nil, &doctor.NothingError{Reason: proof.Summary()}
		}
		return rep, nil
	}
	return c
}

// jobTune gives the simulator the job's own lock TTL from dupctl.yaml, so
// its verdict is about the TTL the job runs with.
func jobTune(j config.Job) func(*sim.Config) error {
	return func(c *sim.Config) error {
		if j.LockTTL > 0 {
			c.LockTTL = sim.Millis(time.Duration(j.LockTTL))
		}
		return nil
	}
}

func jobProfile(j config.Job) (worker.Profile, error) {
	name := j.Profile
	if name == "" {
		name = "naive"
	}
	p, err := worker.ProfileByName(name)
	if err != nil {
		return p, exitcode.InputError(fmt.Errorf("job %s: %w", j.Name, err), "fix profile in dupctl.yaml")
	}
	for k, v := range j.Mitigations {
		if err := p.Set(k, v); err != nil {
			return p, exitcode.InputError(fmt.Errorf("job %s: mitigations: %w", j.Name, err), "fix dupctl.yaml")
		}
	}
	return p, nil
}

func run(ctx context.Context, o *Options) error {
	res, err := doctor.Run(ctx, checks(o))
	if res == nil || ctx.Err() != nil {
		return err
	}
	res.Report.Data = map[string]any{"checklist": res.Items}
	emitErr := o.Factory.Emit(ctx, report.Document{Report: res.Report,
		Text: func(w io.Writer, th *report.Theme) error { return writeChecklist(w, th, res, o.Factory.IO.Width()) },
		Markdown: func(w io.Writer) error {
			io.WriteString(w, "| # | checklist line | state |\n|---:|---|---|\n")
			for _, it := range res.Items {
				fmt.Fprintf(w, "| %d | %s | %s |\n", it.ID, report.MarkdownText(it.Title), it.Status)
			}
			return nil
		},
		HTML: func(w io.Writer) error { return writeChecklistHTML(w, res) },
	})
	if err != nil {
		// A system down: every line is printed, the ones whose check could
		// not run say why, and the run still fails (exit 3). Bad input (a
		// malformed URL, a broken dupctl.yaml) is a usage error: exit 2,
		// stdout empty, as for every command.
		code := cmdutil.ExitCode(err, exitcode.Unavailable)
		return &exitcode.Error{Code: code, Err: err, KeepOutput: code == exitcode.Unavailable}
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
			checked = report.Wrap(strings.Join(it.Checked, "; "), rest) + "\n" + th.Faint(report.Wrap("missing: "+strings.Join(it.Missing, "; "), rest))
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
	io.WriteString(w, `<table class="checklist"><thead><tr><th class="num" scope="col">#</th><th scope="col">checklist line</th><th scope="col">state</th><th scope="col">checked, missing and evidence</th></tr></thead><tbody>`+"\n")
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
	_, err := io.WriteString(w, "</tbody></table>\n")
	return err
}
