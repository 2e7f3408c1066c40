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

// linePrevious is store/line.lua as released at 39117c1, the last release
// before the line's state became one field: eleven keys, the named
// protocol's 21 header arguments, and its state in named hash fields.
//
//go:embed testdata/line-39117c1.lua
var linePrevious string

// TestUpgradeFromThePreviousRelease deploys this script onto a line the
// previous release left mid-sale: its sessions, called and waiting tickets,
// pause, the operator's live limits and the minute's history all carry on,
// read from the old fields once.
func TestUpgradeFromThePreviousRelease(t *testing.T) {
	st, _ := newStore(t)
	now := t0
	old := func(op string, tail ...any) []any {
		t.Helper()
		args := []any{"EVAL", linePrevious, 11}
		for _, k := range st.Keys("r") {
			args = append(args, k)
		}
		// op, now, rate, burst, capacity, claim, session, queue, refresh,
		// window, catch-up, heartbeat, share, mode, random key, event
		// (name, pre-queue, start, end, key), refused; then op's tail.
		args = append(args, op, now.UnixMilli(), 0, 1, 2, 30000, 90000, 900000, 20000,
			0, 30000, 20000, 0.2, "fifo", "a random key", "", 0, 0, 0, "", 0)
		var reply []any
		do(t, st, &reply, append(args, tail...)...)
		return reply
	}
	num := func(reply []any, i int) int64 {
		t.Helper()
		switch v := reply[i-1].(type) {
		case float64:
			return int64(v)
		case string:
			var n int64
			fmt.Sscan(v, &n)
			return n
		}
		t.Fatalf("reply field %d: %T", i, reply[i-1])
		return 0
	}
	// Capacity 2 and no rate: a and b are admitted, c and d wait.
	a := old("join", "a")
	old("join", "b")
	old("join", "c")
	old("join", "d")
	epoch := num(a, 1)
	old("limits", "", "", "4", "2", "")
	old("pause", "")
	now = now.Add(10 * time.Second)
	before := old("stats")

	p := policy(0, 1, 2)
	l := newLine(t, st, p)
	l.epoch, l.last = epoch, now
	got := l.stats(now)
	switch {
	case got.Epoch != epoch || got.Issued != num(before, 2) || got.Admitted != num(before, 3):
		t.Fatalf("after the upgrade: epoch %d issued %d admitted %d; the old script said %d, %d, %d",
			got.Epoch, got.Issued, got.Admitted, epoch, num(before, 2), num(before, 3))
	case !got.Paused || got.Active != num(before, 7) || got.Active != 2 || got.Called != num(before, 8):
		t.Fatalf("after the upgrade: paused %v, %d live, %d called; want paused, %d live, %d called",
			got.Paused, got.Active, got.Called, num(before, 7), num(before, 8))
	case got.Overrides.Burst == nil || *got.Overrides.Burst != 4 || got.Overrides.Capacity == nil || *got.Overrides.Capacity != 2:
		t.Fatalf("the operator's live limits were lost: %+v", got.Overrides)
	}
	if pl := l.poll(3, now); pl.Outcome != store.Waiting || pl.Line.Epoch != epoch {
		t.Fatalf("ticket 3 of the old line: %+v, want still waiting in epoch %d", pl, epoch)
	}
	session := store.SessionRef{ID: fmt.Sprintf("%d.1", epoch), Epoch: epoch, UsableUntil: now}
	if !l.renew(session, now) {
		t.Fatal("a session of the old line did not renew")
	}
	// Resumed, with a's place given up, c (ticket 3) is next.
	if _, err := st.Control(ctx, "r", p, store.Resume, now); err != nil {
		t.Fatal(err)
	}
	l.end(session, now)
	if pl := l.poll(3, now.Add(time.Second)); pl.Outcome != store.Admitted {
		t.Fatalf("ticket 3 after a place freed: %+v, want admitted", pl)
	}
	if pl := l.poll(4, now.Add(time.Second)); pl.Outcome != store.Waiting {
		t.Fatalf("ticket 4: %+v, want still waiting behind the capacity", pl)
	}
	minutes, err := st.History(ctx, "r", t0, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(minutes) == 0 || minutes[0].Joins != 4 || minutes[0].Epoch != epoch {
		t.Fatalf("the old line's minute of history: %+v, want its 4 joins in epoch %d", minutes, epoch)
	}
}
