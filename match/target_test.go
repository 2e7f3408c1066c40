package match

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/urlnorm"
)

// facts is a platform that knows what its fields say, counts what it is
// asked, and fails with err when set.
type facts struct {
	country string
	bot     bool
	acls    map[string]string // ACL name: the action of the client's entry
	secrets map[string]string
	err     error
	asked   map[string]int
}

func (f *facts) ask(what string) {
	if f.asked == nil {
		f.asked = map[string]int{}
	}
	f.asked[what]++
}

func (f *facts) Country(netip.Addr) (string, error) {
	f.ask("country")
	return f.country, f.err
}

func (f *facts) VerifiedBot() (bool, error) {
	f.ask("bot")
	return f.bot, f.err
}

func (f *facts) ACL(name string, ip netip.Addr) (string, error) {
	f.ask("acl:" + name)
	return f.acls[name], f.err
}

func (f *facts) Secret(name string) ([]byte, error) {
	f.ask("secret:" + name)
	v, ok := f.secrets[name]
	if !ok && f.err == nil {
		return nil, errors.New("not found")
	}
	return []byte(v), f.err
}

// target compiles a Target that must be valid.
func target(t *testing.T, tg Target) *Target {
	t.Helper()
	if err := tg.Compile(); err != nil {
		t.Fatal(err)
	}
	return &tg
}

// reading is a wire path's literal reading, as the edge gives it.
func reading(t *testing.T, wire string) string {
	t.Helper()
	p, err := urlnorm.ParsePath(wire)
	if err != nil {
		t.Fatal(err)
	}
	return p.Literal
}

