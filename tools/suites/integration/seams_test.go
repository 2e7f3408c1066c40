package integration

import (
	"errors"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/native"
	"github.com/edgequeue/waitingroom/tools/redistest"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

// The tests of issue 23's seams that live in the store script: an event
// scheduled again under its name, and line time in a quiet room against
// an outage. (The seams on the request path are tested through the wasm
// in tools/suites/attack.)

// eventLine is a quiet line without limits in event ev, on a store with
// a secret of its own.
func eventLine(t *testing.T, ev *store.Event) *line {
	st, _ := newStore(t)
	st.RandomKey = "the store's secret for the test"
	p := policy(0, 1, 0)
	p.Event = ev
	l := newLine(t, st, p)
	l.quiet = true
	return l
}

// TestAReusedEventNameIsANewEvent runs "weekly" through its pre-queue,
// draw and end, then schedules it again: the new one opens a pre-queue of
// its own (a newcomer is held, not let in), with a new draw key, drawn
// once at its own start. Moving a start after the draw is the same: a new
// event. Before issue 23 the script took the second "weekly" for the
// first, already drawn, and let everyone through.
func TestAReusedEventNameIsANewEvent(t *testing.T) {
	first := event("weekly")
	l := eventLine(t, first)
	l.join(first.PrequeueFrom.Add(time.Minute))
	drawn := l.stats(first.Starts)
	if drawn.Event.Phase != store.Drawn || drawn.Event.Key == "" {
		t.Fatalf("the first weekly at its start: %+v, want drawn with its key revealed", drawn.Event)
	}
	l.stats(first.Ends.Add(time.Minute))

	week := 7 * 24 * time.Hour
	again := &store.Event{ID: "weekly", PrequeueFrom: first.PrequeueFrom.Add(week), Starts: first.Starts.Add(week), Ends: first.Ends.Add(week)}
	l.p.Event = again
	pl := l.join(again.PrequeueFrom.Add(time.Minute))
	if pl.Outcome != store.Waiting || pl.Line.Event.Phase != store.Prequeue || pl.Line.Event.First != pl.Ticket {
		t.Fatalf("a newcomer to the second weekly's pre-queue: %+v, want held as the first of a new pre-queue", pl)
	}
	if pl.Line.Event.Commitment == drawn.Event.Commitment {
		t.Fatal("the second weekly commits to the first one's key")
	}
	second := l.stats(again.Starts)
	if e := second.Event; e.Phase != store.Drawn || e.DrawFirst != pl.Ticket || e.Key == drawn.Event.Key || store.Commitment(e.Key) != pl.Line.Event.Commitment {
		t.Fatalf("the second weekly at its start: %+v, want its own pre-queue drawn with its own, committed key", e)
	}

	// The start moved an hour later after the draw: a new event again.
	moved := *again
	moved.Starts = again.Starts.Add(time.Hour)
	l.p.Event = &moved
	late := l.join(again.Starts.Add(time.Minute))
	if late.Outcome != store.Waiting || late.Line.Event.Phase != store.Prequeue {
		t.Fatalf("a newcomer after the start moved later: %+v, want held in a new pre-queue", late)
	}
	if k := l.stats(moved.Starts).Event.Key; k == "" || k == second.Event.Key || k == drawn.Event.Key {
		t.Fatalf("the moved event's key %q: want a key of its own", k)
	}
	// Moved back to a schedule already drawn: never drawn again.
	l.p.Event = again
	if ln := l.stats(moved.Starts.Add(time.Minute)); ln.Event.Phase != store.NotEntered || ln.Event.Key != "" {
		t.Fatalf("a schedule already drawn was entered again: %+v", ln.Event)
	}
}

// TestMovingTheStartDuringThePrequeueKeepsItsKey: an operator may move the
// start while the pre-queue is open; it is the same event, drawn at the new
// start with the key it was entered with, whose commitment never changed.
func TestMovingTheStartDuringThePrequeueKeepsItsKey(t *testing.T) {
	ev := event("sale")
	l := eventLine(t, ev)
	pl := l.join(ev.PrequeueFrom.Add(time.Minute))
	committed := pl.Line.Event.Commitment
	later := *ev
	later.Starts = ev.Starts.Add(30 * time.Minute)
	l.p.Event = &later
	if ln := l.stats(ev.Starts.Add(time.Minute)); ln.Event.Phase != store.Prequeue || ln.Event.Commitment != committed {
		t.Fatalf("at the old start, moved: %+v, want still the pre-queue with commitment %s", ln.Event, committed)
	}
	if e := l.stats(later.Starts).Event; e.Phase != store.Drawn || e.DrawFirst != pl.Ticket || store.Commitment(e.Key) != committed {
		t.Fatalf("at the new start: %+v, want drawn with the committed key", e)
	}
}

// TestQuietRoomTimeoutsHoldToTheSecond: with one place, V is admitted and
// goes silent; W polls every interval, as often as refresh asks or less
// (a background tab's timers run about once a minute). W gets the place
// at its first poll after V's session TTL plus a heartbeat of V's last
// request, never before V's session TTL. Before issue 23, line time moved
// 5 s a call, so calls 10 s apart aged the room at half speed; before
// issue 34, any gap longer than a refresh with a ticket waiting counted
// 5 s, so W polling every 20 s waited four times as long.
func TestQuietRoomTimeoutsHoldToTheSecond(t *testing.T) {
	for _, interval := range []time.Duration{10 * time.Second, 12 * time.Second, 20 * time.Second, time.Minute} {
		t.Run(interval.String(), func(t *testing.T) {
			st, _ := newStore(t)
			p := policy(0, 1, 1)
			p.SessionTTL, p.Heartbeat = 60*time.Second, 20*time.Second
			l := newLine(t, st, p)
			l.quiet = true
			v := l.join(t0)
			w := l.join(t0)
			if v.Outcome != store.Admitted || w.Outcome != store.Waiting {
				t.Fatalf("setup: %+v, %+v", v, w)
			}
			var in time.Duration
			for at := interval; at <= 5*time.Minute; at += interval {
				if l.poll(w.Ticket, t0.Add(at)).Outcome == store.Admitted {
					in = at
					break
				}
			}
			if in < p.SessionTTL || in-interval >= p.SessionTTL+p.Heartbeat {
				t.Fatalf("W was called %v after V's last request, want at the first poll after %v (not before %v)", in, p.SessionTTL+p.Heartbeat, p.SessionTTL)
			}
		})
	}
}

// TestANightWithTicketsLeftBehindCountsInFull (issue 34): with one place
// and the default timeouts, A is admitted and B waits, then both leave.
// Eight hours later C walks in at once. Before, a silence with a ticket
// waiting was taken for an outage and counted 5 s, so C found the room
// full of the gone and waited out the inactivity timeout and the claim
// window.
func TestANightWithTicketsLeftBehindCountsInFull(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(0, 1, 1))
	l.quiet = true
	if a, b := l.join(t0), l.join(t0.Add(time.Second)); a.Outcome != store.Admitted || b.Outcome != store.Waiting {
		t.Fatalf("setup: %+v, %+v; want A admitted and B waiting", a, b)
	}
	if c := l.join(t0.Add(8 * time.Hour)); c.Outcome != store.Admitted || c.Line.Active != 1 {
		t.Fatalf("the first visitor of the morning: %+v, want admitted at once, alone", c)
	}
}

