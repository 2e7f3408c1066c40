package integration

import (
	_ "embed"
	"fmt"
	"testing"
	"time"
)

// lineBefore is store/line.lua as deployed before the priority lane and
// scheduled events (seven keys, sixteen arguments, four Feistel rounds).
//
//go:embed testdata/line-before-issue-11.lua
var lineBefore string

// TestUpgradeMidWindowCallsEveryTicketOnce deploys this script onto a line
// the previous one was calling a random window of: the window must be
// finished in the order it was begun in, every ticket called exactly once.
func TestUpgradeMidWindowCallsEveryTicketOnce(t *testing.T) {
	st, _ := newStore(t)
	keys := st.Keys("r")[:7]
	old := func(op string, arg int64, arrival string) {
		t.Helper()
		args := []any{"EVAL", lineBefore, 7}
		for _, k := range keys {
			args = append(args, k)
		}
		args = append(args, op, t0.UnixMilli(), 0, 1, 0, 30000, 90000, 900000, arg, arrival, 0, 60000, "a random key", 30000, 0, 20000)
		do(t, st, nil, args...)
	}
	old("pause", 0, "")
	for i := 0; i < 12; i++ {
		old("join", 0, fmt.Sprint("a", i))
	}
	old("admit", 4, "")
	before := calledSet(t, st)
	if len(before) != 4 {
		t.Fatalf("the old script called %d, want 4", len(before))
	}
	p := policy(0, 1, 0)
	p.RandomWindow = time.Minute
	ln, err := st.Admit(ctx, "r", p, 8, t0.Add(time.Second))
	if err != nil || ln.CalledNow != 8 {
		t.Fatalf("the new script called %d (%v), want the window's other 8", ln.CalledNow, err)
	}
	if after := calledSet(t, st); len(after) != 12 {
		t.Fatalf("after the upgrade %d distinct tickets were called of 12: some twice, some never", len(after))
	}
	// The next window is drawn with the new rounds, each ticket once.
	for i := 0; i < 12; i++ {
		if _, err := st.Join(ctx, "r", p, fmt.Sprint("b", i), t0.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if ln, err := st.Admit(ctx, "r", p, 12, t0.Add(2*time.Minute)); err != nil || ln.CalledNow != 12 || len(calledSet(t, st)) != 24 {
		t.Fatalf("the window after the upgrade: called %d, %v", ln.CalledNow, err)
	}
	var rounds string
	do(t, st, &rounds, "HGET", st.Keys("r")[0], "rounds")
	if rounds != "12" {
		t.Fatalf("rounds %q after the old window, want 12", rounds)
	}
}
