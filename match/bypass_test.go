package match

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// bypass compiles a Bypass that must be valid.
func bypass(t *testing.T, b Bypass, fold bool) *Bypass {
	t.Helper()
	if err := b.Compile(fold); err != nil {
		t.Fatal(err)
	}
	return &b
}

// headers serves a request's headers by name in any case, as fsthttp does.
func headers(kv ...string) func(string) []string {
	return func(name string) []string {
		var values []string
		for i := 0; i < len(kv); i += 2 {
			if strings.EqualFold(kv[i], name) {
				values = append(values, kv[i+1])
			}
		}
		return values
	}
}

// cookies serves a request's cookies by exact name, the first one first.
func cookies(kv ...string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		for i := 0; i < len(kv); i += 2 {
			if kv[i] == name {
				return kv[i+1], true
			}
		}
		return "", false
	}
}

// TestBypassIPs: addresses and ranges of both families, with IPv4-mapped
// IPv6 taken as IPv4 on both sides.
func TestBypassIPs(t *testing.T) {
	b := bypass(t, Bypass{IPs: []string{"192.0.2.7", "198.51.100.0/24", "2001:db8::/32", "::ffff:203.0.113.0/120", "::ffff:100.64.0.9"}}, false)
	tests := []struct {
		ip   string
		want bool
	}{
		{"192.0.2.7", true},
		{"::ffff:192.0.2.7", true},
		{"192.0.2.8", false},
		{"198.51.100.255", true},
		{"::ffff:198.51.100.1", true},
		{"198.51.101.0", false},
		{"2001:db8:1::5", true},
		{"2001:db9::1", false},
		{"203.0.113.200", true},
		{"100.64.0.9", true},
		{"::ffff:100.64.0.9", true},
		{"::192.0.2.7", false},       // IPv4-compatible, not mapped: an IPv6 address
		{"64:ff9b::c000:207", false}, // NAT64 of 192.0.2.7: an IPv6 address
	}
	for _, tc := range tests {
		rule, ok, err := b.Match(&Request{IP: netip.MustParseAddr(tc.ip)}, "/")
		if ok != tc.want || err != nil || ok && rule != "ip" {
			t.Errorf("%s: %q, %v, %v", tc.ip, rule, ok, err)
		}
	}
	if _, ok, _ := b.Match(&Request{}, "/"); ok {
		t.Error("an unknown client address bypassed")
	}
}

