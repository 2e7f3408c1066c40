// Fuzz targets for what an operator writes: path patterns, hosts and
// bypass_ips entries. Each target's body is a check function and its seeds
// a table, so that TinyGo, which compiles Fuzz targets but never runs
// them, runs the seeds too (fuzz_tinygo_test.go). make fuzz fuzzes every
// target for a bounded time.

package match

import (
	"net/netip"
	"strings"
	"testing"
)

// patternSeeds are path patterns, good and bad, with the paths to try
// them on.
var patternSeeds = []struct{ pattern, path string }{
	{"/tickets/*/buy", "/tickets/42/buy/now"}, {"*.json", "/a/b.json"}, {"/a*b*c/", "/aXbYc/"}, {"/", "/"},
	{"/**", "/x"}, {"*", "/"}, {"a/*.js", "/a/b.js"}, {"/%2e%2e/", "/"}, {"/caf\u00e9/*", "/CAF\u00c9/x"},
	{"/\xff*", "/\xff\xfe"}, {"*.*.*", "/a.b.c"}, {"/a/*/", "/a//"}, {"/;*", "/;x"}, {"", ""},
}

// FuzzPattern: no pattern or path panics; a refusal names paths[0] on one
// line; and an accepted pattern, in either case mode, matches the path
// made by writing each * as nothing or as a run of letters.
func FuzzPattern(f *testing.F) {
	for _, s := range patternSeeds {
		f.Add(s.pattern, s.path)
	}
	f.Fuzz(checkPattern)
}

func checkPattern(t *testing.T, pattern, path string) {
	for _, fold := range []bool{false, true} {
		tg := Target{Paths: []string{pattern}, CaseInsensitivePaths: fold}
		err := tg.Compile()
		if err != nil {
			if !strings.HasPrefix(err.Error(), "paths[0]: ") || strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("Compile(%q): %q", pattern, err)
			}
			return
		}
		req := &Request{}
		if strings.HasPrefix(path, "/") {
			tg.Match(req, path) // must not panic
		}
		for _, star := range []string{"", "xyz"} {
			p := strings.ReplaceAll(pattern, "*", star)
			if !strings.HasPrefix(p, "/") {
				p = "/dir/" + p
			}
			if _, ok, err := tg.Match(req, p); !ok || err != nil {
				t.Fatalf("%q (fold %v) does not hold %q: %v", pattern, fold, p, err)
			}
		}
	}
}

// hostSeeds are hosts entries.
var hostSeeds = []string{
	"shop.example.com", "*.example.com", "Shop.Example.COM.", "*.", "*", "a.*.b", "*.1.2", "[::1]", "*.[::1]", "a:80", "*.a_b-c.d",
	"", "*.*.x", ".x", "x..y",
}

// FuzzHost: no hosts entry panics; a refusal names hosts[0] on one line;
// an accepted name holds itself in any case and with a port, and an
// accepted wildcard holds names below its domain, not the domain itself.
func FuzzHost(f *testing.F) {
	for _, s := range hostSeeds {
		f.Add(s)
	}
	f.Fuzz(checkHost)
}

func checkHost(t *testing.T, host string) {
	tg := Target{Hosts: []string{host}, Paths: []string{"/"}}
	if err := tg.Compile(); err != nil {
		if !strings.HasPrefix(err.Error(), "hosts[0]: ") || strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("Compile(%q): %q", host, err)
		}
		return
	}
	h := tg.Hosts[0]
	if domain, wild := strings.CutPrefix(h, "*."); wild {
		if !tg.Serves("a."+domain) || !tg.Serves("A.b."+strings.ToUpper(domain)+":443") || tg.Serves(domain) || tg.Serves("a"+domain) {
			t.Fatalf("%q kept as %q: wrong hosts held", host, h)
		}
		return
	}
	if !tg.Serves(h) || !tg.Serves(strings.ToUpper(h)+":8080") {
		t.Fatalf("%q kept as %q: does not hold itself", host, h)
	}
}

// ipSeeds are bypass_ips entries.
var ipSeeds = []string{
	"192.0.2.1", "10.0.0.0/8", "10.0.0.1/8", "::ffff:10.0.0.0/104", "::ffff:1.2.3.4", "2001:db8::/32", "0.0.0.0/0", "::/0",
	"fe80::1%eth0", "010.1.1.1", "1.2.3.4/33", "::ffff:0:0/96", "", "/", "1.2.3.4/",
}

// FuzzBypassIP: no bypass_ips entry panics; a refusal names bypass_ips[0]
// on one line; an accepted entry holds its own address, in IPv4 form and
// IPv4-mapped, and never every address.
func FuzzBypassIP(f *testing.F) {
	for _, s := range ipSeeds {
		f.Add(s)
	}
	f.Fuzz(checkBypassIP)
}

func checkBypassIP(t *testing.T, entry string) {
	b := Bypass{IPs: []string{entry}}
	if err := b.Compile(false); err != nil {
		if !strings.HasPrefix(err.Error(), "bypass_ips[0]: ") || strings.ContainsAny(err.Error(), "\r\n") {
			t.Fatalf("Compile(%q): %q", entry, err)
		}
		return
	}
	p := b.ips[0]
	addr := p.Addr()
	if addr.Is4In6() || p.Bits() == 0 || p.Masked() != p {
		t.Fatalf("%q compiled to %v", entry, p)
	}
	tries := []netip.Addr{addr}
	if addr.Is4() {
		tries = append(tries, netip.AddrFrom16(addr.As16()))
	}
	for _, a := range tries {
		if rule, ok, err := b.Match(&Request{IP: a}, "/"); !ok || rule != "ip" || err != nil {
			t.Fatalf("%q does not hold %v", entry, a)
		}
	}
}
