package watch

import (
	"context"

	auditlogs "github.com/dupctl/dupctl/internal/audit/logs"
	"github.com/dupctl/dupctl/internal/logs"
	"github.com/dupctl/dupctl/internal/watch"
)

// follower is `audit logs --follow` on --follow's sources, its lines and
// duplicates handed to the watch's counters.
func (o *Options) follower() (watch.Follower, error) {
	f := o.Factory
	m, err := o.Log.Compile(f.Config)
	if err != nil {
		return nil, err
	}
	format, tz, err := o.Log.Reading()
	if err != nil {
		return nil, err
	}
	// Expanded once, so a bad path is a usage error before anything runs;
	// globs and directories are listed again as the follow runs.
	if _, err := f.LogStreams(o.Follow); err != nil {
		return nil, err
	}
	return func(ctx context.Context, seen func(watch.LogRecord), duplicate func(string)) error {
		srcs, err := f.LogStreams(o.Follow)
		if err != nil {
			return err
		}
		_, err = auditlogs.Follow(ctx, srcs, auditlogs.FollowOptions{
			Options: auditlogs.Options{Mapping: m, Format: format, TZ: tz, MaxLine: o.Log.MaxLine},
			Window:  o.Window,
			Rescan:  logs.Rescannable(o.Follow),
			Found: func(fd auditlogs.Finding) error {
				duplicate(fd.Cause)
				return nil
			},
			Seen: func(e *logs.Event) {
				seen(watch.LogRecord{Kind: e.Kind.String(), JobType: e.Get(logs.JobType), Duration: e.Duration})
			},
		})
		return err
	}, nil
}
