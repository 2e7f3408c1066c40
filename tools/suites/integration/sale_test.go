package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/edge"
)

// TestSaleLifeCycleAtTheEdge walks a closed room's sale through the edge in
// virtual time, a millisecond either side of each time: closed, countdown,
// draw, open, closed again.
func TestSaleLifeCycleAtTheEdge(t *testing.T) {
	e := newEnv(t)
	pq := t0.Add(time.Hour)
	starts, ends := pq.Add(time.Hour), pq.Add(3*time.Hour)
	stamp := func(t time.Time) string { return t.Format(time.RFC3339) }
	e.config[edge.KeyRooms] = "sale"
	// The pre-queue's visitors do not poll in the hour before the start:
	// a queue timeout of two hours keeps their places (line time follows
	// the wall clock).
	e.config[edge.KeyRoomPrefix+"sale"] = fmt.Sprintf(`{"paths":["/"],"mode":"reject","queue_timeout":7200,"events":[{"name":"drop",
		"prequeue_from":%q,"starts":%q,"ends":%q,"overrides":{"max_active_users":2,"template":"drop.html"}}]}`,
		stamp(pq), stamp(starts), stamp(ends))
	e.templates["drop.html"] = "<p>Drop: place {{position}}</p>"
	const site = "https://sale.test/"
	ms := time.Millisecond
	json := withHeader("Accept", "application/json")

	e.now = pq.Add(-ms)
	if w := e.get(site); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "Closed for now") {
		t.Fatalf("a millisecond before the pre-queue: %d %s", w.Code, w.Body)
	}
	if n := e.storeCalls(); n != 0 {
		t.Fatalf("the closed room made %d store calls", n)
	}

	e.now = pq
	var cookies []string
	for i := 0; i < 4; i++ {
		w := e.get(site, json)
		p := decodePlace(t, w)
		if p.Status != "prequeue" || !strings.Contains(w.Body.String(), `"opens_in_seconds":3600`) {
			t.Fatalf("at the pre-queue's start: %s", w.Body)
		}
		cookies = append(cookies, strings.SplitN(w.HeaderMap.Get("Set-Cookie"), ";", 2)[0])
	}
	page := e.get(site, withCookie(cookies[0]))
	if body := page.Body.String(); !strings.Contains(body, "The sale opens soon") || !strings.Contains(body, `<dd id="wr-opens">1 h 00 min</dd>`) ||
		!strings.Contains(body, `data-refresh="10"`) || page.HeaderMap.Get("Refresh") != "" {
		t.Fatalf("the countdown page: %s", page.Body)
	}

	e.now = starts.Add(-ms)
	if w := e.get(site, withCookie(cookies[1]), json); decodePlace(t, w).Status != "prequeue" || !strings.Contains(w.Body.String(), `"opens_in_seconds":0`) ||
		!strings.Contains(w.Body.String(), `"refresh_seconds":1,`) {
		t.Fatalf("a millisecond before the start: %s", w.Body)
	}

	e.now = starts
	in, waiting := 0, 0
	for _, c := range cookies {
		w := e.get(site, withCookie(c))
		switch body := w.Body.String(); {
		case strings.Contains(body, "origin"):
			in++
		case strings.Contains(body, "<p>Drop: place "):
			waiting++
		default:
			t.Fatalf("at the start: %d %s", w.Code, body)
		}
	}
	if in != 2 || waiting != 2 {
		t.Fatalf("at the start %d got in and %d wait, want 2 and 2 (capacity 2 during the sale)", in, waiting)
	}

	e.now = ends
	if w := e.get(site, withCookie(cookies[0])); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "Closed for now") {
		t.Fatalf("at the end: %d %s", w.Code, w.Body)
	}
}
