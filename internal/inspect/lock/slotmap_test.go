package lock

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dupctl/dupctl/internal/inspect/lock/internal/keyspace"
	"github.com/dupctl/dupctl/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// TestSlotMap: each master's slots, read on it and on the nodes its walk
// moved to; a master left unread says why; slots no master served are a
// row of their own; outside a cluster there is no map.
func TestSlotMap(t *testing.T) {
	nodes := []*keyspace.Node{
		{Name: "a:1", Slots: []SlotRange{{Start: 0, End: 5460}}},
		{Name: "b:2", Slots: []SlotRange{{Start: 5461, End: 10922}}},
		{Name: "c:3", Slots: []SlotRange{{Start: 10923, End: 16000}}},
	}
	walked := []keyspace.NodeResult{{}, {Moves: []keyspace.Move{{From: "b:2", To: "b2:4"}, {From: "b2:4", To: "b2:4"}}},
		{Unread: &keyspace.Unread{Node: "c:3", Why: "connection refused"}}}
	got := slotMap([]string{"a:1", "b:2", "c:3"}, nodes, walked)
	want := []string{
		"a:1 0-5460 read on [a:1] read=true ",
		"b:2 5461-10922 read on [b:2 b2:4] read=true ",
		"c:3 10923-16000 read on [c:3] read=false connection refused",
		" 16001-16383 read on [] read=false no master served them when the scan began (the cluster does not cover every slot): " +
			"no key there could be read",
	}
	var lines []string
	for _, r := range got {
		lines = append(lines, fmt.Sprintf("%s %s read on %v read=%v %s", r.Master, SlotsText(r.Slots), r.ReadOn, r.Read, r.Why))
	}
	if !slices.Equal(lines, want) {
		t.Errorf("slot map:\n%q\nwant\n%q", lines, want)
	}
	if m := slotMap([]string{"redis"}, []*keyspace.Node{{Name: "redis"}}, []keyspace.NodeResult{{}}); len(m) != 0 {
		t.Errorf("one server has a slot map: %+v", m)
	}
	if u := unserved([]SlotRange{{Start: 100, End: 200}, {Start: 0, End: 99}, {Start: 150, End: 16383}}); len(u) != 0 {
		t.Errorf("overlapping ranges covering every slot: unserved %v", u)
	}
}

// TestSlotMapRealCluster: on a real 3-master cluster, the map has every
// master, read on itself, their slots covering 0-16383; on one server
// there is none.
func TestSlotMapRealCluster(t *testing.T) {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: testenv.RedisCluster(t, 3)})
	defer cc.Close()
	ctx := context.Background()
	for i := range 50 {
		cc.Set(ctx, fmt.Sprintf("lock:order:%d", i), fmt.Sprintf("%08x-3b2a-4c1d-9e8f-0a1b2c3d4e5f", i), time.Hour)
	}
	res, err := Run(ctx, cc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Data.SlotMap
	var all []SlotRange
	for _, r := range m {
		if !r.Read || !slices.Equal(r.ReadOn, []string{r.Master}) || !slices.Contains(res.Data.Target.Nodes, r.Master) {
			t.Errorf("master %+v: want read on itself", r)
		}
		all = append(all, r.Slots...)
	}
	if len(m) != 3 || len(unserved(all)) != 0 {
		t.Errorf("slot map %+v: want 3 masters covering every slot", m)
	}
	res, err = Run(ctx, testenv.RedisDB(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data.SlotMap) != 0 {
		t.Errorf("one server: slot map %+v", res.Data.SlotMap)
	}
}
