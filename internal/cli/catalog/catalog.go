// Package catalog assembles every finding rule of this build: the registry
// behind `dupctl explain`, JSON check titles and docs/checks.md. Only the
// root command imports it, so a noun's package (internal/cli/inspect)
// compiles its own capabilities and not every other one.
//
// A rule's texts name options as their Options field ({MaxTTL}); the
// catalogue words them as the command that documents the rule knows them
// (--max-ttl), from the command tree itself, so a text can only name a
// flag that exists.
package catalog

import (
	"strings"

	auditcache "github.com/dupctl/dupctl/internal/audit/cache"
	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
	"github.com/dupctl/dupctl/internal/cli/cmdutil"
	"github.com/dupctl/dupctl/internal/doctor/topology"
	"github.com/dupctl/dupctl/internal/inspect/lock"
	"github.com/dupctl/dupctl/internal/inspect/store"
	"github.com/dupctl/dupctl/internal/inspect/ttl"
	"github.com/dupctl/dupctl/internal/keys"
	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/config"
	"github.com/dupctl/dupctl/internal/platform/findings"
	"github.com/dupctl/dupctl/internal/replay"
	"github.com/dupctl/dupctl/internal/sim"
	"github.com/dupctl/dupctl/internal/sim/chaos"
	"github.com/spf13/cobra"
)

// Group is one capability's rules and the command (a path below the root,
// "inspect lock"; "" for the root) whose flags their texts name.
type Group struct {
	Command string
	Rules   []findings.Rule
}

// Groups are every capability's rules, in the catalogue's order.
func Groups() []Group {
	return []Group{
		{"simulate", sim.Rules()},
		{"", config.Rules()},
		{"doctor", topology.Rules()},
		{"audit logs", logs.Rules()},
		{"audit logs", auditlogs.Rules()},
		{"keys unstable", keys.Rules()},
		{"inspect ttl", ttl.Rules()},
		{"inspect lock", lock.Rules()},
		{"dlq", replay.Rules()},
		{"inspect store", store.Rules()},
		{"audit cache", auditcache.Rules()},
		{"simulate", chaos.Rules()},
	}
}

// New words every rule with the flags of the trees' commands (the same
// command line built more than one way: simulate's worker commands exist
// only in the tree of a --worker run) and returns the catalogue and, for
// a finding of a code, the Namer its rule's texts were worded with.
func New(trees ...*cobra.Command) (*findings.Catalog, func(code string) cmdutil.Namer) {
	var groups [][]findings.Rule
	byCode := map[string]cmdutil.Namer{}
	for _, g := range Groups() {
		name := Namer(g.Command, trees...)
		worded := make([]findings.Rule, len(g.Rules))
		for i, r := range g.Rules {
			r.Title = cmdutil.Expand(r.Title, name)
			r.Doc = cmdutil.Expand(r.Doc, name)
			r.Fix = cmdutil.Expand(r.Fix, name)
			worded[i] = r
			byCode[r.Code] = name
		}
		groups = append(groups, worded)
	}
	return findings.NewCatalog(groups...), func(code string) cmdutil.Namer { return byCode[code] }
}

// Namer names a field as the flag of the first command under path (in any
// tree, the command itself first) that binds it.
func Namer(path string, trees ...*cobra.Command) cmdutil.Namer {
	var cmds []*cobra.Command
	for _, root := range trees {
		if c := find(root, path); c != nil {
			cmds = append(cmds, subtree(c)...)
		}
	}
	return func(field string) (string, bool) {
		for _, c := range cmds {
			if flag, ok := cmdutil.FlagName(c, field); ok {
				return flag, true
			}
		}
		return "", false
	}
}

func find(root *cobra.Command, path string) *cobra.Command {
	c := root
	for _, name := range strings.Fields(path) {
		var next *cobra.Command
		for _, sub := range c.Commands() {
			if sub.Name() == name {
				next = sub
				break
			}
		}
		if next == nil {
			return nil
		}
		c = next
	}
	return c
}

func subtree(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		out = append(out, subtree(sub)...)
	}
	return out
}
