package contract

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

// env is the waiting room under test, natively or as wasm.
type env interface {
	// send sends one request from ip and reads the answer; it follows
	// no redirect.
	send(t *testing.T, ip, method, target string, header ...string) answer
	// storeCalls counts the store requests since the last call.
	storeCalls() int
	// faults injects failures into every store request.
	faults(f upstashdev.Faults)
}

// rooms are the suite's rooms, with the event's times around now: a shop
// that lets one visitor in and answers scripts on https://spa.test, a
// closed room, one that lets a network join once a minute, one that asks
// newcomers for a proof of work, and a sale whose pre-queue is open.
func rooms(now time.Time) [][2]string {
	stamp := func(d time.Duration) string { return now.Add(d).UTC().Truncate(time.Second).Format(time.RFC3339) }
	return [][2]string{
		{"shop", `{"paths":["/"],"max_active_users":1,"cors_origins":["https://spa.test"]}`},
		{"closed", `{"paths":["/closed/"],"mode":"reject"}`},
		{"limited", `{"paths":["/limited/"],"max_active_users":5,"joins_per_ip_per_minute":1}`},
		{"door", `{"paths":["/door/"],"max_active_users":5,"proof_of_work":12,"snapshot_ttl":0}`},
		{"drop", fmt.Sprintf(`{"paths":["/drop/"],"mode":"reject","events":[{"name":"drop","prequeue_from":%q,"starts":%q,"ends":%q,
			"overrides":{"max_active_users":1}}]}`, stamp(-time.Hour), stamp(time.Hour), stamp(48*time.Hour))},
	}
}

// client is a visitor's client from its own address: a browser keeps
// cookies; an app (headerPass) keeps its passes from Waiting-Room-Pass
// answers and sends them back in the header.
type client struct {
	e          env
	ip         string
	headerPass bool
	passes     map[string]string
}

func newClient(e env, ip string, headerPass bool) *client {
	return &client{e: e, ip: ip, headerPass: headerPass, passes: map[string]string{}}
}

// get asks for target as JSON with the passes held and the extra header
// pairs, and keeps the passes it is given.
func (c *client) get(t *testing.T, target string, extra ...string) answer {
	t.Helper()
	var pairs []string
	for name, v := range c.passes {
		pairs = append(pairs, name+"="+v)
	}
	h := []string{"Accept", "application/json"}
	switch {
	case c.headerPass && len(pairs) == 0:
		h = append(h, edge.PassHeader, "none")
	case c.headerPass:
		h = append(h, edge.PassHeader, strings.Join(pairs, "; "))
	case len(pairs) > 0:
		h = append(h, "Cookie", strings.Join(pairs, "; "))
	}
	a := c.e.send(t, c.ip, http.MethodGet, target, append(h, extra...)...)
	given := a.header.Values("Set-Cookie")
	if c.headerPass {
		given = a.header.Values(edge.PassHeader)
	}
	for _, g := range given {
		pair, _, _ := strings.Cut(g, ";")
		name, v, _ := strings.Cut(pair, "=")
		if v == "" {
			delete(c.passes, name)
		} else {
			c.passes[name] = v
		}
	}
	return a
}