// TestAQuietSpellIsNotAnOutage: three visitors admitted go silent and the
// room has no other traffic; a newcomer 100 s later walks in at once (the
// sessions lapsed 60 s after their last renewal). An outage is told apart
// by what the edge saw: the POP whose poll failed (its down marker,
// store.Policy.FailedAt) or the session whose renewal failed reports it
// on its next call, and the outage costs nobody their place; the same
// silence nobody saw fail counts in full.
func TestAQuietSpellIsNotAnOutage(t *testing.T) {
	st, _ := newStore(t)
	p := policy(0, 1, 3)
	p.SessionTTL, p.Heartbeat, p.QueueTimeout = 60*time.Second, 20*time.Second, 90*time.Second
	l := newLine(t, st, p)
	l.quiet = true
	for i := 0; i < 3; i++ {
		l.join(t0)
	}
	if pl := l.join(t0.Add(100 * time.Second)); pl.Outcome != store.Admitted {
		t.Fatalf("a newcomer after a quiet spell of 100 s: %+v, want admitted at once", pl)
	}

	// An outage with one waiting and one session: 10 minutes, no call
	// got through; the waiting visitor's POP saw its poll fail.
	after := t0.Add(10 * time.Minute)
	for _, seen := range []bool{true, false} {
		st2, _ := newStore(t)
		o := newLine(t, st2, p)
		o.p.Capacity = 1
		o.quiet = true
		s := o.join(t0)
		w := o.join(t0)
		if seen {
			o.p.FailedAt = t0.Add(30 * time.Second)
		}
		pl := o.poll(w.Ticket, after)
		switch {
		case seen && (pl.Outcome != store.Waiting || pl.Ticket != w.Ticket):
			t.Fatalf("the waiting visitor after a 10-minute outage its POP saw: %+v, want still waiting", pl)
		case !seen && pl.Outcome != store.Lost:
			t.Fatalf("the waiting visitor after 10 minutes of silence nobody saw fail: %+v, want lost (its queue timeout passed)", pl)
		case !seen:
			continue
		}
		ref := o.ref(s, t0)
		ref.FailedAt = after.Add(-time.Minute)
		if !o.renew(ref, after.Add(time.Second)) {
			t.Fatal("the session whose renewal failed in the outage was lost")
		}
	}

	// The same outage in a room with only a session: its renewal, which
	// failed, reports it.
	st3, _ := newStore(t)
	r := newLine(t, st3, p)
	r.quiet = true
	only := r.join(t0)
	ref := r.ref(only, t0)
	ref.FailedAt = t0.Add(30 * time.Second)
	if !r.renew(ref, after) {
		t.Fatal("a session whose renewal failed in a 10-minute outage was lost at its next renewal")
	}
}

