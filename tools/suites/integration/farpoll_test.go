package integration

import (
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
)

// far is how far behind the last called a ticket must be for the script
// to answer its poll without doing the line's work (line.lua's FAR).
const far = 20000

// fillFast joins n visitors to room at now, eight at a time: a line long
// enough to hold tickets far from the front fills in seconds.
func fillFast(t *testing.T, st *store.Upstash, room string, p store.Policy, n int, now time.Time) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if _, err := st.Join(ctx, room, p, store.Arrival{ID: fmt.Sprintf("%s-%d", room, i)}, now); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// TestAFarPollIsAnsweredAsTheLinesWorkWouldAnswerIt: a poll far from the
// front, within a second of a call that did the line's work, is answered
// without doing it again (the line's state is left as it was), and with
// the very answer, and the ticket's mark of being seen, that doing it
// would have given. Every other poll does the work.
func TestAFarPollIsAnsweredAsTheLinesWorkWouldAnswerIt(t *testing.T) {
	st, _ := newStore(t)
	p := policy(0, 1, 1) // one place: the first visitor takes it, the rest wait
	// and the first's session outlives the test (line time follows the
	// wall clock, and nobody renews it), so nobody else is called.
	p.SessionTTL = time.Hour
	fillFast(t, st, "r", p, far+10, t0)
	keys := st.Keys("r")
	state := func() string { return strings.Join(lineState(t, st, "r"), ",") }
	seen := func(ticket int64) string {
		var s string
		do(t, st, &s, "ZSCORE", keys[3], ticket)
		return s
	}
	base, err := st.Stats(ctx, "r", p, t0)
	if err != nil {
		t.Fatal(err)
	}
	farTicket := base.Admitted + far + 1
	random := p
	random.RandomWindow = time.Minute
	tests := []struct {
		name   string
		p      store.Policy
		ticket int64
		after  time.Duration // since the last call that did the work
		epoch  int64         // 0: the line's
		refuse bool
		fast   bool
	}{
		{name: "far, half a second after", p: p, ticket: farTicket, after: 500 * time.Millisecond, fast: true},
		{name: "far, at once", p: p, ticket: farTicket + 5, fast: true},
		{name: "far, a second and a half after", p: p, ticket: farTicket, after: 1500 * time.Millisecond},
		{name: "near the front", p: p, ticket: farTicket - 1, after: 500 * time.Millisecond},
		{name: "far, of another line", p: p, ticket: farTicket, after: 500 * time.Millisecond, epoch: 1},
		{name: "far, its request refused", p: p, ticket: farTicket, after: 500 * time.Millisecond, refuse: true},
		{name: "far, in random order", p: random, ticket: farTicket, after: 500 * time.Millisecond},
	}
	now := t0.Add(5 * time.Minute) // the admissions' window starts after the line's
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// A call that does the line's work, a minute on (so that the
			// ticket is seen before it would lapse), then the poll.
			now = now.Add(time.Minute).Truncate(time.Second)
			if _, err := st.Stats(ctx, "r", p, now); err != nil {
				t.Fatal(err)
			}
			for _, tk := range []int64{tc.ticket, farTicket, farTicket + 5, farTicket - 1} {
				if _, err := st.Poll(ctx, "r", p, store.Ticket{Number: tk, Epoch: base.Epoch}, now); err != nil {
					t.Fatal(err)
				}
			}
			epoch := tc.epoch
			if epoch == 0 {
				epoch = base.Epoch
			}
			at := now.Add(tc.after)
			pctx := ctx
			if tc.refuse {
				pctx = store.WithRefusal(ctx)
			}
			before := state()
			got, err := st.Poll(pctx, "r", tc.p, store.Ticket{Number: tc.ticket, Epoch: epoch}, at)
			if err != nil {
				t.Fatal(err)
			}
			if fast := state() == before; fast != tc.fast {
				t.Fatalf("the poll left the line's state as it was: %v, want %v", fast, tc.fast)
			}
			if !tc.fast {
				return
			}
			mark := seen(tc.ticket)
			// The same poll doing the work: a refused request's poll is
			// answered as any other, and counts the refusal.
			again, err := st.Poll(store.WithRefusal(ctx), "r", tc.p, store.Ticket{Number: tc.ticket, Epoch: epoch}, at)
			if err != nil {
				t.Fatal(err)
			}
			if state() == before {
				t.Fatal("the refused poll did not do the line's work")
			}
			if !reflect.DeepEqual(got, again) {
				t.Fatalf("answered far from the front:\n %+v\nby the line's work:\n %+v", got, again)
			}
			if got.Outcome != store.Waiting || got.Ticket != tc.ticket {
				t.Fatalf("%+v, want ticket %d waiting", got, tc.ticket)
			}
			if m := seen(tc.ticket); m != mark {
				t.Fatalf("the ticket was marked seen at %s, and %s by the line's work", mark, m)
			}
		})
	}
}

