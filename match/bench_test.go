package match

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// BenchmarkLongLists is the worst a configuration can ask of one request:
// a room whose lists all hold MaxEntries entries of globs with several
// "*"s, and a path of 8 KB that almost matches each.
func BenchmarkLongLists(b *testing.B) {
	var paths, ips, exts, names []string
	var hdrs []HeaderRule
	for i := 0; i < MaxEntries; i++ {
		paths = append(paths, fmt.Sprintf("/a*a*a*a*a*%d/x", i))
		ips = append(ips, fmt.Sprintf("10.%d.%d.0/24", i/256, i%256))
		exts = append(exts, fmt.Sprintf("e%d", i))
		names = append(names, fmt.Sprintf("c%d=v", i))
		hdrs = append(hdrs, HeaderRule{Name: fmt.Sprintf("X-H%d", i), Value: "v"})
	}
	tg := Target{Paths: paths, CaseInsensitivePaths: true}
	by := Bypass{IPs: ips, Paths: paths, Extensions: exts, Cookies: names, Headers: hdrs}
	if err := tg.Compile(); err != nil {
		b.Fatal(err)
	}
	if err := by.Compile(true); err != nil {
		b.Fatal(err)
	}
	path := "/" + strings.Repeat("a", 8000) + ".x"
	ip := netip.MustParseAddr("192.0.2.1")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		req := &Request{Paths: []string{path}, IP: ip, Method: "GET", Header: headers(), Cookie: cookies()}
		if _, ok, _ := tg.Match(req, path); ok {
			b.Fatal("matched")
		}
		if _, ok, _ := by.Match(req, path); ok {
			b.Fatal("bypassed")
		}
	}
}

// BenchmarkTypical is a room as docs/rooms.md's examples write one, and a
// request for a page in it that no rule lets through.
func BenchmarkTypical(b *testing.B) {
	tg := Target{Hosts: []string{"shop.example.com", "*.shop.example.com"}, Paths: []string{"/tickets/", "/checkout", "/events/*/buy"}}
	by := Bypass{Paths: []string{"/static/"}, Extensions: []string{"css", "js", "png", "woff2"}, Methods: []string{"OPTIONS"},
		Headers: []HeaderRule{{Name: "X-Health", Value: "ok"}}, Cookies: []string{"staff=yes"}, IPs: []string{"192.0.2.0/24"}}
	if err := tg.Compile(); err != nil {
		b.Fatal(err)
	}
	if err := by.Compile(false); err != nil {
		b.Fatal(err)
	}
	path := "/events/summer-2025/buy"
	ip := netip.MustParseAddr("198.51.100.1")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		req := &Request{Host: "shop.example.com", Paths: []string{path}, IP: ip, Method: "GET", Header: headers(), Cookie: cookies()}
		if _, ok, _ := tg.Match(req, path); !ok {
			b.Fatal("not matched")
		}
		if _, ok, _ := by.Match(req, path); ok {
			b.Fatal("bypassed")
		}
	}
}