// TestHosts: exact names in any spelling, and wildcards that hold names
// below their domain at any depth but never the domain itself nor a name
// that merely ends in the same letters.
func TestHosts(t *testing.T) {
	tg := target(t, Target{Hosts: []string{"Shop.Example.COM.", "*.Example.com", "[2001:DB8::1]"}, Paths: []string{"/"}})
	if got := strings.Join(tg.Hosts, " "); got != "shop.example.com *.example.com [2001:db8::1]" {
		t.Errorf("hosts kept as %s", got)
	}
	tests := []struct {
		host string
		want bool
	}{
		{"shop.example.com", true},
		{"SHOP.EXAMPLE.COM", true},
		{"shop.example.com.", true},
		{"shop.example.com:8443", true},
		{"a.example.com", true},
		{"a.b.example.com", true}, // a wildcard holds every depth
		{"A.B.Example.Com.:443", true},
		{"example.com", false},     // not the domain itself
		{"evilexample.com", false}, // not a name that ends in the same letters
		{"example.com.evil.test", false},
		{".example.com", false}, // not a host name
		{"a..example.com", false},
		{"a.example.com\x00", false},
		{"a example.com", false},
		{"[2001:db8::1]:443", true},
		{"[2001:db8::2]", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := tg.Serves(tc.host); got != tc.want {
			t.Errorf("Serves(%q) = %v", tc.host, got)
		}
		_, got, err := tg.Match(&Request{Host: tc.host}, "/")
		if got != tc.want || err != nil {
			t.Errorf("Match(%q) = %v, %v", tc.host, got, err)
		}
	}
	every := target(t, Target{Paths: []string{"/"}})
	for _, h := range []string{"a.test", "", "not a host"} {
		if _, ok, _ := every.Match(&Request{Host: h}, "/"); !ok {
			t.Errorf("a room without hosts does not hold %q", h)
		}
	}
}

// TestPaths: prefixes, and globs whose * never spans a segment.
func TestPaths(t *testing.T) {
	tests := []struct {
		pattern string
		yes, no []string
	}{
		{"/tickets/", []string{"/tickets/", "/tickets/a/b"}, []string{"/tickets", "/Tickets/", "/a/tickets/"}},
		{"/tick", []string{"/tick", "/tickets"}, []string{"/tic", "/"}},
		{"/tickets/*/buy", []string{"/tickets/42/buy", "/tickets/42/buy/now", "/tickets//buy", "/tickets/42/buyer"},
			[]string{"/tickets/4/2/buy", "/tickets/buy", "/tickets/42", "/tickets/42/bu", "/tickets/42/Buy"}},
		{"/tickets/*", []string{"/tickets/", "/tickets/x", "/tickets/x/y"}, []string{"/tickets", "/ticket/x"}},
		{"/a*z/", []string{"/az/", "/a-z/", "/abcz/x"}, []string{"/a/z/", "/a/b/z/", "/az"}},
		{"/*/static/", []string{"/en/static/", "/de/static/a.css"}, []string{"/static/", "/en/x/static/"}},
		{"/a/*.json", []string{"/a/x.json", "/a/.json", "/a/x.jsonp", "/a/x.json/y"}, []string{"/a/b/x.json", "/a/x.JSON"}},
		{"*.json", []string{"/x.json", "/a/b/c.json", "/.json"}, []string{"/x.jsonp", "/x.json/", "/x.json/y", "/x.JSON", "/xjson"}},
		{"*.tar.*", []string{"/a.tar.gz"}, []string{"/a.tar/gz", "/a.gz"}},
		{"a*b*c", []string{"/abc", "/aXbYc", "/abbc", "/x/abcbc"}, []string{"/acb", "/ab/c", "/abcd"}},
		{"robots*", []string{"/robots.txt", "/a/robots"}, []string{"/robot"}},
	}
	for _, tc := range tests {
		tg := target(t, Target{Paths: []string{tc.pattern}})
		for _, p := range tc.yes {
			if _, ok, _ := tg.Match(&Request{}, p); !ok {
				t.Errorf("%q does not hold %q", tc.pattern, p)
			}
		}
		for _, p := range tc.no {
			if _, ok, _ := tg.Match(&Request{}, p); ok {
				t.Errorf("%q holds %q", tc.pattern, p)
			}
		}
	}
}

// TestCaseFolding: with case_insensitive_paths, globs and prefixes fold
// whole (the Kelvin sign is a k; the long s an s), and never across a /.
func TestCaseFolding(t *testing.T) {
	tg := target(t, Target{Paths: []string{"/tickets/*/Buy", "*.JSON", "/kiosk/"}, CaseInsensitivePaths: true})
	for _, p := range []string{"/TICKETS/x/buy", "/Tickets/X/BUY/now", "/a/B.json", "/\u212Aiosk/", "/KIOSK/", "/x.j\u017Fon"} {
		if _, ok, _ := tg.Match(&Request{}, p); !ok {
			t.Errorf("does not hold %q", p)
		}
	}
	for _, p := range []string{"/TICKETS/x/y/buy", "/x.jsonp", "/kiosk"} {
		if _, ok, _ := tg.Match(&Request{}, p); ok {
			t.Errorf("holds %q", p)
		}
	}
}

// TestPathsAsTheEdgeSeesThem: what a crafted request path reads as, once
// normalised, against a room on /checkout and a glob for stylesheets. The
// dot segments and escapes are urlnorm's; the rules see the result.
func TestPathsAsTheEdgeSeesThem(t *testing.T) {
	checkout := target(t, Target{Paths: []string{"/checkout"}})
	css := target(t, Target{Paths: []string{"*.css"}})
	tests := []struct {
		wire          string
		checkout, css bool
	}{
		{"/x.css/../checkout", true, false},
		{"/checkout%2ecss", true, true}, // %2e is "." to every origin: the origin gets /checkout.css
		{"/checkout;.css", true, true},  // the literal reading; the loose one is /checkout (queue.Judge checks both)
		{"/checkout.CSS", true, false},
		{"/%63heckout", true, false},
		{"/.css", false, true},
	}
	for _, tc := range tests {
		p := reading(t, tc.wire)
		if _, ok, _ := checkout.Match(&Request{}, p); ok != tc.checkout {
			t.Errorf("%q (read %q): in /checkout = %v", tc.wire, p, ok)
		}
		if _, ok, _ := css.Match(&Request{}, p); ok != tc.css {
			t.Errorf("%q (read %q): in *.css = %v", tc.wire, p, ok)
		}
	}
}

// TestCountries: countries and except_countries, with the documented
// answer for an unknown country, and the country asked only when host and
// path already match.
func TestCountries(t *testing.T) {
	de := target(t, Target{Paths: []string{"/sale/"}, Countries: []string{"de", "AT"}})
	notDE := target(t, Target{Paths: []string{"/sale/"}, ExceptCountries: []string{"DE"}})
	ip := netip.MustParseAddr("192.0.2.1")
	tests := []struct {
		name        string
		ip          netip.Addr
		country     string
		err         error
		de, exceptD bool
	}{
		{"in", ip, "DE", nil, true, false},
		{"lower case answer", ip, "at", nil, true, true},
		{"elsewhere", ip, "FR", nil, false, true},
		{"unknown", ip, "", nil, false, true},
		{"reserved", ip, "**", nil, false, true},
		{"not a code", ip, "DEU", nil, false, true},
		{"lookup error", ip, "DE", errors.New("geo down"), false, true},
		{"no address", netip.Addr{}, "DE", nil, false, true},
		{"v4-mapped address", netip.MustParseAddr("::ffff:192.0.2.1"), "DE", nil, true, false},
	}
	for _, tc := range tests {
		for _, c := range []struct {
			tg   *Target
			want bool
		}{{de, tc.de}, {notDE, tc.exceptD}} {
			f := &facts{country: tc.country, err: tc.err}
			req := &Request{IP: tc.ip, Facts: f}
			spec, ok, err := c.tg.Match(req, "/sale/x")
			if ok != c.want || !errors.Is(err, tc.err) || tc.err == nil && err != nil {
				t.Errorf("%s: %v, %v; want %v", tc.name, ok, err, c.want)
			}
			if !spec.country {
				t.Errorf("%s: not ranked as a country room", tc.name)
			}
			// asked once however often the rules look
			c.tg.Match(req, "/sale/x")
			if _, _, err := c.tg.Match(req, "/sale/y"); err != nil || f.asked["country"] > 1 {
				t.Errorf("%s: asked %d times, then %v", tc.name, f.asked["country"], err)
			}
		}
	}
	f := &facts{country: "DE"}
	if _, ok, _ := de.Match(&Request{IP: ip, Facts: f}, "/other"); ok || f.asked["country"] != 0 {
		t.Errorf("a path outside the room: %v, asked %d times", ok, f.asked["country"])
	}
	if _, ok, _ := de.Match(&Request{IP: ip}, "/sale/"); ok {
		t.Error("no Facts: the country is unknown, and the room does not apply")
	}
}

// TestTargetErrors: each bad entry is refused with its field and index.
func TestTargetErrors(t *testing.T) {
	many := make([]string, MaxEntries+1)
	for i := range many {
		many[i] = fmt.Sprintf("/p%d", i)
	}
	tests := []struct {
		name string
		tg   Target
		want string
	}{
		{"no paths", Target{}, "paths: at least one"},
		{"relative path", Target{Paths: []string{"x"}}, `paths[0]: "x" must start with /`},
		{"empty path", Target{Paths: []string{"/", ""}}, `paths[1]: "" must start with /`},
		{"bare star", Target{Paths: []string{"*"}}, `paths[0]: "*" must start with /`},
		{"double star", Target{Paths: []string{"/a/**/b"}}, `paths[0]: "/a/**/b" holds "**"`},
		{"glob with a slash", Target{Paths: []string{"a/*.json"}}, "start it with /"},
		{"dot segments", Target{Paths: []string{"/a/../b/"}}, `never matches`},
		{"dot segments in a glob", Target{Paths: []string{"/*/../b"}}, `write "/b"`},
		{"encoded unreserved", Target{Paths: []string{"/%73tatic/"}}, `write "/static/"`},
		{"bad escape", Target{Paths: []string{"/s%zz/"}}, "invalid percent escape"},
		{"control", Target{Paths: []string{"*.js\x00"}}, "NUL"},
		{"too many paths", Target{Paths: many}, "paths: 1001 entries, more than the 1000 allowed"},
		{"over-long path", Target{Paths: []string{"/" + strings.Repeat("a", MaxEntryLength)}}, "longer than 1024 bytes"},
		{"bad host", Target{Hosts: []string{"a b"}, Paths: []string{"/"}}, `hosts[0]: "a b" holds characters`},
		{"host with a port", Target{Hosts: []string{"a.test:8080"}, Paths: []string{"/"}}, "without a port"},
		{"empty host", Target{Hosts: []string{"ok.test", ""}, Paths: []string{"/"}}, "hosts[1]"},
		{"star host", Target{Hosts: []string{"*"}, Paths: []string{"/"}}, "leave hosts out"},
		{"inner star", Target{Hosts: []string{"a.*.test"}, Paths: []string{"/"}}, "whole first label"},
		{"partial star", Target{Hosts: []string{"a*.test"}, Paths: []string{"/"}}, "whole first label"},
		{"two stars", Target{Hosts: []string{"*.*.test"}, Paths: []string{"/"}}, "whole first label"},
		{"wildcard over an address", Target{Hosts: []string{"*.0.2.1"}, Paths: []string{"/"}}, "IP address"},
		{"wildcard over IPv6", Target{Hosts: []string{"*.[::1]"}, Paths: []string{"/"}}, "hosts[0]"},
		{"too many hosts", Target{Hosts: many, Paths: []string{"/"}}, "hosts: 1001 entries"},
		{"both country lists", Target{Paths: []string{"/"}, Countries: []string{"DE"}, ExceptCountries: []string{"FR"}}, "set one or the other"},
		{"UK", Target{Paths: []string{"/"}, Countries: []string{"DE", "UK"}}, `countries[1]: "UK" is not an ISO 3166-1 alpha-2 country code (the United Kingdom is GB)`},
		{"three letters", Target{Paths: []string{"/"}, ExceptCountries: []string{"DEU"}}, `except_countries[0]: "DEU"`},
		{"unknown code", Target{Paths: []string{"/"}, Countries: []string{"**"}}, `countries[0]: "**"`},
		{"unassigned", Target{Paths: []string{"/"}, Countries: []string{"ZZ"}}, `countries[0]: "ZZ"`},
	}
	for _, tc := range tests {
		err := tc.tg.Compile()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if _, ok, err := tc.tg.Match(&Request{}, "/"); ok || err == nil {
			t.Errorf("%s: a target that did not compile matched: %v, %v", tc.name, ok, err)
		}
	}
}

// TestSpecificity pins the order of docs/rooms.md's "Which room applies"
// table: host first (exact, longer wildcard, wildcard, any), then the
// literal path length, then a country target.
func TestSpecificity(t *testing.T) {
	ip := netip.MustParseAddr("192.0.2.1")
	rooms := []struct {
		name string
		tg   Target
	}{
		{"any-root", Target{Paths: []string{"/"}}},
		{"any-long", Target{Paths: []string{"/tickets/*/buy"}}},
		{"any-long-de", Target{Paths: []string{"/tickets/*/buy"}, Countries: []string{"DE"}}},
		{"wild-root", Target{Hosts: []string{"*.example.com"}, Paths: []string{"/"}}},
		{"wild-long", Target{Hosts: []string{"*.example.com"}, Paths: []string{"/tickets/"}}},
		{"longer-wild", Target{Hosts: []string{"*.shop.example.com"}, Paths: []string{"/"}}},
		{"exact-root", Target{Hosts: []string{"a.shop.example.com"}, Paths: []string{"/"}}},
		{"exact-json", Target{Hosts: []string{"a.shop.example.com"}, Paths: []string{"*.json"}}},
	}
	order := []string{"exact-json", "exact-root", "longer-wild", "wild-long", "wild-root", "any-long-de", "any-long", "any-root"}
	rank := map[string]Specificity{}
	for _, r := range rooms {
		tg := target(t, r.tg)
		spec, ok, err := tg.Match(&Request{Host: "a.shop.example.com", IP: ip, Facts: &facts{country: "DE"}}, "/tickets/42/buy.json")
		if !ok || err != nil {
			t.Fatalf("%s does not hold the request: %v", r.name, err)
		}
		rank[r.name] = spec
	}
	for i, a := range order {
		for j, b := range order {
			if got := rank[a].MoreThan(rank[b]); got != (i < j) {
				t.Errorf("%s (%v) more specific than %s (%v): %v", a, rank[a], b, rank[b], got)
			}
		}
	}
	if s := rank["wild-long"].String(); s != "wildcard host (suffix of 12 characters), path of 9 literal characters" {
		t.Errorf("String: %s", s)
	}
}

// TestSpecificityString: an explanation counts in words a person reads
// without stumbling, one character or several.
func TestSpecificityString(t *testing.T) {
	tests := []struct {
		spec Specificity
		want string
	}{
		{Specificity{path: 1}, "any host, path of 1 literal character"},
		{Specificity{path: 0}, "any host, path of 0 literal characters"},
		{Specificity{host: exactHost, path: 6, country: true}, "exact host, path of 6 literal characters, country-targeted"},
		{Specificity{host: wildcardHost, suffix: 1, path: 2}, "wildcard host (suffix of 1 character), path of 2 literal characters"},
	}
	for _, tc := range tests {
		if got := tc.spec.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.spec, got, tc.want)
		}
	}
}
