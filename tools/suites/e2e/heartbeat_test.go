package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/heartbeat"
)

// heartbeatAnswer is the heartbeat's JSON answer.
type heartbeatAnswer struct {
	Rooms []struct {
		Room   string `json:"room"`
		Active bool   `json:"active"`
	} `json:"rooms"`
	NextSeconds int  `json:"next_seconds"`
	LeaveBeacon bool `json:"leave_beacon"`
}

// ping sends the heartbeat as the script does, and reads its answer.
func (v *visitor) ping() heartbeatAnswer {
	v.e.t.Helper()
	a := v.do1(http.MethodPost, heartbeat.Path, nil, "Accept", "application/json", "Sec-Fetch-Site", "same-origin")
	var h heartbeatAnswer
	if err := json.Unmarshal([]byte(a.body), &h); a.status != http.StatusOK || err != nil || a.header.Get("Cache-Control") != "no-store" {
		v.e.t.Fatalf("heartbeat: %d %v %q: %v", a.status, a.header, a.body, err)
	}
	return h
}

// TestHeartbeatKeepsAReader: in a room of one with the shortest inactivity
// timeout (10 s), a reader whose page pings the heartbeat keeps their
// session for well past the timeout while the next visitor polls in vain;
// once the pings stop, the place lapses and the next visitor gets in. The
// line's clock is the real one (the guest's), so the test runs for about
// half a minute.
func TestHeartbeatKeepsAReader(t *testing.T) {
	t.Parallel()
	e := startRoom(t, loadTimeout, `{"paths":["/"],"max_active_users":1,"refresh":1,"claim_window":6,"inactivity_timeout":10,"session_duration":600,"leave_beacon":true}`)
	a, b := &visitor{e: e}, &visitor{e: e}
	page := a.get("/article")
	if !strings.Contains(page.body, origin) || b.in("/") {
		t.Fatal("setup: a in, b waiting")
	}
	if !strings.Contains(page.body, heartbeat.Tag()) {
		t.Fatalf("the demo origin's page does not include the heartbeat tag %s", heartbeat.Tag())
	}
	if h := (&visitor{e: e}).ping(); len(h.Rooms) != 0 || h.NextSeconds != 0 {
		t.Fatalf("a visitor without a pass got %+v, want no rooms and nothing to keep", h)
	}
	// a reads without a request of their own for 2.5 inactivity timeouts,
	// pinging every second (the script pings every next_seconds; faster
	// here so a slow machine cannot stretch a gap past the timeout); b
	// polls all along, which runs the line's clock.
	for until := time.Now().Add(25 * time.Second); time.Now().Before(until); time.Sleep(time.Second) {
		h := a.ping()
		if len(h.Rooms) != 1 || h.Rooms[0].Room != "shop" || !h.Rooms[0].Active || h.NextSeconds != 4 || !h.LeaveBeacon {
			t.Fatalf("heartbeat answer %+v, want shop active, next in 4 s (a third of 10, rounded up), beacon", h)
		}
		if b.in("/") {
			t.Fatal("the reader's place went to the next visitor while the page kept its heartbeat")
		}
	}
	if !a.in("/more") {
		t.Fatal("the reader kept by heartbeats was sent to the line")
	}
	// The page is hidden: no more pings, and the place lapses.
	if !eventually(func() bool { return b.in("/") }) {
		t.Fatal("the reader's place did not lapse once the heartbeat stopped")
	}
	if h := a.ping(); len(h.Rooms) != 1 || h.Rooms[0].Active || h.NextSeconds != 0 {
		t.Fatalf("a lapsed reader's heartbeat got %+v, want shop inactive and nothing to keep", h)
	}
}

// TestHeartbeatScriptServed: the wasm serves the script as it is built,
// cacheable for a year under its version, with no store call.
func TestHeartbeatScriptServed(t *testing.T) {
	t.Parallel()
	e := start(t, loadTimeout)
	e.restCalls()
	a := (&visitor{e: e}).get(heartbeat.ScriptPath + "?v=" + heartbeat.Version())
	h := a.header
	if a.status != http.StatusOK || a.body != heartbeat.Script || h.Get("Content-Type") != "text/javascript; charset=utf-8" ||
		h.Get("Cache-Control") != "public, max-age=31536000, immutable" || h.Get("ETag") != `"`+heartbeat.Version()+`"` {
		t.Fatalf("script: %d %v, %d bytes", a.status, h, len(a.body))
	}
	if n := e.restCalls(); n != 0 {
		t.Errorf("serving the script made %d store calls", n)
	}
}
