package edge

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/fastly/compute-sdk-go/fsthttp"
)

// platform is a Geo, ACLs and Bots that counts its calls; an err field,
// when set, is what the call returns.
type platform struct {
	country    string
	countryErr error
	as         int
	action     string
	aclErr     error
	verified   bool
	bad        bool
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

func (p *platform) AS(netip.Addr) (int, error) {
	p.count("as")
	return p.as, nil
}

func (p *platform) Lookup(name string, _ netip.Addr) (string, error) {
	p.count("acl " + name)
	return p.action, p.aclErr
}

func (p *platform) Verified(*fsthttp.Request) (bool, error) {
	p.count("bots")
	return p.verified, p.botErr
}

func (p *platform) Bad(*fsthttp.Request) (bool, error) {
	p.count("bad bots")
	return p.bad, p.botErr
}

func (p *platform) Get(name string) ([]byte, error) {
	p.count("secret " + name)
	return []byte(p.secret), p.secretErr
}

// factsOver is the facts of a Service over p.
func factsOver(p *platform) facts {
	return facts{testRequest(&Handler{Geo: p, ACLs: p, Bots: p, Secrets: p})}
}

var visitorAddr = netip.MustParseAddr("192.0.2.7")

// TestFacts: each fact is the platform's answer, and each failure an error
// saying which rule it concerns and what failed.
func TestFacts(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    platform
		ask  func(f facts) (string, error)
		want string
		err  string
	}{
		{"country", platform{country: "DE"}, country, "DE", ""},
		{"no record", platform{}, country, "", ""},
		{"geolocation error", platform{countryErr: errors.New("geo: unexpected error")}, country, "",
			"geolocation of 192.0.2.7 failed, so its country is unknown: geo: unexpected error"},
		{"verified bot", platform{verified: true}, bot, "true", ""},
		{"not a verified bot", platform{}, bot, "false", ""},
		{"bot detection error", platform{verified: true, botErr: errors.New("Fastly error: None")}, bot, "false",
			"bot detection failed, so the request is not a verified bot: Fastly error: None"},
		{"ACL entry", platform{action: "ALLOW"}, office, "ALLOW", ""},
		{"no ACL entry", platform{}, office, "", ""},
		{"no such ACL", platform{aclErr: fmt.Errorf("acl office: %w", ErrNotFound)}, office, "",
			"no ACL of that name is linked to this service"},
		{"ACL error", platform{action: "ALLOW", aclErr: errors.New("acl: too many requests")}, office, "",
			"lookup of 192.0.2.7 failed, so the rule does not let it through: acl: too many requests"},
		{"secret", platform{secret: "s3cret\n"}, probe, "s3cret", ""},
		{"missing secret", platform{secretErr: ErrNotFound}, probe, "", "missing from waiting_room_secrets"},
		{"blank secret", platform{secret: " \n"}, probe, "", "is blank"},
		{"unreadable secret", platform{secretErr: errors.New("secretstore: unexpected error")}, probe, "",
			"cannot be read, so the rule lets nobody through: secretstore: unexpected error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.ask(factsOver(&tc.p))
			if got != tc.want {
				t.Errorf("answer %q, want %q", got, tc.want)
			}
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("error %v, want one with %q", err, tc.err)
			}
			if n := len(tc.p.calls); n != 1 {
				t.Errorf("platform calls %v, want one", tc.p.calls)
			}
		})
	}
}

func country(f facts) (string, error) { return f.Country(visitorAddr) }
func office(f facts) (string, error)  { return f.ACL("office", visitorAddr) }

func bot(f facts) (string, error) {
	v, err := f.VerifiedBot()
	return fmt.Sprint(v), err
}

func probe(f facts) (string, error) {
	v, err := f.Secret("probe")
	return string(v), err
}

// TestFactsWithoutPlatform: the native build has no Geo, ACLs or Bots;
// every answer is unknown, without an error.
func TestFactsWithoutPlatform(t *testing.T) {
	f := facts{testRequest(&Handler{})}
	for name, ask := range map[string]func(facts) (string, error){"country": country, "ACL": office, "secret": probe} {
		if v, err := ask(f); v != "" || err != nil {
			t.Errorf("%s = %q, %v; want unknown", name, v, err)
		}
	}
	if v, err := bot(f); v != "false" || err != nil {
		t.Errorf("bot = %s, %v; want false", v, err)
	}
}
