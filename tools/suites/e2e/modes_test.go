package e2e

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

// These tests run in real time through the real wasm, with the shortest
// windows the settings allow, in parallel to overlap their waits.

const origin = "You reached the origin"

func (v *visitor) in(path string) bool {
	v.e.t.Helper()
	return strings.Contains(v.get(path).body, origin)
}

// eventually polls cond about once a second for up to a minute, and
// reports whether it came true: for what the line does at its own pace
// (a place held until a pass lapses), never a duration asserted. Each
// call of cond makes requests, which also keeps the line's clock going.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		if cond() {
			return true
		}
	}
	return false
}

func (v *visitor) leave() answer {
	return v.do(http.MethodPost, "/_wr/leave", nil)
}

var activeCell = regexp.MustCompile(`<td>shop</td><td>\w+</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td>`)

// stats reads waiting and active from the admin panel.
func (e *env) stats() (waiting, active string) {
	e.t.Helper()
	m := activeCell.FindStringSubmatch(e.admin(http.MethodGet, "", nil, adminPassword).body)
	if m == nil {
		e.t.Fatal("no shop row on the admin panel")
	}
	return m[1], m[4]
}

func (e *env) control(action string) {
	e.t.Helper()
	page := e.admin(http.MethodGet, "", nil, adminPassword)
	m := csrfField.FindStringSubmatch(page.body)
	if m == nil {
		e.t.Fatal("no CSRF token")
	}
	if a := e.admin(http.MethodPost, "/"+action, url.Values{"room": {"shop"}, "csrf": {m[1]}}, adminPassword); a.status != http.StatusSeeOther {
		e.t.Fatalf("%s: %d %s", action, a.status, a.body)
	}
}

func TestCapacityFreedByBeacon(t *testing.T) {
	t.Parallel()
	// inactivity 10 s: a heartbeat of 3 s, how long a's pass admits
	// without asking the store, and so how long a's place is held.
	e := startRoom(t, loadTimeout, `{"paths":["/"],"max_active_users":2,"refresh":1,"claim_window":6,"inactivity_timeout":10}`)
	a, b, c := &visitor{e: e}, &visitor{e: e}, &visitor{e: e}
	if !a.in("/") || !b.in("/") {
		t.Fatal("the first two visitors should fill the capacity of 2")
	}
	if c.in("/") {
		t.Fatal("a third visitor got in past a capacity of 2")
	}
	if w, act := e.stats(); w != "1" || act != "2" {
		t.Fatalf("admin shows %s waiting, %s active; want 1 and 2", w, act)
	}
	l := a.leave()
	if l.status != http.StatusNoContent || !strings.Contains(strings.Join(l.header.Values("Set-Cookie"), ";"), "wr_shop=; Path=/; Max-Age=0") {
		t.Fatalf("beacon: %d %v", l.status, l.header)
	}
	// a's place is held until a's pass would have to ask the store, so
	// that no copy of it can overshoot the capacity; then it is c's.
	if !eventually(func() bool { return c.in("/") }) {
		t.Fatal("the departure did not free the place for the next in line")
	}
}

func TestSessionExpiresByInactivity(t *testing.T) {
	t.Parallel()
	e := startRoom(t, loadTimeout, `{"paths":["/"],"max_active_users":1,"refresh":1,"claim_window":6,"inactivity_timeout":10,"session_duration":60}`)
	a, b := &visitor{e: e}, &visitor{e: e}
	if !a.in("/") || b.in("/") {
		t.Fatal("setup: a in, b waiting")
	}
	// b keeps polling, as a waiting page does: the line's clock runs
	// while the room is asked (a silent room is an outage, and costs
	// nobody their place), and a's session lapses.
	if !eventually(func() bool { return b.in("/") }) {
		t.Fatal("a's idle session did not lapse after the 10 s inactivity timeout")
	}
	// a comes back: the renewal finds the session gone, the room is full,
	// so a queues again.
	if a.in("/") {
		t.Fatal("a lapsed visitor walked back into a full room")
	}
}

func TestQueueTimeoutAndNoShow(t *testing.T) {
	t.Parallel()
	e := startRoom(t, loadTimeout, `{"paths":["/"],"max_active_users":1,"refresh":1,"claim_window":6,"queue_timeout":30}`)
	a, gone, noShow, c := &visitor{e: e}, &visitor{e: e}, &visitor{e: e}, &visitor{e: e}
	a.get("/")
	gone.get("/")   // ticket 2: never polls again
	noShow.get("/") // ticket 3: polls until just before its turn
	c.get("/")      // ticket 4: keeps polling
	deadline := time.Now().Add(31 * time.Second)
	for time.Now().Before(deadline) {
		noShow.poll()
		c.poll()
		time.Sleep(2 * time.Second)
	}
	// Ticket 2 stopped polling 31 s ago (> queue_timeout): it is passed
	// over. Ticket 3 is called when a leaves, but never comes.
	a.leave()
	if p := c.poll(); p.Status != "waiting" {
		t.Fatalf("ticket 4 inside ticket 3's claim window: %+v", p)
	}
	// c keeps polling through ticket 3's claim window (6 s).
	for end := time.Now().Add(7 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
		c.poll()
	}
	if p := c.poll(); p.Status != "admitted" {
		t.Fatalf("ticket 4 after ticket 3's claim window: %+v, want admitted", p)
	}
	for name, v := range map[string]*visitor{"queue timeout": gone, "no-show": noShow} {
		if p := v.poll(); p.Status != "waiting" || p.Ticket <= 4 {
			t.Fatalf("%s back late: %+v, want a new ticket at the back", name, p)
		}
	}
}