// TestBypassRules: each rule, and the requests that try to pass for one.
func TestBypassRules(t *testing.T) {
	b := bypass(t, Bypass{
		Paths:      []string{"/static/", "/*/assets/", "favicon.*"},
		Extensions: []string{"css", ".JS", "woff2"},
		Methods:    []string{"options", "HEAD"},
		Headers:    []HeaderRule{{Name: "X-Health", Value: "Check Me"}, {Name: "x-partner", Secret: "partner_key"}},
		Cookies:    []string{"staff", "tier=gold"},
	}, false)
	f := &facts{secrets: map[string]string{"partner_key": " s3cret\n"}}
	tests := []struct {
		name string
		req  Request
		path string
		want string
	}{
		{"nothing", Request{Method: "GET"}, "/checkout", ""},
		{"path", Request{Method: "GET"}, "/static/a", "path"},
		{"path glob", Request{Method: "GET"}, "/en/assets/x", "path"},
		{"path glob spans no segment", Request{Method: "GET"}, "/en/x/assets/x", ""},
		{"path case", Request{Method: "GET"}, "/STATIC/a", ""},
		{"last-segment glob", Request{Method: "GET"}, "/a/favicon.ico", "path"},
		{"extension", Request{Method: "GET"}, "/a/site.css", "extension"},
		{"extension in capitals", Request{Method: "GET"}, "/checkout.CSS", "extension"},
		{"extension from .JS", Request{Method: "GET"}, "/app.js", "extension"},
		{"extension of a directory", Request{Method: "GET"}, "/x.css/checkout", ""},
		{"parameters after the extension", Request{Method: "GET"}, "/checkout.css;x", ""},
		{"extension behind parameters", Request{Method: "GET"}, "/checkout;.css", "extension"}, // the literal reading: queue.Judge also judges /checkout
		{"a dot file", Request{Method: "GET"}, "/.css", ""},
		{"a dot file's extension", Request{Method: "GET"}, "/.x.css", "extension"},
		{"no extension", Request{Method: "GET"}, "/css", ""},
		{"trailing dot", Request{Method: "GET"}, "/checkout.", ""},
		{"long s is no s", Request{Method: "GET"}, "/a.c\u017Fs", ""},
		{"a longer extension", Request{Method: "GET"}, "/a.cssx", ""},
		{"method", Request{Method: "OPTIONS"}, "/checkout", "method"},
		{"method in lower case", Request{Method: "options"}, "/checkout", ""},
		{"method in mixed case", Request{Method: "Head"}, "/checkout", ""},
		{"header", Request{Method: "GET", Header: headers("x-health", "Check Me")}, "/", "header:X-Health"},
		{"header with white space", Request{Method: "GET", Header: headers("X-HEALTH", "\t Check Me ")}, "/", "header:X-Health"},
		{"header in another case", Request{Method: "GET", Header: headers("X-Health", "check me")}, "/", ""},
		{"header with inner space", Request{Method: "GET", Header: headers("X-Health", "Check  Me")}, "/", ""},
		{"header among values", Request{Method: "GET", Header: headers("X-Health", "no", "X-Health", "Check Me")}, "/", "header:X-Health"},
		{"header joined", Request{Method: "GET", Header: headers("X-Health", "no, Check Me")}, "/", ""},
		{"header name alone", Request{Method: "GET", Header: headers("X-Health", "")}, "/", ""},
		{"secret header", Request{Method: "GET", Header: headers("X-Partner", "s3cret"), Facts: f}, "/", "header:x-partner"},
		{"secret header, wrong", Request{Method: "GET", Header: headers("X-Partner", "s3cre"), Facts: f}, "/", ""},
		{"secret header, longer", Request{Method: "GET", Header: headers("X-Partner", "s3cret2"), Facts: f}, "/", ""},
		{"secret header, no facts", Request{Method: "GET", Header: headers("X-Partner", "s3cret")}, "/", ""},
		{"cookie present", Request{Method: "GET", Cookie: cookies("staff", "")}, "/", "cookie:staff"},
		{"cookie in another case", Request{Method: "GET", Cookie: cookies("Staff", "x")}, "/", ""},
		{"cookie value", Request{Method: "GET", Cookie: cookies("tier", "gold")}, "/", "cookie:tier"},
		{"cookie value in another case", Request{Method: "GET", Cookie: cookies("tier", "Gold")}, "/", ""},
		{"cookie other value", Request{Method: "GET", Cookie: cookies("tier", "silver")}, "/", ""},
		{"cookie first value counts", Request{Method: "GET", Cookie: cookies("tier", "silver", "tier", "gold")}, "/", ""},
	}
	for _, tc := range tests {
		rule, ok, err := b.Match(&tc.req, tc.path)
		if rule != tc.want || ok != (tc.want != "") || err != nil {
			t.Errorf("%s: %q, %v, %v; want %q", tc.name, rule, ok, err, tc.want)
		}
	}
}

