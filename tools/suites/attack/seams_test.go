package attack

import (
	"net/http"
	"testing"
	"time"
)

// The seams of issue 23 on the request path: each door into a place
// (an arrival pass, an invite, a lapsed ticket or session) passes the
// same guards as a first join.

// lapsedRoom calls quickly and lets a called ticket lapse within seconds.
const lapsedRoom = `{"paths":["/"],"max_active_users":1,"refresh":1,"claim_window":6}`

// lapse lets the called ticket of v lapse: v stops polling past the claim
// window while another visitor keeps the room busy (line time runs as
// calls come).
func lapse(e *env, busy *visitor) {
	e.t.Helper()
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
		busy.poll()
	}
}

// TestALapsedInviteTicketIsNoPriorityPass: a one-use invite gives one
// priority place. Once that place lapses, its saved pass replayed gives no
// other in the priority lane: its holder joins the regular line as a
// newcomer, as anyone whose place is lost. Before issue 23 each replay
// was handed a new priority ticket (-2, -3, ...): one invite, unlimited
// priority places.
func TestALapsedInviteTicketIsNoPriorityPass(t *testing.T) {
	t.Parallel()
	e := start(t, shop(lapsedRoom), nil)
	e.visitor().enter("/")
	busy := e.visitor()
	busy.poll()
	p := &visitor{e: e, ip: clientIP(0, 23, 1)}
	if a := p.follow(mintInvite(e, "once", 1)); a.status != http.StatusSeeOther || ticketOf(e, p) != -1 {
		t.Fatalf("the invited client: %s, ticket %d; want 303 and priority ticket -1", a, ticketOf(e, p))
	}
	saved := p.copyTo(p.ip, "")
	e.control("shop", "admit", 1) // calls ticket -1, which its holder never claims
	lapse(e, busy)
	for i := 0; i < 5; i++ {
		replay := saved.copyTo(saved.ip, "")
		pl := replay.lanePoll()
		if pl.Priority || pl.Ticket < 0 || pl.Status == "admitted" {
			t.Fatalf("replay %d of the lapsed priority pass: %+v; want a regular place at the back", i+1, pl)
		}
	}
	if pl := busy.lanePoll(); pl.Status == "admitted" {
		t.Fatal("setup: the busy visitor was let in")
	}
}

// TestALapsedTicketPassIsNoJoinToken: a ticket whose place lapsed, replayed
// forty times from one address, gets forty newcomers' arrival passes, and
// their joins are limited as any (joins_per_ip_per_minute, 30 by default).
// Before issue 23 each replay got a new ticket with no 429.
func TestALapsedTicketPassIsNoJoinToken(t *testing.T) {
	t.Parallel()
	e := start(t, shop(lapsedRoom), nil)
	e.visitor().enter("/")
	busy := e.visitor()
	ip := clientIP(0, 23, 2)
	v := &visitor{e: e, ip: ip}
	v.poll()
	busy.poll()
	saved := v.copyTo(ip, "")
	e.control("shop", "admit", 1) // calls v's ticket, which v never claims
	lapse(e, busy)
	refused := 0
	for i := 0; i < 40; i++ {
		a := saved.copyTo(ip, "").get("/")
		switch {
		case a.status == http.StatusTooManyRequests:
			refused++
		case !a.queued():
			t.Fatalf("replay %d of the lapsed ticket pass: %s, want the line or 429", i+1, a)
		}
	}
	// One join was v's own; 29 more may follow within the minute.
	if refused < 40-29 {
		t.Fatalf("%d of 40 replays of a lapsed ticket pass were refused, want at least %d: each place must pass the join limit", refused, 40-29)
	}
}

// TestALapsedSessionWaitsWhileTheRoomQueuesAll: with one place, V is in
// and W waits; the operator switches queue-all on and V's session lapses.
// V's next request is a newcomer's: it waits, as W does. Before issue 23
// the store took the free place back for V, past queue-all and past W.
func TestALapsedSessionWaitsWhileTheRoomQueuesAll(t *testing.T) {
	t.Parallel()
	e := start(t, shop(`{"paths":["/"],"max_active_users":1,"refresh":1,"inactivity_timeout":10}`), nil)
	v, w := e.visitor(), e.visitor()
	v.enter("/")
	if p := w.poll(); p.Status != "waiting" {
		t.Fatalf("setup: W %+v, want waiting", p)
	}
	e.control("shop", "queue_all", 0)
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
		if p := w.poll(); p.Status != "waiting" {
			t.Fatalf("W under queue-all: %+v, want waiting", p)
		}
	}
	if a := v.get("/"); a.atOrigin() {
		t.Fatalf("V back after its session lapsed under queue-all: %s, want the line", a)
	}
	if p := w.poll(); p.Status != "waiting" {
		t.Fatalf("W after V came back: %+v, want still waiting", p)
	}
}
