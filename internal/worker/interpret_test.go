package worker

import (
	"context"
	"strings"
	"testing"
	"time"
)

// methods records which Observer method each step reached.
type methods struct{ called []string }

func (m *methods) note(name string, s *Step) error {
	m.called = append(m.called, name+":"+s.Op.String())
	return nil
}

func (m *methods) Ack(s *Step) error        { return m.note("Ack", s) }
func (m *methods) Lock(s *Step) error       { return m.note("Lock", s) }
func (m *methods) UnlockBusy(s *Step) error { return m.note("UnlockBusy", s) }
func (m *methods) Retry(s *Step) error      { return m.note("Retry", s) }
func (m *methods) Check(s *Step) error      { return m.note("Check", s) }
func (m *methods) Claim(s *Step) error      { return m.note("Claim", s) }
func (m *methods) Work(s *Step) error       { return m.note("Work", s) }
func (m *methods) Effect(s *Step) error     { return m.note("Effect", s) }
func (m *methods) Commit(s *Step) error     { return m.note("Commit", s) }
func (m *methods) MarkFailed(s *Step) error { return m.note("MarkFailed", s) }
func (m *methods) Unlock(s *Step) error     { return m.note("Unlock", s) }
func (m *methods) DeadLetter(s *Step) error { return m.note("DeadLetter", s) }

func TestInterpretCallsOneMethodPerOp(t *testing.T) {
	m := &methods{}
	for op := OpDone + 1; op < NumOps; op++ {
		if err := Interpret(m, &Step{Op: op}); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	want := "Ack:ack-early Lock:lock UnlockBusy:unlock-busy Retry:retry-busy Check:check Claim:claim Work:work Effect:effect " +
		"Effect:effect-txn Commit:commit MarkFailed:mark-failed Unlock:unlock Ack:ack Retry:retry DeadLetter:dead-letter"
	if got := strings.Join(m.called, " "); got != want {
		t.Errorf("methods called:\n got %s\nwant %s", got, want)
	}
	if err := Interpret(m, &Step{Op: OpDone}); err == nil {
		t.Error("OpDone was interpreted")
	}
}

// fakes are in-memory systems for Core: one lock, one ledger row.
type fakes struct {
	held    string
	status  Status
	effects int
	acked   bool
	events  []string
}

func (f *fakes) Acquire(_ context.Context, key string, _ time.Duration, _ bool) (Lease, bool, error) {
	if f.held != "" {
		return Lease{}, false, nil
	}
	f.held = "t1"
	return Lease{Key: key, Token: "t1", Fence: 1}, true, nil
}
func (f *fakes) Release(_ context.Context, l Lease) (bool, error) {
	ok := f.held == l.Token
	f.held = ""
	return ok, nil
}
func (f *fakes) Delete(context.Context, string) (bool, error) { f.held = ""; return true, nil }
func (f *fakes) Status(context.Context, string) (Status, error) {
	return f.status, nil
}
func (f *fakes) Claim(context.Context, string) (bool, error) { return f.status == StatusAbsent, nil }
func (f *fakes) Commit(context.Context, string) error        { f.status = StatusSucceeded; return nil }
func (f *fakes) MarkFailed(context.Context, string, bool, string) error {
	f.status = StatusFailed
	return nil
}
func (f *fakes) Effect(context.Context, Effect) (bool, error) { f.effects++; return true, nil }
func (f *fakes) EffectTxn(context.Context, Effect) (bool, error) {
	if f.status == StatusSucceeded {
		return false, nil
	}
	f.effects++
	f.status = StatusSucceeded
	return true, nil
}
func (f *fakes) Ack(context.Context) error { f.acked = true; return nil }
func (f *fakes) Retry(context.Context, int, time.Duration, string) error {
	f.acked = true
	return nil
}
func (f *fakes) DeadLetter(context.Context, string) error  { return nil }
func (f *fakes) At(context.Context, Message, Points) error { return nil }
func (f *fakes) Work(context.Context, Message) error       { return nil }
func (f *fakes) EffectFails(Message) bool                  { return false }
func (f *fakes) Event(_ Message, s *Step)                  { f.events = append(f.events, s.Op.String()+" "+s.Note) }
func (f *fakes) core(p Profile) *Core {
	return &Core{Profile: p, Name: "W1", Locker: f, Ledger: f, Cache: f, Hooks: f, MaxAttempts: 3,
		LockKey: func(Message) string { return "lock" }, IdemKey: func(Message) string { return "key" }}
}

// TestCoreWalksTheFlow: Core carries out the operations Flow decides, and
// a second delivery of a done job is caught by the ledger.
func TestCoreWalksTheFlow(t *testing.T) {
	p, _ := ProfileByName("lock-check")
	f := &fakes{}
	c := f.core(p)
	m := Message{JobID: "job-1", BusinessKey: "order-1", Attempt: 1}
	if err := c.Handle(context.Background(), m, f); err != nil {
		t.Fatal(err)
	}
	if err := c.Handle(context.Background(), m, f); err != nil {
		t.Fatal(err)
	}
	want := "lock token t1|check |work |effect |commit |unlock |ack |lock token t1|check SUCCEEDED|unlock |ack "
	if got := strings.Join(f.events, "|"); got != want || f.effects != 1 || !f.acked {
		t.Errorf("events %q (effects %d)\nwant   %q", got, f.effects, want)
	}
}
