package store

import "testing"

func TestTopN(t *testing.T) {
	top := &topN{n: 2}
	for _, g := range []Group{{Key: "b", Rows: 2}, {Key: "a", Rows: 2}, {Key: "c", Rows: 5}, {Key: "d", Rows: 3}} {
		top.add(g)
	}
	r := top.result()
	if r.Groups != 4 || r.Rows != 12 || len(r.Samples) != 2 || r.Samples[0].Key != "c" || r.Samples[1].Key != "d" {
		t.Errorf("topN = %+v", r)
	}
}
