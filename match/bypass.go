package match

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Bypass is a set of rules for requests that never wait: a request any rule
// matches goes to the origin without a place in line, without being
// counted, and without a store call. A room embeds one (its JSON fields
// are the room's); the config store's "bypass" key holds the global one,
// which applies to every room. Compile it before use.
type Bypass struct {
	// IPs are client addresses and CIDR ranges, IPv4 or IPv6
	// ("192.0.2.7", "198.51.100.0/24", "2001:db8::/32"). An IPv4-mapped
	// IPv6 address or range is its IPv4 one. A range with host bits set
	// ("10.0.0.1/8") is refused: it is unclear which was meant.
	IPs []string `json:"bypass_ips"`
	// ACL names a Fastly ACL for long lists: a client whose entry's action
	// is ALLOW (in any case) bypasses. BLOCK does not bypass, and does not
	// block either: the waiting room only decides who waits.
	ACL string `json:"bypass_acl"`
	// Paths are path prefixes and globs, as a room's paths.
	Paths []string `json:"bypass_paths"`
	// Extensions are file extensions without the dot ("css", "woff2"),
	// compared with the path's last segment in any case.
	Extensions []string `json:"bypass_extensions"`
	// Methods are request methods ("OPTIONS"), compared exactly: methods
	// are case-sensitive, and "options" is not OPTIONS.
	Methods []string `json:"bypass_methods"`
	// Headers are headers that, with the given value, bypass.
	Headers []HeaderRule `json:"bypass_headers"`
	// Cookies are cookie names ("staff": present with any value) or a name
	// and its exact value ("staff=yes").
	Cookies []string `json:"bypass_cookies"`
	// VerifiedBots lets through what the platform's bot detection reports
	// as a verified bot. Where the platform reports nothing, nothing does.
	VerifiedBots bool `json:"bypass_verified_bots"`

	compiled   bool
	ips        []netip.Prefix
	paths      patterns
	extensions map[string]bool
	methods    map[string]bool
	cookies    []cookieRule
}

// HeaderRule is a header whose value lets a request bypass: a health
// checker's, or a partner's shared secret.
type HeaderRule struct {
	// Name is the header's name, in any case.
	Name string `json:"name"`
	// Value is the exact value (case-sensitive; white space around it is
	// not part of a header's value). It is as secret as the
	// configuration.
	Value string `json:"value"`
	// Secret names a secret store entry holding the value, read only when
	// the header is present and compared in constant time. Exactly one of
	// Value and Secret is set.
	Secret string `json:"secret"`
}

type cookieRule struct {
	name, value string
	anyValue    bool
}

// The maximal number of characters in ACL and secret store names.
const maxStoreName = 255

// Compile checks the rules and prepares them for Match; caseInsensitivePaths
// makes Paths match in any case (a room's case_insensitive_paths). Each
// error starts with the field it is about, e.g. `bypass_ips[1]: ...`.
func (b *Bypass) Compile(caseInsensitivePaths bool) error {
	b.compiled = false
	var err error
	if b.ips, err = compileIPs("bypass_ips", "bypass_acl", b.IPs); err != nil {
		return err
	}
	if b.ACL != "" {
		if err := checkStoreName(b.ACL); err != nil {
			return fmt.Errorf("bypass_acl: %q %v", b.ACL, err)
		}
	}
	if b.paths, err = compilePatterns("bypass_paths", b.Paths, caseInsensitivePaths); err != nil {
		return err
	}
	b.extensions, err = compileSet("bypass_extensions", b.Extensions, normExtension,
		`must be one extension of up to 32 letters, digits, - or _, such as "css" (for "a.tar.gz", write "gz")`)
	if err != nil {
		return err
	}
	if b.methods, err = compileSet("bypass_methods", b.Methods, normMethod, "is not a method, such as OPTIONS"); err != nil {
		return err
	}
	if err := compileHeaders(b.Headers); err != nil {
		return err
	}
	if b.cookies, err = compileCookies(b.Cookies); err != nil {
		return err
	}
	b.compiled = true
	return nil
}

// compileIPs reads the addresses and ranges of the list called field; a
// list too long for it is for the ACL setting acl.
func compileIPs(field, acl string, list []string) ([]netip.Prefix, error) {
	if err := checkLength(field, len(list)); err != nil {
		return nil, fmt.Errorf("%v; name a Fastly ACL in %s instead", err, acl)
	}
	prefixes := make([]netip.Prefix, 0, len(list))
	for i, s := range list {
		p, err := parseIP(s)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %q %v", field, i, s, err)
		}
		prefixes = append(prefixes, p)
	}
	return prefixes, nil
}

