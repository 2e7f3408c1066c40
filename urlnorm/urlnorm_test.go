package urlnorm

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// TestParsePath: hostile paths and what each becomes. "want" is Escaped
// (what the origin gets), literal and loose the readings the rules judge
// ("" = same as want), and ambiguous or refused a part of the reason.
func TestParsePath(t *testing.T) {
	tests := []struct {
		wire, want, literal, loose, ambiguous, refused string
	}{
		// The walks past a bypass or a room.
		{wire: "/static/../checkout", want: "/checkout"},
		{wire: "/static/%2e%2e/checkout", want: "/checkout"},
		{wire: "/static/%2E%2E/checkout", want: "/checkout"},
		{wire: "/static/.%2E/checkout", want: "/checkout"},
		{wire: "/static/..%2fcheckout", want: "/static/..%2Fcheckout", loose: "/checkout", ambiguous: "encoded slash"},
		{wire: "/static%2f..%2fcheckout", want: "/static%2F..%2Fcheckout", loose: "/checkout", ambiguous: "encoded slash"},
		{wire: "/./tickets/buy", want: "/tickets/buy"},
		{wire: "//checkout", want: "/checkout"},
		{wire: "/static//../checkout", want: "/checkout"},
		{wire: "/%73tatic/x", want: "/static/x"},
		{wire: "/STATIC/x", want: "/STATIC/x"},
		// More of the same family.
		{wire: "/static/./../checkout", want: "/checkout"},
		{wire: "/../../checkout", want: "/checkout"},
		{wire: "/static/..", want: "/"},
		{wire: "/static/x/.", want: "/static/x/"},
		{wire: "/a/b/../c/./d/", want: "/a/c/d/"},
		{wire: "", want: "/"},
		{wire: "///", want: "/"},
		{wire: `/static\..\checkout`, want: "/static%5C..%5Ccheckout", loose: "/checkout", ambiguous: "backslash"},
		{wire: "/static/..%5Ccheckout", want: "/static/..%5Ccheckout", loose: "/checkout", ambiguous: "backslash"},
		{wire: "/static/..%252fcheckout", want: "/static/..%252fcheckout", literal: "/static/..%2fcheckout", loose: "/checkout", ambiguous: "encoded twice"},
		{wire: "/static/%252e%252e/checkout", want: "/static/%252e%252e/checkout", literal: "/static/%2e%2e/checkout", loose: "/checkout"},
		{wire: "/static/..;/checkout", want: "/static/..;/checkout", loose: "/checkout", ambiguous: "parameters"},
		{wire: "/static/..%3B/checkout", want: "/static/..%3B/checkout", literal: "/static/..;/checkout", loose: "/checkout", ambiguous: "parameters"},
		{wire: "/shop;jsessionid=1/cart", want: "/shop;jsessionid=1/cart", loose: "/shop/cart"},
		{wire: "/caf%c3%a9/%7e%41", want: "/caf%C3%A9/~A", literal: "/café/~A"},
		{wire: "/café", want: "/caf%C3%A9", literal: "/café"},
		{wire: "/a b/\"q\"", want: "/a%20b/%22q%22", literal: `/a b/"q"`},
		{wire: "/search/100%25", want: "/search/100%25", literal: "/search/100%"},
		{wire: "/a/%3f/%23", want: "/a/%3F/%23", literal: "/a/?/#"},
		// Refused everywhere.
		{wire: "/a%zz", refused: "invalid percent escape"},
		{wire: "/a%2", refused: "invalid percent escape"},
		{wire: "/a%", refused: "invalid percent escape"},
		{wire: "/a%00b", refused: "encoded NUL"},
		{wire: "/a\x00b", refused: "a NUL"},
		{wire: "/a%0Ab", refused: "encoded control"},
		{wire: "/a%0d%0aSet-Cookie:x", refused: "encoded control"},
		{wire: "/a\rb", refused: "a control"},
		{wire: "/a\tb", refused: "a control"},
		{wire: "/a%7F", refused: "encoded control"},
		{wire: "*", refused: "does not start with /"},
		{wire: "checkout", refused: "does not start with /"},
	}
	for _, tc := range tests {
		p, err := ParsePath(tc.wire)
		if tc.refused != "" {
			var e *Error
			if !errors.As(err, &e) || e.Part != "path" || !strings.Contains(err.Error(), tc.refused) {
				t.Errorf("ParsePath(%q) = %+v, %v; want refused as %q", tc.wire, p, err, tc.refused)
			}
			continue
		}
		literal, loose := tc.literal, tc.loose
		if literal == "" {
			literal = tc.want
		}
		if loose == "" {
			loose = literal
		}
		if err != nil || p.Escaped != tc.want || p.Literal != literal || p.Loose != loose ||
			(tc.ambiguous == "") != (p.Ambiguous == "") || !strings.Contains(p.Ambiguous, tc.ambiguous) {
			t.Errorf("ParsePath(%q) = %+v, %v; want %q, literal %q, loose %q, ambiguous %q", tc.wire, p, err, tc.want, literal, loose, tc.ambiguous)
			continue
		}
		// The normal form is a fixed point: normalising it again changes
		// nothing, so origin and rules cannot drift apart.
		if again, err := ParsePath(p.Escaped); err != nil || again != p {
			t.Errorf("ParsePath(%q) = %+v, %v; not a fixed point of %+v", p.Escaped, again, err, p)
		}
	}
}

