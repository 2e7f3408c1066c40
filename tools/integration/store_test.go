package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/native"
	"github.com/edgequeue/waitingroom/tools/redistest"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func newStore(t *testing.T) (*store.Upstash, *upstashdev.Server) {
	t.Helper()
	srv, url := redistest.Upstash(t)
	return &store.Upstash{URL: url, Token: redistest.Token, Transport: native.Upstash{}, Timeout: 2 * time.Second}, srv
}

var ctx = context.Background()

// policy is a room's policy with the default windows.
func policy(perMinute float64, burst, capacity int) store.Policy {
	return store.Policy{PerMinute: perMinute, Burst: burst, Capacity: capacity,
		ClaimWindow: 30 * time.Second, SessionTTL: 90 * time.Second, QueueTimeout: 15 * time.Minute}
}

// line drives one room in virtual time.
type line struct {
	t   *testing.T
	st  *store.Upstash
	p   store.Policy
	sid int
}

func (l *line) join(now time.Time) store.Place {
	l.t.Helper()
	l.sid++
	pl, err := l.st.Join(ctx, "r", l.p, fmt.Sprint("s", l.sid), now)
	if err != nil {
		l.t.Fatal(err)
	}
	return pl
}

func (l *line) poll(ticket int64, now time.Time) store.Place {
	l.t.Helper()
	l.sid++
	pl, err := l.st.Poll(ctx, "r", l.p, store.Ticket{Number: ticket, Epoch: epoch(l.t, l.st, l.p)}, fmt.Sprint("s", l.sid), now)
	if err != nil {
		l.t.Fatal(err)
	}
	return pl
}

func epoch(t *testing.T, st *store.Upstash, p store.Policy) int64 {
	l, err := st.Stats(ctx, "r", p, t0)
	if err != nil {
		t.Fatal(err)
	}
	return l.Epoch
}

