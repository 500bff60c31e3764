package audit

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/platform/english"
)

// writeLearnedMapping writes what a sample of the logs taught as a
// dupctl.yaml of one job, each learned line commented with its evidence,
// for a person to review and commit (--learn FILE). Fields the learning
// names by a layout's position (a console line's "@bracket.0", the file)
// are no path a mapping can give: they are listed as comments, learned
// again on each run.
func writeLearnedMapping(w io.Writer, l *logs.Learned, paths []string) error {
	cfg := l.Config()
	fields := &yaml.Node{Kind: yaml.MappingNode}
	var positional []string
	for _, name := range slices.Sorted(maps.Keys(cfg.Fields)) {
		for i, p := range cfg.Fields[name] {
			if strings.HasPrefix(p, "@") {
				positional = append(positional, fmt.Sprintf("%s from %s", name, p))
				continue
			}
			if i > 0 {
				continue // a job's field takes one path
			}
			fields.Content = append(fields.Content, str(name, ""), str(p, fieldWhy(l, name)))
		}
	}
	if l.Key.Field == "" && !l.Key.Mapped && l.Key.Shape != "" {
		positional = append(positional, fmt.Sprintf("businessKey by its shape (%s) inside other values", l.Key.Shape))
	}
	for _, f := range l.Fields {
		if f.Kind == logs.KeyedPrefixFact {
			positional = append(positional, f.Reason)
		}
	}
	for _, s := range l.Sources {
		if s.Times != "" {
			positional = append(positional, s.Source+"'s times: "+s.Times)
		}
	}
	events := &yaml.Node{Kind: yaml.MappingNode}
	for _, kind := range slices.Sorted(maps.Keys(cfg.Events)) {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, p := range cfg.Events[kind] {
			seq.Content = append(seq.Content, str(p, phraseWhy(l, p)))
		}
		events.Content = append(events.Content, str(kind, ""), seq)
	}
	pathSeq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, p := range paths {
		pathSeq.Content = append(pathSeq.Content, str(p, ""))
	}
	logsNode := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{str("paths", ""), pathSeq}}
	if len(fields.Content) > 0 {
		logsNode.Content = append(logsNode.Content, str("fields", ""), fields)
	}
	if len(events.Content) > 0 {
		logsNode.Content = append(logsNode.Content, str("events", ""), events)
	}
	job := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{str("name", ""), str("learned", ""), str("logs", ""), logsNode}}
	head := fmt.Sprintf("Learned by dupctl audit logs --learn from %d sample lines of %d %s.\n"+
		"Review each line (the comments say what it was learned from), then keep the logs section under your job.\n%s",
		l.Lines, len(l.Sources), english.Plural(len(l.Sources), "file", "files"), l.Worker.Reason)
	if len(positional) > 0 {
		head += "\nLearned from the layout on each run, not written here: " + strings.Join(positional, ", ")
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode, HeadComment: head, Content: []*yaml.Node{{Kind: yaml.MappingNode,
		Content: []*yaml.Node{str("jobs", ""), {Kind: yaml.SequenceNode, Content: []*yaml.Node{job}}}}}}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write the learned mapping: %w", err)
	}
	return enc.Close()
}

func str(v, comment string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: v, LineComment: comment}
}

// fieldWhy is the evidence for a learned field's path.
func fieldWhy(l *logs.Learned, name string) string {
	switch name {
	case "consumerInstanceId":
		return l.Worker.Reason
	case "process":
		return "the process inside the instance"
	case "lane":
		return "a thread or consumer inside a process, never the worker"
	case "businessKey":
		return l.Key.Reason
	case "lockKey", "lockToken":
		for _, f := range l.Fields {
			if f.Kind == "lock" {
				return f.Reason
			}
		}
	}
	return ""
}

// phraseWhy is the evidence for a learned phrase.
func phraseWhy(l *logs.Learned, phrase string) string {
	for _, r := range l.Roles {
		if r.Phrase == phrase {
			return fmt.Sprintf("%d lines, confidence %.2f: %s", r.Lines, r.Confidence, r.Evidence)
		}
	}
	return ""
}
