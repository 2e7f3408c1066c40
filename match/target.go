package match

import (
	"errors"
	"fmt"
	"strings"

	"github.com/edgequeue/waitingroom/urlnorm"
)

// Target is where a room applies: which hosts, paths and countries. It is
// embedded in a room's definition, so its JSON fields are the room's.
// Compile it before use.
type Target struct {
	// Hosts are host names ("shop.example.com") and wildcards
	// ("*.example.com": any name below example.com, at any depth, but not
	// example.com itself); empty means every host. Compile keeps them in
	// urlnorm.Host's form (lower case, no trailing dot).
	Hosts []string `json:"hosts"`
	// Paths are path prefixes and globs (see the package doc); at least
	// one is required.
	Paths []string `json:"paths"`
	// Countries, when set, limits the room to clients in these countries
	// (ISO 3166-1 alpha-2 codes); a client whose country is unknown is not
	// in it.
	Countries []string `json:"countries"`
	// ExceptCountries, when set, limits the room to clients outside these
	// countries; a client whose country is unknown is in it.
	ExceptCountries []string `json:"except_countries"`
	// CaseInsensitivePaths makes Paths (and the room's path bypass rules)
	// match whatever the case, for an origin that ignores case (IIS, a
	// case-insensitive file system): there "/TICKETS/" is "/tickets/", and
	// a case-sensitive rule would let it past the line.
	CaseInsensitivePaths bool `json:"case_insensitive_paths"`

	compiled  bool
	exact     []string // host names
	wildcards []string // ".example.com" for "*.example.com"
	paths     patterns
	countries map[string]bool
}

// Compile checks the target and prepares it for Match. Each error starts
// with the field it is about, e.g. `paths[2]: "x" must start with /`.
func (t *Target) Compile() error {
	t.compiled = false
	t.exact, t.wildcards = nil, nil
	if err := checkLength("hosts", len(t.Hosts)); err != nil {
		return err
	}
	for i, h := range t.Hosts {
		n, wild, err := compileHost(h)
		if err != nil {
			return fmt.Errorf("hosts[%d]: %q %v", i, h, err)
		}
		if wild {
			t.Hosts[i] = "*" + n
			t.wildcards = append(t.wildcards, n)
		} else {
			t.Hosts[i] = n
			t.exact = append(t.exact, n)
		}
	}
	if len(t.Paths) == 0 {
		return errors.New(`paths: at least one path is required (use ["/"] for the whole site)`)
	}
	var err error
	if t.paths, err = compilePatterns("paths", t.Paths, t.CaseInsensitivePaths); err != nil {
		return err
	}
	if len(t.Countries) > 0 && len(t.ExceptCountries) > 0 {
		return errors.New("countries and except_countries: set one or the other, not both")
	}
	field, list := "countries", t.Countries
	if len(t.ExceptCountries) > 0 {
		field, list = "except_countries", t.ExceptCountries
	}
	if t.countries, err = compileCountries(field, list); err != nil {
		return err
	}
	t.compiled = true
	return nil
}

// compileHost checks one entry of hosts and returns it in normal form: a
// host name, or a wildcard's suffix with its leading dot (wild set).
func compileHost(h string) (name string, wild bool, err error) {
	if len(h) > MaxEntryLength {
		return "", false, fmt.Errorf("is longer than %d bytes", MaxEntryLength)
	}
	suffix, wild := strings.CutPrefix(h, "*.")
	switch {
	case h == "*" || h == "*.":
		return "", false, errors.New("is every host: leave hosts out instead")
	case strings.Contains(suffix, "*"):
		return "", false, errors.New(`may only hold * as its whole first label, as in "*.example.com"`)
	}
	n, err := urlnorm.Host(suffix)
	var bad *urlnorm.Error
	switch {
	case errors.As(err, &bad):
		return "", false, errors.New(bad.Problem)
	case err != nil:
		return "", false, err
	case n != strings.TrimSuffix(strings.ToLower(suffix), "."):
		return "", false, errors.New("must be a host name without a port (a room applies to every port)")
	}
	if !wild {
		return n, false, nil
	}
	if strings.HasPrefix(n, "[") || strings.Trim(n[strings.LastIndexByte(n, '.')+1:], "0123456789") == "" {
		return "", false, errors.New("is a wildcard over an IP address; a wildcard is for names below a domain")
	}
	return "." + n, true, nil
}

// Specificity ranks the rooms a request matches: the most specific one
// applies. The zero Specificity is the least specific.
type Specificity struct {
	host    int // 0: any host; 1: a wildcard; 2: an exact name
	suffix  int // a wildcard's suffix length: a longer one is more specific
	path    int // the literal length of the most specific matching path
	country bool
}

// The kinds of host match, in rising specificity.
const (
	anyHost = iota
	wildcardHost
	exactHost
)