func TestRateAdmitsFromElapsedTime(t *testing.T) {
	st, _ := newStore(t)
	l := &line{t: t, st: st, p: policy(60, 2, 0)}
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

func TestCapacityIsFreedBySessionsEndingAndExpiring(t *testing.T) {
	st, _ := newStore(t)
	l := &line{t: t, st: st, p: policy(0, 1, 2)}
	a, b := l.join(t0), l.join(t0)
	c := l.join(t0)
	if a.Outcome != store.Admitted || b.Outcome != store.Admitted || c.Outcome != store.Waiting {
		t.Fatalf("capacity 2: outcomes %v %v %v, want admitted, admitted, waiting", a.Outcome, b.Outcome, c.Outcome)
	}
	if c.Line.Active != 2 {
		t.Fatalf("active %d, want 2", c.Line.Active)
	}
	if pl := l.poll(c.Ticket, t0.Add(10*time.Second)); pl.Outcome != store.Waiting {
		t.Fatalf("nobody left, yet ticket 3 is %v", pl.Outcome)
	}
	// The first visitor leaves (beacon): their place goes to ticket 3.
	if _, err := st.End(ctx, "r", l.p, "s1", t0.Add(20*time.Second)); err != nil {
		t.Fatal(err)
	}
	if pl := l.poll(c.Ticket, t0.Add(21*time.Second)); pl.Outcome != store.Admitted || pl.Line.Active != 2 {
		t.Fatalf("after a departure: %+v, want ticket 3 admitted with 2 active", pl)
	}
	// A renewed session stays; a silent one lapses after the session TTL.
	if ok, _, err := st.Renew(ctx, "r", l.p, "s2", t0.Add(80*time.Second)); !ok || err != nil {
		t.Fatalf("renew: %v %v", ok, err)
	}
	d := l.join(t0.Add(100 * time.Second))
	if d.Outcome != store.Waiting {
		t.Fatalf("a newcomer got in while 2 sessions were live: %+v", d)
	}
	// The session admitted at 21 s (TTL 90 s) lapses at 111 s; s2 was
	// renewed at 80 s and lives to 170 s.
	if pl := l.poll(d.Ticket, t0.Add(112*time.Second)); pl.Outcome != store.Admitted || pl.Line.Active != 2 {
		t.Fatalf("after an inactive session lapsed: %+v", pl)
	}
	if ok, _, _ := st.Renew(ctx, "r", l.p, "s1", t0.Add(113*time.Second)); ok {
		t.Fatal("an ended session was renewed")
	}
}

func TestCalledVisitorWhoNeverComesFreesThePlace(t *testing.T) {
	st, _ := newStore(t)
	l := &line{t: t, st: st, p: policy(0, 1, 1)}
	l.join(t0)         // ticket 1: admitted, session s1
	no := l.join(t0)   // ticket 2: waits
	late := l.join(t0) // ticket 3: waits
	st.End(ctx, "r", l.p, "s1", t0.Add(time.Second))
	// Ticket 2 is called at once but never claims; its place is held for
	// the claim window, then goes to ticket 3.
	if pl := l.poll(late.Ticket, t0.Add(20*time.Second)); pl.Outcome != store.Waiting || pl.Line.Called != 1 {
		t.Fatalf("inside ticket 2's claim window: %+v", pl)
	}
	if pl := l.poll(late.Ticket, t0.Add(32*time.Second)); pl.Outcome != store.Admitted {
		t.Fatalf("after ticket 2's claim window: %+v, want ticket 3 admitted", pl)
	}
	// Ticket 2 comes back too late: a new ticket at the back.
	pl := l.poll(no.Ticket, t0.Add(40*time.Second))
	if pl.Outcome != store.Rejoined || pl.Ticket != 4 {
		t.Fatalf("late ticket 2: %+v, want rejoined as ticket 4", pl)
	}
}

func TestVisitorWhoStopsPollingLosesThePlace(t *testing.T) {
	st, _ := newStore(t)
	p := policy(0, 1, 1)
	p.QueueTimeout = time.Minute
	l := &line{t: t, st: st, p: p}
	l.join(t0)          // ticket 1, admitted
	gone := l.join(t0)  // ticket 2, stops polling
	stays := l.join(t0) // ticket 3, polls
	l.poll(stays.Ticket, t0.Add(50*time.Second))
	st.End(ctx, "r", p, "s1", t0.Add(70*time.Second))
	// Ticket 2 has not polled for 70 s (> the 60 s queue timeout): it is
	// passed over without holding the place, and ticket 3 goes in at once.
	pl := l.poll(stays.Ticket, t0.Add(75*time.Second))
	if pl.Outcome != store.Admitted || pl.Line.Called != 0 {
		t.Fatalf("ticket 3 after ticket 2 left the line: %+v", pl)
	}
	if pl := l.poll(gone.Ticket, t0.Add(80*time.Second)); pl.Outcome != store.Rejoined {
		t.Fatalf("ticket 2 back after its queue timeout: %+v, want rejoined", pl)
	}
}

func TestOperatorControls(t *testing.T) {
	st, _ := newStore(t)
	l := &line{t: t, st: st, p: policy(1, 1, 0)}
	for i := 0; i < 20; i++ {
		l.join(t0)
	}
	ln, err := st.Admit(ctx, "r", l.p, 5, t0)
	if err != nil || ln.Admitted != 6 {
		t.Fatalf("admit 5 after the burst of 1: admitted %d, %v; want 6", ln.Admitted, err)
	}
	if ln, _ = st.Admit(ctx, "r", l.p, 1000, t0); ln.Admitted != 20 {
		t.Fatalf("admit past the end: admitted %d, want all 20", ln.Admitted)
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
	l := &line{t: t, st: st, p: policy(0, 1, 0)}
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
	r, err := native.Upstash{}.RoundTrip(ctx, store.Request{URL: st.URL + "/", Header: map[string]string{"Authorization": "Bearer " + st.Token},
		Body: []byte(`["HLEN","` + st.Keys("r")[0] + `"]`)})
	var hlen struct{ Result int }
	if err != nil || json.Unmarshal(r.Body, &hlen) != nil || hlen.Result > 18 {
		t.Fatalf("the line's hash after admissions across two hours: %s %v, want at most 18 fields (13 of state, 5 minute slots)", r.Body, err)
	}
}

func TestEpochIsStableAndChangesWhenStateIsLost(t *testing.T) {
	st, _ := newStore(t)
	l := &line{t: t, st: st, p: policy(1, 1, 0)}
	first, again := l.join(t0), l.join(t0.Add(time.Minute))
	if first.Line.Epoch == 0 || first.Line.Epoch != again.Line.Epoch {
		t.Fatalf("epochs %d then %d: want one stable non-zero epoch", first.Line.Epoch, again.Line.Epoch)
	}
	flush(t, st)
	pl, err := st.Poll(ctx, "r", l.p, store.Ticket{Number: again.Ticket, Epoch: again.Line.Epoch}, "x", t0.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if pl.Line.Epoch == first.Line.Epoch || pl.Outcome != store.Admitted || pl.Ticket != 1 {
		t.Fatalf("a ticket from the lost line: %+v, want a new ticket in a new epoch", pl)
	}
}

// flush empties Redis behind the stand-in, as a lost database would.
func flush(t *testing.T, st *store.Upstash) {
	t.Helper()
	redisCommand(t, st, `["FLUSHALL"]`)
}

func redisCommand(t *testing.T, st *store.Upstash, cmd string) {
	t.Helper()
	r, err := native.Upstash{}.RoundTrip(ctx, store.Request{URL: st.URL + "/", Header: map[string]string{"Authorization": "Bearer " + st.Token}, Body: []byte(cmd)})
	if err != nil || r.Status != 200 {
		t.Fatalf("%s: %v %d %s", cmd, err, r.Status, r.Body)
	}
}

func TestScriptCacheLossFallsBackToEval(t *testing.T) {
	st, srv := newStore(t)
	l := &line{t: t, st: st, p: policy(1, 1, 0)}
	l.join(t0)
	redisCommand(t, st, `["SCRIPT","FLUSH"]`)
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
	if _, err := badToken.Join(ctx, "r", p, "s", t0); !errors.Is(err, store.ErrUnauthorized) {
		t.Fatalf("wrong token: %v, want ErrUnauthorized", err)
	}
	nowhere := *st
	nowhere.URL = "http://127.0.0.1:1"
	if _, err := nowhere.Join(ctx, "r", p, "s", t0); !errors.Is(err, store.ErrUnavailable) {
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
			pl, err := st.Join(ctx, "r", p, fmt.Sprint("s", i), t0)
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
	ep := epoch(t, st, p)
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
				pl, err := st.Poll(ctx, "r", p, store.Ticket{Number: tickets[i], Epoch: ep}, fmt.Sprint("p", i), t0)
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
	l := &line{t: t, st: st, p: p}
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
	l := &line{t: t, st: st, p: p}
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