// TestSetOn: what the SDK sends to the origin (u.String()) holds the normal
// form, reserved escapes still escaped, the query as sent.
func TestSetOn(t *testing.T) {
	for wire, want := range map[string]string{
		"/static/%2e%2e/checkout?a=%2e&b=1": "https://shop.test/checkout?a=%2e&b=1",
		"/static%2f..%2fcheckout?x":         "https://shop.test/static%2F..%2Fcheckout?x",
		"/%73tatic/caf%c3%a9":               "https://shop.test/static/caf%C3%A9",
		"/a%20b/%3f":                        "https://shop.test/a%20b/%3F",
	} {
		u, err := url.Parse("https://shop.test" + wire)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ParsePath(WirePath(u))
		if err != nil {
			t.Fatal(err)
		}
		p.SetOn(u)
		if u.String() != want || WirePath(u) != p.Escaped {
			t.Errorf("%s: sent as %s (wire %s), want %s", wire, u, WirePath(u), want)
		}
	}
}

// TestParseRequestURI: a target the standard parser refuses for a bad
// escape in its path is kept, so the edge can answer it 400; anything
// else parses as url.ParseRequestURI parses it.
func TestParseRequestURI(t *testing.T) {
	for _, tc := range []struct {
		in, wire, query string
		bad             bool
	}{
		{"http://shop.test/a%zz/b?q=%zz", "/a%zz/b", "q=%zz", true},
		{"/a%/b", "/a%/b", "", true},
		{"https://shop.test/%E0%A4%A", "/%E0%A4%A", "", true},
		{"/ok/%41", "/ok/%41", "", false},
		{"/x://y/%41", "/x://y/%41", "", false},
		{"/x://y/%zz?q", "/x://y/%zz", "q", true},
		{"http://shop.test", "", "", false},
	} {
		u, err := ParseRequestURI(tc.in)
		if err != nil || WirePath(u) != tc.wire || u.RawQuery != tc.query {
			t.Errorf("ParseRequestURI(%q) = %v, %v; want wire path %q, query %q", tc.in, u, err, tc.wire, tc.query)
			continue
		}
		if _, err := ParsePath(WirePath(u)); (err != nil) != tc.bad {
			t.Errorf("%q: ParsePath error %v, want one: %v", tc.in, err, tc.bad)
		}
	}
	for _, in := range []string{"http://sh op.test/", "http://[::1/", "http://a%zz/"} {
		if u, err := ParseRequestURI(in); err == nil {
			t.Errorf("ParseRequestURI(%q) = %v, want the standard parser's error", in, u)
		}
	}
}

