package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/native"
	"github.com/edgequeue/waitingroom/tools/redistest"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func newStore(t testing.TB) (*store.Upstash, *upstashdev.Server) {
	t.Helper()
	srv, url := redistest.Upstash(t)
	return &store.Upstash{URL: url, Token: redistest.Token, Transport: native.Upstash{}, Timeout: 10 * time.Second}, srv
}

var ctx = context.Background()

// heartbeat is how long a session pass admits without asking the store.
const heartbeat = 20 * time.Second

// policy is a room's policy with the default windows.
func policy(perMinute float64, burst, capacity int) store.Policy {
	return store.Policy{PerMinute: perMinute, Burst: burst, Capacity: capacity,
		ClaimWindow: 30 * time.Second, SessionTTL: 90 * time.Second, QueueTimeout: 15 * time.Minute,
		CatchUp: 30 * time.Second}
}

// line drives one room in virtual time. Unless quiet, it keeps the room
// busy as a real one is: between the test's calls it makes a Stats call
// every few seconds, so the script's line time keeps up with the clock.
type line struct {
	t       testing.TB
	st      *store.Upstash
	p       store.Policy
	quiet   bool
	arrival int
	epoch   int64
	last    time.Time
}

func newLine(t testing.TB, st *store.Upstash, p store.Policy) *line {
	return &line{t: t, st: st, p: p}
}

// at brings the room's clock to now through calls no further apart than
// the script's step.
func (l *line) at(now time.Time) {
	l.t.Helper()
	if !l.quiet && !l.last.IsZero() {
		for next := l.last.Add(4 * time.Second); next.Before(now); next = next.Add(4 * time.Second) {
			if _, err := l.st.Stats(ctx, "r", l.p, next); err != nil {
				l.t.Fatal(err)
			}
		}
	}
	if now.After(l.last) {
		l.last = now
	}
}

func (l *line) check(pl store.Place, err error) store.Place {
	l.t.Helper()
	if err != nil {
		l.t.Fatal(err)
	}
	l.epoch = pl.Line.Epoch
	return pl
}

// join is a newcomer's first request, with an arrival id of its own.
func (l *line) join(now time.Time) store.Place {
	l.t.Helper()
	l.arrival++
	return l.joinAs(fmt.Sprint("a", l.arrival), now)
}

func (l *line) joinAs(arrival string, now time.Time) store.Place {
	l.t.Helper()
	l.at(now)
	return l.check(l.st.Join(ctx, "r", l.p, store.Arrival{ID: arrival}, now))
}

func (l *line) poll(ticket int64, now time.Time) store.Place {
	l.t.Helper()
	l.at(now)
	return l.check(l.st.Poll(ctx, "r", l.p, store.Ticket{Number: ticket, Epoch: l.epoch}, now))
}

// ref is the session of pl, as a pass issued at issued carries it.
func (l *line) ref(pl store.Place, issued time.Time) store.SessionRef {
	return store.SessionRef{ID: pl.Session, Epoch: pl.Line.Epoch, UsableUntil: issued.Add(heartbeat)}
}

func (l *line) renew(s store.SessionRef, now time.Time) bool {
	l.t.Helper()
	l.at(now)
	ok, _, err := l.st.Renew(ctx, "r", l.p, s, now)
	if err != nil {
		l.t.Fatal(err)
	}
	return ok
}

func (l *line) end(s store.SessionRef, now time.Time) store.Line {
	l.t.Helper()
	l.at(now)
	ln, err := l.st.End(ctx, "r", l.p, s, now)
	if err != nil {
		l.t.Fatal(err)
	}
	return ln
}

func (l *line) stats(now time.Time) store.Line {
	l.t.Helper()
	l.at(now)
	ln, err := l.st.Stats(ctx, "r", l.p, now)
	if err != nil {
		l.t.Fatal(err)
	}
	return ln
}

func TestRateAdmitsFromElapsedTime(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(60, 2, 0))
	var last store.Place
	for i := int64(1); i <= 10; i++ {
		if last = l.join(t0); last.Ticket != i {
			t.Fatalf("join %d got ticket %d", i, last.Ticket)
		}
	}
	if last.Line.Admitted != 2 {
		t.Fatalf("a fresh room admits its burst (2) at once; admitted %d", last.Line.Admitted)
	}
	steps := []struct {
		after time.Duration
		want  int64
	}{
		{500 * time.Millisecond, 2}, // half a token: nobody new
		{time.Second, 3},            // one token per second at 60/min
		{5 * time.Second, 7},        // a sparse poll loses nothing
		{time.Minute, 10},           // everyone left in line, no more
	}
	l.quiet = true
	for _, s := range steps {
		// Ticket 10 keeps polling, so the line is not abandoned.
		pl := l.poll(10, t0.Add(s.after))
		if pl.Line.Admitted != s.want {
			t.Fatalf("after %v: admitted %d, want %d", s.after, pl.Line.Admitted, s.want)
		}
	}
	// An idle hour saved up only the burst: of 5 newcomers after it, 2 go in.
	var admitted int
	for i := 0; i < 5; i++ {
		if l.join(t0.Add(time.Hour)).Outcome == store.Admitted {
			admitted++
		}
	}
	if admitted != 2 {
		t.Fatalf("after an idle hour %d were admitted at once, want the burst of 2", admitted)
	}
}

// TestCatchUpIsBounded: a rate room nobody called for ten minutes calls
// its burst plus the catch-up's worth, not ten minutes of visitors at once.
func TestCatchUpIsBounded(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(60, 10, 0))
	l.quiet = true
	for i := 0; i < 1000; i++ {
		l.join(t0)
	}
	pl := l.poll(1000, t0.Add(10*time.Minute))
	// 10 of the burst at once, then 10 more of the burst and 30 s at 1/s.
	if pl.Line.Admitted != 50 || pl.Line.CalledNow != 40 {
		t.Fatalf("after ten quiet minutes: admitted %d (%d by this call), want 50 (40): burst 10 plus 30 s of catch-up",
			pl.Line.Admitted, pl.Line.CalledNow)
	}
}

