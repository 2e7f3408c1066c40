package e2e

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTwoPOPs runs the service as two POPs over one store, visitors split
// between them: each POP answers the polls of visitors far from the front
// from its own snapshot of the line (fewer store calls than polls),
// and admissions still follow the tickets across both POPs.
func TestTwoPOPs(t *testing.T) {
	const n = 40
	e := startStack(t, loadTimeout, strings.Replace(room, `"queue_timeout":300`,
		`"queue_timeout":300,"claim_window":3600,"joins_per_ip_per_minute":0,"snapshot_ttl":10`, 1), nil, "FRA", "LHR")
	pops := e.stack.POPs
	(&visitor{e: e}).get("/") // takes the burst
	visitors := make([]*visitor, n)
	for i := range visitors {
		visitors[i] = &visitor{e: e, pop: pops[i%len(pops)].URL}
		if a := visitors[i].get("/", "Accept", "application/json"); a.status != http.StatusOK {
			t.Fatalf("join at %s: %d %s", pops[i%len(pops)].Name, a.status, a.body)
		}
	}
	tickets := e.tickets(visitors)
	// pollAll polls every visitor not yet admitted once, concurrently, and
	// returns how many polls that was.
	round := make([]int, n)
	pollAll := func(r int) int {
		var wg sync.WaitGroup
		polls := 0
		for i, v := range visitors {
			if round[i] != 0 {
				continue
			}
			polls++
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := v.poll()
				for tries := 1; p.Status == "busy" && tries < 20; tries++ {
					p = v.poll()
				}
				if p.Status == "admitted" {
					round[i] = r
				}
			}()
		}
		wg.Wait()
		return polls
	}
	// Before any admission every POP's first poll fills its snapshot; the
	// visitors far from the front then cost no store call (without
	// snapshots every poll costs one).
	e.restCalls()
	if polls, calls := pollAll(-1), e.restCalls(); calls >= polls {
		t.Errorf("%d store calls for %d polls of a still line over two POPs, want fewer", calls, polls)
	} else {
		t.Logf("a still line: %d store calls for %d polls", calls, polls)
	}
	// The admin panel is at FRA, whose snapshot its actions drop; LHR's
	// visitors far from the front learn of them when LHR's snapshot ends
	// (10 s): rounds go on until everyone is in, a minute at most.
	polls, calls := 0, 0
	for r, began := 1, time.Now(); time.Since(began) < time.Minute; r++ {
		e.admit(10)
		e.restCalls() // the admin panel's own
		waiting := pollAll(r)
		polls, calls = polls+waiting, calls+e.restCalls()
		if waiting == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if calls > polls {
		t.Errorf("%d store calls for %d polls while admitting", calls, polls)
	}
	t.Logf("while admitting: %d store calls for %d polls", calls, polls)
	// The store calls 10 tickets a round, in ticket order. A visitor
	// answered from a snapshot may learn of their call a poll or two late
	// (the gate's fromSnapshot), but no visitor is admitted before their turn.
	first := slices.Min(tickets)
	late := 0
	for i, tk := range tickets {
		called := int(tk-first)/10 + 1
		switch {
		case round[i] <= 0:
			t.Errorf("ticket %d never admitted", tk)
		case round[i] < called:
			t.Errorf("ticket %d admitted in round %d, before its turn in round %d", tk, round[i], called)
		case round[i] > called:
			late++
		}
	}
	t.Logf("%d of %d visitors learned of their call a round late or more", late, n)
}
