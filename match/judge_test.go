package match_test

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/match"
	"github.com/edgequeue/waitingroom/queue"
)

// room is a room parsed as the config store gives it, with a capacity,
// which every room needs and matching never reads.
func room(t testing.TB, name, def string) *queue.Room {
	t.Helper()
	r, err := queue.ParseRoom(name, []byte(strings.Replace(def, "{", `{"max_active_users":10,`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// judged is Judge's answer in short: the room's name (or "-"), then
// "protected" or "bypass <rule>" (or nothing, in no room).
func judged(rooms []*queue.Room, global *match.Bypass, req *match.Request) string {
	j, err := match.Judge(rooms, global, req)
	got := "-"
	if j.Room != nil {
		got = j.Room.Name
	}
	switch {
	case j.Protected:
		got += " protected"
	case j.Bypass != "":
		got += " bypass " + j.Bypass
	}
	if err != nil {
		got += " error " + err.Error()
	}
	return got
}

func TestMatch(t *testing.T) {
	shop := room(t, "shop", `{"hosts":["shop.test"],"paths":["/"],"bypass_paths":["/static/"]}`)
	event := room(t, "event", `{"paths":["/event/"]}`)
	rooms := []*queue.Room{event, shop}
	tests := []struct {
		host, path, want string
	}{
		{"shop.test", "/", "shop protected"},
		{"SHOP.test:443", "/cart", "shop protected"},
		{"shop.test.", "/cart", "shop protected"},
		{"shop.test", "/static/a.css", "shop bypass path"},
		{"shop.test", "/STATIC/a.css", "shop protected"},
		{"shop.test", "/event/1", "shop protected"}, // an exact host beats a longer path on any host
		{"other.test", "/event/1", "event protected"},
		{"other.test", "/", "-"},
		{"[::1]:80", "/", "-"},
		{"shop test", "/", "-"},
		{"", "/", "-"},
	}
	for _, tc := range tests {
		if got := judged(rooms, nil, &match.Request{Host: tc.host, Paths: []string{tc.path}}); got != tc.want {
			t.Errorf("Judge(%q, %q) = %s, want %s", tc.host, tc.path, got, tc.want)
		}
	}
}

// TestCaseInsensitivePaths: with case_insensitive_paths, rooms and bypass
// rules match any case (Unicode folding, rune by rune); without, only the
// case written.
func TestCaseInsensitivePaths(t *testing.T) {
	room := func(fold bool) *queue.Room {
		return room(t, "t", fmt.Sprintf(`{"paths":["/tickets/","/kiosk/","/café/"],"bypass_paths":["/tickets/static/"],"case_insensitive_paths":%v}`, fold))
	}
	tests := []struct {
		path          string
		plain, folded string
	}{
		{"/tickets/buy", "t protected", "t protected"},
		{"/TICKETS/buy", "-", "t protected"},
		{"/Tickets/Static/a.css", "-", "t bypass path"},
		{"/tickets/STATIC/a.css", "t protected", "t bypass path"},
		{"/tickets/static/a.css", "t bypass path", "t bypass path"},
		{"/\u212Aiosk/", "-", "t protected"}, // the Kelvin sign folds to k
		{"/CAFÉ/menu", "-", "t protected"},
		{"/ticket", "-", "-"},
		{"/tickets", "-", "-"},
	}
	for _, tc := range tests {
		for _, fold := range []bool{false, true} {
			want := tc.plain
			if fold {
				want = tc.folded
			}
			if got := judged([]*queue.Room{room(fold)}, nil, &match.Request{Host: "any.test", Paths: []string{tc.path}}); got != want {
				t.Errorf("fold %v: %q: %s, want %s", fold, tc.path, got, want)
			}
		}
	}
}

// TestJudge: a request is protected when any reading of its path is in a
// room's line and not bypassed there; when none is, the room is the one
// the first reading in a room is in, with the rule that let it through.
func TestJudge(t *testing.T) {
	shop := room(t, "shop", `{"paths":["/"],"bypass_paths":["/static/"],"bypass_methods":["OPTIONS"]}`)
	tickets := room(t, "tickets", `{"hosts":["t.test"],"paths":["/tickets/"]}`)
	rooms := []*queue.Room{tickets, shop}
	tests := []struct {
		host     string
		method   string
		readings []string
		want     string
	}{
		{"shop.test", "GET", []string{"/checkout", "/checkout"}, "shop protected"},
		{"shop.test", "GET", []string{"/static/a.css", "/static/a.css"}, "shop bypass path"},
		{"shop.test", "GET", []string{"/static/..%2Fcheckout", "/checkout"}, "shop protected"},
		{"shop.test", "GET", []string{"/static/x%2F..%2F..%2Fcheckout", "/checkout"}, "shop protected"},
		{"t.test", "GET", []string{"/tickets;x/buy", "/tickets/buy"}, "shop protected"}, // the first reading's room
		{"t.test", "GET", []string{"/static/a", "/static/a"}, "shop bypass path"},
		{"t.test", "OPTIONS", []string{"/tickets/buy", "/tickets/buy"}, "tickets protected"}, // that room bypasses no method
		{"other.test", "GET", []string{"/tickets/buy"}, "shop protected"},
		{"other.test", "OPTIONS", []string{"/tickets/buy"}, "shop bypass method"},
		{"other.test", "options", []string{"/tickets/buy"}, "shop protected"},
		{"other.test", "GET", nil, "-"},
	}
	for _, tc := range tests {
		got := judged(rooms, nil, &match.Request{Host: tc.host, Method: tc.method, Paths: tc.readings})
		if got != tc.want {
			t.Errorf("Judge(%s %q, %q) = %s, want %s", tc.method, tc.host, tc.readings, got, tc.want)
		}
	}
	if got := judged([]*queue.Room{tickets}, nil, &match.Request{Host: "t.test", Paths: []string{"/about", "/about"}}); got != "-" {
		t.Errorf("a path in no room: %s", got)
	}
	if got := judged([]*queue.Room{tickets}, nil, &match.Request{Host: "t.test", Paths: []string{"/tickets;x/buy", "/tickets/buy"}}); got != "tickets protected" {
		t.Errorf("only the loose reading is in a room: %s", got)
	}
}

// TestJudgeSpecificity is the "Which room applies" table of docs/rooms.md: each
// request is in the most specific room that holds it, whatever the order
// of the index, which breaks only ties.
func TestJudgeSpecificity(t *testing.T) {
	defs := []struct{ name, def string }{
		{"site", `{"paths":["/"]}`},
		{"api", `{"paths":["*.json"]}`},
		{"tickets", `{"paths":["/tickets/"]}`},
		{"buy", `{"paths":["/tickets/*/buy"]}`},
		{"sale", `{"paths":["/sale/"]}`},
		{"sale-de", `{"paths":["/sale/"],"countries":["DE"]}`},
		{"outlet", `{"paths":["/outlet/"]}`},
		{"outlet-not-fr", `{"paths":["/outlet/"],"except_countries":["FR"]}`},
		{"subdomains", `{"hosts":["*.example.com"],"paths":["/"]}`},
		{"shop-subdomains", `{"hosts":["*.shop.example.com"],"paths":["/"]}`},
		{"shop", `{"hosts":["shop.example.com"],"paths":["/"]}`},
		{"shop-too", `{"hosts":["shop.example.com"],"paths":["/"]}`},
	}
	tests := []struct {
		host, path, country, want string
	}{
		{"other.test", "/", "", "site"},
		{"other.test", "/api/x.json", "", "api"},         // 5 literal characters beat 1
		{"other.test", "/tickets/x.json", "", "tickets"}, // 9 beat 5
		{"other.test", "/tickets/42/buy", "", "buy"},     // 13 beat 9
		{"other.test", "/sale/1", "DE", "sale-de"},       // a country room beats an untargeted one
		{"other.test", "/sale/1", "FR", "sale"},          // when it applies
		{"other.test", "/sale/1", "", "sale"},            // unknown country: countries does not apply
		{"other.test", "/outlet/1", "DE", "outlet-not-fr"},
		{"other.test", "/outlet/1", "FR", "outlet"},
		{"other.test", "/outlet/1", "", "outlet-not-fr"},         // unknown country: except_countries applies
		{"a.example.com", "/tickets/42/buy", "DE", "subdomains"}, // any wildcard beats any path on every host
		{"a.b.example.com", "/", "", "subdomains"},
		{"example.com", "/", "", "site"},
		{"a.shop.example.com", "/", "", "shop-subdomains"}, // a longer suffix beats a shorter one
		{"shop.example.com", "/", "", "shop"},              // an exact host beats every wildcard; the earlier of equals
	}
	ip := netip.MustParseAddr("192.0.2.1")
	for _, reversed := range []bool{false, true} {
		var rooms []*queue.Room
		for _, d := range defs {
			rooms = append(rooms, room(t, d.name, d.def))
		}
		if reversed {
			// Order decides only between equals: reversed, the later twin wins.
			slices.Reverse(rooms)
		}
		for _, tc := range tests {
			want := tc.want
			if reversed && want == "shop" {
				want = "shop-too"
			}
			req := &match.Request{Host: tc.host, Paths: []string{tc.path}, IP: ip, Facts: countryFacts(tc.country)}
			if got := judged(rooms, nil, req); got != want+" protected" {
				t.Errorf("reversed %v: %s%s from %q: %s, want %s", reversed, tc.host, tc.path, tc.country, got, want)
			}
		}
	}
}

// countryFacts is a platform that knows the client's country, and nothing
// else.
type countryFacts string

func (c countryFacts) Country(netip.Addr) (string, error)   { return string(c), nil }
func (countryFacts) VerifiedBot() (bool, error)             { return false, nil }
func (countryFacts) ACL(string, netip.Addr) (string, error) { return "", nil }
func (countryFacts) Secret(string) ([]byte, error)          { return nil, errors.New("no secrets") }

// failingFacts is a platform whose every answer fails.
type failingFacts struct{}

var errPlatform = errors.New("platform down")

func (failingFacts) Country(netip.Addr) (string, error)     { return "DE", errPlatform }
func (failingFacts) VerifiedBot() (bool, error)             { return true, errPlatform }
func (failingFacts) ACL(string, netip.Addr) (string, error) { return "ALLOW", errPlatform }
func (failingFacts) Secret(string) ([]byte, error)          { return []byte("k"), errPlatform }

// TestJudgeBypass: global rules apply before a room's and to every room,
// each reading of the path is judged, and a failing platform lets nobody
// through, but never stops the judgement.
func TestJudgeBypass(t *testing.T) {
	shop := room(t, "shop", `{"paths":["/"],"bypass_extensions":["css"],"bypass_verified_bots":true,"bypass_acl":"office"}`)
	de := room(t, "de", `{"paths":["/sale/"],"countries":["DE"]}`)
	rooms := []*queue.Room{shop, de}
	global := &match.Bypass{Methods: []string{"OPTIONS"}, Paths: []string{"/health"}, Headers: []match.HeaderRule{{Name: "X-Health", Value: "ok"}}}
	if err := global.Compile(false); err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr("192.0.2.1")
	tests := []struct {
		name     string
		req      match.Request
		readings []string
		want     string
	}{
		{"plain", match.Request{Method: "GET"}, []string{"/checkout"}, "shop protected"},
		{"global method", match.Request{Method: "OPTIONS"}, []string{"/checkout"}, "shop bypass global:method"},
		{"global path", match.Request{Method: "GET"}, []string{"/health", "/health"}, "shop bypass global:path"},
		{"global header in a country room", match.Request{Method: "GET", Header: func(string) []string { return []string{"ok"} },
			IP: ip, Facts: countryFacts("DE")}, []string{"/sale/1"}, "de bypass global:header:X-Health"},
		{"room rule", match.Request{Method: "GET"}, []string{"/a.css", "/a.css"}, "shop bypass extension"},
		{"room rule is the room's", match.Request{Method: "GET", IP: ip, Facts: countryFacts("DE")}, []string{"/sale/a.css"}, "de protected"},
		{"extension behind parameters", match.Request{Method: "GET"}, []string{"/checkout;.css", "/checkout"}, "shop protected"},
		{"extension in both readings", match.Request{Method: "GET"}, []string{"/a.css;v=1", "/a.css"}, "shop protected"},
		{"parameters in both", match.Request{Method: "GET"}, []string{"/a;v=1.css", "/a"}, "shop protected"},
		{"global path under one reading", match.Request{Method: "GET"}, []string{"/health;x/../checkout", "/checkout"}, "shop protected"},
		{"failing platform", match.Request{Method: "GET", IP: ip, Facts: failingFacts{}}, []string{"/sale/1"},
			`shop protected error room "de": platform down` + "\n" + `room "shop": bypass_acl "office": platform down` + "\n" + `room "shop": bypass_verified_bots: platform down`},
	}
	for _, tc := range tests {
		req := tc.req
		req.Paths = tc.readings
		if got := judged(rooms, global, &req); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	j, err := match.Judge(rooms, global, &match.Request{Method: "GET", IP: ip, Facts: failingFacts{}, Paths: []string{"/sale/1"}})
	if !errors.Is(err, errPlatform) || j.Room != shop || !j.Protected {
		t.Errorf("a failing platform: %+v, %v", j, err)
	}
}

// BenchmarkMatch judges a request among ten rooms (Judge, which was queue's
// Match when the name was given: the reports keep it).
func BenchmarkMatch(b *testing.B) {
	var rooms []*queue.Room
	for i := 0; i < 10; i++ {
		r, err := queue.ParseRoom(fmt.Sprintf("r%d", i), []byte(fmt.Sprintf(
			`{"hosts":["shop.example.com"],"paths":["/section%d/"],"bypass_paths":["/section%d/static/"],"max_active_users":100}`, i, i)))
		if err != nil {
			b.Fatal(err)
		}
		rooms = append(rooms, r)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		req := &match.Request{Host: "shop.example.com", Paths: []string{"/section9/tickets/42", "/section9/tickets/42"}, Method: "GET"}
		if j, err := match.Judge(rooms, nil, req); j.Room != rooms[9] || !j.Protected || err != nil {
			b.Fatal("matched the wrong room")
		}
	}
}
