package integration

import (
	"fmt"
	"testing"

	"github.com/edgequeue/waitingroom/store"
)

// pausedLanes is a paused room whose priority lane takes share, driven
// quietly (no calls but the test's).
func pausedLanes(t *testing.T, share float64) (*store.Upstash, store.Policy, *line) {
	t.Helper()
	st, _ := newStore(t)
	p := policy(0, 1, 0)
	p.PriorityShare = share
	l := newLine(t, st, p)
	l.quiet = true
	if _, err := st.Control(ctx, "r", p, store.Pause, t0); err != nil {
		t.Fatal(err)
	}
	return st, p, l
}

// TestPriorityLaneTakesItsShareExactly: with both lanes full, every run
// of calls gives the priority lane its share, within one call either way,
// for shares that are no fraction 1/n (0.3) and above a half (up to
// priority_share's maximum, 0.9): what a regular call earns short of a whole call
// carries over to the next. Calls made while the lane was empty bank it
// one call, not more.
func TestPriorityLaneTakesItsShareExactly(t *testing.T) {
	for _, share := range []float64{0.3, 0.6, 0.9} {
		t.Run(fmt.Sprint(share), func(t *testing.T) {
			st, p, l := pausedLanes(t, share)
			const n, idle = 100, 20
			for i := 0; i < n+idle; i++ {
				l.join(t0)
			}
			if ln, err := st.Admit(ctx, "r", p, idle, t0); err != nil || ln.CalledNow != idle {
				t.Fatalf("admit %d with the lane empty: %+v, %v", idle, ln, err)
			}
			for i := 0; i < n; i++ {
				l.vip(fmt.Sprint("v", i), invite(fmt.Sprint("inv", i), 1), t0)
			}
			var vip float64
			for k, tk := range callOneByOne(t, l, n, t0) {
				if tk < 0 {
					vip++
				}
				if want := share * float64(k+1); vip > want+1 || vip < want-1 {
					t.Fatalf("after %d calls with both lanes waiting, %g were priority; want %g ± 1", k+1, vip, want)
				}
			}
		})
	}
}
