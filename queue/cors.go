package queue

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxCORSOrigins bounds a room's cors_origins: the edge compares a
// request's Origin with each of them, and a list longer than this is a
// sign that a wildcard was meant, which the room refuses on purpose.
const MaxCORSOrigins = 16

// maxOriginLen bounds one origin: a scheme, a host name of at most 253
// characters and a port.
const maxOriginLen = 8 + 253 + 6

// validateCORS checks cors_origins: each an origin exactly as a browser
// sends it in its Origin header (lower case, no path, no default port),
// since the edge compares them byte for byte and an origin written
// otherwise would silently never match.
func (r *Room) validateCORS() error {
	if len(r.CORSOrigins) > MaxCORSOrigins {
		return fmt.Errorf("cors_origins: at most %d origins, got %d", MaxCORSOrigins, len(r.CORSOrigins))
	}
	seen := make(map[string]bool, len(r.CORSOrigins))
	for i, o := range r.CORSOrigins {
		if err := checkOrigin(o); err != nil {
			return fmt.Errorf("cors_origins[%d]: %q %v", i, o, err)
		}
		if seen[o] {
			return fmt.Errorf("cors_origins[%d]: %q is listed twice", i, o)
		}
		seen[o] = true
	}
	return nil
}

// AllowsOrigin reports whether scripts on origin (a request's Origin
// header) may read the room's answers.
func (r *Room) AllowsOrigin(origin string) bool {
	for _, o := range r.CORSOrigins {
		if o == origin {
			return true
		}
	}
	return false
}

// checkOrigin accepts scheme://host[:port] as a browser writes it.
func checkOrigin(o string) error {
	if len(o) > maxOriginLen {
		return fmt.Errorf("is longer than %d characters", maxOriginLen)
	}
	scheme, rest, ok := strings.Cut(o, "://")
	if !ok || scheme != "https" && scheme != "http" {
		return errors.New("must begin with https:// or http://")
	}
	if strings.ContainsRune(rest, '*') {
		return errors.New("may not hold a wildcard: list each origin")
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		return errors.New("must be scheme://host[:port] with no path, query or fragment (browsers send the origin without one)")
	}
	if strings.ContainsRune(rest, '@') {
		return errors.New("may not hold a user name")
	}
	host, port, hasPort := rest, "", false
	if i := strings.LastIndexByte(rest, ':'); i >= 0 && !strings.HasSuffix(rest, "]") {
		host, port, hasPort = rest[:i], rest[i+1:], true
	}
	if err := checkOriginHost(host); err != nil {
		return err
	}
	if !hasPort {
		return nil
	}
	n, err := strconv.Atoi(port)
	switch {
	case err != nil || n < 1 || n > 65535 || port[0] == '0' || port[0] == '+':
		return errors.New("has a port that is not a number from 1 to 65535")
	case scheme == "https" && n == 443 || scheme == "http" && n == 80:
		return fmt.Errorf("names the default port %d, which browsers leave out of the origin: drop it", n)
	}
	return nil
}

// checkOriginHost accepts a lower-case host name or a bracketed IPv6
// address.
func checkOriginHost(host string) error {
	if host == "" {
		return errors.New("has no host")
	}
	if host[0] == '[' {
		if len(host) < 3 || host[len(host)-1] != ']' || strings.Trim(host[1:len(host)-1], "0123456789abcdef:.") != "" {
			return errors.New("has an IPv6 address that is not lower-case hex in brackets")
		}
		return nil
	}
	if strings.HasSuffix(host, ".") || strings.HasPrefix(host, ".") || strings.Contains(host, "..") {
		return errors.New("has an empty label in its host name")
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return fmt.Errorf("has %q in its host name: write the host in lower case (punycode for other letters), as browsers send it", c)
		}
	}
	return nil
}
