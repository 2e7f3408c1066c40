package integration

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/draw"
	"github.com/edgequeue/waitingroom/store"
)

// calledSet reads the tickets called and not yet claimed.
func calledSet(t testing.TB, st *store.Upstash) map[int64]bool {
	t.Helper()
	var members []string
	do(t, st, &members, "ZRANGE", st.Keys("r")[2], 0, -1)
	set := make(map[int64]bool, len(members))
	for _, m := range members {
		n, err := strconv.ParseInt(m, 10, 64)
		if err != nil {
			t.Fatalf("called ticket %q", m)
		}
		set[n] = true
	}
	return set
}

// callOneByOne admits n tickets one call at a time and returns them in the
// order they were called.
func callOneByOne(t testing.TB, l *line, n int, now time.Time) []int64 {
	t.Helper()
	var order []int64
	before := calledSet(t, l.st)
	for i := 0; i < n; i++ {
		ln, err := l.st.Admit(ctx, "r", l.p, 1, now)
		if err != nil || ln.CalledNow != 1 {
			t.Fatalf("admit 1 (call %d): called %d, %v", i, ln.CalledNow, err)
		}
		after := calledSet(t, l.st)
		for tk := range after {
			if !before[tk] {
				order = append(order, tk)
			}
		}
		before = after
	}
	return order
}

func (l *line) vip(arrival string, inv store.Invite, now time.Time) store.Place {
	l.t.Helper()
	l.at(now)
	return l.check(l.st.JoinPriority(ctx, "r", l.p, arrival, inv, now))
}

func invite(id string, uses int) store.Invite {
	return store.Invite{ID: id, Uses: uses, Until: t0.Add(24 * time.Hour)}
}

// TestPriorityLaneTakesAtMostItsShare fills both lanes of a paused room
// and calls one at a time: priority tickets go first come, first served,
// ahead of the regular line, but never more than the share (plus the one
// the lane starts with) of any run of admissions from the start; once no
// regular ticket waits, they take every place.
func TestPriorityLaneTakesAtMostItsShare(t *testing.T) {
	for _, share := range []float64{0.2, 0.5} {
		t.Run(fmt.Sprint(share), func(t *testing.T) {
			_, _, l := pausedLanes(t, share)
			for i := 0; i < 40; i++ {
				l.join(t0)
			}
			for i := 0; i < 30; i++ {
				if pl := l.vip(fmt.Sprint("v", i), invite(fmt.Sprint("inv", i), 1), t0); pl.Ticket != int64(-1-i) || pl.Outcome != store.Waiting {
					t.Fatalf("priority join %d: %+v, want waiting ticket %d", i, pl, -1-i)
				}
			}
			order := callOneByOne(t, l, 70, t0)
			var vip, regular int64
			for k, tk := range order {
				if tk < 0 {
					vip++
					if tk != -vip {
						t.Fatalf("call %d: priority ticket %d out of order (%v)", k, tk, order)
					}
				} else {
					regular++
					if tk != regular {
						t.Fatalf("call %d: regular ticket %d out of order (%v)", k, tk, order)
					}
				}
				if regular < 40 && float64(vip) > share*float64(k+1)+1 {
					t.Fatalf("after %d calls with regular tickets waiting, %d were priority: more than the share %g (%v)", k+1, vip, share, order)
				}
			}
			if vip != 30 || regular != 40 {
				t.Fatalf("called %d priority and %d regular, want 30 and 40", vip, regular)
			}
			// With both lanes full, the lane got its share, not less.
			firstRegularRun := order[:20]
			n := 0
			for _, tk := range firstRegularRun {
				if tk < 0 {
					n++
				}
			}
			if want := int(share * 20); n < want {
				t.Fatalf("of the first 20 calls %d were priority, want at least %d", n, want)
			}
		})
	}
}

