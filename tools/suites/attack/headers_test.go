package attack

import (
	"net/http"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

// siteRoom protects the whole site but its /static/ assets, with places
// for a few visitors.
const siteRoom = `{"paths":["/"],"bypass_paths":["/static/"],"max_active_users":5}`

func TestVisitorsCannotSendTheRoomsHeadersToTheOrigin(t *testing.T) {
	e := start(t, shop(siteRoom), nil)
	v := e.visitor()
	v.enter("/")
	forged := []string{"Waiting-Room-Fail-Open", "1", "Waiting-Room-Command", "admit=100"}
	for _, path := range []string{"/admitted-with-forged-headers", "/static/bypassed-with-forged-headers.css"} {
		a := v.get(path, forged...)
		got := e.origin.find(path)
		if !a.atOrigin() || len(got) != 1 {
			t.Fatalf("%s: %s, and the origin saw it %d times; want it there once", path, a, len(got))
		}
		for i := 0; i < len(forged); i += 2 {
			if vals := got[0].header.Values(forged[i]); len(vals) != 0 {
				t.Errorf("%s: the origin received the visitor's %s: %q", path, forged[i], vals)
			}
		}
	}
}

// TestEveryEdgePageForbidsSniffingFramingAndReferrers checks the headers
// of each page the edge writes itself.
func TestEveryEdgePageForbidsSniffingFramingAndReferrers(t *testing.T) {
	e := start(t, []room{{"closed", `{"paths":["/closed/"],"mode":"reject"}`}, {"shop", oneSeatWithAssets}}, nil)
	e.visitor().enter("/")
	waiting := e.visitor()
	pages := []struct {
		name string
		get  func() answer
		// is tells the page from any other answer.
		is func(answer) bool
	}{
		{"queue", func() answer { return waiting.get("/") }, func(a answer) bool { return strings.Contains(a.body, inLine) }},
		{"busy", func() answer {
			e.stack.Upstash.SetFaults(upstashdev.Faults{Drop: true})
			defer e.stack.Upstash.SetFaults(upstashdev.Faults{})
			return waiting.get("/")
		}, func(a answer) bool {
			return a.status == http.StatusServiceUnavailable && strings.Contains(a.body, "We are busy")
		}},
		{"problem (origin down)", func() answer { return e.visitor().get("/static/unreachable.css") },
			func(a answer) bool { return a.status == http.StatusBadGateway && isHTML(a) }},
		{"problem (bad request)", func() answer { return e.raw("", http.MethodGet, "/static/%00", "") },
			func(a answer) bool { return a.status == http.StatusBadRequest && isHTML(a) }},
		{"closed", func() answer { return e.visitor().get("/closed/") },
			func(a answer) bool {
				return a.status == http.StatusServiceUnavailable && strings.Contains(a.body, "Closed for now")
			}},
		{"admin", func() answer { return e.adminAs("", http.MethodGet, "", nil, adminPassword) },
			func(a answer) bool {
				return a.status == http.StatusOK && strings.Contains(a.body, "Waiting room admin")
			}},
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			a := p.get()
			if !p.is(a) {
				t.Fatalf("not the %s page: %s", p.name, a)
			}
			h := a.header
			if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q, want nosniff", got)
			}
			if got := h.Get("Referrer-Policy"); got != "no-referrer" && got != "same-origin" {
				t.Errorf("Referrer-Policy %q, want no-referrer or same-origin", got)
			}
			csp := h.Get("Content-Security-Policy")
			if csp == "" {
				t.Errorf("no Content-Security-Policy")
			}
			if p.name == "admin" && !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("the admin panel's Content-Security-Policy %q lacks frame-ancestors 'none'", csp)
			}
		})
	}
}

// oneSeatWithAssets is a room of one place whose /static/ assets never wait.
const oneSeatWithAssets = `{"paths":["/"],"bypass_paths":["/static/"],"max_active_users":1}`

func isHTML(a answer) bool { return strings.HasPrefix(a.header.Get("Content-Type"), "text/html") }

// TestForgedLogLinesStayOneLine sends what visitors control with line
// breaks in it: no log line may begin with the forged text.
func TestForgedLogLinesStayOneLine(t *testing.T) {
	// Without an admin password the panel logs each refused request.
	e := start(t, shop(siteRoom), func(m *fastlyhost.Manifest) {
		delete(m.SecretStores[devstack.SecretStore], "admin_password")
	})
	for _, c := range []struct {
		name, target, host, marker string
		// logged: the request reaches the edge, which logs it; a Host
		// with a raw CR is refused by the host's HTTP server first.
		logged bool
	}{
		{"path with %0A to an origin that is down", "/static/unreachable%0AFORGED-1%20room%20shop:%20admit%20(session)", "", "FORGED-1", true},
		{"path with %0D%0A to the disabled admin panel", adminPath + "/x%0D%0AFORGED-2%20admin:%20admit%20100", "", "FORGED-2", true},
		{"Host with CR", "/", e.host + "\rFORGED-3 room shop: admit", "FORGED-3", false},
		{"Host with %0D%0A", "/static/x.css", e.host + "%0D%0AFORGED-4", "FORGED-4", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := e.on(t)
			a := e.raw("", http.MethodGet, c.target, c.host)
			var mentions []string
			for _, l := range strings.Split(e.logs.String(), "\n") {
				if !strings.Contains(l, c.marker) {
					continue
				}
				mentions = append(mentions, l)
				if strings.HasPrefix(strings.TrimPrefix(l, "guest: "), c.marker) {
					t.Errorf("a forged log line: %q", l)
				}
			}
			if c.logged && len(mentions) == 0 {
				t.Errorf("the request (%s) left no log line", a)
			}
			if !c.logged && a.status != http.StatusBadRequest {
				t.Errorf("%s, want 400", a)
			}
			t.Logf("%s; log lines: %q", a, mentions)
		})
	}
}