func TestCapacityIsFreedBySessionsEndingAndExpiring(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(0, 1, 2))
	a, b := l.join(t0), l.join(t0)
	c := l.join(t0)
	if a.Outcome != store.Admitted || b.Outcome != store.Admitted || c.Outcome != store.Waiting {
		t.Fatalf("capacity 2: outcomes %v %v %v, want admitted, admitted, waiting", a.Outcome, b.Outcome, c.Outcome)
	}
	if a.Session == "" || a.Session == b.Session {
		t.Fatalf("sessions %q and %q: want two distinct ones", a.Session, b.Session)
	}
	if c.Line.Active != 2 {
		t.Fatalf("active %d, want 2", c.Line.Active)
	}
	if pl := l.poll(c.Ticket, t0.Add(10*time.Second)); pl.Outcome != store.Waiting {
		t.Fatalf("nobody left, yet ticket 3 is %v", pl.Outcome)
	}
	// The first visitor leaves (beacon) once their pass has lapsed: the
	// place goes to ticket 3.
	l.end(l.ref(a, t0), t0.Add(20*time.Second))
	c = l.poll(c.Ticket, t0.Add(21*time.Second))
	if c.Outcome != store.Admitted || c.Line.Active != 2 {
		t.Fatalf("after a departure: %+v, want ticket 3 admitted with 2 active", c)
	}
	// A renewed session stays; a silent one lapses after the session TTL.
	if !l.renew(l.ref(b, t0.Add(60*time.Second)), t0.Add(80*time.Second)) {
		t.Fatal("a live session was not renewed")
	}
	d := l.join(t0.Add(100 * time.Second))
	if d.Outcome != store.Waiting {
		t.Fatalf("a newcomer got in while 2 sessions were live: %+v", d)
	}
	// The session admitted at 21 s (TTL 90 s) lapses at 111 s; b was
	// renewed at 80 s and lives to 170 s.
	if pl := l.poll(d.Ticket, t0.Add(112*time.Second)); pl.Outcome != store.Admitted || pl.Line.Active != 2 {
		t.Fatalf("after an inactive session lapsed: %+v", pl)
	}
	if l.renew(l.ref(a, t0.Add(100*time.Second)), t0.Add(113*time.Second)) {
		t.Fatal("an ended session was renewed")
	}
}

func TestCalledVisitorWhoNeverComesFreesThePlace(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(0, 1, 1))
	first := l.join(t0) // ticket 1: admitted
	no := l.join(t0)    // ticket 2: waits
	late := l.join(t0)  // ticket 3: waits
	l.end(l.ref(first, t0.Add(-heartbeat)), t0.Add(time.Second))
	// Ticket 2 is called at once but never claims; its place is held for
	// the claim window, then goes to ticket 3.
	if pl := l.poll(late.Ticket, t0.Add(20*time.Second)); pl.Outcome != store.Waiting || pl.Line.Called != 1 {
		t.Fatalf("inside ticket 2's claim window: %+v", pl)
	}
	if pl := l.poll(late.Ticket, t0.Add(32*time.Second)); pl.Outcome != store.Admitted {
		t.Fatalf("after ticket 2's claim window: %+v, want ticket 3 admitted", pl)
	}
	// Ticket 2 comes back too late: its place is lost, and no new one is
	// handed out by the poll (the edge sends its holder to join again).
	pl := l.poll(no.Ticket, t0.Add(40*time.Second))
	if pl.Outcome != store.Lost || pl.Line.Issued != 3 {
		t.Fatalf("late ticket 2: %+v, want lost, with no new ticket", pl)
	}
}

func TestVisitorWhoStopsPollingLosesThePlace(t *testing.T) {
	st, _ := newStore(t)
	p := policy(0, 1, 1)
	p.QueueTimeout = time.Minute
	l := newLine(t, st, p)
	first := l.join(t0) // ticket 1, admitted
	gone := l.join(t0)  // ticket 2, stops polling
	stays := l.join(t0) // ticket 3, polls
	l.poll(stays.Ticket, t0.Add(50*time.Second))
	l.end(l.ref(first, t0.Add(30*time.Second)), t0.Add(70*time.Second))
	// Ticket 2 has not polled for 70 s (> the 60 s queue timeout): it is
	// passed over without holding the place, and ticket 3 goes in at once.
	pl := l.poll(stays.Ticket, t0.Add(75*time.Second))
	if pl.Outcome != store.Admitted || pl.Line.Called != 0 {
		t.Fatalf("ticket 3 after ticket 2 left the line: %+v", pl)
	}
	if pl := l.poll(gone.Ticket, t0.Add(80*time.Second)); pl.Outcome != store.Lost || pl.Line.Issued != 3 {
		t.Fatalf("ticket 2 back after its queue timeout: %+v, want lost, with no new ticket", pl)
	}
}

func TestOperatorControls(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(1, 1, 0))
	for i := 0; i < 20; i++ {
		l.join(t0)
	}
	ln, err := st.Admit(ctx, "r", l.p, 5, t0)
	if err != nil || ln.Admitted != 6 || ln.CalledNow != 5 {
		t.Fatalf("admit 5 after the burst of 1: admitted %d (%d now), %v; want 6 (5)", ln.Admitted, ln.CalledNow, err)
	}
	if ln, _ = st.Admit(ctx, "r", l.p, 1000, t0); ln.Admitted != 20 || ln.CalledNow != 14 {
		t.Fatalf("admit past the end: admitted %d (%d now), want all 20 (14)", ln.Admitted, ln.CalledNow)
	}
	for i := 0; i < 5; i++ {
		l.join(t0)
	}
	if ln, _ = st.Control(ctx, "r", l.p, store.Pause, t0); !ln.Paused {
		t.Fatal("not paused")
	}
	if pl := l.poll(25, t0.Add(10*time.Minute)); pl.Line.Admitted != 20 {
		t.Fatalf("a paused room called up to %d", pl.Line.Admitted)
	}
	if ln, _ = st.Admit(ctx, "r", l.p, 2, t0.Add(10*time.Minute)); ln.Admitted != 22 {
		t.Fatalf("admit N while paused: admitted %d, want 22", ln.Admitted)
	}
	// Queue-all: called visitors are held too, without losing their place.
	if ln, _ = st.Control(ctx, "r", l.p, store.QueueAll, t0.Add(10*time.Minute)); !ln.QueueAll {
		t.Fatal("not queueing all")
	}
	// Ticket 21 was called at 10 min with a 30 s claim window; polling
	// under queue-all holds the call past the window.
	for _, at := range []time.Duration{10*time.Minute + 20*time.Second, 10*time.Minute + 45*time.Second} {
		if pl := l.poll(21, t0.Add(at)); pl.Outcome != store.Waiting || pl.Ticket != 21 {
			t.Fatalf("a called ticket under queue-all at %v: %+v, want held (waiting, same ticket)", at, pl)
		}
	}
	resumed := t0.Add(11 * time.Minute)
	l.at(resumed)
	if ln, _ = st.Control(ctx, "r", l.p, store.Resume, resumed); ln.Paused || ln.QueueAll || ln.Admitted != 23 {
		t.Fatalf("resume: %+v, want unpaused with the burst of 1 called", ln)
	}
	if pl := l.poll(21, resumed); pl.Outcome != store.Admitted {
		t.Fatalf("the held ticket after resume: %+v", pl)
	}
	if _, err := st.Control(ctx, "r", l.p, store.Control("explode"), t0); !errors.Is(err, store.ErrRejected) {
		t.Fatalf("unknown control: %v", err)
	}
}