// TestFarPollsAnswerAsTheLinesWorkThroughARandomSale runs a random sale on
// a long line (joins, polls far from the front and near it, renewals,
// admissions, pauses, the operator's limits, time moving by up to two
// seconds) and checks every poll answered without the line's work against
// the same poll doing it. WAITINGROOM_SEED replays a run.
func TestFarPollsAnswerAsTheLinesWorkThroughARandomSale(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("WAITINGROOM_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (WAITINGROOM_SEED replays it)", seed)
	rnd := rand.New(rand.NewSource(seed))
	st, _ := newStore(t)
	p := policy(120, 5, 50)
	fillFast(t, st, "r", p, far+2000, t0)
	state := func() string { return strings.Join(lineState(t, st, "r"), ",") }
	now := t0
	base, err := st.Stats(ctx, "r", p, now)
	if err != nil {
		t.Fatal(err)
	}
	var sessions []store.SessionRef
	fast, slow := 0, 0
	for step := 0; step < 600; step++ {
		now = now.Add(time.Duration(rnd.Intn(2000)) * time.Millisecond)
		line, err := st.Stats(ctx, "r", p, now)
		if err != nil {
			t.Fatal(err)
		}
		switch op := rnd.Intn(10); {
		case op < 5: // a poll, far from the front or near it
			tk := line.Admitted + 1 + rnd.Int63n(line.Issued-line.Admitted)
			if rnd.Intn(3) > 0 {
				tk = min(line.Issued, line.Admitted+far+1+rnd.Int63n(500))
			}
			at := now.Add(time.Duration(rnd.Intn(1500)) * time.Millisecond)
			before := state()
			pl, err := st.Poll(ctx, "r", p, store.Ticket{Number: tk, Epoch: base.Epoch}, at)
			if err != nil {
				t.Fatal(err)
			}
			if state() != before {
				slow++
				if pl.Outcome == store.Admitted {
					sessions = append(sessions, store.SessionRef{ID: pl.Session, Epoch: pl.Line.Epoch, UsableUntil: at})
				}
				continue
			}
			fast++
			again, err := st.Poll(store.WithRefusal(ctx), "r", p, store.Ticket{Number: tk, Epoch: base.Epoch}, at)
			if err != nil {
				t.Fatal(err)
			}
			// The work may call tickets at the front, which the answer
			// without it has not seen yet: all else is the same.
			if again.Line.Admitted < pl.Line.Admitted || again.Line.Recent < pl.Line.Recent {
				t.Fatalf("step %d: the line's work went back: %+v, then %+v", step, pl.Line, again.Line)
			}
			for _, l := range []*store.Line{&pl.Line, &again.Line} {
				l.Admitted, l.Called, l.CalledNow, l.Recent = 0, 0, 0, 0
			}
			if !reflect.DeepEqual(pl, again) {
				t.Fatalf("step %d: ticket %d answered far from the front:\n %+v\nby the line's work:\n %+v", step, tk, pl, again)
			}
		case op < 6:
			if _, err := st.Join(ctx, "r", p, store.Arrival{ID: fmt.Sprint("late-", step)}, now); err != nil {
				t.Fatal(err)
			}
		case op < 7 && len(sessions) > 0:
			if _, _, err := st.Renew(ctx, "r", p, sessions[rnd.Intn(len(sessions))], now); err != nil {
				t.Fatal(err)
			}
		case op < 8:
			if _, err := st.Operate(ctx, "r", p, store.Action{Op: store.OpAdmit, N: 1 + rnd.Int63n(20)}, now); err != nil {
				t.Fatal(err)
			}
		case op < 9:
			c := []store.Control{store.Pause, store.Resume, store.QueueAll}[rnd.Intn(3)]
			if _, err := st.Control(ctx, "r", p, c, now); err != nil {
				t.Fatal(err)
			}
		default:
			burst, capacity := 1+rnd.Intn(10), 10+rnd.Intn(100)
			set := store.Overrides{Burst: &burst, Capacity: &capacity}
			if rnd.Intn(2) == 0 {
				set.Mode = store.Fifo
			}
			if _, err := st.Operate(ctx, "r", p, store.Action{Op: store.OpLimits, Set: set}, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d polls answered far from the front, each as the line's work answers it; %d did the work", fast, slow)
	if fast < 25 {
		t.Fatalf("only %d polls were answered far from the front: the test no longer reaches that path", fast)
	}
}
