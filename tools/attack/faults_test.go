package attack

import (
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

// TestAStoreOutageCostsNobodyTheirPlaceOrSession stops the store for
// longer than the room's claim window, queue timeout and heartbeat, while
// an admitted shopper browses and two visitors keep polling, as their
// pages do; afterwards each has what they had.
func TestAStoreOutageCostsNobodyTheirPlaceOrSession(t *testing.T) {
	t.Parallel()
	// queue_timeout 30 (the smallest allowed), claim_window 6, heartbeat
	// 10 s (a third of inactivity_timeout).
	e := start(t, shop(`{"paths":["/"],"max_active_users":1,"refresh_seconds":1,"claim_window":6,"queue_timeout":30,"inactivity_timeout":30}`), nil)
	const outage = 45 * time.Second
	shopper, first, second := e.visitor(), e.visitor(), e.visitor()
	shopper.enter("/")
	first.poll()
	second.poll()
	p1, p2 := first.poll(), second.poll()
	if p1.Status != "waiting" || p2.Status != "waiting" || p2.Ticket <= p1.Ticket {
		t.Fatalf("setup: %+v and %+v, want two waiting in order", p1, p2)
	}
	e.stack.Upstash.SetFaults(upstashdev.Faults{Drop: true})
	for end := time.Now().Add(outage); time.Now().Before(end); time.Sleep(2 * time.Second) {
		shopper.get("/browsing")
		first.poll()
		second.poll()
	}
	e.stack.Upstash.SetFaults(upstashdev.Faults{})
	if p := first.poll(); p.Status != "waiting" || p.Ticket != p1.Ticket || p.Ahead != 0 {
		t.Errorf("the first in line after the outage: %+v, want still waiting with ticket %d and nobody ahead", p, p1.Ticket)
	}
	if p := second.poll(); p.Status != "waiting" || p.Ticket != p2.Ticket || p.Ahead != 1 {
		t.Errorf("the second in line after the outage: %+v, want still waiting with ticket %d behind one", p, p2.Ticket)
	}
	if a := shopper.get("/after-the-outage"); !a.atOrigin() {
		t.Errorf("the admitted shopper after the outage: %s, want the origin", a)
	}
	if l := e.line("shop"); l.active != 1 || l.waiting != 2 {
		t.Errorf("after the outage: %d active, %d waiting; want the shopper's 1 and 2", l.active, l.waiting)
	}
}