func TestRecentAdmissionsAreCounted(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(0, 1, 0))
	l.quiet = true
	pl := l.join(t0)
	if pl.Line.Recent != 1 || !pl.Line.RecentSince.Equal(t0) {
		t.Fatalf("recent %d since %v, want 1 since the line began", pl.Line.Recent, pl.Line.RecentSince)
	}
	for i := 0; i < 4; i++ {
		l.join(t0.Add(time.Duration(i) * time.Minute))
	}
	if pl = l.join(t0.Add(10 * time.Minute)); pl.Line.Recent != 1 {
		t.Fatalf("ten minutes on, %d admissions counted as recent, want only the last one", pl.Line.Recent)
	}
	// Admissions in many minutes, with long idle gaps, leave a bounded hash.
	for i := 0; i < 12; i++ {
		l.join(t0.Add(time.Duration(11+10*i) * time.Minute))
	}
	var hlen int
	do(t, st, &hlen, "HLEN", st.Keys("r")[0])
	if hlen > 38 {
		t.Fatalf("the line's hash after admissions across two hours has %d fields, want at most 38 (33 of state, 5 minute slots)", hlen)
	}
}

func TestEpochIsStableAndChangesWhenStateIsLost(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(1, 1, 0))
	first, again := l.join(t0), l.join(t0.Add(time.Minute))
	if first.Line.Epoch == 0 || first.Line.Epoch != again.Line.Epoch {
		t.Fatalf("epochs %d then %d: want one stable non-zero epoch", first.Line.Epoch, again.Line.Epoch)
	}
	flush(t, st)
	pl := l.poll(again.Ticket, t0.Add(2*time.Minute))
	if pl.Line.Epoch == first.Line.Epoch || pl.Outcome != store.Lost || pl.Line.Issued != 0 {
		t.Fatalf("a ticket from the lost line: %+v, want it lost in a new, empty epoch", pl)
	}
	if l.renew(l.ref(first, t0), t0.Add(2*time.Minute)) {
		t.Fatal("a session of the lost line was renewed in the new one")
	}
}

// TestLostLineStartsClean: when a room's hash is lost (evicted, or deleted
// by hand) but its sets are not, the new line must not inherit them: its
// ticket 1 is not the old line's waiting ticket 1, nor its session.
func TestLostLineStartsClean(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(0, 1, 1))
	l.join(t0)
	l.join(t0)
	do(t, st, nil, "DEL", st.Keys("r")[0])
	pl := l.join(t0.Add(time.Second))
	if pl.Ticket != 1 || pl.Outcome != store.Admitted || pl.Line.Active != 1 || pl.Line.Waiting() != 0 {
		t.Fatalf("the first newcomer of a line whose hash was lost: %+v, want ticket 1 admitted, alone", pl)
	}
}

// flush empties Redis behind the stand-in, as a lost database would.
func flush(t *testing.T, st *store.Upstash) {
	t.Helper()
	do(t, st, nil, "FLUSHALL")
}

// do sends one command to the stand-in and decodes its result into out.
func do(t testing.TB, st *store.Upstash, out any, args ...any) {
	t.Helper()
	if err := doErr(st, out, args...); err != nil {
		t.Fatal(err)
	}
}

func doErr(st *store.Upstash, out any, args ...any) error {
	body, err := json.Marshal(args)
	if err != nil {
		return err
	}
	r, err := native.Upstash{}.RoundTrip(ctx, store.Request{URL: st.URL + "/", Header: map[string]string{"Authorization": "Bearer " + st.Token}, Body: body})
	if err != nil {
		return err
	}
	var a struct {
		Result json.RawMessage
		Error  string
	}
	if err := json.Unmarshal(r.Body, &a); err != nil {
		return fmt.Errorf("%s: HTTP %d %s", args[0], r.Status, r.Body)
	}
	if a.Error != "" {
		return fmt.Errorf("%s: HTTP %d: %s", args[0], r.Status, a.Error)
	}
	if out != nil {
		return json.Unmarshal(a.Result, out)
	}
	return nil
}

func TestScriptCacheLossFallsBackToEval(t *testing.T) {
	st, srv := newStore(t)
	l := newLine(t, st, policy(1, 1, 0))
	l.join(t0)
	do(t, st, nil, "SCRIPT", "FLUSH")
	srv.ResetStats()
	if pl := l.join(t0); pl.Ticket != 2 {
		t.Fatalf("join after SCRIPT FLUSH: %+v", pl)
	}
	if c := srv.Stats().Commands; c["EVALSHA"] != 1 || c["EVAL"] != 1 {
		t.Fatalf("commands %v: want one EVALSHA refused, then one EVAL", c)
	}
	srv.ResetStats()
	l.join(t0)
	if c := srv.Stats().Commands; c["EVALSHA"] != 1 || c["EVAL"] != 0 {
		t.Fatalf("commands %v: once cached again, one EVALSHA only", c)
	}
}

func TestStoreErrors(t *testing.T) {
	st, srv := newStore(t)
	p := policy(1, 1, 0)
	badToken := *st
	badToken.Token = "wrong"
	if _, err := badToken.Join(ctx, "r", p, store.Arrival{ID: "s"}, t0); !errors.Is(err, store.ErrUnauthorized) {
		t.Fatalf("wrong token: %v, want ErrUnauthorized", err)
	}
	nowhere := *st
	nowhere.URL = "http://127.0.0.1:1"
	if _, err := nowhere.Join(ctx, "r", p, store.Arrival{ID: "s"}, t0); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("unreachable: %v, want ErrUnavailable", err)
	}
	short := *st
	short.Timeout = 200 * time.Millisecond
	for _, f := range []upstashdev.Faults{{Status: 500}, {Status: 502}, {Drop: true}, {LatencyMS: 3000}} {
		srv.SetFaults(f)
		if _, err := short.Stats(ctx, "r", p, t0); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("fault %+v: %v, want ErrUnavailable", f, err)
		}
	}
	srv.SetFaults(upstashdev.Faults{})
	if _, err := st.Stats(ctx, "r", p, t0); err != nil {
		t.Fatalf("after the faults clear: %v", err)
	}
}