func TestPauseAndQueueAll(t *testing.T) {
	t.Parallel()
	e := startRoom(t, loadTimeout, `{"paths":["/"],"max_active_users":3,"refresh":1,"claim_window":6}`)
	a, b, c := &visitor{e: e}, &visitor{e: e}, &visitor{e: e}
	if !a.in("/") {
		t.Fatal("setup")
	}
	e.control("pause")
	if b.in("/") {
		t.Fatal("a newcomer got in while paused, though places were free")
	}
	e.admit(1) // called while paused: admit N still works
	e.control("queue_all")
	if b.in("/") {
		t.Fatal("a called visitor got in under queue-all")
	}
	if c.in("/") {
		t.Fatal("a newcomer got in under queue-all")
	}
	if !a.in("/cart") {
		t.Fatal("an active session was stopped by queue-all")
	}
	e.control("resume")
	if !b.in("/") || !c.in("/") {
		t.Fatal("after resume the held and waiting visitors should get in")
	}
}

func TestRejectAndPassthroughModes(t *testing.T) {
	t.Parallel()
	closed := startRoom(t, loadTimeout, `{"paths":["/"],"mode":"reject"}`)
	a := (&visitor{e: closed}).get("/")
	if a.status != http.StatusServiceUnavailable || !strings.Contains(a.body, "Closed for now") || closed.restCalls() != 0 {
		t.Fatalf("reject: %d %.80s", a.status, a.body)
	}
	open := startRoom(t, loadTimeout, `{"paths":["/"],"mode":"passthrough"}`)
	for i := 0; i < 5; i++ {
		if !(&visitor{e: open}).in("/") {
			t.Fatal("passthrough queued a visitor")
		}
	}
	if w, act := open.stats(); w != "0" || act != "5" {
		t.Fatalf("passthrough counted %s waiting, %s active; want 0 and 5", w, act)
	}
}

func TestStoreErrorModes(t *testing.T) {
	t.Parallel()
	e := startRoom(t, storeTimeout, `{"paths":["/"],"max_active_users":5,"on_store_error":"open"}`)
	e.stack.Upstash.SetFaults(upstashdev.Faults{Drop: true})
	v := &visitor{e: e}
	a := v.get("/headers")
	if a.status != 200 || !strings.Contains(a.body, "Waiting-Room-Fail-Open: store-unavailable") {
		t.Fatalf("on_store_error open: %d %s", a.status, a.body)
	}
	if !strings.Contains(e.logs.String(), "failing open") {
		t.Fatal("no log line says the room failed open")
	}
	hold := startRoom(t, storeTimeout, `{"paths":["/"],"max_active_users":5,"on_store_error":"hold"}`)
	hold.stack.Upstash.SetFaults(upstashdev.Faults{Status: 503})
	if a := (&visitor{e: hold}).get("/"); a.status != http.StatusServiceUnavailable || !strings.Contains(a.body, "We are busy") {
		t.Fatalf("on_store_error hold: %d %.80s", a.status, a.body)
	}
}

func TestOriginCommands(t *testing.T) {
	t.Parallel()
	e := startRoom(t, loadTimeout, `{"paths":["/"],"max_active_users":1,"refresh":1,"claim_window":6,"inactivity_timeout":10}`)
	a, b, c, d := &visitor{e: e}, &visitor{e: e}, &visitor{e: e}, &visitor{e: e}
	a.get("/")
	b.get("/")
	c.get("/")
	d.get("/")
	// The origin grants two more places beyond the capacity.
	r := a.get("/command?c=admit=2")
	if r.header.Get("Waiting-Room-Command") != "" {
		t.Fatal("the command header reached the visitor")
	}
	if !b.in("/") || !c.in("/") || d.in("/") {
		t.Fatal("admit=2 should let exactly the next two in")
	}
	// As an operator's admit would be, it is in the room's audit log.
	logs, err := e.stack.Store().Audit(context.Background(), []store.AuditRead{{Room: "shop", Limit: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 || len(logs[0]) != 1 || logs[0][0].Via != "origin" || logs[0][0].Action != store.OpAdmit || logs[0][0].N != 2 {
		t.Fatalf("audit log %+v, want the origin's admit of 2", logs)
	}
	// The origin ends a's session: a's cookie is cleared and a queues again.
	r = a.get("/command?c=revoke")
	if !strings.Contains(strings.Join(r.header.Values("Set-Cookie"), ";"), "wr_shop=; Path=/; Max-Age=0") {
		t.Fatalf("revoke did not clear the cookie: %v", r.header)
	}
	if !strings.Contains(e.logs.String(), "origin revoked session") {
		t.Fatal("the revoke was not logged")
	}
	// a's place is held while a's pass could still admit without the
	// store (a 3 s heartbeat here), then freed.
	if !eventually(func() bool { _, act := e.stats(); return act == "2" }) {
		_, act := e.stats()
		t.Fatalf("after the revoke %s sessions are active, want 2 (b and c)", act)
	}
}

func TestRandomMode(t *testing.T) {
	t.Parallel()
	e := startRoom(t, loadTimeout, `{"paths":["/"],"mode":"random","max_active_users":2,"refresh":1,"claim_window":6}`)
	var waiting []*visitor
	for i := 0; i < 8; i++ {
		v := &visitor{e: e}
		if !v.in("/") {
			waiting = append(waiting, v)
		}
	}
	if len(waiting) != 6 {
		t.Fatalf("%d of 8 wait with a capacity of 2, want 6", len(waiting))
	}
	e.admit(6)
	for i, v := range waiting {
		if !v.in("/") {
			t.Fatalf("waiting visitor %d not admitted after admit 6", i)
		}
	}
}
