// Package urlnorm turns a request's path and host into the one form the
// waiting room's rules and the origin both act on.
//
// A room protects path prefixes, and a bypass rule exempts some; both are
// worthless if the origin acts on a path the rules never saw: with a room
// on "/" that bypasses "/static/", a request for "/static/../checkout"
// matches the bypass, and an origin that resolves the dot segments serves
// /checkout with no place in line. So the edge normalises the path
// (RFC 3986 section 6.2.2: escapes of unreserved characters decoded, the
// other escapes in upper case, dot segments resolved, repeated slashes
// collapsed), judges the normal form, and forwards that same form.
//
// Some things no normal form settles, because origins disagree on them:
// an encoded slash or backslash (%2F, %5C, a raw \), and path parameters
// (";" in a segment, which Java servers strip: "/..;/" is ".." to Tomcat).
// For these a Path carries two readings, the literal one and the loosest
// one an origin may take, and the edge refuses such a path wherever
// either reading falls in a room's line. What no origin should ever
// receive (invalid escapes, NUL and other control characters, raw or
// encoded) is refused everywhere.
package urlnorm

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Error says why a request's path, host or query cannot be served. Its
// message quotes the value with %q, so a log line holding it stays one
// line whatever the visitor sent.
type Error struct {
	// Part is "path", "host" or "query".
	Part string
	// Value is what the request held, as sent.
	Value string
	// Problem says what is wrong, in words a visitor can read, e.g.
	// "holds an invalid percent escape".
	Problem string
}

func (e *Error) Error() string { return fmt.Sprintf("%s %q %s", e.Part, e.Value, e.Problem) }

// Path is a request path in the forms the waiting room acts on.
type Path struct {
	// Escaped is the normal form, as sent to the origin: only characters
	// a path may hold, reserved characters still escaped (%2F stays %2F).
	Escaped string
	// Literal is Escaped with its escapes decoded, except %2F and %5C,
	// which stay as written: the path an origin that keeps an encoded
	// slash as data acts on, and the one room rules are written for.
	Literal string
	// Loose is the path an origin acts on that decodes every escape (more
	// than once: some do), takes a backslash for a slash and drops
	// ";parameters" from each segment, normalised again. It equals Literal
	// for most paths.
	Loose string
	// Ambiguous says what makes Literal and Loose differ in a way no rule
	// can rely on ("holds an encoded slash", ...), or is "" when nothing
	// does. The edge refuses an ambiguous path that either reading puts in
	// a room's line.
	Ambiguous string
}

// loosestDecodes bounds how many times Loose decodes: a double-decoding
// origin turns %252e into ".", and nothing legitimate is encoded thrice.
const loosestDecodes = 3

// ParsePath normalises a request path as the client sent it (see WirePath).
// An empty path is "/". It refuses a path that does not start with "/"
// (such as "*"), an invalid percent escape, and control characters (NUL
// included), raw or encoded.
func ParsePath(wire string) (Path, error) {
	if wire == "" {
		wire = "/"
	}
	if wire[0] != '/' {
		return Path{}, &Error{"path", wire, "does not start with /"}
	}
	if plain(wire) {
		return Path{Escaped: wire, Literal: wire, Loose: wire}, nil
	}
	return parse(wire)
}