// TestBypassPlatformRules: ACL, secret and bot verdicts are asked only
// when no other rule matched, once each, and a failure lets nobody through.
func TestBypassPlatformRules(t *testing.T) {
	ip := netip.MustParseAddr("::ffff:192.0.2.1")
	b := bypass(t, Bypass{ACL: "office", Headers: []HeaderRule{{Name: "X-Key", Secret: "key"}}, VerifiedBots: true, Methods: []string{"OPTIONS"}}, false)
	down := errors.New("platform down")
	tests := []struct {
		name  string
		facts *facts
		req   Request
		want  string
		err   error
		asked string
	}{
		{"allow", &facts{acls: map[string]string{"office": "ALLOW"}}, Request{IP: ip}, "acl:office", nil, "acl:office"},
		{"allow in lower case", &facts{acls: map[string]string{"office": "allow"}}, Request{IP: ip}, "acl:office", nil, "acl:office"},
		{"block", &facts{acls: map[string]string{"office": "BLOCK"}}, Request{IP: ip}, "", nil, "acl:office bot"},
		{"no entry", &facts{}, Request{IP: ip}, "", nil, "acl:office bot"},
		{"no address", &facts{acls: map[string]string{"office": "ALLOW"}}, Request{}, "", nil, "bot"},
		{"acl fails", &facts{acls: map[string]string{"office": "ALLOW"}, err: down}, Request{IP: ip}, "", down, "acl:office bot"},
		{"verified bot", &facts{bot: true}, Request{IP: ip}, "verified-bot", nil, "acl:office bot"},
		{"bot check fails", &facts{bot: true, err: down}, Request{}, "", down, "bot"},
		{"secret", &facts{secrets: map[string]string{"key": "k"}}, Request{Header: headers("X-Key", "k")}, "header:X-Key", nil, "secret:key"},
		{"secret fails", &facts{secrets: map[string]string{"key": "k"}, err: down}, Request{Header: headers("X-Key", "k")}, "", down, "bot secret:key"},
		{"blank secret", &facts{secrets: map[string]string{"key": " \n"}}, Request{Header: headers("X-Key", "")}, "", nil, "bot secret:key"},
		{"method first", &facts{bot: true}, Request{IP: ip, Method: "OPTIONS", Header: headers("X-Key", "k")}, "method", nil, ""},
	}
	for _, tc := range tests {
		tc.req.Facts = tc.facts
		for i := 0; i < 2; i++ {
			rule, ok, err := b.Match(&tc.req, "/")
			if rule != tc.want || ok != (tc.want != "") || !errors.Is(err, tc.err) || tc.err == nil && err != nil {
				t.Errorf("%s (try %d): %q, %v, %v; want %q, %v", tc.name, i, rule, ok, err, tc.want, tc.err)
			}
			if tc.err != nil {
				tc.err = nil // reported once
			}
		}
		var asked []string
		for k, n := range tc.facts.asked {
			asked = append(asked, k)
			if n != 1 {
				t.Errorf("%s: %s asked %d times", tc.name, k, n)
			}
		}
		if got := strings.Join(sorted(asked), " "); got != tc.asked {
			t.Errorf("%s: asked %q, want %q", tc.name, got, tc.asked)
		}
	}
	if rule, ok, err := bypass(t, Bypass{VerifiedBots: true}, false).Match(&Request{}, "/"); ok || err != nil {
		t.Errorf("no platform: %q, %v, %v", rule, ok, err)
	}
}

