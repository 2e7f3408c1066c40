package attack

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
)

func TestTwoTabsClaimingOneTicketShareOneSession(t *testing.T) {
	e := start(t, shop(`{"paths":["/"],"new_users_per_minute":0.01,"burst":1,"refresh":1,"claim_window":30}`), nil)
	e.visitor().enter("/") // takes the burst
	v := e.visitor()
	v.poll()
	if p := v.poll(); p.Status != "waiting" {
		t.Fatalf("setup: %+v, want waiting", p)
	}
	e.control("shop", "admit", 1)
	before := e.line("shop")
	// Two tabs poll the called ticket at once.
	tabs := []*visitor{v.copyTo("", ""), v.copyTo("", "")}
	answers := make([]answer, len(tabs))
	errs := make([]error, len(tabs))
	var wg sync.WaitGroup
	for i, tab := range tabs {
		wg.Add(1)
		go func(i int, tab *visitor) {
			defer wg.Done()
			answers[i], errs[i] = tab.fetch("/")
		}(i, tab)
	}
	wg.Wait()
	var sessions []string
	for i, tab := range tabs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !answers[i].atOrigin() {
			t.Fatalf("tab %d polling its called ticket: %s, want admitted", i+1, answers[i])
		}
		p, err := e.keys.Verify("shop", tab.cookies["wr_shop"], time.Now())
		if err != nil || p.Kind != queue.Session {
			t.Fatalf("tab %d holds %+v (%v), want a session", i+1, p, err)
		}
		sessions = append(sessions, p.SessionID)
	}
	if sessions[0] != sessions[1] {
		t.Fatalf("the two tabs hold sessions %s and %s, want one", sessions[0], sessions[1])
	}
	if l := e.line("shop"); l.active != before.active+1 || l.waiting != 0 {
		t.Fatalf("after the two tabs' polls: %d active, %d waiting; want %d active (one more) and none waiting", l.active, l.waiting, before.active+1)
	}
}

// copiedSession is a room with one place, taken by a visitor at
// clientIP(0, 0, 2) whose session pass is then copied.
func copiedSession(t *testing.T, bind string) (*env, *visitor) {
	t.Helper()
	def := `{"paths":["/"],"max_active_users":1}`
	if bind != "" {
		def = `{"paths":["/"],"max_active_users":1,"bind_session":"` + bind + `"}`
	}
	e := start(t, shop(def), nil)
	owner := &visitor{e: e, ip: clientIP(0, 0, 2), ua: "Mozilla/5.0 (owner's browser)"}
	owner.enter("/")
	return e, owner
}

// sentToLine checks that a copy of a session pass is sent to the line, not
// the origin, and that its owner still gets in.
func sentToLine(t *testing.T, e *env, owner, copied *visitor) {
	t.Helper()
	before := e.origin.reached()
	if a := copied.do(http.MethodGet, "/account", nil); a.atOrigin() || !a.queued() || e.origin.reached() != before {
		t.Fatalf("the copied session pass: %s; want the line, not the origin", a)
	}
	if a := owner.get("/account"); !a.atOrigin() {
		t.Fatalf("the pass's owner after the copy was refused: %s", a)
	}
}

func TestACopiedSessionPassIsSentToTheLine(t *testing.T) {
	e, owner := copiedSession(t, "") // bind_session's default: user_agent
	sentToLine(t, e, owner, owner.copyTo(owner.ip, "Mozilla/5.0 (someone else's browser)"))
}

func TestACopiedSessionPassFromAnotherNetworkIsSentToTheLine(t *testing.T) {
	e, owner := copiedSession(t, "ip_prefix")
	sentToLine(t, e, owner, owner.copyTo(clientIP(0, 1, 2), owner.ua))
	// The same /24 is the same network (an address that changed within it).
	if a := owner.copyTo(clientIP(0, 0, 3), owner.ua).get("/account"); !a.atOrigin() {
		t.Fatalf("the owner's pass from another address of its /24: %s, want the origin", a)
	}
}