// exercise meets every state of the document through e. optionsBypassed
// says whether a global bypass rule lets OPTIONS through (as
// devconfig.json's does): a preflight from an unlisted origin then goes
// to the origin, as the operator asked; without it, the edge refuses it.
func exercise(t *testing.T, e env, optionsBypassed bool) {
	s := loadSchema(t)
	poll := []string{edge.PollHeader, "1"}

	// An app without a cookie jar: joining without a redirect, then
	// (the line empty) admitted on its poll, then through to the origin.
	app := newClient(e, "127.0.3.1", true)
	a := s.check(t, app.get(t, "/", poll...))
	if a.state != "joining" || a.status != http.StatusAccepted || a.header.Get("Location") != "" || app.passes["wr_shop"] == "" {
		t.Fatalf("an app's arrival: %s, Location %q, passes %v", a, a.header.Get("Location"), app.passes)
	}
	a = s.check(t, app.get(t, "/?item=7", poll...))
	if a.state != "admitted" || !strings.Contains(string(a.body), `"url":"/?item=7"`) {
		t.Fatalf("the app's poll: %s", a)
	}
	a = app.get(t, "/?item=7")
	if a.status != http.StatusOK || !strings.Contains(string(a.body), devstack.OriginReached) {
		t.Fatalf("the admitted app's request did not pass through: %s", a)
	}

	// A browser's fetch: the arrival redirect, then a place behind the app.
	browser := newClient(e, "127.0.3.2", false)
	a = s.check(t, browser.get(t, "/", poll...))
	if a.state != "joining" || a.status != http.StatusTemporaryRedirect || devstack.Unmarked(a.header.Get("Location")) != "/" {
		t.Fatalf("a browser's arrival: %s, Location %q", a, a.header.Get("Location"))
	}
	a = s.check(t, browser.get(t, "/", append(poll, "Origin", "https://spa.test")...))
	if a.state != "waiting" || !strings.Contains(string(a.body), `"position":1,"ahead":0`) {
		t.Fatalf("the browser's place: %s", a)
	}
	if got := a.header.Get("Access-Control-Allow-Origin"); got != "https://spa.test" || a.header.Get("Access-Control-Allow-Credentials") != "true" ||
		!strings.Contains(a.header.Get("Access-Control-Expose-Headers"), edge.PassHeader) {
		t.Errorf("CORS for a listed origin: %v", a.header)
	}

	// A fetch that keeps no cookies (credentials "omit", or across
	// sites): the arrival redirect once, then "cookies" with a fresh
	// arrival pass in the header, with which it joins.
	omits := newClient(e, "127.0.3.5", false)
	a = s.check(t, omits.get(t, "/?item=8"))
	marked := a.header.Get("Location")
	delete(omits.passes, "wr_shop")
	a = s.check(t, omits.get(t, marked))
	if a.state != "cookies" || !strings.Contains(string(a.body), `"cookie":"wr_shop","header":"Waiting-Room-Pass","url":"/?item=8"`) ||
		len(a.header.Values("Set-Cookie")) != 0 || !strings.HasPrefix(a.header.Get(edge.PassHeader), "wr_shop=ey") {
		t.Fatalf("a fetch back from the arrival redirect without the pass: %s, %v", a, a.header)
	}
	app = newClient(e, "127.0.3.5", true)
	_, app.passes["wr_shop"], _ = strings.Cut(a.header.Get(edge.PassHeader), "=")
	if a = s.check(t, app.get(t, "/?item=8")); a.state != "waiting" {
		t.Errorf("the pass of the cookies answer, sent in the header: %s", a)
	}

	// Preflights: answered at the edge, no store call; an unlisted
	// origin's reaches the origin only by the operator's bypass rule.
	e.storeCalls()
	for _, origin := range []string{"https://spa.test", "https://evil.test"} {
		p := e.send(t, "127.0.3.2", http.MethodOptions, "/api/cart", "Origin", origin, "Access-Control-Request-Method", "POST",
			"Access-Control-Request-Headers", "content-type, waiting-room-pass")
		listed := origin == "https://spa.test"
		want := http.StatusForbidden
		switch {
		case listed:
			want = http.StatusNoContent
		case optionsBypassed:
			want = http.StatusOK
		}
		if p.status != want || strings.Contains(string(p.body), devstack.OriginReached) != (!listed && optionsBypassed) {
			t.Errorf("preflight from %s: %s", origin, p)
		}
		if allowed := p.header.Get("Access-Control-Allow-Origin"); (allowed != "") != listed {
			t.Errorf("preflight from %s: Access-Control-Allow-Origin %q", origin, allowed)
		}
		if listed && !strings.Contains(p.header.Get("Access-Control-Allow-Headers"), "content-type") {
			t.Errorf("preflight from %s: Access-Control-Allow-Headers %q", origin, p.header.Get("Access-Control-Allow-Headers"))
		}
	}
	if n := e.storeCalls(); n != 0 {
		t.Errorf("preflights made %d store calls", n)
	}

	// Closed.
	if a = s.check(t, browser.get(t, "/closed/")); a.state != "closed" {
		t.Errorf("closed room: %s", a)
	}

	// A sale's pre-queue.
	fan := newClient(e, "127.0.3.3", false)
	s.check(t, fan.get(t, "/drop/", poll...))
	if a = s.check(t, fan.get(t, "/drop/", poll...)); a.state != "prequeue" {
		t.Errorf("pre-queue: %s", a)
	}

	// Limited: a network's second join within the minute.
	first := newClient(e, "127.0.3.4", true)
	s.check(t, first.get(t, "/limited/"))
	s.check(t, first.get(t, "/limited/", poll...))
	second := newClient(e, "127.0.3.4", true)
	s.check(t, second.get(t, "/limited/"))
	if a = s.check(t, second.get(t, "/limited/")); a.state != "limited" {
		t.Errorf("a second join from the network: %s", a)
	}

	// Work: an app is asked for the proof of work, asked again without
	// it, and joins with it.
	worker := newClient(e, "127.0.3.5", true)
	a = s.check(t, worker.get(t, "/door/"))
	var w devstack.Place
	if err := json.Unmarshal(a.body, &w); err != nil || a.state != "work" || w.Challenge == nil || a.header.Get("Retry-After") != "0" {
		t.Fatalf("a newcomer at the door: %s", a)
	}
	if a = s.check(t, worker.get(t, "/door/")); a.state != "work" {
		t.Errorf("no solution: %s", a)
	}
	if a = s.check(t, worker.get(t, "/door/", append(poll, w.Challenge.Header, w.Challenge.Solve())...)); a.state != "admitted" {
		t.Errorf("the solution: %s", a)
	}

	// The decoy line: a wrong solution is answered as a place with the
	// top rung's challenge, whose solution leads in.
	doubted := newClient(e, "127.0.3.6", true)
	s.check(t, doubted.get(t, "/door/"))
	a = s.check(t, doubted.get(t, "/door/", append(poll, "Waiting-Room-Work", "zz!")...))
	var d devstack.Place
	if err := json.Unmarshal(a.body, &d); err != nil || a.state != "waiting" || d.Challenge == nil || d.Challenge.Bits != 12 {
		t.Fatalf("a wrong solution at the door: %s", a)
	}
	if a = s.check(t, doubted.get(t, "/door/", append(poll, d.Challenge.Header, d.Challenge.Solve())...)); a.state != "admitted" {
		t.Errorf("the decoy's way out: %s", a)
	}

	// Busy: the store fails; the browser keeps its pass.
	e.faults(upstashdev.Faults{Status: http.StatusInternalServerError})
	a = s.check(t, browser.get(t, "/", poll...))
	e.faults(upstashdev.Faults{})
	if a.state != "busy" {
		t.Errorf("store down: %s", a)
	}
	s.covered(t)
}