// MoreThan reports whether a is more specific than b: an exact host beats
// a wildcard, a longer wildcard a shorter one, and a wildcard no host
// list; then the longer literal path wins; then a country-targeted room
// beats an untargeted one. Equal ones are left to the rooms' order.
func (a Specificity) MoreThan(b Specificity) bool {
	switch {
	case a.host != b.host:
		return a.host > b.host
	case a.suffix != b.suffix:
		return a.suffix > b.suffix
	case a.path != b.path:
		return a.path > b.path
	}
	return a.country && !b.country
}

// String says what a match rests on, for explanations.
func (a Specificity) String() string {
	host := "any host"
	switch a.host {
	case exactHost:
		host = "exact host"
	case wildcardHost:
		host = fmt.Sprintf("wildcard host (suffix of %s)", plural(a.suffix, "character"))
	}
	country := ""
	if a.country {
		country = ", country-targeted"
	}
	return fmt.Sprintf("%s, path of %s%s", host, plural(a.path, "literal character"), country)
}

// plural counts n of a noun that takes an s, as explanations print them.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Match reports whether the target holds a request whose path reads as
// path (one of req.Paths), and how specifically. It asks the client's
// country only when the host and path match and the target names
// countries. An error comes only from Facts: then the country is taken as
// unknown, and the answer given is the one for an unknown country.
func (t *Target) Match(req *Request, path string) (Specificity, bool, error) {
	if !t.compiled {
		return Specificity{}, false, errors.New("match: Target.Match before Compile")
	}
	var s Specificity
	var ok bool
	if s.host, s.suffix, ok = t.matchHost(req); !ok {
		return Specificity{}, false, nil
	}
	if s.path, ok = t.paths.best(req, path); !ok {
		return Specificity{}, false, nil
	}
	if len(t.countries) == 0 {
		return s, true, nil
	}
	s.country = true
	country, err := req.country()
	in := country != "" && t.countries[country]
	if len(t.ExceptCountries) > 0 {
		return s, !in, err
	}
	return s, in, err
}

// matchHost is how the request's host matches the target's hosts.
func (t *Target) matchHost(req *Request) (kind, suffix int, ok bool) {
	if len(t.exact) == 0 && len(t.wildcards) == 0 {
		return anyHost, 0, true
	}
	h := req.host()
	if h == "" {
		return 0, 0, false
	}
	for _, name := range t.exact {
		if name == h {
			return exactHost, 0, true
		}
	}
	found := false
	for _, w := range t.wildcards {
		if len(h) > len(w) && strings.HasSuffix(h, w) && len(w) > suffix {
			suffix, found = len(w), true
		}
	}
	return wildcardHost, suffix, found
}

// Serves reports whether the target applies to host (a Host header, in
// any form urlnorm.Host accepts), whatever the path and country: a room's
// own endpoints (leaving the line) work on every host the room may hold.
func (t *Target) Serves(host string) bool {
	if !t.compiled {
		return false
	}
	_, _, ok := t.matchHost(&Request{Host: host})
	return ok
}

// HoldsPath reports whether the target's paths hold path (in normal form),
// whatever the host and country: for a link into the room, such as an
// invite, whose request will come on a host the room serves.
func (t *Target) HoldsPath(path string) bool {
	if !t.compiled {
		return false
	}
	_, ok := t.paths.best(&Request{Paths: []string{path}}, path)
	return ok
}

// isoCountries are the ISO 3166-1 alpha-2 codes assigned to countries and
// territories (249), and XK, which geolocation databases use for Kosovo.
// A code outside them is refused, so that a typo ("UK") is an error
// rather than a room no one is ever in.
const isoCountries = "" +
	"AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ " +
	"BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
	"CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ " +
	"DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR " +
	"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY " +
	"HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP " +
	"KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY " +
	"MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ " +
	"NA NC NE NF NG NI NL NO NP NR NU NZ OM " +
	"PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW " +
	"SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ " +
	"TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ " +
	"UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW"

// compileCountries checks a list of country codes and returns it as a set
// of upper-case codes (nil for an empty list).
func compileCountries(field string, list []string) (map[string]bool, error) {
	if len(list) == 0 {
		return nil, nil
	}
	if err := checkLength(field, len(list)); err != nil {
		return nil, err
	}
	set := make(map[string]bool, len(list))
	for i, c := range list {
		code := strings.ToUpper(c)
		if len(code) != 2 || !strings.Contains(" "+isoCountries+" ", " "+code+" ") {
			hint := ""
			if code == "UK" {
				hint = " (the United Kingdom is GB)"
			}
			return nil, fmt.Errorf("%s[%d]: %q is not an ISO 3166-1 alpha-2 country code%s", field, i, c, hint)
		}
		set[code] = true
	}
	return set, nil
}
