package fastlyhost

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// rawRequest sends req as written over a new connection to srv and reads
// the answer.
func rawRequest(t *testing.T, srv *httptest.Server, req string) (int, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", srv.Listener.Addr().String(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", req, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestUnparseableTargetsNeverReachTheGuest sends requests net/http accepts
// but whose target and Host make no URL the guest could read: the host
// answers 400 itself, where the guest's SDK used to panic (a 500).
func TestUnparseableTargetsNeverReachTheGuest(t *testing.T) {
	srv, logs := startGuest(t)
	refused := []struct{ name, req string }{
		{"asterisk target", "GET * HTTP/1.1\r\nHost: example.com\r\n\r\n"},
		{"CONNECT authority", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"},
		{"absolute target with a zone", "GET http://[fe80::1%25en0]/ HTTP/1.1\r\nHost: example.com\r\n\r\n"},
		{"Host with a bracket", "GET / HTTP/1.1\r\nHost: exa[mple\r\n\r\n"},
		{"Host with a bad escape", "GET / HTTP/1.1\r\nHost: a%zz\r\n\r\n"},
		{"Host with a bad port", "GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n"},
		{"Host with two colons", "GET / HTTP/1.1\r\nHost: a:b:c\r\n\r\n"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			code, body := rawRequest(t, srv, tc.req)
			if code != http.StatusBadRequest || !strings.Contains(body, "the request target cannot be made a URL") {
				t.Errorf("%d %q, want 400 from the host", code, body)
			}
		})
	}
	// net/http answers OPTIONS * itself (an empty 200), before any handler.
	if code, body := rawRequest(t, srv, "OPTIONS * HTTP/1.1\r\nHost: example.com\r\n\r\n"); code != http.StatusOK || body != "" {
		t.Errorf("OPTIONS *: %d %q, want net/http's empty 200", code, body)
	}
	// A server that lets OPTIONS * through hands it to the host, which
	// refuses it likewise.
	h := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodOptions, "*", nil)
	r.RequestURI = "*"
	hostOf(t, srv).ServeHTTP(h, r)
	if h.Code != http.StatusBadRequest {
		t.Errorf("OPTIONS * handed to the host: %d %q, want 400", h.Code, h.Body)
	}
	// The target as sent, with its odd parts, still reaches the guest.
	if code, body := rawRequest(t, srv, "GET //x/../y?a=%zz HTTP/1.1\r\nHost: example.com\r\n\r\n"); code != http.StatusTeapot || body != "xxxxxxxxxx" {
		t.Errorf("a parseable odd target: %d %q, want the guest's 418", code, body)
	}
	for _, bad := range []string{"guest failed", "the guest gave up", "panic"} {
		if strings.Contains(logs.String(), bad) {
			t.Errorf("a refused request reached the guest (%q in the log):\n%s", bad, logs)
		}
	}
	if !strings.Contains(logs.String(), `"*" (Host "example.com"): refused: the target cannot be made a URL`) {
		t.Errorf("no log line for the refusal:\n%s", logs)
	}
}

// hostOf is the Host behind a test server from serveHost.
func hostOf(t *testing.T, srv *httptest.Server) *Host {
	t.Helper()
	h, ok := srv.Config.Handler.(*Host)
	if !ok {
		t.Fatalf("the server's handler is a %T", srv.Config.Handler)
	}
	return h
}

// TestClientAddressIsTheTCPPeer connects from several loopback addresses,
// as tests that stand for different clients do: the guest's client
// address, and so an ERL entry keyed by it, is each connection's own.
func TestClientAddressIsTheTCPPeer(t *testing.T) {
	srv, _ := serveHostWith(t, mustBuildGuest(t, "erlguest"), &Manifest{}, Options{Timeout: 30 * time.Second})
	from := func(ip string) *http.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
		return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		}}}
	}
	get := func(ip, query string) string {
		t.Helper()
		resp, err := from(ip).Get(srv.URL + "/?" + query)
		if err != nil {
			t.Fatalf("from %s: %v", ip, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	increments := map[string]int{"127.0.0.1": 1, "127.0.0.2": 3, "127.0.0.3": 2}
	for ip, n := range increments {
		if got := get(ip, "op=client"); got != ip {
			t.Errorf("from %s the guest sees %q", ip, got)
		}
		for range n {
			if got := get(ip, "op=inc&rc=joins&delta=1"); got != "|<nil>" {
				t.Fatalf("increment from %s: %q", ip, got)
			}
		}
	}
	for ip, n := range increments {
		if got, want := get("127.0.0.1", "op=count&rc=joins&duration=60&entry="+ip), fmt.Sprintf("%d|<nil>", n); got != want {
			t.Errorf("count for %s: %q, want %q", ip, got, want)
		}
	}
}