// TestASweepIsBounded: 12,000 tickets whose holders left at once are
// forgotten at most 5,000 a second of line time (the rest in the next
// sweeps, uncounted meanwhile), and a call in the same second sweeps
// nothing. Before, one call removed them all: 244 ms of Redis CPU for a
// million (BenchmarkBoundedCallsAtAMillion measures it now).
func TestASweepIsBounded(t *testing.T) {
	st, _ := newStore(t)
	p := policy(0, 1, 0)
	// No failure seen, so the gap counts in full.
	p.QueueTimeout = time.Minute
	fill(t, st, p, 12000)
	l := newLine(t, st, p)
	l.quiet = true
	gone := t0.Add(2 * time.Minute)
	for i, c := range []struct {
		at   time.Duration
		want int64
	}{{0, 7000}, {500 * time.Millisecond, 7000}, {time.Second, 2000}, {2 * time.Second, 0}} {
		l.stats(gone.Add(c.at))
		var n int64
		do(t, st, &n, "ZCARD", st.Keys("r")[3])
		if n != c.want {
			t.Fatalf("call %d, %v after the timeout: %d tickets left in the set, want %d", i+1, c.at, n, c.want)
		}
	}
}

// TestProtocolIsGenerated: line.lua's protocol section and store's Go side
// (lineproto.go, with the script's SHA-1) are what the protocol table
// (store/genline/protocol.go) generates; an edit to one side alone fails.
func TestProtocolIsGenerated(t *testing.T) {
	cmd := exec.Command("go", "run", "./genline", "-check")
	cmd.Dir = filepath.Join("..", "..", "..", "store")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./genline -check: %v\n%s", err, out)
	}
}

// TestScriptRunsInTheEmbeddedRedis runs a join, a poll and a reset through
// the embedded Redis make serve falls back to (miniredis, whose Lua is
// gopher-lua): a function there may use at most 200 registers, locals and
// a call's arguments together, and a script over that fails to compile.
// One HSET of the line's whole state did, once.
func TestScriptRunsInTheEmbeddedRedis(t *testing.T) {
	mr := miniredis.RunT(t)
	srv := httptest.NewServer(upstashdev.New(mr.Addr(), redistest.Token))
	t.Cleanup(srv.Close)
	st := &store.Upstash{URL: srv.URL, Token: redistest.Token, Transport: native.Upstash{}, Timeout: 10 * time.Second}
	l := newLine(t, st, policy(0, 1, 1))
	l.quiet = true
	a, b := l.join(t0), l.join(t0)
	if a.Outcome != store.Admitted || b.Outcome != store.Waiting || l.poll(b.Ticket, t0.Add(time.Second)).Outcome != store.Waiting {
		t.Fatalf("in the embedded Redis: %+v, %+v", a, b)
	}
	if ln := l.operate(store.Action{Op: store.OpReset}, t0.Add(2*time.Second)); ln.Issued != 0 {
		t.Fatalf("reset in the embedded Redis: %+v", ln)
	}
}

// TestAnUnreadableStateIsRefused: a line whose state field was mangled (by
// hand, or a bad restore) is refused with the script's error and nothing
// written, every call, until a reset starts it afresh.
func TestAnUnreadableStateIsRefused(t *testing.T) {
	st, _ := newStore(t)
	p := policy(0, 1, 0)
	l := newLine(t, st, p)
	l.join(t0)
	do(t, st, nil, "HSET", st.Keys("r")[0], "s", "1,2,3,")
	if _, err := st.Join(ctx, "r", p, store.Arrival{ID: "b"}, t0.Add(time.Second)); !errors.Is(err, store.ErrRejected) || !strings.Contains(err.Error(), "unreadable") {
		t.Fatalf("a join on a mangled state: %v, want the script's refusal", err)
	}
	var s string
	do(t, st, &s, "HGET", st.Keys("r")[0], "s")
	if s != "1,2,3," {
		t.Fatalf("the refused call wrote the state %q", s)
	}
	after, err := st.Operate(ctx, "r", p, store.Action{Op: store.OpReset, Actor: store.Actor{Via: "api"}}, t0.Add(2*time.Second))
	if err != nil || after.Issued != 0 || after.Epoch <= l.epoch {
		t.Fatalf("a reset of a mangled state: %+v, %v; want a fresh line under a later epoch", after, err)
	}
	if pl, err := st.Join(ctx, "r", p, store.Arrival{ID: "c"}, t0.Add(3*time.Second)); err != nil || pl.Ticket != 1 {
		t.Fatalf("a join after the reset: %+v, %v; want ticket 1", pl, err)
	}
	lineState(t, st, "r")
}
