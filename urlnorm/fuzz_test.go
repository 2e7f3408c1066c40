// Fuzz targets for host normalisation and for what the normal forms of a
// path may hold (FuzzParsePath checks that they are fixed points). Each
// target's body is a check function and its seeds a table, so that
// TinyGo, which compiles Fuzz targets but never runs them, runs the seeds
// too (fuzz_tinygo_test.go). make fuzz fuzzes every target for a bounded
// time.

package urlnorm

import (
	"errors"
	"strings"
	"testing"
)

// hostSeeds are Host headers: names in any case, with ports and trailing
// dots, IPv6 literals, and what no host name can be.
var hostSeeds = []string{
	"Shop.Example.COM.:443", "shop.example.com", "[::1]:7676", "[2001:DB8::1]", "127.0.0.1:8080",
	"[::1", "[1.2.3.4]", "a..b", "a b", "x:99999999", "", ".", "shop.example.com:", "[::1]x", "ex%41mple.com",
}

// FuzzHost: no Host header panics; a refusal is an *Error about the host
// that fits on one log line; and a host it accepts is in normal form (lower
// case, without a port or a trailing dot), which it gives back unchanged,
// with any port.
func FuzzHost(f *testing.F) {
	for _, s := range hostSeeds {
		f.Add(s)
	}
	f.Fuzz(checkHost)
}

func checkHost(t *testing.T, raw string) {
	h, err := Host(raw)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.Part != "host" || strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("Host(%q): %#v", raw, err)
		}
		return
	}
	bare := h
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		bare = h[1 : len(h)-1]
	}
	if h == "" || h != strings.ToLower(h) || strings.HasSuffix(h, ".") || strings.ContainsAny(bare, "[]") ||
		(bare == h && strings.Contains(h, ":")) {
		t.Fatalf("Host(%q) = %q, not in normal form", raw, h)
	}
	for _, again := range []string{h, h + ":443", h + ".:8080"} {
		if bare != h && strings.HasSuffix(again, ".:8080") {
			continue // an IPv6 literal has no trailing dot
		}
		if got, err := Host(again); got != h || err != nil {
			t.Fatalf("Host(%q) = %q, but Host(%q) = %q, %v", raw, h, again, got, err)
		}
	}
}

// pathSeeds are paths with escapes of every kind: unreserved ones in
// either case, reserved ones, controls, and bytes of UTF-8.
var pathSeeds = []string{
	"/%41%62%2d%2E%5f%7E", "/%2f%2F%5c%3b%3f%23%25", "/a%00b", "/a%1fb", "/a\x7fb", "/caf%c3%a9/\xc3\xa9",
	"/%252e%252e/x", "/a/./b/../../c/", "/%zz", "/a b\"<>", "/a;b=c/..;/d",
}

// FuzzPathForms: what the origin receives (Escaped) and what rules match
// (Literal) hold no NUL or other control character; Escaped holds only
// characters a path may hold, with every escape in upper case and none of
// an unreserved character (those are decoded); and Literal, like Escaped,
// has no empty, "." or ".." segment.
func FuzzPathForms(f *testing.F) {
	for _, s := range pathSeeds {
		f.Add(s)
	}
	f.Fuzz(checkPathForms)
}

func checkPathForms(t *testing.T, wire string) {
	p, err := ParsePath(wire)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.Part != "path" || strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("ParsePath(%q): %#v", wire, err)
		}
		return
	}
	for _, form := range []string{p.Escaped, p.Literal} {
		for i := 0; i < len(form); i++ {
			if form[i] < 0x20 || form[i] == 0x7f {
				t.Fatalf("ParsePath(%q): %q holds the control character %q", wire, form, form[i])
			}
		}
		if strings.Contains(form, "//") || strings.Contains(form+"/", "/./") || strings.Contains(form+"/", "/../") {
			t.Fatalf("ParsePath(%q): %q has an empty or dot segment", wire, form)
		}
	}
	e := p.Escaped
	for i := 0; i < len(e); i++ {
		switch c := e[i]; {
		case c == '%':
			v, ok := unhex(e, i)
			if !ok || strings.ToUpper(e[i:i+3]) != e[i:i+3] || unreserved(v) {
				t.Fatalf("ParsePath(%q): %q holds the escape %q", wire, e, e[i:min(i+3, len(e))])
			}
			i += 2
		case c != '/' && !pathChar(c):
			t.Fatalf("ParsePath(%q): %q holds %q unescaped", wire, e, c)
		}
	}
}
