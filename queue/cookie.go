package queue

import "strings"

// Bounds on what CookieValues will look at. A browser never sends more than
// a few values under one name; anything beyond this is an attack or a bug,
// and verifying each value costs an HMAC.
const (
	maxCookieValues   = 8
	maxCookieValueLen = 4096
)

// CookieValues returns the values of every cookie called name in the given
// Cookie header lines, in order. It accepts what browsers and broken clients
// send: many cookies, odd spacing, duplicates, quoted values, and pairs
// without '=' (skipped). Values longer than any pass could be are skipped,
// and at most a handful are returned.
func CookieValues(lines []string, name string) []string {
	var values []string
	for _, line := range lines {
		for len(line) > 0 {
			var part string
			if i := strings.IndexByte(line, ';'); i >= 0 {
				part, line = line[:i], line[i+1:]
			} else {
				part, line = line, ""
			}
			// Trimming only shortens a name: most cookies are ruled out
			// by length before paying for TrimSpace, a call TinyGo's
			// size-optimised build does not inline.
			eq := strings.IndexByte(part, '=')
			if eq < len(name) || strings.TrimSpace(part[:eq]) != name {
				continue
			}
			v := strings.TrimSpace(part[eq+1:])
			if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
				v = v[1 : len(v)-1]
			}
			if v == "" || len(v) > maxCookieValueLen {
				continue
			}
			values = append(values, v)
			if len(values) == maxCookieValues {
				return values
			}
		}
	}
	return values
}
