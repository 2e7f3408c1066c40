package pagetest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/headless"
)

// heartbeatPath is where the heartbeat script pings (HEART's edge route).
const heartbeatPath = "/_wr/heartbeat"

// heartbeats counts the pings of the tab's page the edge answered 200.
func heartbeats(tab *headless.Tab) int {
	n := 0
	for _, r := range tab.Responses() {
		if u, err := url.Parse(r.URL); err == nil && u.Path == heartbeatPath && r.Status == http.StatusOK {
			n++
		}
	}
	return n
}

// reading opens path on the origin as the room's first visitor, who gets
// in at once, and checks the origin's page includes the heartbeat script.
func reading(t *testing.T, tab *headless.Tab, st *stack, path string) {
	t.Helper()
	if status := open(tab, st.HostURL+path); status != http.StatusOK {
		t.Fatalf("%s answered %d", path, status)
	}
	if !headless.Eval[bool](tab, "the origin's page", `document.body.textContent.includes("`+devstack.OriginReached+`")`) {
		t.Fatalf("the room's first visitor did not reach the origin's page at %s", path)
	}
	if !headless.Eval[bool](tab, "the heartbeat tag", `!!document.querySelector('script[src^="/_wr/heartbeat.js"]')`) {
		t.Fatal(`the demo origin's page has no <script src="/_wr/heartbeat.js..."> tag`)
	}
}

// TestOriginPageScript: see the package's doc.
func TestOriginPageScript(t *testing.T) {
	headless.Chromium(t, suite)
	st := start(t)
	br := headless.Start(t, suite, 1280, 800)

	// The reading room forgets an idle visitor after 10 s; its only place
	// is the reader's, and a second visitor waits for it, polling as its
	// queue page does (which also keeps the line's clock running: a
	// silent room is an outage, and lapses nobody). The reader makes no
	// request of the origin, only the script's pings: past twice the
	// timeout, the second visitor must still be waiting.
	t.Run("heartbeat", func(t *testing.T) {
		const inactivity = 10 * time.Second
		reader := br.Tab(t, nil)
		reading(t, reader, st, "/read/article")
		began := time.Now()
		next := st.visitor()
		next.waits(t, "/read/")
		if !headless.Await(within+2*inactivity, func() bool {
			time.Sleep(2 * time.Second) // the room's refresh
			if p := next.place(t, "/read/"); p.Status != "waiting" {
				t.Fatalf("after %v (the inactivity timeout is %v, %d heartbeats answered), the next visitor is %s: the reader's heartbeats did not keep their session",
					time.Since(began).Round(time.Second), inactivity, heartbeats(reader), p.Status)
			}
			return heartbeats(reader) >= 4 && time.Since(began) > 2*inactivity
		}) {
			t.Fatalf("%d heartbeats answered in %v, want 4 or more", heartbeats(reader), time.Since(began).Round(time.Second))
		}
		reading(t, reader, st, "/read/article")
		checkProblems(t, reader)
	})

	// In the exit room (leave_beacon) the visitor's page going away ends
	// their session at once: the edge says so, and the next visitor gets
	// the place when the ended pass can no longer admit (10 s).
	t.Run("beacon", func(t *testing.T) {
		leaver := br.Tab(t, nil)
		reading(t, leaver, st, "/away/story")
		// The script learns from its first answer that the room wants
		// the beacon.
		if !headless.Await(within, func() bool { return heartbeats(leaver) >= 1 }) {
			t.Fatal("the origin's page sent no heartbeat")
		}
		next := st.visitor()
		next.waits(t, "/away/")
		checkProblems(t, leaver)
		leaver.Do("leaving the page", chromedp.Navigate("about:blank"))
		if !headless.Await(within, func() bool { return strings.Contains(st.logs.String(), "room exit: visitor left") }) {
			t.Fatal("the reader's page went away and the edge ended no session: no departure beacon came")
		}
		var p devstack.Place
		if !headless.Await(within, func() bool {
			time.Sleep(time.Second) // as a waiting page polls, not faster
			p = next.place(t, "/away/")
			return p.Status == "admitted"
		}) {
			t.Fatalf("after the reader left, the next visitor is %s, want admitted", p.Status)
		}
	})
}