// TestConcurrentJoinsAreDistinctGaplessAndAdmittedInOrder has many visitors
// join at once, then admits them in rounds while each polls concurrently,
// and checks no visitor is ever admitted before one holding a lower ticket.
func TestConcurrentJoinsAreDistinctGaplessAndAdmittedInOrder(t *testing.T) {
	st, _ := newStore(t)
	p := policy(0.01, 1, 0)
	const n = 1000
	tickets := make([]int64, n)
	round := make([]int, n) // the round in which each visitor saw itself called
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			pl, err := st.Join(ctx, "r", p, store.Arrival{ID: fmt.Sprint("a", i)}, t0)
			if err != nil {
				t.Error(err)
			}
			tickets[i] = pl.Ticket
			if pl.Outcome == store.Admitted {
				round[i] = 1 // the burst, before any round
			}
		}(i)
	}
	wg.Wait()
	sorted := append([]int64(nil), tickets...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a] < sorted[b] })
	for i, tk := range sorted {
		if tk != int64(i+1) {
			t.Fatalf("sorted tickets[%d] = %d: tickets are not 1..%d without gaps or repeats", i, tk, n)
		}
	}
	ln, err := st.Stats(ctx, "r", p, t0)
	if err != nil {
		t.Fatal(err)
	}
	ep := ln.Epoch
	for r := 2; ; r++ {
		if _, err := st.Admit(ctx, "r", p, 37, t0); err != nil {
			t.Fatal(err)
		}
		done := true
		for i := 0; i < n; i++ {
			if round[i] != 0 {
				continue
			}
			done = false
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				pl, err := st.Poll(ctx, "r", p, store.Ticket{Number: tickets[i], Epoch: ep}, t0)
				if err != nil {
					t.Error(err)
					return
				}
				if pl.Outcome == store.Admitted {
					round[i] = r
				}
			}(i)
		}
		wg.Wait()
		if done || t.Failed() {
			break
		}
	}
	byTicket := make([]int, n+1)
	for i, tk := range tickets {
		byTicket[tk] = round[i]
	}
	for tk := 2; tk <= n; tk++ {
		if byTicket[tk] < byTicket[tk-1] {
			t.Fatalf("ticket %d was admitted in round %d, before ticket %d (round %d)", tk, byTicket[tk], tk-1, byTicket[tk-1])
		}
	}
}

func TestRandomOrderWithinWindows(t *testing.T) {
	st, _ := newStore(t)
	st.RandomKey = "test key"
	p := policy(0.01, 1, 0)
	p.RandomWindow = time.Minute
	l := newLine(t, st, p)
	var tickets []int64
	for i := 0; i < 100; i++ { // window 1: the first minute (ticket 1 takes the burst)
		tickets = append(tickets, l.join(t0.Add(time.Duration(i)*500*time.Millisecond)).Ticket)
	}
	// A window runs from its first arrival (ticket 2, at 0.5 s) for a
	// minute; window 2 begins with the first arrival after that.
	for i := 0; i < 100; i++ {
		tickets = append(tickets, l.join(t0.Add(61*time.Second+time.Duration(i)*500*time.Millisecond)).Ticket)
	}
	now := t0.Add(2*time.Minute + time.Second)
	l.at(now)
	order := map[int64]int{} // ticket -> round it was called in
	order[1] = 0
	for round := 1; len(order) < len(tickets); round++ {
		if round > 50 {
			t.Fatalf("after 50 rounds of admit 5, %d of %d called", len(order), len(tickets))
		}
		if _, err := st.Admit(ctx, "r", p, 5, now); err != nil {
			t.Fatal(err)
		}
		for _, tk := range tickets {
			if _, done := order[tk]; done {
				continue
			}
			if l.poll(tk, now).Outcome == store.Admitted {
				order[tk] = round
			}
		}
	}
	lastOfFirst, firstOfSecond := 0, 1<<30
	inversions := 0
	for i, a := range tickets {
		if i < 100 && order[a] > lastOfFirst {
			lastOfFirst = order[a]
		}
		if i >= 100 && order[a] < firstOfSecond {
			firstOfSecond = order[a]
		}
		if i < 100 {
			for _, b := range tickets[i+1 : 100] {
				if order[b] < order[a] {
					inversions++
				}
			}
		}
	}
	if lastOfFirst > firstOfSecond {
		t.Fatalf("a visitor of the second window (round %d) was called before one of the first (round %d)", firstOfSecond, lastOfFirst)
	}
	// 100 visitors in 20 rounds of 5: a first-come order has no pairs out
	// of order; a random one has about 2,400 of the 4,950.
	if inversions < 1000 {
		t.Fatalf("only %d of 4,950 pairs in the first window were called out of arrival order: not random", inversions)
	}
}

func TestRandomWindowStillFillingIsCut(t *testing.T) {
	st, _ := newStore(t)
	st.RandomKey = "k"
	p := policy(0, 1, 3)
	p.RandomWindow = time.Minute
	l := newLine(t, st, p)
	var admitted int
	for i := 0; i < 3; i++ {
		if l.join(t0.Add(time.Duration(i)*time.Second)).Outcome == store.Admitted {
			admitted++
		}
	}
	if admitted != 3 {
		t.Fatalf("a room with 3 free places admitted %d of 3 newcomers at once: the filling window must not hold them", admitted)
	}
	if pl := l.join(t0.Add(4 * time.Second)); pl.Outcome != store.Waiting {
		t.Fatalf("the fourth visitor in a full room: %+v", pl)
	}
}

// TestRandomGroupFigures checks what a random room tells a visitor: the
// calling positions of their group (window) and how many groups are
// called before it. Ticket minus admitted is not the truth there.
func TestRandomGroupFigures(t *testing.T) {
	st, _ := newStore(t)
	st.RandomKey = "k"
	p := policy(0, 1, 0)
	p.RandomWindow = 10 * time.Second
	l := newLine(t, st, p)
	if _, err := st.Control(ctx, "r", p, store.Pause, t0); err != nil {
		t.Fatal(err)
	}
	l.last = t0
	// Windows of 5 arrivals each, 12 s apart: 1-5, 6-10, 11-15, then
	// 16-17 still filling.
	var pls []store.Place
	for w := 0; w < 4; w++ {
		for i := 0; i < 5 && len(pls) < 17; i++ {
			pls = append(pls, l.join(t0.Add(time.Duration(w)*12*time.Second+time.Duration(i)*time.Second)))
		}
	}
	if _, err := st.Admit(ctx, "r", p, 2, l.last); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ticket       int64
		from, to, gs int64
	}{
		{3, 1, 5, 0},    // in the window being called
		{6, 6, 10, 1},   // the next: the called one is ahead
		{10, 6, 10, 1},  //
		{13, 11, 15, 2}, // two ahead
		{17, 16, 17, 3}, // the window still filling: all three ahead
	}
	for _, tc := range tests {
		pl := l.poll(tc.ticket, l.last)
		if pl.Ticket != tc.ticket {
			t.Fatalf("ticket %d lost its place: %+v", tc.ticket, pl)
		}
		if pl.Outcome == store.Admitted {
			continue // one of the two called
		}
		if pl.CallFrom != tc.from || pl.CallTo != tc.to || pl.GroupsAhead != tc.gs {
			t.Errorf("ticket %d: group %d-%d with %d ahead, want %d-%d with %d ahead",
				tc.ticket, pl.CallFrom, pl.CallTo, pl.GroupsAhead, tc.from, tc.to, tc.gs)
		}
	}
	// First-come order: the group is the ticket itself.
	st2, _ := newStore(t)
	fifo := newLine(t, st2, policy(0, 1, 1))
	fifo.join(t0)
	if pl := fifo.join(t0); pl.CallFrom != 2 || pl.CallTo != 2 || pl.GroupsAhead != 0 {
		t.Errorf("first come: %+v, want the group 2-2 with none ahead", pl)
	}
}

