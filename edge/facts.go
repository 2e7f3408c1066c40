// What only the platform knows of a request (its country, bot detection's
// verdict, Fastly ACLs, secrets), asked lazily and once, for the rules of
// package match.

package edge

import (
	"bytes"
	"errors"
	"net/netip"
)

// Geo tells where a client address is: Fastly's geolocation at the edge.
type Geo interface {
	// Country is the ISO 3166-1 alpha-2 code of ip's country as the
	// platform reports it, or "" when it has no record of ip.
	Country(ip netip.Addr) (string, error)
}

// ACLs looks client addresses up in the service's Fastly ACLs.
type ACLs interface {
	// Lookup returns the action ("ALLOW", "BLOCK", ...) of the entry of
	// the ACL called name that matches ip, or "" when no entry does. It
	// returns an error wrapping ErrNotFound when the service has no ACL
	// of that name.
	Lookup(name string, ip netip.Addr) (string, error)
}

// Bots is what Fastly's bot detection made of the request.
type Bots interface {
	// Verified reports whether bot detection analysed the request,
	// detected a bot, and verified it is the bot it claims to be.
	Verified() (bool, error)
}

// facts answers the rules' questions from the Service's platform
// interfaces. Each answer is cached, so a rule asked by several rooms or
// readings costs one platform call per request. A failure is logged, naming
// what failed, and answered as unknown ("", false, nil): a platform hiccup
// or a config slip (an ACL or secret that does not exist) must never turn
// into a 500 or a panic, and unknown lets the fewest requests past the line.
// A nil interface (the native build's tests) is unknown without a log line.
type facts struct {
	s *Service

	countryAsked bool
	countryIP    netip.Addr
	country      string

	botAsked bool
	bot      bool

	acls    map[aclQuery]string
	secrets map[string][]byte
}

// aclQuery is one ACL lookup.
type aclQuery struct {
	name string
	ip   netip.Addr
}

// Country is ip's country code in upper case, or "" when unknown (no
// record, a lookup error, or a code that is not two letters, such as the
// "**" the platform gives reserved addresses).
func (f *facts) Country(ip netip.Addr) (string, error) {
	if f.countryAsked && f.countryIP == ip {
		return f.country, nil
	}
	f.countryAsked, f.countryIP, f.country = true, ip, ""
	if f.s.Geo == nil || !ip.IsValid() {
		return "", nil
	}
	code, err := f.s.Geo.Country(ip)
	if err != nil {
		f.s.Logf("rules: geolocation of %s failed (country unknown): %v", ip, err)
		return "", nil
	}
	f.country = countryCode(code)
	return f.country, nil
}

// countryCode is code in upper case when it is two ASCII letters, else "".
func countryCode(code string) string {
	if len(code) != 2 {
		return ""
	}
	b := []byte(code)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c < 'A' || c > 'Z':
			return ""
		}
	}
	return string(b)
}

// VerifiedBot reports whether bot detection verified the request as a
// known bot; false when it did not, or said nothing.
func (f *facts) VerifiedBot() (bool, error) {
	if f.botAsked {
		return f.bot, nil
	}
	f.botAsked = true
	if f.s.Bots == nil {
		return false, nil
	}
	v, err := f.s.Bots.Verified()
	if err != nil {
		f.s.Logf("rules: bot detection failed (not a verified bot): %v", err)
		return false, nil
	}
	f.bot = v
	return v, nil
}

// ACL returns the action of the entry of ACL name matching ip, or "" when
// none does or the lookup failed.
func (f *facts) ACL(name string, ip netip.Addr) (string, error) {
	q := aclQuery{name, ip}
	if action, ok := f.acls[q]; ok {
		return action, nil
	}
	if f.acls == nil {
		f.acls = map[aclQuery]string{}
	}
	f.acls[q] = ""
	if f.s.ACLs == nil || !ip.IsValid() {
		return "", nil
	}
	action, err := f.s.ACLs.Lookup(name, ip)
	switch {
	case errors.Is(err, ErrNotFound):
		f.s.Logf("config: bypass_acl: no ACL %q is linked to this service (fastly compute acl list; fastly service resource-link create); its rule lets nobody through", name)
		return "", nil
	case err != nil:
		f.s.Logf("rules: ACL %q lookup of %s failed (no entry assumed): %v", name, ip, err)
		return "", nil
	}
	f.acls[q] = action
	return action, nil
}

// Secret returns the secret store's value called name, without the white
// space around it (as entered with echo), or nil when it cannot be used:
// missing, blank (a blank secret would match a blank header) or unreadable.
func (f *facts) Secret(name string) ([]byte, error) {
	if v, ok := f.secrets[name]; ok {
		return v, nil
	}
	if f.secrets == nil {
		f.secrets = map[string][]byte{}
	}
	f.secrets[name] = nil
	if f.s.Secrets == nil {
		return nil, nil
	}
	v, err := f.s.Secrets.Get(name)
	v = bytes.TrimSpace(v)
	switch {
	case errors.Is(err, ErrNotFound):
		f.s.Logf("config: bypass_headers: secret %s is missing from %s; its rule lets nobody through", name, SecretStore)
		return nil, nil
	case err != nil:
		f.s.Logf("rules: secret %s: %v; its bypass_headers rule lets nobody through", name, err)
		return nil, nil
	case len(v) == 0:
		f.s.Logf("config: bypass_headers: secret %s is blank; its rule lets nobody through", name)
		return nil, nil
	}
	f.secrets[name] = v
	return v, nil
}
