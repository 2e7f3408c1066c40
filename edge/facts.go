// What only the platform knows of a request (its country, bot detection's
// verdict, Fastly ACLs, secrets), for the rules of package match.

package edge

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"

	"github.com/edgequeue/waitingroom/match"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// Geo tells where a client address is: Fastly's geolocation at the edge.
type Geo interface {
	// Country is the ISO 3166-1 alpha-2 code of ip's country as the
	// platform reports it, or "" when it has no record of ip.
	Country(ip netip.Addr) (string, error)
	// AS is the number of the autonomous system ip belongs to, or 0 when
	// the platform has no record of ip.
	AS(ip netip.Addr) (int, error)
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
	// Verified reports whether bot detection analysed r, detected a bot,
	// and verified it is the bot it claims to be.
	Verified(r *fsthttp.Request) (bool, error)
	// Bad reports whether bot detection analysed r and detected a bot it
	// did not verify, other than an accessibility tool (a screen reader
	// is a person's).
	Bad(r *fsthttp.Request) (bool, error)
}

// facts answers the rules' questions about a request from the Handler's
// platform interfaces. The rules (package match) ask each at most once per request
// and hand every error back, prefixed with the room and rule, for the log,
// treating the fact as unknown; so facts only says what failed. A nil
// interface (the native build's tests) is unknown.
type facts struct{ q *request }

var _ match.Facts = facts{}

// Country is ip's country as the platform reports it.
func (f facts) Country(ip netip.Addr) (string, error) {
	if f.q.Geo == nil {
		return "", nil
	}
	c, err := f.q.Geo.Country(ip)
	if err != nil {
		return "", fmt.Errorf("geolocation of %s failed, so its country is unknown: %w", ip, err)
	}
	return c, nil
}

// VerifiedBot reports whether bot detection verified the request as a
// known bot.
func (f facts) VerifiedBot() (bool, error) {
	if f.q.Bots == nil {
		return false, nil
	}
	v, err := f.q.Bots.Verified(f.q.sent)
	if err != nil {
		return false, fmt.Errorf("bot detection failed, so the request is not a verified bot: %w", err)
	}
	return v, nil
}

// ACL returns the action of the entry of ACL name matching ip, or "".
func (f facts) ACL(name string, ip netip.Addr) (string, error) {
	if f.q.ACLs == nil {
		return "", nil
	}
	action, err := f.q.ACLs.Lookup(name, ip)
	switch {
	case errors.Is(err, ErrNotFound):
		return "", errors.New("no ACL of that name is linked to this service (fastly compute acl list-acls lists them; link one with fastly service resource-link create), so the rule lets nobody through")
	case err != nil:
		return "", fmt.Errorf("lookup of %s failed, so the rule does not let it through: %w", ip, err)
	}
	return action, nil
}

// Secret returns the secret store's value called name without the white
// space around it (as `echo` adds). A blank value is an error: it would
// match a blank header.
func (f facts) Secret(name string) ([]byte, error) {
	if f.q.secrets == nil {
		return nil, nil
	}
	v, err := f.q.secrets.Get(name)
	v = bytes.TrimSpace(v)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, fmt.Errorf("missing from %s, so the rule lets nobody through", SecretStore)
	case err != nil:
		return nil, fmt.Errorf("cannot be read, so the rule lets nobody through: %w", err)
	case len(v) == 0:
		return nil, errors.New("is blank, so the rule lets nobody through")
	}
	return v, nil
}
