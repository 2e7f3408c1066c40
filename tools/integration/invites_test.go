package integration

import (
	"fmt"
	"testing"

	"github.com/edgequeue/waitingroom/store"
)

// TestPriorityLaneTakesItsShareExactly: with both lanes full, every run
// of calls from the start gives the priority lane its share, within one
// call either way, for shares that are no fraction 1/n (0.3) and above a
// half (up to queue.MaxPriorityShare): what a regular call earns short of
// a whole call carries over to the next.
func TestPriorityLaneTakesItsShareExactly(t *testing.T) {
	for _, share := range []float64{0.3, 0.6, 0.9} {
		t.Run(fmt.Sprint(share), func(t *testing.T) {
			st, _ := newStore(t)
			p := policy(0, 1, 0)
			p.PriorityShare = share
			l := newLine(t, st, p)
			l.quiet = true
			if _, err := st.Control(ctx, "r", p, store.Pause, t0); err != nil {
				t.Fatal(err)
			}
			const n = 100
			for i := 0; i < n; i++ {
				l.join(t0)
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