// TestKeysShareARoomsSlot: every key a room's operations leave in Redis is
// one of Keys(room), and all of them carry the room as a hash tag, so they
// share a cluster slot and Upstash can lock just them.
func TestKeysShareARoomsSlot(t *testing.T) {
	st, _ := newStore(t)
	st.RandomKey = "k"
	p := policy(0, 1, 1)
	p.RandomWindow = time.Second
	l := newLine(t, st, p)
	a := l.join(t0)
	for i := 0; i < 5; i++ {
		l.join(t0.Add(time.Duration(i) * 2 * time.Second))
	}
	l.end(l.ref(a, t0.Add(10*time.Second)), t0.Add(10*time.Second))
	var keys []string
	do(t, st, &keys, "KEYS", "*")
	want := map[string]bool{}
	for _, k := range st.Keys("r") {
		if !strings.Contains(k, "{r}") {
			t.Errorf("key %q has no {r} hash tag", k)
		}
		want[k] = true
	}
	if len(keys) < 6 {
		t.Errorf("keys %q: want the line, sessions, called or waiting, arrivals, ended and windows", keys)
	}
	for _, k := range keys {
		if !want[k] {
			t.Errorf("key %q is not one of %q", k, st.Keys("r"))
		}
	}
}

// snapshot is everything a room holds in Redis.
func snapshot(t *testing.T, st *store.Upstash) string {
	t.Helper()
	var b strings.Builder
	for i, k := range st.Keys("r") {
		var v []string
		switch i {
		case 0, 8:
			do(t, st, &v, "HGETALL", k)
		case 9:
			do(t, st, &v, "LRANGE", k, 0, -1)
		default:
			do(t, st, &v, "ZRANGE", k, 0, -1, "WITHSCORES")
		}
		fmt.Fprintf(&b, "%s %q\n", k, v)
	}
	return b.String()
}

// TestBadCallsWriteNothing sends the script calls no client of ours sends
// (an unknown op, arguments that are not numbers, an admission above the
// bound) to a room with visitors waiting an hour, and checks that each is
// refused and that the room is exactly as it was: nothing expired, nothing
// called, no clock moved.
func TestBadCallsWriteNothing(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(60, 1, 0))
	for i := 0; i < 20; i++ {
		l.join(t0)
	}
	source, err := os.ReadFile("../../../store/line.lua")
	if err != nil {
		t.Fatal(err)
	}
	later := strconv.FormatInt(t0.Add(time.Hour).UnixMilli(), 10)
	// The header (store/genline/protocol.go): op, now, rate, burst,
	// capacity, claim, session, queue, window, catch-up,
	// heartbeat, share, mode, random key, event name, pre-queue, start,
	// end, draw key, refused, shard, shards, failed at.
	good := []string{"stats", later, "60", "1", "0", "30000", "90000", "900000", "0", "30000",
		"20000", "0.2", "fifo", "", "", "0", "0", "0", "", "0", "0", "1", "0"}
	tests := []struct {
		name string
		at   int // the header's argument changed, or -1
		to   string
		op   string   // the op, when not stats
		tail []string // its tail
	}{
		{name: "unknown op", at: 0, to: "explode"},
		{name: "op with a newline", at: 0, to: "admit\n"},
		{name: "now not a number", at: 1, to: "soon"},
		{name: "now not a number at all", at: 1, to: "nan"},
		{name: "now infinite", at: 1, to: "inf"},
		{name: "now negative", at: 1, to: "-5"},
		{name: "rate negative", at: 2, to: "-60"},
		{name: "burst fractional", at: 3, to: "1.5"},
		{name: "capacity negative", at: 4, to: "-1"},
		{name: "claim window empty", at: 5, to: ""},
		{name: "session ttl hex", at: 6, to: "0x10000000000000000000"},
		{name: "random window negative", at: 8, to: "-1"},
		{name: "catch-up not a number", at: 9, to: "x"},
		{name: "mode unknown", at: 12, to: "lifo"},
		{name: "event without a draw key", at: 14, to: "sale"},
		{name: "no shards", at: 21, to: "0"},
		{name: "a shard past the last", at: 20, to: "1"},
		{name: "a shard fractional", at: 20, to: "0.5"},
		{name: "ticket fractional", at: -1, op: "poll", tail: []string{"2.5", "1"}},
		{name: "epoch negative", at: -1, op: "poll", tail: []string{"2", "-1"}},
		{name: "failed at not a number", at: 22, to: "x"},
		{name: "usable until negative", at: -1, op: "end", tail: []string{"2", "1", "-1"}},
		{name: "audit entry too long", at: -1, op: "pause", tail: []string{strings.Repeat("x", 1025)}},
		{name: "rate override negative", at: -1, op: "limits", tail: []string{"", "-1", "", "", ""}},
		{name: "burst override fractional", at: -1, op: "limits", tail: []string{"", "", "1.5", "", ""}},
		{name: "capacity override hex", at: -1, op: "limits", tail: []string{"", "", "", "0x10", ""}},
		{name: "mode override unknown", at: -1, op: "limits", tail: []string{"", "", "", "", "open"}},
		{name: "limits with nothing to set", at: -1, op: "limits", tail: []string{"", "", "", "", ""}},
		{name: "admit above the bound", at: -1, op: "admit", tail: []string{"10001", ""}},
		{name: "join without an arrival", at: -1, op: "join", tail: []string{""}},
		{name: "a tail too short", at: -1, op: "poll", tail: []string{"2"}},
		{name: "a tail too long", at: -1, op: "stats", tail: []string{"x"}},
		{name: "a header too short", at: -2},
	}
	before := snapshot(t, st)
	for _, tc := range tests {
		args := append([]string(nil), good...)
		switch {
		case tc.at >= 0:
			args[tc.at] = tc.to
		case tc.at == -2:
			args = args[:13]
		default:
			args[0] = tc.op
			args = append(args, tc.tail...)
		}
		cmd := []any{"EVAL", string(source), len(st.Keys("r"))}
		for _, k := range st.Keys("r") {
			cmd = append(cmd, k)
		}
		for _, a := range args {
			cmd = append(cmd, a)
		}
		if err := doErr(st, nil, cmd...); err == nil || !strings.Contains(err.Error(), "ERR line:") {
			t.Errorf("%s: %v, want the script's refusal", tc.name, err)
		}
		if after := snapshot(t, st); after != before {
			t.Fatalf("%s changed the room:\nbefore %s\nafter  %s", tc.name, before, after)
		}
	}
	call := []any{"EVAL", string(source), len(st.Keys("r"))}
	for _, a := range append(st.Keys("r"), good...) {
		call = append(call, a)
	}
	if err := doErr(st, nil, call...); err != nil {
		t.Errorf("the good call the bad ones vary: %v", err)
	}
	if _, err := st.Admit(ctx, "r", l.p, store.MaxCallsPerOp+1, t0); !errors.Is(err, store.ErrRejected) {
		t.Errorf("admit %d: %v, want ErrRejected", store.MaxCallsPerOp+1, err)
	}
}

