package integration

import (
	"context"
	"errors"
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

func TestRateAdmitsFromElapsedTime(t *testing.T) {
	st, _ := newStore(t)
	p := store.Policy{PerMinute: 60, Burst: 2}
	var line store.Line
	for i := int64(1); i <= 10; i++ {
		ticket, l, err := st.Join(ctx, "r", p, t0)
		if err != nil {
			t.Fatal(err)
		}
		if ticket != i {
			t.Fatalf("join %d got ticket %d", i, ticket)
		}
		line = l
	}
	if line.Admitted != 2 {
		t.Fatalf("a fresh room admits its burst (2) at once; admitted %d", line.Admitted)
	}
	steps := []struct {
		after time.Duration
		want  int64
	}{
		{500 * time.Millisecond, 2}, // half a token: nobody new
		{time.Second, 3},            // one token per second at 60/min
		{5 * time.Second, 7},
		{time.Hour, 10}, // everyone left in line, no more
	}
	for _, s := range steps {
		l, err := st.Poll(ctx, "r", p, t0.Add(s.after))
		if err != nil {
			t.Fatal(err)
		}
		if l.Admitted != s.want {
			t.Fatalf("after %v: admitted %d, want %d", s.after, l.Admitted, s.want)
		}
	}
	// An idle hour saved up only the burst: 5 newcomers after it, 2 go in.
	var last store.Line
	for i := 0; i < 5; i++ {
		_, l, err := st.Join(ctx, "r", p, t0.Add(time.Hour+time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		last = l
	}
	if got := last.Admitted - 10; got != 2 {
		t.Fatalf("after an idle hour %d were admitted at once, want the burst of 2", got)
	}
}

func TestAdmitPauseResume(t *testing.T) {
	st, _ := newStore(t)
	p := store.Policy{PerMinute: 1, Burst: 1}
	for i := 0; i < 20; i++ {
		if _, _, err := st.Join(ctx, "r", p, t0); err != nil {
			t.Fatal(err)
		}
	}
	l, err := st.Admit(ctx, "r", 5, p, t0)
	if err != nil || l.Admitted != 6 {
		t.Fatalf("admit 5 after the burst of 1: admitted %d, %v; want 6", l.Admitted, err)
	}
	if l, _ = st.Admit(ctx, "r", 1000, p, t0); l.Admitted != 20 {
		t.Fatalf("admit past the end: admitted %d, want all 20 issued", l.Admitted)
	}
	for i := 0; i < 5; i++ {
		st.Join(ctx, "r", p, t0)
	}
	if l, _ = st.SetPaused(ctx, "r", true, p, t0); !l.Paused {
		t.Fatal("not paused")
	}
	if l, _ = st.Poll(ctx, "r", p, t0.Add(10*time.Minute)); l.Admitted != 20 {
		t.Fatalf("paused room admitted up to %d", l.Admitted)
	}
	if l, _ = st.Admit(ctx, "r", 2, p, t0.Add(10*time.Minute)); l.Admitted != 22 {
		t.Fatalf("admit N while paused: admitted %d, want 22", l.Admitted)
	}
	if l, _ = st.SetPaused(ctx, "r", false, p, t0.Add(10*time.Minute)); l.Paused || l.Admitted != 23 {
		t.Fatalf("resume: %+v, want unpaused with the burst of 1 admitted", l)
	}
}

func TestEpochIsStableAndChangesWhenStateIsLost(t *testing.T) {
	st, _ := newStore(t)
	p := store.Policy{PerMinute: 1, Burst: 1}
	_, first, _ := st.Join(ctx, "r", p, t0)
	_, again, _ := st.Join(ctx, "r", p, t0.Add(time.Minute))
	if first.Epoch == 0 || first.Epoch != again.Epoch {
		t.Fatalf("epochs %d then %d: want one stable non-zero epoch", first.Epoch, again.Epoch)
	}
	flush(t, st)
	_, after, _ := st.Join(ctx, "r", p, t0.Add(2*time.Minute))
	if after.Epoch == first.Epoch {
		t.Fatal("a line rebuilt after its state was lost kept the old epoch")
	}
}

// flush empties Redis behind the stand-in, as a lost database would.
func flush(t *testing.T, st *store.Upstash) {
	t.Helper()
	tr := native.Upstash{}
	r, err := tr.RoundTrip(ctx, store.Request{URL: st.URL + "/", Header: map[string]string{"Authorization": "Bearer " + st.Token}, Body: []byte(`["FLUSHALL"]`)})
	if err != nil || r.Status != 200 {
		t.Fatalf("FLUSHALL: %v %d %s", err, r.Status, r.Body)
	}
}

func TestScriptCacheLossFallsBackToEval(t *testing.T) {
	st, srv := newStore(t)
	p := store.Policy{PerMinute: 1, Burst: 1}
	st.Join(ctx, "r", p, t0)
	tr := native.Upstash{}
	if r, err := tr.RoundTrip(ctx, store.Request{URL: st.URL + "/", Header: map[string]string{"Authorization": "Bearer " + st.Token}, Body: []byte(`["SCRIPT","FLUSH"]`)}); err != nil || r.Status != 200 {
		t.Fatalf("SCRIPT FLUSH: %v %d", err, r.Status)
	}
	srv.ResetStats()
	ticket, _, err := st.Join(ctx, "r", p, t0)
	if err != nil || ticket != 2 {
		t.Fatalf("join after SCRIPT FLUSH: ticket %d, %v", ticket, err)
	}
	c := srv.Stats().Commands
	if c["EVALSHA"] != 1 || c["EVAL"] != 1 {
		t.Fatalf("commands %v: want one EVALSHA refused, then one EVAL", c)
	}
	srv.ResetStats()
	st.Join(ctx, "r", p, t0)
	if c := srv.Stats().Commands; c["EVALSHA"] != 1 || c["EVAL"] != 0 {
		t.Fatalf("commands %v: once cached again, one EVALSHA only", c)
	}
}

func TestStoreErrors(t *testing.T) {
	st, srv := newStore(t)
	p := store.Policy{PerMinute: 1, Burst: 1}
	badToken := *st
	badToken.Token = "wrong"
	if _, _, err := badToken.Join(ctx, "r", p, t0); !errors.Is(err, store.ErrUnauthorized) {
		t.Fatalf("wrong token: %v, want ErrUnauthorized", err)
	}
	nowhere := *st
	nowhere.URL = "http://127.0.0.1:1"
	if _, _, err := nowhere.Join(ctx, "r", p, t0); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("unreachable: %v, want ErrUnavailable", err)
	}
	faults := []upstashdev.Faults{{Status: 500}, {Status: 502}, {Drop: true}, {LatencyMS: 3000}}
	short := *st
	short.Timeout = 200 * time.Millisecond
	for _, f := range faults {
		srv.SetFaults(f)
		if _, err := short.Poll(ctx, "r", p, t0); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("fault %+v: %v, want ErrUnavailable", f, err)
		}
	}
	srv.SetFaults(upstashdev.Faults{})
	if _, err := st.Poll(ctx, "r", p, t0); err != nil {
		t.Fatalf("after the faults clear: %v", err)
	}
}

// TestConcurrentJoinsAreDistinctGaplessAndAdmittedInOrder has many visitors
// join at once, then admits them in rounds while each polls concurrently,
// and checks no visitor is ever admitted before one holding a lower ticket.
func TestConcurrentJoinsAreDistinctGaplessAndAdmittedInOrder(t *testing.T) {
	st, _ := newStore(t)
	p := store.Policy{PerMinute: 0.01, Burst: 1}
	const n = 1000
	tickets := make([]int64, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			tk, _, err := st.Join(ctx, "r", p, t0)
			if err != nil {
				t.Error(err)
			}
			tickets[i] = tk
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

	round := make([]int, n) // the round in which each visitor saw itself called
	for r := 1; ; r++ {
		if _, err := st.Admit(ctx, "r", 37, p, t0); err != nil {
			t.Fatal(err)
		}
		done := true
		var mu sync.Mutex
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
				l, err := st.Poll(ctx, "r", p, t0)
				if err != nil {
					t.Error(err)
					return
				}
				if l.Admitted >= tickets[i] {
					mu.Lock()
					round[i] = r
					mu.Unlock()
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