func TestInviteUsesAreCountedInTheStore(t *testing.T) {
	st, p, l := pausedLanes(t, 0.2)
	inv := invite("twice", 2)
	a := l.vip("a", inv, t0)
	b := l.vip("b", inv, t0)
	if a.Ticket != -1 || b.Ticket != -2 {
		t.Fatalf("two uses: tickets %d and %d, want -1 and -2", a.Ticket, b.Ticket)
	}
	if c := l.vip("c", inv, t0); c.Outcome != store.InviteSpent || c.Ticket != 0 {
		t.Fatalf("a third use of a two-use invite: %+v, want InviteSpent without a ticket", c)
	}
	if again := l.vip("a", inv, t0); again.Ticket != -1 || again.Outcome != store.Waiting {
		t.Fatalf("a replayed arrival: %+v, want its ticket -1", again)
	}
	if ln := l.stats(t0); ln.PriorityIssued != 2 {
		t.Fatalf("priority issued %d, want 2", ln.PriorityIssued)
	}

	// Fifty clients racing on a five-use invite get five tickets.
	race := invite("race", 5)
	var wg sync.WaitGroup
	var mu sync.Mutex
	tickets := map[int64]bool{}
	spent := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			pl, err := st.JoinPriority(ctx, "r", p, fmt.Sprint("race", i), race, t0)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Error(err)
			case pl.Outcome == store.InviteSpent:
				spent++
			default:
				tickets[pl.Ticket] = true
			}
		}(i)
	}
	wg.Wait()
	if len(tickets) != 5 || spent != 45 {
		t.Fatalf("50 racing uses of a 5-use invite: %d tickets, %d refused; want 5 and 45", len(tickets), spent)
	}

	// An expired invite's count is forgotten only after it can no longer
	// be presented (its Until plus a margin).
	old := store.Invite{ID: "old", Uses: 1, Until: t0}
	l.vip("o1", old, t0)
	if pl := l.vip("o2", old, t0.Add(30*time.Minute)); pl.Outcome != store.InviteSpent {
		t.Fatalf("half an hour past its expiry the single-use invite was used again: %+v", pl)
	}
	for _, bad := range []store.Invite{{ID: "", Uses: 1}, {ID: "x", Uses: 0}, {ID: "x", Uses: store.MaxInviteUses + 1}} {
		if _, err := st.JoinPriority(ctx, "r", p, "bad", bad, t0); err == nil {
			t.Errorf("invite %+v accepted", bad)
		}
	}
}

// TestPrioritySessionsLiveAsOthers: a called priority ticket becomes a
// session that renews and ends; a lost one is replaced in the priority lane.
func TestPrioritySessionsLiveAsOthers(t *testing.T) {
	st, _ := newStore(t)
	p := policy(0, 1, 1)
	p.PriorityShare = 0.2
	l := newLine(t, st, p)
	pl := l.vip("a", invite("i", 3), t0)
	if pl.Outcome != store.Admitted || pl.Session != fmt.Sprintf("%d.-1", pl.Line.Epoch) {
		t.Fatalf("the first priority ticket in an empty room: %+v, want admitted as session <epoch>.-1", pl)
	}
	ref := l.ref(pl, t0)
	if !l.renew(ref, t0.Add(10*time.Second)) {
		t.Fatal("a priority session did not renew")
	}
	waiting := l.vip("b", invite("i", 3), t0.Add(10*time.Second))
	if waiting.Outcome != store.Waiting || waiting.Ticket != -2 {
		t.Fatalf("a priority ticket behind a full room: %+v", waiting)
	}
	l.end(ref, t0.Add(11*time.Second))
	if pl := l.poll(-2, t0.Add(40*time.Second)); pl.Outcome != store.Admitted {
		t.Fatalf("after the session ended, the next priority ticket: %+v, want admitted", pl)
	}
	// A priority ticket that stops polling loses its place, and its poll
	// hands out no other: a new priority place costs another use of an
	// invite (JoinPriority), a regular one a join.
	gone := l.vip("c", invite("i", 3), t0.Add(41*time.Second))
	if pl := l.poll(gone.Ticket, t0.Add(41*time.Second+16*time.Minute)); pl.Outcome != store.Lost ||
		pl.Line.PriorityIssued != -gone.Ticket || pl.Line.Issued != 0 {
		t.Fatalf("a lost priority ticket %d: %+v, want lost, with no ticket handed out in either lane", gone.Ticket, pl)
	}
}

// event is a scheduled sale a day after t0: pre-queue from 10:00, start at
// 12:00, end at 14:00.
// prequeueTimeout keeps a pre-queue's tickets past event's start in the
// tests whose holders do not poll while they wait: line time follows the
// wall clock, so the default queue timeout would lapse them.
const prequeueTimeout = 4 * time.Hour

func event(id string) *store.Event {
	day := t0.Add(24 * time.Hour).Truncate(24 * time.Hour)
	return &store.Event{ID: id, PrequeueFrom: day.Add(10 * time.Hour), Starts: day.Add(12 * time.Hour), Ends: day.Add(14 * time.Hour)}
}