// TestOutageCostsNoPlace: after a gap longer than the claim window, the
// queue timeout and the session TTL (a store outage), the first calls find
// every visitor where they were: the waiting one still waits with the same
// ticket, the called one can claim, the session renews. The edge saw the
// store fail (its POP's down marker, store.Policy.FailedAt) and says so
// on its first call that succeeds: nothing else tells the store that the
// silence was an outage.
func TestOutageCostsNoPlace(t *testing.T) {
	st, _ := newStore(t)
	p := policy(0, 1, 2)
	p.QueueTimeout = time.Minute
	l := newLine(t, st, p)
	in := l.join(t0)      // ticket 1: admitted, stays
	out := l.join(t0)     // ticket 2: admitted, leaves
	called := l.join(t0)  // ticket 3: waits, then is called
	waiting := l.join(t0) // ticket 4: waits
	l.poll(called.Ticket, t0.Add(3*time.Second))
	l.poll(waiting.Ticket, t0.Add(3*time.Second))
	// Ticket 2's holder leaves: ticket 3 is called at 4 s.
	if ln := l.end(l.ref(out, t0.Add(-heartbeat)), t0.Add(4*time.Second)); ln.Called != 1 {
		t.Fatalf("after a departure: %+v, want ticket 3 called", ln)
	}
	back := t0.Add(10 * time.Minute)
	l.quiet = true
	l.p.FailedAt = t0.Add(time.Minute) // a poll that timed out
	if pl := l.poll(waiting.Ticket, back); pl.Outcome != store.Waiting || pl.Ticket != waiting.Ticket {
		t.Errorf("the waiting visitor after the outage: %+v, want still waiting with ticket %d", pl, waiting.Ticket)
	}
	if pl := l.poll(called.Ticket, back.Add(time.Second)); pl.Outcome != store.Admitted || pl.Ticket != called.Ticket {
		t.Errorf("the called visitor after the outage: %+v, want admitted with ticket %d", pl, called.Ticket)
	}
	if !l.renew(l.ref(in, t0), back.Add(2*time.Second)) {
		t.Error("the admitted visitor's session was lost to the outage")
	}
}

// TestClockAnHourAheadCallsNoHourOfRate: one call stamped an hour ahead
// (an edge with a wrong clock) must not call an hour of rate at once;
// calls with the right time afterwards go on as before. (Line time counts
// the hour: nobody saw the store fail, and a stamp an hour ahead is an
// hour of silence as far as the script can tell, so tickets that wait
// longer than their queue timeout would lapse; here it is two hours.)
func TestClockAnHourAheadCallsNoHourOfRate(t *testing.T) {
	st, _ := newStore(t)
	p := policy(60, 1, 0)
	p.QueueTimeout = 2 * time.Hour
	l := newLine(t, st, p)
	l.quiet = true
	for i := 0; i < 200; i++ {
		l.join(t0)
	}
	ahead, err := st.Stats(ctx, "r", p, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if ahead.Admitted != 1+1+30 {
		t.Errorf("a call an hour ahead called up to %d, want the burst (1), then the burst and the catch-up (1+30)", ahead.Admitted)
	}
	// Back to the right time: the clock resynchronises without a token,
	// then the rate goes on at one a second.
	for _, s := range []struct {
		at       time.Duration
		admitted int64
	}{{time.Second, 32}, {2 * time.Second, 33}, {6 * time.Second, 37}} {
		pl := l.poll(200, t0.Add(s.at))
		if pl.Outcome != store.Waiting || pl.Ticket != 200 || pl.Line.Admitted != s.admitted {
			t.Fatalf("poll at %v after the stray call: %+v, want ticket 200 still waiting and %d admitted", s.at, pl, s.admitted)
		}
	}
	// And one behind: no deadline moves back, nothing breaks.
	if pl := l.poll(200, t0.Add(-time.Hour)); pl.Outcome != store.Waiting || pl.Ticket != 200 {
		t.Fatalf("a poll an hour behind: %+v", pl)
	}
}

// TestReplayedArrivalKeepsOnePlace: joining again with the same arrival id
// (two tabs, a lost answer, a replayed cookie) answers for the ticket it
// already has, through waiting, called and admitted, and the session it
// became; once that place is gone it is lost, with no new ticket (issue
// 34, defect 2: one solution buys one place), however often it is
// replayed.
func TestReplayedArrivalKeepsOnePlace(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(0, 1, 1))
	first := l.joinAs("first", t0)
	if first.Outcome != store.Admitted {
		t.Fatalf("the first arrival: %+v", first)
	}
	if again := l.joinAs("first", t0); again.Ticket != first.Ticket || again.Session != first.Session || again.Line.Active != 1 {
		t.Fatalf("a walk-in's arrival replayed: %+v, want the same session %q and one active", again, first.Session)
	}
	w := l.joinAs("second", t0.Add(time.Second))
	for i := 0; i < 3; i++ {
		if again := l.joinAs("second", t0.Add(2*time.Second)); again.Ticket != w.Ticket || again.Outcome != store.Waiting || again.Line.Issued != 2 {
			t.Fatalf("a waiting arrival replayed: %+v, want ticket %d waiting and 2 issued", again, w.Ticket)
		}
	}
	l.end(l.ref(first, t0), t0.Add(30*time.Second))
	in := l.joinAs("second", t0.Add(31*time.Second))
	if in.Ticket != w.Ticket || in.Outcome != store.Admitted {
		t.Fatalf("the arrival replayed once called: %+v, want ticket %d admitted", in, w.Ticket)
	}
	if again := l.joinAs("second", t0.Add(32*time.Second)); again.Session != in.Session || again.Line.Active != 1 {
		t.Fatalf("the arrival replayed once admitted: %+v, want session %q", again, in.Session)
	}
	// The first session ended: its arrival is lost, and takes no ticket,
	// however often it is replayed.
	for i := 0; i < 3; i++ {
		if again := l.joinAs("first", t0.Add(33*time.Second)); again.Outcome != store.Lost || again.Line.Issued != 2 {
			t.Fatalf("an ended session's arrival replayed: %+v, want lost and 2 issued", again)
		}
	}
	// Still lost when the line has moved on, while its pass may be
	// presented (queue.ArrivalTTL): the arrivals the line reached are
	// trimmed a turn of that length later.
	for i := 0; i < 3; i++ {
		l.joinAs(fmt.Sprint("later", i), t0.Add(time.Duration(4+2*i)*time.Minute))
	}
	if again := l.joinAs("first", t0.Add(9*time.Minute)); again.Outcome != store.Lost {
		t.Fatalf("an ended session's arrival replayed 9 minutes on: %+v, want lost", again)
	}
}

