package keyspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dupctl/dupctl/internal/platform/redact"
	"github.com/redis/go-redis/v9"
)

// A cluster master can die mid-walk: its replica is promoted after the
// cluster's node timeout, and until then (with cluster-require-full-coverage,
// the default) every node refuses key reads with CLUSTERDOWN. A walk that
// stopped there would report the keys it happened to read as if they were
// all: a silent partial result. So a node's walk that fails on a
// connection error or a cluster-state error waits for its slots to be
// served again - by the same node, or by the replica promoted in its
// place - and goes on there: the same node from its SCAN cursor, a new
// master from the start with the node's filter skipping what was read.
// Past FailoverWait, the node is Unread, with the slots it served.

// SlotRange is a range of hash slots, both ends included.
type SlotRange struct {
	Start int64 `json:"start"`
	End   int64 `json:"end"`
}

func (r SlotRange) String() string {
	if r.Start == r.End {
		return fmt.Sprint(r.Start)
	}
	return fmt.Sprintf("%d-%d", r.Start, r.End)
}

// SlotsText words slot ranges: "0-5460, 10923".
func SlotsText(rs []SlotRange) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

// Move is a node's walk going on after a failure: on the master that
// serves the node's slots now, or on the same node once its cluster was up
// again.
type Move struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Why is the failure that ended the pass before.
	Why string `json:"why"`
	// WaitedMs is how long the slots went unserved (as the walk saw it).
	WaitedMs int64 `json:"waited_ms"`
	// Reread are keys scanned before the failure and read after it.
	Reread int `json:"reread"`
	// AlreadyRead are keys the new master's SCAN returned that had been
	// read on the old one (skipped); for the last move of a node.
	AlreadyRead int64 `json:"already_read"`
}

// Unread is a node whose walk could not go on: the slots it served, why,
// and what is known to be missing.
type Unread struct {
	Node  string      `json:"node"`
	Slots []SlotRange `json:"slots"`
	Why   string      `json:"why"`
	// Pending are keys SCAN had returned and nothing read; ScanDone says
	// whether SCAN had reached the end (if not, keys it never returned are
	// missing too).
	Pending  int  `json:"pending"`
	ScanDone bool `json:"scan_done"`
}

// clusterConn is what following a failover asks of a cluster client.
type clusterConn interface {
	masterLister
	ClusterSlots(ctx context.Context) *redis.ClusterSlotsCmd
}

// claims are the masters the walks read, so that two nodes' walks never
// both follow their slots to one master (each would read all its keys).
type claims struct {
	mu    sync.Mutex
	owner map[string]*Node
}

func newClaims(nodes []*Node) *claims {
	c := &claims{owner: map[string]*Node{}}
	for _, n := range nodes {
		c.owner[n.Name] = n
	}
	return c
}

// take gives addr to n unless another node's walk reads it.
func (c *claims) take(addr string, n *Node) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o, ok := c.owner[addr]; ok && o != n {
		return false
	}
	c.owner[addr] = n
	return true
}

// maxMoves bounds the passes of one node's walk (a flapping cluster).
const maxMoves = 8

// followSlots waits for n's slots to be served by one master that answers,
// and points n at it: a Move, or Unread when they are not served within
// wait, are served by a master another walk reads, or n moved too often.
func (n *Node) followSlots(ctx context.Context, wait time.Duration, cl *claims, w *nodeWalk, cause error, moves int) (Move, *Unread) {
	return n.follow(ctx, wait, w, cause, moves, n.Slots, func(mv Move, unread func(string) *Unread) (Move, *Unread, error) {
		addr, c, err := n.slotsOwner(ctx)
		if err != nil {
			return mv, nil, err
		}
		if !cl.take(addr, n) {
			return mv, unread(fmt.Sprintf("%s; its slots are now served by %s, which this scan reads for other slots", mv.Why, addr)), nil
		}
		mv.To = addr
		if addr != n.Name {
			n.Name, n.Conn = addr, c
			n.NoTouch = n.NoTouch && c.Do(ctx, "CLIENT", "NO-TOUCH", "OFF").Err() == nil
			n.relearnMemory(ctx)
			w.cursor, w.done, w.rescan = 0, false, true
		}
		return mv, nil, nil
	})
}

