package match

import (
	"net/netip"
	"strings"

	"github.com/edgequeue/waitingroom/urlnorm"
)

// Request is what the rules see of one request. Build one per request:
// it remembers the platform's answers (Facts), so each is asked once.
type Request struct {
	// Host is the request's host, ideally in urlnorm.Host's form; the
	// rules normalise it again (once), so any spelling of a name matches
	// and a host urlnorm refuses matches no room's hosts.
	Host string
	// Paths are the readings of the normalised path the rules judge
	// (urlnorm.Path's Literal first, then Loose); see the package doc.
	Paths []string
	// Method is the request method as sent (methods are case-sensitive).
	Method string
	// Header gives the values of a header, its name in any case; nil
	// means no headers.
	Header func(name string) []string
	// Cookie gives the first value of a cookie; nil means no cookies.
	Cookie func(name string) (string, bool)
	// IP is the client's address; the zero Addr when unknown. An
	// IPv4-mapped IPv6 address is taken as the IPv4 address it maps.
	IP netip.Addr
	// Facts answers what only the platform knows; nil knows nothing (no
	// country, no bot verdict, no ACL, no secret).
	Facts Facts

	known known
}

// Facts is what only the platform knows. The rules ask each fact at most
// once per Request, and only when a rule needs it, so an implementation
// may call the platform directly. An error makes the fact unknown: the
// rules go on as if the platform had no answer (a country room does not
// apply, the bypass rule does not let the request through), and the error
// is handed back once, to be logged.
type Facts interface {
	// Country is the ISO 3166-1 alpha-2 code of ip's country, or "" when
	// unknown.
	Country(ip netip.Addr) (string, error)
	// VerifiedBot reports whether the platform's bot detection found a
	// verified bot (a search engine's crawler, say).
	VerifiedBot() (bool, error)
	// ACL is the action of the entry of the named ACL that matches ip
	// ("ALLOW", "BLOCK"...), or "" when none does.
	ACL(name string, ip netip.Addr) (string, error)
	// Secret is the value of a secret store entry.
	Secret(name string) ([]byte, error)
}

// known holds a Request's answers, worked out or asked once.
type known struct {
	hostDone bool
	host     string     // "" when Host is not a host name
	folded   []folded   // one per reading, at most a few
	segments []segments // likewise

	countryDone bool
	country     string
	botDone     bool
	bot         bool
	acls        map[string]string
	secrets     map[string][]byte
}

// host is the request's host in urlnorm.Host's form, or "" when it is not
// a host name.
func (r *Request) host() string {
	if !r.known.hostDone {
		r.known.hostDone = true
		r.known.host, _ = urlnorm.Host(r.Host)
	}
	return r.known.host
}

type folded struct{ path, folded string }

type segments struct {
	path string
	segs []string
}

// fold is path in fold form (see foldCase), worked out once per path.
func (r *Request) fold(path string) string {
	for _, f := range r.known.folded {
		if f.path == path {
			return f.folded
		}
	}
	f := foldCase(path)
	r.known.folded = append(r.known.folded, folded{path, f})
	return f
}

// segments is path's "/"-separated segments after its leading "/", worked
// out once per path.
func (r *Request) segments(path string) []string {
	for _, s := range r.known.segments {
		if s.path == path {
			return s.segs
		}
	}
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	r.known.segments = append(r.known.segments, segments{path, segs})
	return segs
}

// ip is the client's address with an IPv4-mapped address unmapped, and
// whether it is known.
func (r *Request) ip() (netip.Addr, bool) {
	return r.IP.Unmap(), r.IP.IsValid()
}

// country is the client's country code in upper case, or "" when
// unknown (no address, no answer, an error, or not a two-letter code such
// as "**").
func (r *Request) country() (string, error) {
	if r.known.countryDone {
		return r.known.country, nil
	}
	r.known.countryDone = true
	ip, ok := r.ip()
	if !ok || r.Facts == nil {
		return "", nil
	}
	c, err := r.Facts.Country(ip)
	if err != nil {
		return "", err
	}
	c = strings.ToUpper(c)
	if len(c) == 2 && isLetter(c[0]) && isLetter(c[1]) {
		r.known.country = c
	}
	return r.known.country, nil
}

// verifiedBot reports the platform's bot verdict; false when unknown.
func (r *Request) verifiedBot() (bool, error) {
	if r.known.botDone {
		return r.known.bot, nil
	}
	r.known.botDone = true
	if r.Facts == nil {
		return false, nil
	}
	bot, err := r.Facts.VerifiedBot()
	r.known.bot = bot && err == nil
	return r.known.bot, err
}

// acl is the action of the named ACL's entry for the client, or "".
func (r *Request) acl(name string) (string, error) {
	if action, ok := r.known.acls[name]; ok {
		return action, nil
	}
	if r.known.acls == nil {
		r.known.acls = make(map[string]string, 1)
	}
	r.known.acls[name] = ""
	ip, ok := r.ip()
	if !ok || r.Facts == nil {
		return "", nil
	}
	action, err := r.Facts.ACL(name, ip)
	if err != nil {
		return "", err
	}
	r.known.acls[name] = action
	return action, nil
}

// secret is the named secret, or nil when unknown.
func (r *Request) secret(name string) ([]byte, error) {
	if v, ok := r.known.secrets[name]; ok {
		return v, nil
	}
	if r.known.secrets == nil {
		r.known.secrets = make(map[string][]byte, 1)
	}
	r.known.secrets[name] = nil
	if r.Facts == nil {
		return nil, nil
	}
	v, err := r.Facts.Secret(name)
	if err != nil {
		return nil, err
	}
	r.known.secrets[name] = v
	return v, nil
}

// header is the values of the named header.
func (r *Request) header(name string) []string {
	if r.Header == nil {
		return nil
	}
	return r.Header(name)
}

// cookie is the first value of the named cookie.
func (r *Request) cookie(name string) (string, bool) {
	if r.Cookie == nil {
		return "", false
	}
	return r.Cookie(name)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