// TestBindSessionNoneLetsACopiedPassThrough documents the trade-off of
// bind_session "none" (for visitors whose address and browser change): a
// copied session pass gets in.
func TestBindSessionNoneLetsACopiedPassThrough(t *testing.T) {
	e, owner := copiedSession(t, "none")
	if a := owner.copyTo(clientIP(0, 1, 2), "Mozilla/5.0 (someone else's browser)").get("/account"); !a.atOrigin() {
		t.Fatalf("with bind_session none, the copied pass: %s; want the origin", a)
	}
	if l := e.line("shop"); l.active != 1 {
		t.Fatalf("%d active, want 1", l.active)
	}
}

func TestACrossSiteBeaconCannotEndASession(t *testing.T) {
	e := start(t, shop(oneSeat), nil)
	v := e.visitor()
	v.enter("/")
	for _, header := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Origin", "https://attacker.example"},
		{"Origin", "null"},
		{"Sec-Fetch-Site", "cross-site", "Origin", "http://" + e.host},
	} {
		pass := v.cookies["wr_shop"]
		a := v.leave(header...)
		if a.status != http.StatusForbidden || v.cookies["wr_shop"] != pass {
			t.Errorf("a beacon with %q: %s, cookie cleared: %t; want 403 and the session kept", header, a, v.cookies["wr_shop"] != pass)
		}
		v.cookies["wr_shop"] = pass
		if l := e.line("shop"); l.active != 1 {
			t.Fatalf("after a beacon with %q, %d sessions are active; want the visitor's 1", header, l.active)
		}
	}
	if !v.get("/").atOrigin() {
		t.Fatal("the visitor lost the session to cross-site beacons")
	}
	// The room's own page's beacon still ends the session.
	if a := v.leave("Sec-Fetch-Site", "same-origin"); a.status != http.StatusNoContent {
		t.Fatalf("a same-origin beacon: %s, want 204", a)
	}
	// The place is held only while the ended session's pass could still
	// admit without asking the store (a heartbeat), then freed.
	active := 1
	for deadline := time.Now().Add(2 * time.Minute); active != 0 && time.Now().Before(deadline); time.Sleep(time.Second) {
		active = e.line("shop").active
	}
	if active != 0 {
		t.Fatalf("after a same-origin beacon, %d sessions are active; want 0", active)
	}
}

// TestAnEndedSessionsOldPassCannotOvershootCapacity: a visitor whose
// session ended (beacon, or the origin's revoke) keeps a copy of the old
// pass while the next visitor is let into the room's one place; the old
// pass never gets in once the next visitor is in.
func TestAnEndedSessionsOldPassCannotOvershootCapacity(t *testing.T) {
	for _, end := range []struct {
		name string
		end  func(v *visitor) answer
	}{
		{"left by beacon", func(v *visitor) answer { return v.leave("Sec-Fetch-Site", "same-origin") }},
		{"revoked by the origin", func(v *visitor) answer { return v.get("/command?c=revoke") }},
	} {
		t.Run(end.name, func(t *testing.T) {
			t.Parallel()
			e := start(t, shop(`{"paths":["/"],"max_active_users":1,"refresh":1,"claim_window":6,"inactivity_timeout":30}`), nil)
			a, next := e.visitor(), e.visitor()
			a.enter("/")
			if p := next.poll(); p.Status != "waiting" {
				t.Fatalf("setup: the next visitor %+v, want waiting", p)
			}
			old := a.copyTo(a.ip, a.ua)
			end.end(a)
			if _, kept := a.cookies["wr_shop"]; kept {
				t.Fatal("ending the session did not clear its cookie")
			}
			// Until the next visitor is in, the old pass may still get
			// in (one visitor at a time); after, never.
			deadline := time.Now().Add(3 * time.Minute)
			for nextIn := false; !nextIn; time.Sleep(time.Second) {
				if time.Now().After(deadline) {
					t.Fatal("the next visitor was never let in")
				}
				old.copyTo(old.ip, old.ua).do(http.MethodGet, "/old-pass", nil)
				nextIn = next.poll().Status == "admitted"
			}
			for i := 0; i < 3; i++ {
				if r := old.copyTo(old.ip, old.ua).do(http.MethodGet, "/old-pass", nil); r.atOrigin() {
					t.Fatalf("the ended session's old pass reached the origin while the next visitor holds the one place: %s", r)
				}
			}
			if l := e.line("shop"); l.active != 1 {
				t.Fatalf("%d active in a room of one", l.active)
			}
		})
	}
}