// follow is a walk's wait after a failure: try, every 250 ms until wait
// has passed, says where the walk goes on (a Move from mv, which carries
// the failure and the time waited) or that it cannot (an Unread made with
// unread), or returns the error that keeps it waiting; past the wait, or
// after too many moves, n is Unread with slots.
func (n *Node) follow(ctx context.Context, wait time.Duration, w *nodeWalk, cause error, moves int, slots []SlotRange,
	try func(mv Move, unread func(string) *Unread) (Move, *Unread, error)) (Move, *Unread) {
	why := redact.String(cause.Error())
	unread := func(reason string) *Unread {
		return &Unread{Node: n.Name, Slots: slots, Why: reason, ScanDone: w.done}
	}
	switch {
	case moves >= maxMoves:
		return Move{}, unread(fmt.Sprintf("%s (after %d failovers in one scan)", why, moves))
	case w.filter == nil:
		return Move{}, unread(why + " (without the dedupe filter the keys already read cannot be told from the rest)")
	}
	start := time.Now()
	deadline := start.Add(wait)
	for {
		mv, un, err := try(Move{From: n.Name, Why: why, WaitedMs: time.Since(start).Milliseconds()}, unread)
		switch {
		case un != nil:
			return Move{}, un
		case err == nil:
			return mv, nil
		}
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return Move{}, unread(fmt.Sprintf("%s; after waiting %s: %s", why, wait.Round(time.Millisecond), redact.String(err.Error())))
		}
		t := time.NewTimer(min(250*time.Millisecond, left))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

// slotsOwner is the one master that serves all of n's slots now, as the
// cluster says, when it answers and its cluster is up.
func (n *Node) slotsOwner(ctx context.Context) (string, *redis.Client, error) {
	masters := map[string]*redis.Client{}
	var mu sync.Mutex
	// ForEachMaster reloads the client's view of the cluster first.
	err := n.cluster.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		masters[m.Options().Addr] = m
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	slots, err := n.cluster.ClusterSlots(ctx).Result()
	if err != nil {
		return "", nil, err
	}
	addr, err := ownerOf(n.Slots, slots)
	if err != nil {
		return "", nil, err
	}
	c := masters[addr]
	if c == nil {
		return "", nil, fmt.Errorf("the cluster names %s as the master of slots %s, and the client does not know it yet", addr,
			SlotsText(n.Slots))
	}
	info, err := c.ClusterInfo(ctx).Result()
	switch {
	case err != nil:
		return "", nil, fmt.Errorf("%s: %w", addr, err)
	case !strings.Contains(info, "cluster_state:ok"):
		return "", nil, fmt.Errorf("the cluster is down (as %s sees it)", addr)
	}
	return addr, c, nil
}

// ownerOf is the master serving every slot of want in slots, or why there
// is none: a slot nobody serves, or slots split between masters.
func ownerOf(want []SlotRange, slots []redis.ClusterSlot) (string, error) {
	owner := ""
	for _, r := range want {
		for s := r.Start; s <= r.End; {
			i := slices.IndexFunc(slots, func(cs redis.ClusterSlot) bool { return int64(cs.Start) <= s && s <= int64(cs.End) })
			if i < 0 || len(slots[i].Nodes) == 0 {
				return "", fmt.Errorf("slot %d has no master", s)
			}
			a := slots[i].Nodes[0].Addr
			if owner != "" && a != owner {
				return "", fmt.Errorf("slots %s are split between %s and %s", SlotsText(want), owner, a)
			}
			owner = a
			s = int64(slots[i].End) + 1
		}
	}
	if owner == "" {
		return "", errors.New("the node served no slots")
	}
	return owner, nil
}

// masterSlots maps each master's address to the slot ranges it serves.
func masterSlots(slots []redis.ClusterSlot) map[string][]SlotRange {
	out := map[string][]SlotRange{}
	for _, cs := range slots {
		if len(cs.Nodes) > 0 {
			a := cs.Nodes[0].Addr
			out[a] = append(out[a], SlotRange{int64(cs.Start), int64(cs.End)})
		}
	}
	for _, rs := range out {
		slices.SortFunc(rs, func(a, b SlotRange) int { return int(a.Start - b.Start) })
	}
	return out
}

// clusterStates are the error replies of a cluster between states: down
// until a replica is promoted, a slot moving, a node loading its data.
var clusterStates = []string{"CLUSTERDOWN", "TRYAGAIN", "LOADING", "MASTERDOWN", "MOVED ", "ASK ", "READONLY"}

// transient reports whether a walk's failure may pass with a failover: a
// connection that failed (the node is gone) or a cluster-state reply. An
// ACL refusal, any other error reply or the end of the context will not.
func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "NOPERM") {
		return false
	}
	var text string
	var re redis.Error
	var rp *keyReplyError
	switch {
	case errors.As(err, &rp):
		text = rp.text
	case errors.As(err, &re):
		text = re.Error()
	default:
		return true
	}
	for _, p := range clusterStates {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// keyReplyError is an error reply to a key's read that fails the read.
type keyReplyError struct{ cmd, node, text string }

func (e *keyReplyError) Error() string { return fmt.Sprintf("%s on %s: %s", e.cmd, e.node, e.text) }