// parseIP reads an address or a CIDR range, unmapping IPv4-mapped IPv6.
func parseIP(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, errors.New("is not an IP address or a CIDR range (such as 192.0.2.0/24 or 2001:db8::/32)")
		}
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, errors.New("is not a CIDR range (such as 192.0.2.0/24 or 2001:db8::/32)")
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("has bits set past its /%d: write %q for the range, or the address alone for one client", p.Bits(), p.Masked())
	}
	if p.Addr().Is4In6() {
		// Masked, it is at least a /96: a shorter one clears bits of ffff.
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	if p.Bits() == 0 {
		return netip.Prefix{}, errors.New("is every address: to let everyone through, set the room's mode to passthrough")
	}
	return p, nil
}

// compileSet checks a list of words and returns the set of their normal
// forms; norm gives a word's normal form, or false with what is wrong.
func compileSet(field string, list []string, norm func(string) (string, bool), problem string) (map[string]bool, error) {
	if err := checkLength(field, len(list)); err != nil {
		return nil, err
	}
	set := make(map[string]bool, len(list))
	for i, s := range list {
		n, ok := norm(s)
		if !ok {
			return nil, fmt.Errorf("%s[%d]: %q %s", field, i, s, problem)
		}
		set[n] = true
	}
	return set, nil
}

