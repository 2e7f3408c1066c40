package edge

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// platform is a Geo, ACLs and Bots that counts its calls; an err field,
// when set, is what the call returns.
type platform struct {
	country    string
	countryErr error
	action     string
	aclErr     error
	verified   bool
	botErr     error
	secret     string
	secretErr  error
	calls      map[string]int
}

func (p *platform) count(what string) {
	if p.calls == nil {
		p.calls = map[string]int{}
	}
	p.calls[what]++
}

func (p *platform) Country(netip.Addr) (string, error) {
	p.count("geo")
	return p.country, p.countryErr
}

func (p *platform) Lookup(name string, _ netip.Addr) (string, error) {
	p.count("acl " + name)
	return p.action, p.aclErr
}

func (p *platform) Verified() (bool, error) {
	p.count("bots")
	return p.verified, p.botErr
}

func (p *platform) Get(name string) ([]byte, error) {
	p.count("secret " + name)
	return []byte(p.secret), p.secretErr
}

// newFacts is the facts of a Service over p, and the lines it logs.
func newFacts(p *platform) (*facts, *[]string) {
	var logs []string
	s := &Service{Geo: p, ACLs: p, Bots: p, Secrets: p,
		Logf: func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }}
	return &facts{s: s}, &logs
}

var clientAddr = netip.MustParseAddr("192.0.2.7")

func TestFactsCountry(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    platform
		want string
		log  string
	}{
		{"a country", platform{country: "DE"}, "DE", ""},
		{"lower case is upper-cased", platform{country: "de"}, "DE", ""},
		{"no record", platform{country: ""}, "", ""},
		{"reserved", platform{country: "**"}, "", ""},
		{"not two letters", platform{country: "DEU"}, "", ""},
		{"digits", platform{country: "D1"}, "", ""},
		{"lookup error", platform{countryErr: errors.New("geo: unexpected error")}, "", "geolocation of 192.0.2.7 failed (country unknown): geo: unexpected error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, logs := newFacts(&tc.p)
			for range 3 {
				got, err := f.Country(clientAddr)
				if got != tc.want || err != nil {
					t.Fatalf("Country = %q, %v; want %q, nil", got, err, tc.want)
				}
			}
			if n := tc.p.calls["geo"]; n != 1 {
				t.Errorf("geolocation asked %d times for one request, want once", n)
			}
			checkLog(t, *logs, tc.log)
		})
	}
}

func TestFactsVerifiedBot(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    platform
		want bool
		log  string
	}{
		{"verified", platform{verified: true}, true, ""},
		{"not verified", platform{}, false, ""},
		{"error", platform{verified: true, botErr: errors.New("Fastly error: None")}, false, "bot detection failed (not a verified bot): Fastly error: None"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, logs := newFacts(&tc.p)
			for range 3 {
				got, err := f.VerifiedBot()
				if got != tc.want || err != nil {
					t.Fatalf("VerifiedBot = %v, %v; want %v, nil", got, err, tc.want)
				}
			}
			if n := tc.p.calls["bots"]; n != 1 {
				t.Errorf("bot detection asked %d times for one request, want once", n)
			}
			checkLog(t, *logs, tc.log)
		})
	}
}

func TestFactsACL(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    platform
		want string
		log  string
	}{
		{"allow", platform{action: "ALLOW"}, "ALLOW", ""},
		{"no entry", platform{}, "", ""},
		{"no such ACL", platform{aclErr: fmt.Errorf("acl office: %w", ErrNotFound)}, "", `bypass_acl: no ACL "office" is linked to this service`},
		{"lookup error", platform{action: "ALLOW", aclErr: errors.New("acl: too many requests")}, "", `ACL "office" lookup of 192.0.2.7 failed (no entry assumed): acl: too many requests`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, logs := newFacts(&tc.p)
			for range 3 {
				got, err := f.ACL("office", clientAddr)
				if got != tc.want || err != nil {
					t.Fatalf("ACL = %q, %v; want %q, nil", got, err, tc.want)
				}
			}
			if n := tc.p.calls["acl office"]; n != 1 {
				t.Errorf("the ACL was asked %d times for one request, want once", n)
			}
			if _, err := f.ACL("other", clientAddr); err != nil || tc.p.calls["acl other"] != 1 {
				t.Errorf("another ACL is asked on its own: %d calls, %v", tc.p.calls["acl other"], err)
			}
			checkLog(t, (*logs)[:min(len(*logs), 1)], tc.log)
		})
	}
}

func TestFactsSecret(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    platform
		want string
		log  string
	}{
		{"a value", platform{secret: "s3cret\n"}, "s3cret", ""},
		{"missing", platform{secretErr: ErrNotFound}, "", "bypass_headers: secret probe is missing from waiting_room_secrets"},
		{"blank", platform{secret: " \n"}, "", "bypass_headers: secret probe is blank"},
		{"unreadable", platform{secretErr: errors.New("secretstore: unexpected error")}, "", "secret probe: secretstore: unexpected error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, logs := newFacts(&tc.p)
			for range 3 {
				got, err := f.Secret("probe")
				if string(got) != tc.want || err != nil {
					t.Fatalf("Secret = %q, %v; want %q, nil", got, err, tc.want)
				}
			}
			if n := tc.p.calls["secret probe"]; n != 1 {
				t.Errorf("the secret was read %d times for one request, want once", n)
			}
			checkLog(t, *logs, tc.log)
		})
	}
}

// TestFactsWithoutPlatform: the native build has no Geo, ACLs or Bots;
// every answer is unknown, and nothing is logged.
func TestFactsWithoutPlatform(t *testing.T) {
	var logs []string
	f := &facts{s: &Service{Logf: func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }}}
	if c, err := f.Country(clientAddr); c != "" || err != nil {
		t.Errorf("Country = %q, %v", c, err)
	}
	if v, err := f.VerifiedBot(); v || err != nil {
		t.Errorf("VerifiedBot = %v, %v", v, err)
	}
	if a, err := f.ACL("office", clientAddr); a != "" || err != nil {
		t.Errorf("ACL = %q, %v", a, err)
	}
	if s, err := f.Secret("probe"); s != nil || err != nil {
		t.Errorf("Secret = %q, %v", s, err)
	}
	if len(logs) != 0 {
		t.Errorf("logged %q", logs)
	}
}

// TestFactsUnknownAddress: a request without a usable client address asks
// the platform nothing about it.
func TestFactsUnknownAddress(t *testing.T) {
	p := &platform{country: "DE", action: "ALLOW"}
	f, _ := newFacts(p)
	if c, _ := f.Country(netip.Addr{}); c != "" {
		t.Errorf("Country of no address = %q", c)
	}
	if a, _ := f.ACL("office", netip.Addr{}); a != "" {
		t.Errorf("ACL of no address = %q", a)
	}
	if len(p.calls) != 0 {
		t.Errorf("platform asked %v", p.calls)
	}
}

// checkLog fails unless logs is one line holding want, or none when want
// is "".
func checkLog(t *testing.T, logs []string, want string) {
	t.Helper()
	switch {
	case want == "" && len(logs) != 0:
		t.Errorf("logged %q, want nothing", logs)
	case want != "" && (len(logs) != 1 || !strings.Contains(logs[0], want)):
		t.Errorf("logged %q, want one line with %q", logs, want)
	}
}
