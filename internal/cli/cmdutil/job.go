package cmdutil

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/exitcode"
	"github.com/spf13/cobra"
)

// Job is the job type of dupctl.yaml this run is about: the one --job
// names, or the only one the file describes; nil when there is no config,
// no jobs, or several and none was named. A command takes the job's queue,
// DLQ, lock pattern, table, cache pattern, logs, TTL and durations for the
// flags the user did not give, so dupctl.yaml saves retyping them.
func (f *Factory) Job() (*config.Job, error) {
	name := f.Global.Job
	if f.Config == nil || len(f.Config.Jobs) == 0 {
		if name != "" {
			return nil, exitcode.UsageErrorf(
				"--job %s: no dupctl.yaml with jobs: describe the job there (see docs/config.md), or pass --config", name)
		}
		return nil, nil
	}
	if name == "" {
		if len(f.Config.Jobs) == 1 {
			return &f.Config.Jobs[0], nil
		}
		return nil, nil
	}
	for i := range f.Config.Jobs {
		if f.Config.Jobs[i].Name == name {
			return &f.Config.Jobs[i], nil
		}
	}
	return nil, exitcode.UsageErrorf("--job %s: %s has no such job (jobs: %s)", name, f.Config.Path, strings.Join(f.JobNames(), ", "))
}

// JobNames lists dupctl.yaml's jobs, for messages.
func (f *Factory) JobNames() []string {
	if f.Config == nil {
		return nil
	}
	names := make([]string, len(f.Config.Jobs))
	for i, j := range f.Config.Jobs {
		names[i] = j.Name
	}
	return names
}

// FromJob sets a flag's value from the job when the user did not give the
// flag and the job has one: a string, a list, or a duration.
func FromJob[T string | []string | time.Duration](cmd *cobra.Command, flag string, dst *T, fromJob T) {
	if fl := cmd.Flags().Lookup(flag); fl != nil && fl.Changed {
		return
	}
	var zero T
	switch v := any(fromJob).(type) {
	case []string:
		if len(v) == 0 {
			return
		}
	default:
		if any(fromJob) == any(zero) {
			return
		}
	}
	*dst = fromJob
}

// NeedJobOr is the usage error of a required setting that neither a flag
// nor the job gave: it names the flag and the dupctl.yaml key.
func (f *Factory) NeedJobOr(flag, key string) error {
	hint := fmt.Sprintf("or describe the job in dupctl.yaml (jobs[].%s) and pass --job NAME", key)
	if names := f.JobNames(); len(names) > 1 {
		hint = fmt.Sprintf("or pass --job (dupctl.yaml has %s)", strings.Join(names, ", "))
	}
	return exitcode.UsageErrorf("--%s is required, %s", flag, hint)
}

// JobLogs takes the job's log paths when no file was given, and its field
// mapping for the fields --field did not map.
func JobLogs(f *Factory, cmd *cobra.Command, args *[]string, l *LogFlags) error {
	job, err := f.Job()
	if err != nil || job == nil {
		return err
	}
	if len(*args) == 0 {
		*args = append(*args, job.Logs.Paths...)
	}
	mapped := map[string]bool{}
	for _, v := range l.Fields {
		name, _, _ := strings.Cut(v, "=")
		mapped[name] = true
	}
	names := make([]string, 0, len(job.Logs.Fields))
	for k := range job.Logs.Fields {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !mapped[k] {
			l.Fields = append(l.Fields, k+"="+job.Logs.Fields[k])
		}
	}
	return nil
}

// Given reports whether the user set the option field on cmd with its flag
// (FieldFlags, else the field in kebab case): what a capability's
// Configure keeps over dupctl.yaml.
func Given(cmd *cobra.Command) func(field string) bool {
	return func(field string) bool {
		fl := cmd.Flags().Lookup(flagFor(cmd, field))
		return fl != nil && fl.Changed
	}
}