// normExtension is an extension in lower case without its dot.
func normExtension(s string) (string, bool) {
	e := strings.ToLower(strings.TrimPrefix(s, "."))
	ok := e != "" && len(e) <= 32
	for j := 0; j < len(e); j++ {
		c := e[j]
		ok = ok && (c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_')
	}
	return e, ok
}

// normMethod is a method in upper case.
func normMethod(s string) (string, bool) {
	return strings.ToUpper(s), IsToken(s) && len(s) <= 32
}

func compileHeaders(list []HeaderRule) error {
	if err := checkLength("bypass_headers", len(list)); err != nil {
		return err
	}
	for i, h := range list {
		if err := h.check(); err != nil {
			return fmt.Errorf("bypass_headers[%d]: %v", i, err)
		}
	}
	return nil
}

// check says what is wrong with a header rule, starting with its field.
func (h HeaderRule) check() error {
	lower := strings.ToLower(h.Name)
	switch {
	case !IsToken(h.Name) || len(h.Name) > 256:
		return fmt.Errorf("name: %q is not a header name", h.Name)
	case lower == "cookie":
		return errors.New(`name: "Cookie": use bypass_cookies`)
	case lower == "host":
		return errors.New(`name: "Host": a room's hosts say which hosts it holds`)
	case strings.HasPrefix(lower, "waiting-room-"):
		return fmt.Errorf("name: %q is reserved: the edge removes Waiting-Room-* headers from requests, so it never matches", h.Name)
	case (h.Value == "") == (h.Secret == ""):
		return errors.New("value or secret: set exactly one (a header's mere presence is too easy to forge)")
	case h.Secret != "":
		if err := checkStoreName(h.Secret); err != nil {
			return fmt.Errorf("secret: %q %v", h.Secret, err)
		}
	case len(h.Value) > MaxEntryLength:
		return fmt.Errorf("value: is longer than %d bytes", MaxEntryLength)
	case strings.TrimSpace(h.Value) != h.Value:
		return fmt.Errorf("value: %q has white space at an end, which no header value keeps", h.Value)
	}
	for i := 0; i < len(h.Value); i++ {
		if c := h.Value[i]; c < ' ' && c != '\t' || c == 0x7f {
			return fmt.Errorf("value: %q holds a control character", h.Value)
		}
	}
	return nil
}

func compileCookies(list []string) ([]cookieRule, error) {
	if err := checkLength("bypass_cookies", len(list)); err != nil {
		return nil, err
	}
	rules := make([]cookieRule, 0, len(list))
	for i, s := range list {
		name, value, hasValue := strings.Cut(s, "=")
		if !isCookieName(name) {
			return nil, fmt.Errorf(`bypass_cookies[%d]: %q must be a cookie name or name=value, without spaces (such as "staff" or "staff=yes")`, i, s)
		}
		if hasValue && (value == "" || len(value) > MaxEntryLength || !isCookieValue(value)) {
			return nil, fmt.Errorf(`bypass_cookies[%d]: %q: the value after = must be 1 to %d cookie characters (no spaces, quotes, commas, semicolons or backslashes); write the name alone for any value`, i, s, MaxEntryLength)
		}
		rules = append(rules, cookieRule{name: name, value: value, anyValue: !hasValue})
	}
	return rules, nil
}

// Match reports whether a request whose path reads as path (one of
// req.Paths) bypasses, and by which rule: "path", "extension", "method",
// "header:<name>", "cookie:<name>", "ip", "acl:<name>" or "verified-bot",
// as the Waiting-Room-Bypass header and the logs say. Only "path" and
// "extension" depend on the reading. Rules that need the platform are
// tried last, and only when no other rule matched. An error comes only
// from Facts, and that rule is then taken as not matching.
func (b *Bypass) Match(req *Request, path string) (rule string, ok bool, err error) {
	if !b.compiled {
		return "", false, errors.New("match: Bypass.Match before Compile")
	}
	switch {
	case b.methods[req.Method]:
		return "method", true, nil
	case len(b.paths.list) > 0 && b.pathMatches(req, path):
		return "path", true, nil
	case len(b.extensions) > 0 && b.extensions[extension(path)]:
		return "extension", true, nil
	}
	for _, h := range b.Headers {
		if h.Value != "" && hasValue(req.header(h.Name), h.Value) {
			return "header:" + h.Name, true, nil
		}
	}
	for _, c := range b.cookies {
		if v, found := req.cookie(c.name); found && (c.anyValue || v == c.value) {
			return "cookie:" + c.name, true, nil
		}
	}
	if ip, known := req.ip(); known {
		for _, p := range b.ips {
			if p.Contains(ip) {
				return "ip", true, nil
			}
		}
	}
	var errs []error
	if b.ACL != "" {
		action, err := req.acl(b.ACL)
		if err != nil {
			errs = append(errs, fmt.Errorf("bypass_acl %q: %w", b.ACL, err))
		} else if strings.EqualFold(action, "ALLOW") {
			return "acl:" + b.ACL, true, nil
		}
	}
	for _, h := range b.Headers {
		if h.Secret == "" {
			continue
		}
		values := req.header(h.Name)
		if len(values) == 0 {
			continue
		}
		secret, err := req.secret(h.Secret)
		if err != nil {
			errs = append(errs, fmt.Errorf("bypass_headers %s: secret %q: %w", h.Name, h.Secret, err))
		} else if hasSecret(values, secret) {
			return "header:" + h.Name, true, errors.Join(errs...)
		}
	}
	if b.VerifiedBots {
		bot, err := req.verifiedBot()
		if err != nil {
			errs = append(errs, fmt.Errorf("bypass_verified_bots: %w", err))
		} else if bot {
			return "verified-bot", true, errors.Join(errs...)
		}
	}
	return "", false, errors.Join(errs...)
}

func (b *Bypass) pathMatches(req *Request, path string) bool {
	_, ok := b.paths.best(req, path)
	return ok
}

// extension is the lower-case extension of path's last segment ("css" for
// "/a/Site.CSS"), or "" when it has none: "/.css" is a file named ".css",
// with no extension.
func extension(path string) string {
	name := path[strings.LastIndexByte(path, '/')+1:]
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 {
		return ""
	}
	return asciiLower(name[dot+1:])
}

// asciiLower lowers ASCII letters only: Unicode folding would make the
// long s (ſ) an s, and a request for "/a.cſs" a stylesheet.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// hasValue reports whether one of a header's values is want, white space
// around it aside.
func hasValue(values []string, want string) bool {
	for _, v := range values {
		if strings.Trim(v, " \t") == want {
			return true
		}
	}
	return false
}

// hasSecret reports whether one of a header's values is the secret, white
// space around either aside, comparing digests in constant time so that
// neither the secret nor its length leaks through timing. An empty secret
// matches nothing.
func hasSecret(values []string, secret []byte) bool {
	secret = bytes.TrimSpace(secret)
	if len(secret) == 0 {
		return false
	}
	want := sha256.Sum256(secret)
	found := 0
	for _, v := range values {
		got := sha256.Sum256([]byte(strings.Trim(v, " \t")))
		found |= subtle.ConstantTimeCompare(got[:], want[:])
	}
	return found == 1
}

// checkStoreName refuses what cannot name a Fastly ACL or secret.
func checkStoreName(s string) error {
	if s == "" || len(s) > maxStoreName {
		return fmt.Errorf("must be 1 to %d characters", maxStoreName)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return errors.New("may only hold letters, digits, _, - and .")
		}
	}
	return nil
}

// IsToken reports whether s is an HTTP token (RFC 9110 section 5.6.2): a
// method or a header name.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isLetter(c) || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// isCookieName reports whether s may name a cookie (a token of at most 64
// characters, as a room's cookie_name).
func isCookieName(s string) bool { return IsToken(s) && len(s) <= 64 }

// isCookieValue reports whether s is made of cookie-octets (RFC 6265
// section 4.1.1).
func isCookieValue(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == '"' || c == ',' || c == ';' || c == '\\' {
			return false
		}
	}
	return true
}

// SkipsPath reports whether the rules that read the path (bypass_paths and
// bypass_extensions) let path (in normal form) through: a link into the
// room must not lead where nobody waits.
func (b *Bypass) SkipsPath(path string) bool {
	if !b.compiled {
		return false
	}
	return len(b.paths.list) > 0 && b.pathMatches(&Request{Paths: []string{path}}, path) ||
		len(b.extensions) > 0 && b.extensions[extension(path)]
}