// TestTwoTabsShareOneClaim: polls of a called ticket from two tabs (or a
// retry after a lost answer) get the same session; neither is sent back.
func TestTwoTabsShareOneClaim(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(0, 1, 1))
	first := l.join(t0)
	tab := l.join(t0)
	l.end(l.ref(first, t0), t0.Add(time.Minute))
	a := l.poll(tab.Ticket, t0.Add(61*time.Second))
	b := l.poll(tab.Ticket, t0.Add(62*time.Second))
	if a.Outcome != store.Admitted || b.Outcome != store.Admitted || a.Session != b.Session || b.Ticket != tab.Ticket || b.Line.Active != 1 {
		t.Fatalf("two polls of one called ticket: %+v then %+v, want one session", a, b)
	}
}

// TestEndHoldsThePlaceWhileThePassAdmits: an ended session cannot be
// renewed or claimed again, and its place stays taken until its pass stops
// admitting without asking the store, so a capacity of 1 never has two
// visitors inside; then the next visitor is called.
func TestEndHoldsThePlaceWhileThePassAdmits(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(0, 1, 1))
	a := l.join(t0)
	b := l.join(t0)
	// A's pass was renewed at 10 s: it admits until 30 s.
	if !l.renew(l.ref(a, t0.Add(10*time.Second)), t0.Add(10*time.Second)) {
		t.Fatal("renew")
	}
	l.end(l.ref(a, t0.Add(10*time.Second)), t0.Add(15*time.Second))
	if pl := l.poll(b.Ticket, t0.Add(20*time.Second)); pl.Outcome != store.Waiting {
		t.Fatalf("while the ended session's pass still admits: %+v, want ticket 2 waiting", pl)
	}
	if l.renew(l.ref(a, t0.Add(10*time.Second)), t0.Add(21*time.Second)) {
		t.Fatal("an ended session was renewed")
	}
	if pl := l.poll(a.Ticket, t0.Add(22*time.Second)); pl.Outcome == store.Admitted {
		t.Fatalf("an ended session's ticket polled: %+v, want it lost", pl)
	}
	if pl := l.poll(b.Ticket, t0.Add(31*time.Second)); pl.Outcome != store.Admitted {
		t.Fatalf("after the ended session's pass lapsed: %+v, want ticket 2 admitted", pl)
	}
}

// TestRenewNeverTakesBackALostSession: a session the store no longer holds
// (lost, as in a failover, or lapsed) is not renewed, place free or not,
// and above all not while the room admits nobody new (queue-all): its
// holder is a newcomer, and joins through the same guards as any. Before
// issue 23 the script took a free place back whatever the switches said.
func TestRenewNeverTakesBackALostSession(t *testing.T) {
	st, _ := newStore(t)
	l := newLine(t, st, policy(0, 1, 1))
	a := l.join(t0)
	do(t, st, nil, "ZREM", st.Keys("r")[1], a.Ticket) // lost, as in a failover
	if l.renew(l.ref(a, t0), t0.Add(time.Second)) {
		t.Fatal("a lost session was taken back")
	}
	b := l.join(t0.Add(2 * time.Second))
	w := l.join(t0.Add(2 * time.Second))
	if b.Outcome != store.Admitted || w.Outcome != store.Waiting {
		t.Fatalf("after the lost session: %+v and %+v, want the first admitted, the second waiting", b, w)
	}
	l.operate(store.Action{Op: string(store.QueueAll)}, t0.Add(3*time.Second))
	// B goes silent; W keeps polling; B's session lapses.
	for at := 4 * time.Second; at < 100*time.Second; at += 4 * time.Second {
		l.poll(w.Ticket, t0.Add(at))
	}
	if l.renew(l.ref(b, t0.Add(2*time.Second)), t0.Add(100*time.Second)) {
		t.Fatal("a lapsed session was taken back under queue-all")
	}
	if ln := l.stats(t0.Add(101 * time.Second)); ln.Active != 0 || ln.Called != 0 {
		t.Fatalf("under queue-all after the lapse: %d active, %d called; want none", ln.Active, ln.Called)
	}
}

// fill gives room "r" n waiting tickets at once, as n joins would, by
// writing the script's own state: joining them one by one over HTTP would
// take the test longer than the bound it tests.
func fill(t testing.TB, st *store.Upstash, p store.Policy, n int) {
	t.Helper()
	if _, err := st.Control(ctx, "r", p, store.Pause, t0); err != nil {
		t.Fatal(err)
	}
	state := lineState(t, st, "r")
	for from := 1; from <= n; from += 50000 {
		cmd := []any{"ZADD", st.Keys("r")[3]}
		for i := from; i < from+50000 && i <= n; i++ {
			cmd = append(cmd, state[stateLT], i)
		}
		do(t, st, nil, cmd...)
	}
	state[stateIssued] = fmt.Sprint(n)
	do(t, st, nil, "HSET", st.Keys("r")[0], "s", strings.Join(state, ","))
}

// The line's state is one field of its hash, s: comma-separated values
// in the order line.lua writes them (see "The line's state" there), of
// which these tests read or write two.
const stateIssued, stateLT = 1, 5

// lineState is room's state, a value each.
func lineState(t testing.TB, st *store.Upstash, room string) []string {
	t.Helper()
	var s string
	do(t, st, &s, "HGET", st.Keys(room)[0], "s")
	if !strings.HasSuffix(s, ",") || strings.Count(s, ",") != 23 {
		t.Fatalf("the line's state %q is not 23 values each followed by a comma", s)
	}
	return strings.Split(s, ",")
}

// TestOneCallDoesBoundedWork: resuming a room with 25,000 waiting calls
// 10,000 now and the rest on the next calls; a line of 25,000 tickets
// whose holders all left is passed over 10,000 a call.
func TestOneCallDoesBoundedWork(t *testing.T) {
	st, _ := newStore(t)
	p := policy(0, 1, 0)
	fill(t, st, p, 25000)
	want := []struct{ admitted, now int64 }{{10000, 10000}, {20000, 10000}, {25000, 5000}}
	ln, err := st.Control(ctx, "r", p, store.Resume, t0)
	for i, w := range want {
		if i > 0 {
			ln, err = st.Stats(ctx, "r", p, t0)
		}
		if err != nil || ln.Admitted != w.admitted || ln.CalledNow != w.now {
			t.Fatalf("call %d after resume: admitted %d (%d by the call), %v; want %d (%d)", i+1, ln.Admitted, ln.CalledNow, err, w.admitted, w.now)
		}
	}
	// Passing over: a line whose holders are all gone.
	st2, _ := newStore(t)
	fill(t, st2, p, 25000)
	do(t, st2, nil, "DEL", st2.Keys("r")[3])
	ln, err = st2.Control(ctx, "r", p, store.Resume, t0)
	if err != nil || ln.Admitted != 10000 || ln.CalledNow != 0 {
		t.Fatalf("resume over 25,000 gone: admitted %d (%d called), %v; want 10,000 passed over", ln.Admitted, ln.CalledNow, err)
	}
}

