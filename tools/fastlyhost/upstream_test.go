package fastlyhost

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestUpstreamURL(t *testing.T) {
	tests := []struct {
		backend, guest string
		want           string // the request line's target
	}{
		{"http://o", "http://h/", "/"},
		{"http://o", "http://h", "/"},
		{"http://o/", "http://h/a/b?x=1", "/a/b?x=1"},
		{"http://o/base", "http://h/a", "/base/a"},
		{"http://o/base/", "http://h/a", "/base/a"},
		{"http://o/base", "http://h?q=1", "/base/?q=1"},
		{"http://o", "http://h/a%2Fb", "/a%2Fb"},
		{"http://o", "http://h/a%2fb?x=%2F&y=a+b", "/a%2fb?x=%2F&y=a+b"},
		{"http://o", "http://h/a%3Bb%2Bc", "/a%3Bb%2Bc"},
		{"http://o", "http://h/caf%C3%A9", "/caf%C3%A9"},
		{"http://o", "http://h/x?", "/x?"},
		{"http://o", "http://h/x#frag", "/x"},
		{"http://o", "http://h//a%2Fb", "//a%2Fb"},
		{"http://o", "/origin/form", "/origin/form"},
	}
	for _, tc := range tests {
		b, _ := url.Parse(tc.backend)
		u, err := upstreamURL(b, tc.guest)
		if err != nil {
			t.Errorf("%s + %s: %v", tc.backend, tc.guest, err)
			continue
		}
		if got := u.RequestURI(); got != tc.want || u.Host != "o" {
			t.Errorf("%s + %s: host %s, target %q, want %q", tc.backend, tc.guest, u.Host, got, tc.want)
		}
	}
	b, _ := url.Parse("http://o")
	if _, err := upstreamURL(b, "http://h/a b"); err == nil {
		t.Error("a URI with a space was accepted")
	}
}

// TestPathReachesOriginUnchanged sends requests through the guest's /proxy
// to the origin, which answers with the request target it saw.
func TestPathReachesOriginUnchanged(t *testing.T) {
	srv, _ := startGuest(t)
	for _, target := range []string{
		"/proxy/a%2Fb",
		"/proxy/a%2fb?x=%2F&y=a+b",
		"/proxy/a%3Bb%2Bc",
		"/proxy/caf%C3%A9/%7Bid%7D",
	} {
		resp, body := get(t, srv.URL+target, http.Header{})
		if want := "GET /prefix" + target + " 0 "; resp.StatusCode != 200 || !strings.HasPrefix(body, want) {
			t.Errorf("%s: %d %q, want the origin to see %q", target, resp.StatusCode, body, want)
		}
	}
}