// TestEventTransitionsAtTheirEdges walks a sale through its life a
// millisecond either side of each time: before the pre-queue the room
// admits as usual; in the pre-queue nobody new is called, however free the
// room; at the start the pre-queue is drawn once; at the end nothing of it
// remains but the order of its tickets.
func TestEventTransitionsAtTheirEdges(t *testing.T) {
	st, _ := newStore(t)
	p := policy(0, 1, 1000)
	ev := event("sale")
	p.Event = ev
	l := newLine(t, st, p)
	l.quiet = true
	ms := time.Millisecond

	before := l.join(ev.PrequeueFrom.Add(-ms))
	if before.Outcome != store.Admitted || before.Line.Event.Phase != store.NotEntered || before.Line.Event.Commitment == "" {
		t.Fatalf("a millisecond before the pre-queue: %+v, want admitted, not entered, with the commitment shown", before)
	}
	commitment := before.Line.Event.Commitment
	first := l.join(ev.PrequeueFrom)
	if first.Outcome != store.Waiting || first.Line.Event.Phase != store.Prequeue || first.Line.Event.First != first.Ticket {
		t.Fatalf("at the pre-queue's start: %+v, want waiting as the pre-queue's first ticket", first)
	}
	for i := 0; i < 8; i++ {
		l.join(ev.Starts.Add(-ms))
	}
	last := l.join(ev.Starts.Add(-ms))
	if last.Line.Admitted != 1 || last.Line.Event.Phase != store.Prequeue || last.Line.Event.Key != "" {
		t.Fatalf("a millisecond before the start: %+v, want nobody of the pre-queue called and no key", last.Line)
	}
	if _, err := st.Admit(ctx, "r", p, 5, ev.Starts.Add(-ms)); err != nil {
		t.Fatal(err)
	}
	if ln := l.stats(ev.Starts.Add(-ms)); ln.Admitted != 1 {
		t.Fatalf("the operator's admit N called into the pre-queue: admitted %d", ln.Admitted)
	}
	drawn := l.stats(ev.Starts)
	e := drawn.Event
	if e.Phase != store.Drawn || e.DrawFirst != first.Ticket || e.DrawLast != last.Ticket || drawn.Admitted != last.Ticket {
		t.Fatalf("at the start: %+v, want tickets %d..%d drawn and called", drawn, first.Ticket, last.Ticket)
	}
	if e.Commitment != commitment || store.Commitment(e.Key) != commitment {
		t.Fatalf("the revealed key %q does not match the commitment %s", e.Key, commitment)
	}
	// Once: later calls, and arrivals, leave the draw as it was.
	after := l.join(ev.Starts.Add(time.Minute))
	if after.Line.Event.DrawFirst != e.DrawFirst || after.Line.Event.DrawLast != e.DrawLast || after.Outcome != store.Admitted {
		t.Fatalf("after the start: %+v, want the same draw and a newcomer admitted", after)
	}
	// After the end the edge passes no event: the figures go, nothing moves.
	l.p.Event = nil
	end := l.stats(ev.Ends)
	if end.Event.Phase != store.NotEntered || end.Admitted != after.Line.Admitted {
		t.Fatalf("after the end: %+v", end)
	}
}

// TestDrawOrderIsTheCommittedOne draws a pre-queue in both calling orders
// and checks the order the store called it in against package draw, given
// the revealed key: anyone can check the draw afterwards.
func TestDrawOrderIsTheCommittedOne(t *testing.T) {
	for _, window := range []time.Duration{0, time.Minute} {
		t.Run(fmt.Sprint(window), func(t *testing.T) {
			st, _ := newStore(t)
			st.RandomKey = "a secret random key for the test"
			p := policy(0, 1, 0)
			p.RandomWindow = window
			p.QueueTimeout = prequeueTimeout
			ev := event("draw")
			p.Event = ev
			l := newLine(t, st, p)
			l.quiet = true
			if _, err := st.Control(ctx, "r", p, store.Pause, ev.PrequeueFrom.Add(-time.Hour)); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 5; i++ { // before the pre-queue
				l.join(ev.PrequeueFrom.Add(-time.Hour))
			}
			for i := 0; i < 60; i++ {
				l.join(ev.PrequeueFrom.Add(time.Duration(i) * time.Minute))
			}
			ln := l.stats(ev.Starts)
			e := ln.Event
			if e.Phase != store.Drawn || e.DrawFirst != 6 || e.DrawLast != 65 {
				t.Fatalf("drawn %+v, want tickets 6..65", e)
			}
			for i := 0; i < 5; i++ { // after the start
				l.join(ev.Starts.Add(time.Second))
			}
			order := callOneByOne(t, l, 70, ev.Starts.Add(time.Second))
			want, err := draw.Order(e.Key, e.DrawFirst, e.DrawLast)
			if err != nil {
				t.Fatal(err)
			}
			if window == 0 && !slices.Equal(order[:5], []int64{1, 2, 3, 4, 5}) {
				t.Fatalf("tickets before the pre-queue were called as %v, want first, in order", order[:5])
			}
			if window > 0 {
				pre := slices.Clone(order[:5])
				sort.Slice(pre, func(i, j int) bool { return pre[i] < pre[j] })
				if !slices.Equal(pre, []int64{1, 2, 3, 4, 5}) {
					t.Fatalf("the first five calls %v, want the five tickets from before the pre-queue", order[:5])
				}
			}
			if !slices.Equal(order[5:65], want) {
				t.Fatalf("the pre-queue was called as\n%v\nthe revealed key gives\n%v", order[5:65], want)
			}
			if slices.Equal(want, slices.Sorted(slices.Values(want))) {
				t.Fatal("the draw kept arrival order")
			}
			later := slices.Clone(order[65:])
			sort.Slice(later, func(i, j int) bool { return later[i] < later[j] })
			if !slices.Equal(later, []int64{66, 67, 68, 69, 70}) {
				t.Fatalf("later arrivals were called as %v, want after the whole pre-queue", order[65:])
			}
		})
	}
}