func TestHost(t *testing.T) {
	for _, tc := range []struct{ raw, want, refused string }{
		{"shop.example.com", "shop.example.com", ""},
		{"SHOP.example.com", "shop.example.com", ""},
		{"shop.example.com.", "shop.example.com", ""},
		{"shop.example.com:443", "shop.example.com", ""},
		{"shop.example.com:8080", "shop.example.com", ""},
		{"Shop.Example.Com.:80", "shop.example.com", ""},
		{"shop.example.com:", "shop.example.com", ""},
		{"[::1]:80", "[::1]", ""},
		{"[::1]", "[::1]", ""},
		{"[2001:DB8::1]", "[2001:db8::1]", ""},
		{"127.0.0.1:7676", "127.0.0.1", ""},
		{"under_score.test", "under_score.test", ""},
		{"", "", "empty"},
		{"shop example.com", "", "cannot hold"},
		{"shop.example.com\r\nX: y", "", "cannot hold"},
		{"shop.example.com%2f", "", "cannot hold"},
		{"shop.example.com/x", "", "cannot hold"},
		{"shop..example.com", "", "label"},
		{".shop.example.com", "", "label"},
		{"shop.example.com..", "", "label"},
		{".", "", "empty"},
		{":80", "", "empty"},
		{"shop.example.com:80x", "", "port"},
		{"shop.example.com:123456", "", "port"},
		{"a:b:c", "", "cannot hold"},
		{"[::1", "", "without ]"},
		{"[::1]x", "", "after ]"},
		{"[shop.test]", "", "IPv6"},
		{"[fe80::1%25eth0]", "", "IPv6"},
		{"café.test", "", "cannot hold"},
		{strings.Repeat("a", 64) + ".test", "", "label"},
		{strings.Repeat("a.", 127) + "ab", "", "253"},
	} {
		got, err := Host(tc.raw)
		switch {
		case tc.refused == "" && (err != nil || got != tc.want):
			t.Errorf("Host(%q) = %q, %v; want %q", tc.raw, got, err, tc.want)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("Host(%q) = %q, %v; want refused as %q", tc.raw, got, err, tc.refused)
		}
	}
}

func TestCheckQuery(t *testing.T) {
	for q, ok := range map[string]bool{"": true, "a=1&b=%0A": true, "a=\n": false, "a=\x00": false, "a=\x7f": false} {
		if err := CheckQuery(q); (err == nil) != ok {
			t.Errorf("CheckQuery(%q) = %v", q, err)
		}
	}
}

// TestErrorQuotes: an error's message is one line whatever the input held.
func TestErrorQuotes(t *testing.T) {
	_, err := ParsePath("/x\r\nforged: line%0A")
	if err == nil || strings.ContainsAny(err.Error(), "\r\n") || !strings.Contains(err.Error(), `\r\n`) {
		t.Fatalf("%q", err)
	}
}

// FuzzParsePath: no input panics, and every normal form is a fixed point
// with no empty or dot segment, that the SDK sends as it is.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"/static/../checkout", "/static%2f..%2fcheckout", "/a/%2e%2E/b", `/a\b`, "/..;/x", "/%252e", "//", "/caf%c3%a9", "/a%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, wire string) {
		p, err := ParsePath(wire)
		if err != nil {
			return
		}
		if wire != "" && plain(wire) {
			if slow, err := parse(wire); err != nil || slow != p {
				t.Fatalf("%q: plain %+v, parsed %+v, %v", wire, p, slow, err)
			}
		}
		again, err := ParsePath(p.Escaped)
		if err != nil || again != p {
			t.Fatalf("%q: %+v is not a fixed point: %+v, %v", wire, p, again, err)
		}
		for _, form := range []string{p.Escaped, p.Loose} {
			if !strings.HasPrefix(form, "/") || strings.Contains(form, "//") || strings.Contains(form+"/", "/./") || strings.Contains(form+"/", "/../") {
				t.Fatalf("%q: %q is not normal", wire, form)
			}
		}
		u := &url.URL{Scheme: "https", Host: "shop.test"}
		p.SetOn(u)
		if u.EscapedPath() != p.Escaped {
			t.Fatalf("%q: sent as %q, not %q", wire, u.EscapedPath(), p.Escaped)
		}
	})
}

// BenchmarkParsePath: every request pays for one path and one host.
func BenchmarkParsePath(b *testing.B) {
	for _, wire := range []string{"/tickets/42/seat", "/static/%2e%2e/caf%c3%a9/..%2fcheckout;x"} {
		b.Run(wire, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := ParsePath(wire); err != nil {
					b.Fatal(err)
				}
				if _, err := Host("Shop.Example.com:443"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
