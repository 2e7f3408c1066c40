package integration

import (
	_ "embed"
	"fmt"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
)

// lineBefore is store/line.lua as deployed before issue 23: ten keys, 32
// positional arguments, events known by their name alone, and windows of
// four Feistel rounds still finished by it (the keying only data from
// before issue 11 needed, and which the script no longer carries).
//
//go:embed testdata/line-before-issue-23.lua
var lineBefore string

// TestUpgradeKeepsLiveLines deploys this script onto lines the previous
// one holds: a waiting ticket keeps its place, a session renews, and an
// event whose pre-queue is open stays the same event (not entered again
// under its schedule), is drawn once at its start with the key it was
// entered with, and its commitment does not change.
func TestUpgradeKeepsLiveLines(t *testing.T) {
	st, _ := newStore(t)
	ev := event("sale")
	oldKey := fmt.Sprintf("%064x", 42)
	old := func(op string, at time.Time, arg int64, arrival string, epoch int64) []any {
		t.Helper()
		args := []any{"EVAL", lineBefore, 10}
		for _, k := range st.Keys("r")[:10] {
			args = append(args, k)
		}
		args = append(args, op, at.UnixMilli(), 0, 1, 2, 30000, 90000, 900000, arg, arrival, epoch, 0, "a random key",
			30000, 0, 20000, 0.2, "", 0, 0,
			ev.ID, ev.PrequeueFrom.UnixMilli(), ev.Starts.UnixMilli(), ev.Ends.UnixMilli(), oldKey,
			"fifo", "", "", "", "", "", 0)
		var reply []any
		do(t, st, &reply, args...)
		return reply
	}
	// Before the pre-queue: two admitted (capacity 2), one waiting.
	before := ev.PrequeueFrom.Add(-time.Minute)
	a := old("join", before, 0, "a", 0)
	epoch := int64(a[0].(float64))
	old("join", before, 0, "b", 0)
	old("join", before, 0, "c", 0)
	// In the pre-queue: three more.
	for i := 0; i < 3; i++ {
		old("join", ev.PrequeueFrom.Add(time.Minute), 0, fmt.Sprint("pq", i), 0)
	}

	p := policy(0, 1, 2)
	p.Event = ev
	l := newLine(t, st, p)
	l.epoch = epoch
	now := ev.PrequeueFrom.Add(2 * time.Minute)
	l.last = now
	if !l.renew(store.SessionRef{ID: fmt.Sprintf("%d.1", epoch), Epoch: epoch, UsableUntil: now}, now) {
		t.Fatal("a session of the old script did not renew under the new one")
	}
	pl := l.poll(3, now)
	if pl.Outcome != store.Waiting || pl.Line.Epoch != epoch || pl.Line.Issued != 6 {
		t.Fatalf("a waiting ticket of the old script: %+v, want still waiting in epoch %d", pl, epoch)
	}
	e := pl.Line.Event
	if e.Phase != store.Prequeue || e.First != 4 || e.Commitment != store.Commitment(oldKey) || e.Key != "" {
		t.Fatalf("the old script's open pre-queue: %+v, want the same pre-queue from ticket 4 with the old key's commitment", e)
	}
	drawn := l.stats(ev.Starts)
	if d := drawn.Event; d.Phase != store.Drawn || d.DrawFirst != 4 || d.DrawLast != 6 || d.Key != oldKey {
		t.Fatalf("at the start: %+v, want tickets 4..6 drawn with the key the old script entered", d)
	}
	if again := l.stats(ev.Starts.Add(time.Minute)); again.Event.Phase != store.Drawn || again.Event.DrawLast != 6 {
		t.Fatalf("a minute after the draw: %+v, want the same draw", again.Event)
	}
}