// TestLargePrequeueIsDrawnInOneCall draws a pre-queue of more tickets than
// one call may call in: the draw itself costs nothing per ticket (the
// order is computed as tickets are called), and calling it takes bounded
// chunks, each ticket exactly once.
func TestLargePrequeueIsDrawnInOneCall(t *testing.T) {
	if testing.Short() {
		t.Skip("joins 12,000 tickets")
	}
	st, _ := newStore(t)
	p := policy(0, 1, 0)
	p.QueueTimeout = prequeueTimeout
	ev := event("big")
	p.Event = ev
	const n = 12000
	var wg sync.WaitGroup
	sem := make(chan bool, 16)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- true
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := st.Join(ctx, "r", p, store.Arrival{ID: fmt.Sprint("a", i)}, ev.PrequeueFrom.Add(time.Second)); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	ln, err := st.Stats(ctx, "r", p, ev.Starts)
	if err != nil || ln.Event.Phase != store.Drawn || ln.Event.DrawLast-ln.Event.DrawFirst+1 != n {
		t.Fatalf("draw of %d: %+v, %v", n, ln, err)
	}
	if ln.Admitted != store.MaxCallsPerOp || ln.CalledNow != store.MaxCallsPerOp {
		t.Fatalf("the drawing call called %d (admitted %d), want the bound %d", ln.CalledNow, ln.Admitted, store.MaxCallsPerOp)
	}
	if ln, err = st.Stats(ctx, "r", p, ev.Starts.Add(time.Second)); err != nil || ln.Admitted != n {
		t.Fatalf("the next call: admitted %d, %v; want all %d", ln.Admitted, err, n)
	}
	if got := len(calledSet(t, st)); got != n {
		t.Fatalf("%d distinct tickets called, want %d", got, n)
	}
}

// TestRemovedEventIsDrawnAtItsStart: a call without the event (a stray
// one, or after the operator removed it) neither draws the pre-queue early
// nor holds it for ever: it is drawn at the start it was entered with.
func TestRemovedEventIsDrawnAtItsStart(t *testing.T) {
	st, _ := newStore(t)
	p := policy(0, 1, 0)
	ev := event("removed")
	p.Event = ev
	l := newLine(t, st, p)
	l.quiet = true
	for i := 0; i < 3; i++ {
		l.join(ev.PrequeueFrom)
	}
	l.p.Event = nil
	if ln := l.stats(ev.Starts.Add(-time.Millisecond)); ln.Admitted != 0 {
		t.Fatalf("a call without the event before its start: admitted %d, want the pre-queue held", ln.Admitted)
	}
	if ln := l.stats(ev.Starts); ln.Admitted != 3 {
		t.Fatalf("at the start, without the event: admitted %d, want the pre-queue drawn and called", ln.Admitted)
	}
}

// TestPrequeueHoldsThePriorityLane: invited visitors wait for the start too.
func TestPrequeueHoldsThePriorityLane(t *testing.T) {
	st, _ := newStore(t)
	p := policy(0, 1, 0)
	p.PriorityShare = 0.5
	p.QueueTimeout = prequeueTimeout
	ev := event("vip")
	p.Event = ev
	l := newLine(t, st, p)
	l.quiet = true
	if pl := l.vip("v", invite("i", 1), ev.PrequeueFrom); pl.Outcome != store.Waiting {
		t.Fatalf("a priority join in the pre-queue: %+v, want waiting", pl)
	}
	if pl := l.poll(-1, ev.Starts); pl.Outcome != store.Admitted {
		t.Fatalf("the priority ticket at the start: %+v, want admitted", pl)
	}
}