// windows gives random room "r" n closed windows of two waiting tickets
// each, as 2n joins spread over n windows would.
func windows(t testing.TB, st *store.Upstash, p store.Policy, n int) {
	t.Helper()
	fill(t, st, p, 2*n)
	for from := 1; from <= n; from += 50000 {
		cmd := []any{"ZADD", st.Keys("r")[6]}
		for i := from; i < from+50000 && i <= n; i++ {
			cmd = append(cmd, 2*i, 2*i)
		}
		do(t, st, nil, cmd...)
	}
	do(t, st, nil, "HSET", st.Keys("r")[0], "open_first", 2*n+1)
}

// TestManyWindows: with 40,000 closed windows, calls take them in order
// and a visitor anywhere in the line learns their group. (How long a call
// takes is BenchmarkPollWithManyWindows's business.)
func TestManyWindows(t *testing.T) {
	st, _ := newStore(t)
	st.RandomKey = "k"
	p := policy(0, 1, 0)
	p.RandomWindow = time.Minute
	const n = 40000
	windows(t, st, p, n)
	ln, err := st.Admit(ctx, "r", p, 3, t0)
	if err != nil || ln.Admitted != 3 {
		t.Fatalf("admit 3: %+v %v", ln, err)
	}
	ep := ln.Epoch
	called := 0
	for tk := int64(1); tk <= 6; tk++ {
		pl, err := st.Poll(ctx, "r", p, store.Ticket{Number: tk, Epoch: ep}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if pl.Outcome == store.Admitted {
			called++
			if tk > 4 {
				t.Errorf("ticket %d of the third window was called before the second's", tk)
			}
		}
	}
	if called != 3 {
		t.Errorf("%d of the first tickets admitted, want the 3 called", called)
	}
	pl, err := st.Poll(ctx, "r", p, store.Ticket{Number: 2*n - 1, Epoch: ep}, t0)
	// Ahead of it: the window being called (3-4), and the 39,997 between.
	if err != nil || pl.Outcome != store.Waiting || pl.CallFrom != 2*n-1 || pl.CallTo != 2*n || pl.GroupsAhead != n-2 {
		t.Fatalf("the last window's first ticket: %+v %v, want group %d-%d with %d ahead", pl, err, 2*n-1, 2*n, n-2)
	}
}

// BenchmarkPollWithManyWindows is one poll's round trip (stand-in and
// script) in a random room with 40,000 closed windows; compare with
// BenchmarkPollLongLine, first come, with 300,000 waiting.
func BenchmarkPollWithManyWindows(b *testing.B) {
	st, _ := newStore(b)
	st.RandomKey = "k"
	p := policy(0, 1, 0)
	p.RandomWindow = time.Minute
	windows(b, st, p, 40000)
	benchPolls(b, st, p, 80000)
}

// BenchmarkPollLongLine is one poll's round trip in a room with 300,000
// waiting.
func BenchmarkPollLongLine(b *testing.B) {
	st, _ := newStore(b)
	p := policy(0, 1, 0)
	fill(b, st, p, 300000)
	benchPolls(b, st, p, 300000)
}

func benchPolls(b *testing.B, st *store.Upstash, p store.Policy, last int64) {
	ln, err := st.Stats(ctx, "r", p, t0)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pl, err := st.Poll(ctx, "r", p, store.Ticket{Number: last - int64(i%1000), Epoch: ln.Epoch}, t0)
		if err != nil || pl.Outcome != store.Waiting {
			b.Fatalf("%+v %v", pl, err)
		}
	}
}

// BenchmarkScriptTime reports the time Redis itself spends in one poll's
// script (INFO commandstats), without the round trip's noise: what the
// script's own work costs, such as its per-minute history record.
func BenchmarkScriptTime(b *testing.B) {
	st, _ := newStore(b)
	p := policy(0, 1, 0)
	fill(b, st, p, 1000)
	var reset string
	do(b, st, &reset, "CONFIG", "RESETSTAT")
	benchPolls(b, st, p, 1000)
	b.StopTimer()
	b.ReportMetric(scriptMicros(b, st), "script-µs/op")
}

// scriptMicros is the mean Redis time of the script's calls since the
// last CONFIG RESETSTAT, in µs (INFO commandstats' usec_per_call).
func scriptMicros(b *testing.B, st *store.Upstash) float64 {
	var info string
	do(b, st, &info, "INFO", "commandstats")
	for _, l := range strings.Split(info, "\n") {
		if !strings.HasPrefix(l, "cmdstat_evalsha:") {
			continue
		}
		for _, f := range strings.Split(strings.TrimSpace(strings.TrimPrefix(l, "cmdstat_evalsha:")), ",") {
			if v, ok := strings.CutPrefix(f, "usec_per_call="); ok {
				us, err := strconv.ParseFloat(v, 64)
				if err != nil {
					b.Fatal(err)
				}
				return us
			}
		}
	}
	b.Fatal("INFO commandstats has no evalsha line")
	return 0
}

// BenchmarkBoundedCallsAtAMillion reports the Redis time of the two calls
// issue 23 found unbounded, on a line of 1,000,000 waiting: an operator's
// reset (276 ms before: it deleted the sets in the call), and the call
// whose line time passes the queue timeout of every ticket at once (244 ms
// before: it forgot them all in one call). Each must stay under 50 ms.
// go test -run '^$' -bench BoundedCalls -benchtime 1x ./integration
func BenchmarkBoundedCallsAtAMillion(b *testing.B) {
	const n = 1000000
	for i := 0; i < b.N; i++ {
		st, _ := newStore(b)
		p := policy(0, 1, 0)
		// No failure seen, so the gap below counts in full.
		p.QueueTimeout = time.Minute
		fill(b, st, p, n)
		do(b, st, nil, "CONFIG", "RESETSTAT")
		if _, err := st.Stats(ctx, "r", p, t0.Add(2*time.Minute)); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(scriptMicros(b, st)/1000, "sweep-ms")

		st2, _ := newStore(b)
		fill(b, st2, p, n)
		do(b, st2, nil, "CONFIG", "RESETSTAT")
		if _, err := st2.Operate(ctx, "r", p, store.Action{Op: store.OpReset, Actor: panel}, t0); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(scriptMicros(b, st2)/1000, "reset-ms")
	}
}