// parse is ParsePath for a path that starts with "/" and is not plain.
func parse(wire string) (Path, error) {
	var b strings.Builder
	b.Grow(len(wire))
	for i := 0; i < len(wire); i++ {
		c := wire[i]
		switch {
		case c == '%':
			v, ok := unhex(wire, i)
			if !ok {
				return Path{}, &Error{"path", wire, "holds an invalid percent escape (% must be followed by two hex digits)"}
			}
			if problem := control(v, "an encoded"); problem != "" {
				return Path{}, &Error{"path", wire, problem}
			}
			i += 2
			if unreserved(v) {
				b.WriteByte(v)
			} else {
				escape(&b, v)
			}
		case control(c, "a") != "":
			return Path{}, &Error{"path", wire, control(c, "a")}
		case c == '/' || pathChar(c):
			b.WriteByte(c)
		default:
			// A backslash, a space, a quote, a byte of UTF-8...: sent
			// escaped.
			escape(&b, c)
		}
	}
	p := Path{Escaped: resolve(b.String(), false)}
	p.Literal = unescape(p.Escaped, true)
	// The ambiguities are judged on the normal form, not on what was
	// sent: "/a\\/.." is "/" and holds no backslash any more.
	ambiguous := ""
	loose := p.Escaped
	for n := 0; n < loosestDecodes && strings.IndexByte(loose, '%') >= 0; n++ {
		switch c := slashEscape(loose); {
		case ambiguous != "" || c == 0:
		case n > 0:
			ambiguous = "holds a slash or backslash encoded twice"
		case c == '/':
			ambiguous = "holds an encoded slash (%2F)"
		default:
			ambiguous = `holds a backslash (\ or %5C)`
		}
		loose = unescape(loose, false)
	}
	loose = strings.ReplaceAll(loose, `\`, "/")
	p.Loose = resolve(loose, true)
	if ambiguous == "" && dotParameters(loose) {
		ambiguous = "holds a dot segment with parameters (such as ..;)"
	}
	p.Ambiguous = ambiguous
	return p, nil
}

// SetOn makes p the path of u, so that u.String() (what the SDK sends to a
// backend) holds p.Escaped.
func (p Path) SetOn(u *url.URL) {
	u.Path, u.RawPath = unescape(p.Escaped, false), p.Escaped
}

// WirePath is u's path as the client sent it. url.Parse keeps the sent
// form in RawPath whenever it differs from the default encoding of the
// decoded path, and ParseRequestURI keeps a malformed one there too.
func WirePath(u *url.URL) string {
	if u.RawPath != "" {
		return u.RawPath
	}
	return u.EscapedPath()
}

// ParseRequestURI parses a request target as url.ParseRequestURI does,
// except that a path holding an invalid percent escape is kept (in
// RawPath, as sent) rather than refused: the SDK cannot answer a request
// whose target does not parse (it panics, and the visitor gets a bare
// 500), while the edge answers it 400 saying why. Give it to
// fsthttp.SetParseRequestURI.
func ParseRequestURI(s string) (*url.URL, error) {
	u, err := url.ParseRequestURI(s)
	if err == nil {
		return u, nil
	}
	start := 0
	if i := strings.Index(s, "://"); i >= 0 && !strings.HasPrefix(s, "/") {
		rest := s[i+3:]
		j := strings.IndexAny(rest, "/?")
		if j < 0 {
			return nil, err
		}
		start = i + 3 + j
	}
	end := len(s)
	if q := strings.IndexByte(s[start:], '?'); q >= 0 {
		end = start + q
	}
	raw := s[start:end]
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		if _, ok := unhex(raw, i); raw[i] == '%' && !ok {
			b.WriteString("%25")
			continue
		}
		b.WriteByte(raw[i])
	}
	u, err2 := url.ParseRequestURI(s[:start] + b.String() + s[end:])
	if err2 != nil {
		return nil, err
	}
	u.RawPath = raw
	return u, nil
}

// CheckQuery refuses a raw query that holds a control character: it would
// reach the origin, and a Location header, as sent. Escaped ones (%0A) are
// the origin's to judge.
func CheckQuery(q string) error {
	for i := 0; i < len(q); i++ {
		if problem := control(q[i], "a"); problem != "" {
			return &Error{"query", q, problem}
		}
	}
	return nil
}

// Host normalises a Host header for matching a room's hosts: lower case,
// the port and a trailing dot removed, an IPv6 literal kept in brackets.
// It refuses a host that is empty or holds what no host name can, with or
// without a port of up to 5 digits.
func Host(raw string) (string, error) {
	bad := func(problem string) (string, error) { return "", &Error{"host", raw, problem} }
	if raw == "" {
		return bad("is empty")
	}
	h := strings.ToLower(raw)
	port := ""
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return bad("is not a host name: [ without ]")
		}
		ip, rest := h[1:end], h[end+1:]
		if p, ok := strings.CutPrefix(rest, ":"); ok {
			port = p
		} else if rest != "" {
			return bad("is not a host name: text after ]")
		}
		if !strings.Contains(ip, ":") || net.ParseIP(ip) == nil {
			return bad("is not a host name: not an IPv6 address in brackets")
		}
		h = "[" + ip + "]"
	} else {
		if i := strings.LastIndexByte(h, ':'); i >= 0 {
			h, port = h[:i], h[i+1:]
		}
		h = strings.TrimSuffix(h, ".")
		if problem := checkName(h); problem != "" {
			return bad(problem)
		}
	}
	if len(port) > 5 || strings.Trim(port, "0123456789") != "" {
		return bad("has a port that is not a number")
	}
	return h, nil
}

// checkName says what makes h not a host name (letters, digits, - and _
// in dot-separated labels of 1 to 63 characters, 253 in all), or "".
func checkName(h string) string {
	if h == "" || len(h) > 253 {
		return "is not a host name: empty or longer than 253 characters"
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return "is not a host name: an empty or over-long label"
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "holds characters a host name cannot hold"
			}
		}
	}
	return ""
}

// plain reports whether path is its own normal form in every reading, as
// most paths are: no escape, backslash or parameter, no empty or dot
// segment, nothing to escape. It costs one pass and no allocation.
func plain(path string) bool {
	for i := 1; i < len(path); i++ {
		c := path[i]
		switch {
		case c == '/' && path[i-1] == '/', c == '.' && path[i-1] == '/', c == ';':
			return false
		case c != '/' && !pathChar(c):
			return false
		}
	}
	return true
}

// resolve turns a path that starts with "/" into its normal form: empty,
// "." and ".." segments resolved (a ".." at the root is dropped), and a
// trailing slash kept where the last segment was a directory. With
// params, each segment loses its ";parameters" first.
func resolve(path string, params bool) string {
	segs := strings.Split(path[1:], "/")
	out := make([]string, 0, len(segs))
	dir := false
	for _, s := range segs {
		if params {
			s, _, _ = strings.Cut(s, ";")
		}
		dir = true
		switch s {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, s)
			dir = false
		}
	}
	if len(out) == 0 {
		return "/"
	}
	joined := "/" + strings.Join(out, "/")
	if dir {
		joined += "/"
	}
	return joined
}

// dotParameters reports whether a segment of path is "." or ".." with
// parameters: harmless to an origin that keeps them, a step up to one
// that strips them.
func dotParameters(path string) bool {
	for _, s := range strings.Split(path, "/") {
		if name, _, ok := strings.Cut(s, ";"); ok && (name == "." || name == "..") {
			return true
		}
	}
	return false
}

// unescape decodes s's valid escapes, leaving a "%" that starts none as
// written, and keeping %2F and %5C as written when keepSlashes is set.
func unescape(s string, keepSlashes bool) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		v, ok := unhex(s, i)
		if !ok || keepSlashes && (v == '/' || v == '\\') {
			b.WriteByte(s[i])
			continue
		}
		b.WriteByte(v)
		i += 2
	}
	return b.String()
}

// slashEscape returns the first slash or backslash that s holds escaped,
// or 0.
func slashEscape(s string) byte {
	for i := 0; i < len(s); i++ {
		if v, ok := unhex(s, i); ok && (v == '/' || v == '\\') {
			return v
		}
	}
	return 0
}

// unhex decodes the escape at s[i], if s[i] is "%" followed by two hex digits.
func unhex(s string, i int) (byte, bool) {
	if s[i] != '%' || i+2 >= len(s) {
		return 0, false
	}
	hi, ok1 := hexValue(s[i+1])
	lo, ok2 := hexValue(s[i+2])
	return hi<<4 | lo, ok1 && ok2
}

func hexValue(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func escape(b *strings.Builder, c byte) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('%')
	b.WriteByte(hex[c>>4])
	b.WriteByte(hex[c&15])
}

// control names the control character c ("a NUL byte", "an encoded
// control character"...) as a problem, or is "" for any other byte.
func control(c byte, how string) string {
	switch {
	case c == 0:
		return "holds " + how + " NUL byte"
	case c < 0x20 || c == 0x7f:
		return "holds " + how + " control character"
	}
	return ""
}

// unreserved reports whether c is an RFC 3986 unreserved character, the
// same escaped or not.
func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// pathChar reports whether c may stand unescaped in a path segment
// (RFC 3986 pchar, less "%", which is handled apart).
func pathChar(c byte) bool {
	return unreserved(c) || strings.IndexByte("!$&'()*+,;=:@", c) >= 0
}
