package attack

import (
	"net/http"
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
	e := start(t, shop(`{"paths":["/"],"max_active_users":1,"refresh":1,"claim_window":6,"queue_timeout":30,"inactivity_timeout":30}`), nil)
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

// TestALostAnswerCostsNoClaim: the store calls a visitor's ticket and
// turns it into their session, but the answer never reaches the edge (a
// timeout, a network fault), so the visitor sees the busy page. Their next
// poll gets that same session: not a new ticket at the back, and not a
// second place.
func TestALostAnswerCostsNoClaim(t *testing.T) {
	t.Parallel()
	e := start(t, shop(`{"paths":["/"],"max_active_users":2,"refresh":1,"claim_window":6}`), nil)
	shopper, v := e.visitor(), e.visitor()
	shopper.enter("/")
	e.control("shop", "pause", 0)
	if p := v.poll(); p.Status != "waiting" {
		t.Fatalf("setup: %+v, want waiting while entry is paused", p)
	}
	e.control("shop", "admit", 1) // calls v's ticket
	if l := e.line("shop"); l.called != 1 {
		t.Fatalf("setup: %d called, want v's ticket", l.called)
	}
	e.stack.Upstash.SetFaults(upstashdev.Faults{LoseAnswers: true})
	if a := v.get("/", "Accept", "application/json"); a.status != http.StatusServiceUnavailable {
		t.Fatalf("a poll whose answer was lost: %s, want the busy answer", a)
	}
	e.stack.Upstash.SetFaults(upstashdev.Faults{})
	if l := e.line("shop"); l.active != 2 || l.called != 0 {
		t.Fatalf("the lost poll ran: %d active, %d called; want the shopper and v active", l.active, l.called)
	}
	for i := 0; i < 2; i++ {
		if p := v.poll(); p.Status != "admitted" {
			t.Fatalf("poll %d after the lost answer: %+v, want admitted with the claimed session", i+1, p)
		}
	}
	if l := e.line("shop"); l.active != 2 || l.issued != 2 {
		t.Fatalf("after the lost answer: %d active, %d issued; want 2 and 2 (no second place, no new ticket)", l.active, l.issued)
	}
}

// TestAnOutageOnlyThePOPSawCostsNoPlace: the store is down for longer
// than the queue timeout and the inactivity timeout. Only a waiting
// visitor's polls meet it (the POP marks the line down); the admitted
// shopper makes no request, so no pass of theirs says a renewal failed.
// The POP's first call that succeeds reports the failure, so the store
// counts the outage as one and nobody loses their place: the waiting
// visitor still waits first, and the shopper's session renews. Issue 34:
// line time follows the wall clock except for outages the edge saw.
func TestAnOutageOnlyThePOPSawCostsNoPlace(t *testing.T) {
	t.Parallel()
	e := start(t, shop(`{"paths":["/"],"max_active_users":1,"refresh":1,"claim_window":6,"queue_timeout":30,"inactivity_timeout":30}`), nil)
	const outage = 36 * time.Second
	shopper, v := e.visitor(), e.visitor()
	shopper.enter("/")
	v.poll()
	p := v.poll()
	if p.Status != "waiting" {
		t.Fatalf("setup: %+v, want waiting", p)
	}
	e.stack.Upstash.SetFaults(upstashdev.Faults{Drop: true})
	// The visitor's page keeps polling (every poll fails, and marks the
	// line down again): 5 s apart, well within the marker's life.
	for end := time.Now().Add(outage); time.Now().Before(end); time.Sleep(5 * time.Second) {
		if a := v.get("/", "Accept", "application/json"); a.status != http.StatusServiceUnavailable {
			t.Fatalf("a poll while the store is down: %s, want the busy answer", a)
		}
	}
	e.stack.Upstash.SetFaults(upstashdev.Faults{})
	if got := v.poll(); got.Status != "waiting" || got.Ticket != p.Ticket || got.Ahead != 0 {
		t.Errorf("the waiting visitor after the outage: %+v, want still waiting first with ticket %d", got, p.Ticket)
	}
	if a := shopper.get("/after-the-outage"); !a.atOrigin() {
		t.Errorf("the shopper, silent through the outage: %s, want the origin", a)
	}
	if l := e.line("shop"); l.active != 1 || l.waiting != 1 {
		t.Errorf("after the outage: %d active, %d waiting; want the shopper's 1 and 1", l.active, l.waiting)
	}
}

// TestASilenceNobodySawFailCountsInFull: with one place, the shopper is
// admitted and a visitor waits; both leave without a word, and nobody
// calls for longer than the queue timeout and the inactivity timeout. The
// next visitor walks in at once. Issue 34: a silence with a ticket waiting
// counted 5 s, as an outage, so the newcomer found the place still held by
// the gone (eight hours later, in the case).
func TestASilenceNobodySawFailCountsInFull(t *testing.T) {
	t.Parallel()
	e := start(t, shop(`{"paths":["/"],"max_active_users":1,"refresh":1,"claim_window":6,"queue_timeout":30,"inactivity_timeout":30}`), nil)
	shopper, v := e.visitor(), e.visitor()
	shopper.enter("/")
	v.poll()
	if p := v.poll(); p.Status != "waiting" {
		t.Fatalf("setup: %+v, want waiting", p)
	}
	time.Sleep(33 * time.Second)
	newcomer := e.visitor()
	newcomer.poll() // the arrival pass
	if p := newcomer.poll(); p.Status != "admitted" {
		t.Errorf("the first visitor after the silence: %+v, want admitted at once", p)
	}
}
