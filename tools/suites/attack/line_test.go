package attack

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
)

// oneSeat is a room whose one place a first visitor can take.
const oneSeat = `{"paths":["/"],"max_active_users":1}`

// arrive makes v's first request and checks that it earned only an arrival
// pass: a redirect to the same URL that sets the room's cookie, with no
// store call and nothing sent to the origin. It returns the pass.
func arrive(e *env, v *visitor, path string) string {
	e.t.Helper()
	e.upstashCalls()
	before := e.origin.reached()
	a := v.do(http.MethodGet, path, nil)
	calls := e.upstashCalls()
	if a.status != http.StatusTemporaryRedirect || !sameURLRedirect(a, path) {
		e.t.Fatalf("a first request without a pass: %s (the store saw %d calls); want a 307 back to %s with an arrival pass and no store call", a, calls, path)
	}
	if calls != 0 || e.origin.reached() != before {
		e.t.Fatalf("the arrival step made %d store calls and sent %d requests to the origin; want none", calls, e.origin.reached()-before)
	}
	pass := v.cookies["wr_shop"]
	if pass == "" {
		e.t.Fatalf("the arrival redirect set no wr_shop cookie: %v", a.header.Values("Set-Cookie"))
	}
	if c := claimsOf(e.t, pass); c["knd"] != "arrival" {
		e.t.Fatalf("the arrival cookie holds a %v pass, want an arrival pass: %v", c["knd"], c)
	}
	return pass
}

func TestAFirstRequestEarnsOnlyAnArrivalPass(t *testing.T) {
	e := start(t, shop(oneSeat), nil)
	v := e.visitor()
	arrive(e, v, "/product?id=7")
	// Back with the pass, the visitor joins the line: here the free place.
	a := v.do(http.MethodGet, "/product?id=7", nil)
	if !a.atOrigin() && !a.queued() {
		t.Fatalf("back with the arrival pass: %s, want the line or the origin", a)
	}
	p, err := e.keys.Verify("shop", v.cookies["wr_shop"], time.Now())
	if err != nil || (p.Kind != queue.Ticket && p.Kind != queue.Session) {
		t.Fatalf("back with the arrival pass, the visitor holds %+v (%v), want a ticket or a session", p, err)
	}
}

func TestAReplayedArrivalPassYieldsOneTicket(t *testing.T) {
	e := start(t, shop(oneSeat), nil)
	e.visitor().enter("/")
	pass := arrive(e, e.visitor(), "/")
	const clients = 20
	tickets := make([]int64, clients)
	answers := make([]string, clients)
	parallel(clients, 8, func(i int) {
		// Each client comes back with the same pass, then polls with the
		// ticket it was given, as its queue page would.
		v := &visitor{e: e, ip: clientIP(0, 3, i+1), cookies: map[string]string{"wr_shop": pass}}
		for round := 0; round < 2; round++ {
			a, err := v.send(http.MethodGet, "/", nil, "Accept", "application/json")
			answers[i] = fmt.Sprint(a, err)
			if m := ticketField.FindStringSubmatch(a.body); err == nil && m != nil {
				tickets[i], _ = strconv.ParseInt(m[1], 10, 64)
			}
		}
	})
	for i, tk := range tickets {
		if tk == 0 || tk != tickets[0] {
			t.Fatalf("client %d holds ticket %d, client 0 ticket %d: one arrival pass must yield one ticket (client %d saw %s)", i, tk, tickets[0], i, answers[i])
		}
	}
	if l := e.line("shop"); l.waiting != 1 {
		t.Fatalf("%d clients replaying one arrival pass hold %d places in the line, want 1", clients, l.waiting)
	}
}

var ticketField = regexp.MustCompile(`"ticket":(\d+)`)

func TestACookielessFloodTakesNoPlace(t *testing.T) {
	e := start(t, shop(oneSeat), nil)
	const requests, ips = 500, 20
	e.upstashCalls()
	before := e.origin.reached()
	// One request per connection, from 20 client addresses.
	flood := make([]*http.Client, ips)
	for i := range flood {
		flood[i] = &http.Client{
			Transport:     &http.Transport{DialContext: dialFrom(clientIP(0, 4, i+1)), DisableKeepAlives: true},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Timeout:       90 * time.Second,
		}
	}
	var mu sync.Mutex
	statuses := map[string]int{}
	parallel(requests, 16, func(i int) {
		why := ""
		resp, err := flood[i%ips].Get(e.stack.HostURL + "/")
		if err == nil {
			a, rerr := readAnswer(resp)
			switch {
			case rerr != nil:
				why = rerr.Error()
			case a.atOrigin():
				why = "at the origin"
			default:
				why = strconv.Itoa(a.status)
			}
		} else {
			why = err.Error()
		}
		mu.Lock()
		statuses[why]++
		mu.Unlock()
	})
	t.Logf("the flood's answers: %v", statuses)
	if calls, sent := e.upstashCalls(), e.origin.reached()-before; calls != 0 || sent != 0 {
		t.Errorf("%d cookieless requests made %d store calls and reached the origin %d times; want none", requests, calls, sent)
	}
	v := &visitor{e: e, ip: clientIP(0, 5, 1)}
	if p := v.poll(); p.Status != "admitted" && p.Ticket != 1 {
		t.Fatalf("a real visitor after the flood: %+v; want the free place (admitted) or ticket 1", p)
	}
}