func sorted(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

// TestBypassFoldedPaths: a room's case_insensitive_paths folds its bypass
// paths too.
func TestBypassFoldedPaths(t *testing.T) {
	b := bypass(t, Bypass{Paths: []string{"/static/"}}, true)
	if _, ok, _ := b.Match(&Request{}, "/STATIC/a.css"); !ok {
		t.Error("/STATIC/ does not bypass")
	}
	if _, ok, _ := b.Match(&Request{}, "/stat/"); ok {
		t.Error("/stat/ bypasses")
	}
}

// TestBypassErrors: each bad rule is refused with its field, its index and
// what to write instead.
func TestBypassErrors(t *testing.T) {
	many := make([]string, MaxEntries+1)
	for i := range many {
		many[i] = fmt.Sprintf("10.0.%d.%d", i/256, i%256)
	}
	tests := []struct {
		name string
		b    Bypass
		want string
	}{
		{"not an address", Bypass{IPs: []string{"192.0.2.1", "localhost"}}, `bypass_ips[1]: "localhost" is not an IP address`},
		{"leading zeros", Bypass{IPs: []string{"010.0.0.1"}}, `bypass_ips[0]: "010.0.0.1" is not an IP address`},
		{"zone", Bypass{IPs: []string{"fe80::1%eth0"}}, `bypass_ips[0]`},
		{"host bits", Bypass{IPs: []string{"10.0.0.1/8"}}, `bypass_ips[0]: "10.0.0.1/8" has bits set past its /8: write "10.0.0.0/8"`},
		{"host bits v6", Bypass{IPs: []string{"2001:db8::1/32"}}, `write "2001:db8::/32"`},
		{"host bits mapped", Bypass{IPs: []string{"::ffff:10.0.0.1/104"}}, `bypass_ips[0]`},
		{"wider than mapped", Bypass{IPs: []string{"::ffff:0.0.0.0/95"}}, `write "::fffe:0:0/95"`},
		{"every v4 address", Bypass{IPs: []string{"0.0.0.0/0"}}, `is every address`},
		{"every v6 address", Bypass{IPs: []string{"::/0"}}, `is every address`},
		{"every mapped address", Bypass{IPs: []string{"::ffff:0.0.0.0/96"}}, `is every address`},
		{"bad prefix length", Bypass{IPs: []string{"10.0.0.0/33"}}, `not a CIDR range`},
		{"too many addresses", Bypass{IPs: many}, `bypass_ips: 1001 entries, more than the 1000 allowed; name a Fastly ACL in bypass_acl instead`},
		{"acl name", Bypass{ACL: "my acl"}, `bypass_acl: "my acl" may only hold`},
		{"bad path", Bypass{Paths: []string{"static/"}}, `bypass_paths[0]: "static/" must start with /`},
		{"path not normal", Bypass{Paths: []string{"/%73tatic/"}}, `bypass_paths[0]: "/%73tatic/" never matches`},
		{"empty extension", Bypass{Extensions: []string{"css", "."}}, `bypass_extensions[1]: "."`},
		{"double extension", Bypass{Extensions: []string{"tar.gz"}}, `write "gz"`},
		{"glob extension", Bypass{Extensions: []string{"*"}}, `bypass_extensions[0]`},
		{"long extension", Bypass{Extensions: []string{strings.Repeat("x", 33)}}, `up to 32`},
		{"method with a space", Bypass{Methods: []string{"GET "}}, `bypass_methods[0]: "GET " is not a method`},
		{"empty method", Bypass{Methods: []string{""}}, `bypass_methods[0]`},
		{"too many methods", Bypass{Methods: many}, `bypass_methods: 1001 entries`},
		{"header name", Bypass{Headers: []HeaderRule{{Name: "X Health", Value: "1"}}}, `bypass_headers[0]: name: "X Health" is not a header name`},
		{"header without a value", Bypass{Headers: []HeaderRule{{Name: "X-Health"}}}, `bypass_headers[0]: value or secret: set exactly one`},
		{"header with both", Bypass{Headers: []HeaderRule{{Name: "X-Health", Value: "1", Secret: "s"}}}, `value or secret: set exactly one`},
		{"header value spaced", Bypass{Headers: []HeaderRule{{Name: "X-Health", Value: "1 "}}}, `value: "1 " has white space`},
		{"header value control", Bypass{Headers: []HeaderRule{{Name: "X-Health", Value: "a\nb"}}}, `control character`},
		{"header secret name", Bypass{Headers: []HeaderRule{{Name: "X-Health", Secret: "a/b"}}}, `bypass_headers[0]: secret: "a/b"`},
		{"reserved header", Bypass{Headers: []HeaderRule{{Name: "Waiting-Room-Bypass", Value: "1"}}}, `is reserved`},
		{"cookie header", Bypass{Headers: []HeaderRule{{Name: "cookie", Value: "a=b"}}}, `use bypass_cookies`},
		{"host header", Bypass{Headers: []HeaderRule{{Name: "Host", Value: "a"}}}, `hosts`},
		{"cookie spaced", Bypass{Cookies: []string{"staff", " tier = gold"}}, `bypass_cookies[1]: " tier = gold" must be a cookie name`},
		{"cookie empty", Bypass{Cookies: []string{""}}, `bypass_cookies[0]`},
		{"cookie empty value", Bypass{Cookies: []string{"tier="}}, `write the name alone`},
		{"cookie value with a semicolon", Bypass{Cookies: []string{"tier=a;b"}}, `bypass_cookies[0]`},
		{"cookie value quoted", Bypass{Cookies: []string{`tier="gold"`}}, `quotes`},
	}
	for _, tc := range tests {
		err := tc.b.Compile(false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if _, ok, err := tc.b.Match(&Request{Method: "OPTIONS"}, "/"); ok || err == nil {
			t.Errorf("%s: rules that did not compile matched: %v, %v", tc.name, ok, err)
		}
	}
	var empty Bypass
	if err := empty.Compile(false); err != nil {
		t.Fatal(err)
	}
	if rule, ok, err := empty.Match(&Request{Method: "GET", IP: netip.MustParseAddr("192.0.2.1")}, "/x.css"); ok || err != nil {
		t.Errorf("no rules: %q, %v, %v", rule, ok, err)
	}
}
