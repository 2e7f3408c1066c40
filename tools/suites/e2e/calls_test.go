package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
)

// TestStoreCallsPerRequestKind counts, at the REST server, the store calls
// each kind of request makes through whichever wasm runs ($WASM): a build
// that sent each operation twice (as TinyGo 0.33's miscompiled script
// digest did, NOSCRIPT then EVAL) fails here, not only in a benchmark.
func TestStoreCallsPerRequestKind(t *testing.T) {
	t.Parallel()
	// The snapshot lives 10 s, so that the far visitor's two polls below
	// fall within one however slow the machine.
	e := startRoom(t, loadTimeout, strings.Replace(room, `"queue_timeout":300`, `"queue_timeout":300,"joins_per_ip_per_minute":0,"snapshot_ttl":10`, 1))
	(&visitor{e: e}).get("/") // takes the burst
	v := &visitor{e: e}
	origin := func(a answer) bool { return strings.Contains(a.body, "You reached the origin") }
	waiting := func(a answer) bool { return strings.Contains(a.body, "You are in line") }
	var before string
	// age signs the visitor's session as if renewed a heartbeat (30 s)
	// and a second ago.
	age := func() {
		p, err := e.keys.Verify("shop", v.cookie, time.Now())
		if err != nil || p.Kind != queue.Session {
			t.Errorf("the visitor's cookie is not a session pass: %+v %v", p, err)
			return
		}
		p.IssuedAt = time.Now().Add(-31 * time.Second)
		if v.cookie, err = e.keys.Sign(p); err != nil {
			t.Error(err)
		}
		before = v.cookie
	}
	kept := func(h heartbeatAnswer) bool { return len(h.Rooms) == 1 && h.Rooms[0].Active && h.NextSeconds == 30 }
	kinds := []struct {
		kind string
		run  func() bool // reports whether the answer was the right one
		want int
	}{
		{"join (new visitor, waits)", func() bool { return waiting(v.get("/")) }, 1},
		{"poll (waiting visitor)", func() bool { return waiting(v.get("/")) }, 1},
		{"poll that is called (ticket becomes a session)", func() bool {
			e.admit(1)
			e.restCalls() // the admin panel's own calls
			return origin(v.get("/"))
		}, 1},
		{"admitted within the heartbeat", func() bool { before = v.cookie; return origin(v.get("/a")) && v.cookie == before }, 0},
		{"admitted, heartbeat due (session renewed)", func() bool {
			// Sign the same session as if it had been renewed a heartbeat
			// and a second ago: the edge must renew it, once.
			age()
			return origin(v.get("/b")) && v.cookie != before
		}, 1},
		{"admitted again within the heartbeat", func() bool { return origin(v.get("/c")) }, 0},
		{"heartbeat script's ping within the heartbeat", func() bool { before = v.cookie; return kept(v.ping()) && v.cookie == before }, 0},
		{"heartbeat script's ping, heartbeat due", func() bool { age(); return kept(v.ping()) && v.cookie != before }, 1},
		{"heartbeat script's ping without a pass", func() bool { return len((&visitor{e: e}).ping().Rooms) == 0 }, 0},
		{"cookies page (back without the arrival pass)", func() bool {
			hops := dropsCookies(e).visit("GET", "/", nil)
			return len(hops) == 2 && hops[1].status == 403
		}, 0},
		{"bypass path", func() bool { return (&visitor{e: e}).get("/static/x.js").status == 200 }, 0},
		{"poll far from the front (the POP's snapshot fresh)", func() bool {
			// 60 join behind: the last is far beyond the fast-poll zone,
			// the burst and two refreshes of the admissions seen.
			var far *visitor
			for range 60 {
				far = &visitor{e: e}
				far.get("/")
			}
			far.get("/") // fills the snapshot if it is older than its TTL
			e.restCalls()
			before = far.cookie
			return waiting(far.get("/")) && far.cookie == before
		}, 0},
	}
	for _, k := range kinds {
		e.restCalls()
		ok := k.run()
		got := e.restCalls()
		t.Logf("store calls for %-48s %d", k.kind+":", got)
		if !ok {
			t.Errorf("%s: not the expected answer", k.kind)
		}
		if got != k.want {
			t.Errorf("%s: %d store calls, want %d", k.kind, got, k.want)
		}
	}
}