func TestOneClientCannotJoinMoreThanItsLimitPerMinute(t *testing.T) {
	e := start(t, shop(oneSeat), nil)
	const limit = 30 // joins_per_ip_per_minute's default
	ip := clientIP(0, 0, 2)
	refused := 0
	for i := 1; i <= limit+10 && refused == 0; i++ {
		// A new browser on the same address: it keeps its cookies, so
		// every one of these requests is a join.
		a := (&visitor{e: e, ip: ip}).get("/")
		switch {
		case a.status == http.StatusTooManyRequests:
			refused = i
			if secs, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || secs <= 0 {
				t.Errorf("the 429 has Retry-After %q, want a number of seconds", a.header.Get("Retry-After"))
			}
			if !tooMany.MatchString(a.body) {
				t.Errorf("the 429 page does not say why: %s", a)
			}
		case !a.atOrigin() && !a.queued():
			t.Fatalf("join %d: %s, want the line", i, a)
		}
	}
	if refused == 0 {
		t.Fatalf("%d joins from one client address were all let into the line; want 429 after %d", limit+10, limit)
	}
	if refused <= limit {
		t.Fatalf("join %d was refused; the first %d in a minute must be let in", refused, limit)
	}
	if a := (&visitor{e: e, ip: clientIP(0, 0, 3)}).get("/"); !a.queued() {
		t.Fatalf("another client address, after the first was limited: %s, want the line", a)
	}
}

// tooMany finds a 429 page's reason.
var tooMany = regexp.MustCompile(`(?i)too many|limit`)

// TestANetworkAndAnASAreHeldToTheirLimits: clients of one /24 share the
// room's joins per network, and every network of one autonomous system
// its joins per AS; a join refused by one scope is not counted by the
// wider ones, and another AS, or an address whose AS is unknown, is not
// held by the first's count.
func TestANetworkAndAnASAreHeldToTheirLimits(t *testing.T) {
	room := `{"paths":["/"],"max_active_users":1,"joins_per_network_per_minute":4,"joins_per_as_per_minute":7}`
	e := start(t, shop(room), func(m *fastlyhost.Manifest) {
		if m.Geo == nil {
			m.Geo = map[string]map[string]any{}
		}
		// Two networks of one cloud, and one address of another AS;
		// 127.0.9.1 has no record, so no AS.
		for i := 1; i <= 6; i++ {
			for _, net := range []int{5, 6} {
				m.Geo[clientIP(0, net, i)] = map[string]any{"as_name": "Example Cloud", "as_number": 64501, "country_code": "US"}
			}
		}
		m.Geo[clientIP(0, 8, 1)] = map[string]any{"as_name": "Example Transit", "as_number": 64500, "country_code": "DE"}
	})
	join := func(ip string) answer {
		t.Helper()
		return (&visitor{e: e, ip: ip}).get("/")
	}
	for _, tc := range []struct {
		ip      string
		limited bool
	}{
		{clientIP(0, 5, 1), false}, {clientIP(0, 5, 2), false}, {clientIP(0, 5, 3), false}, {clientIP(0, 5, 4), false},
		{clientIP(0, 5, 5), true}, {clientIP(0, 5, 6), true}, // the network's fifth and sixth
		{clientIP(0, 6, 1), false}, {clientIP(0, 6, 2), false}, {clientIP(0, 6, 3), false},
		{clientIP(0, 6, 4), true},  // the AS's eighth join counted
		{clientIP(0, 8, 1), false}, // another AS
		{clientIP(0, 9, 1), false}, // no AS known: not limited by one
	} {
		a := join(tc.ip)
		if limited := a.status == http.StatusTooManyRequests; limited != tc.limited || !limited && !a.atOrigin() && !a.queued() {
			t.Errorf("a join from %s: %s; want limited %v", tc.ip, a, tc.limited)
		}
	}
	for _, want := range []string{"join refused: joins per network", "join refused: joins per autonomous system"} {
		if !strings.Contains(e.logs.String(), want) {
			t.Errorf("no log line says %q", want)
		}
	}
}
