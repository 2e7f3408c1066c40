package fastlyhost

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveManyWasm builds testdata/servemany once for the package's tests.
var serveManyWasm = sync.OnceValues(func() ([]byte, error) { return buildGuest("servemany") })

func startServeMany(t *testing.T) (*httptest.Server, *syncBuffer) {
	t.Helper()
	wasm, err := serveManyWasm()
	if err != nil {
		t.Fatal(err)
	}
	return serveHost(t, wasm, &Manifest{}, time.Minute)
}

// served is what the serve-many guest says about one request.
type served struct {
	sandbox, request, count, body string
}

func serve(t *testing.T, srv *httptest.Server, target, body string) served {
	t.Helper()
	resp, err := http.Post(srv.URL+target, "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", target, resp.StatusCode, b)
	}
	return served{resp.Header.Get("Sandbox-ID"), resp.Header.Get("Request-ID"), resp.Header.Get("Sandbox-Requests"), string(b)}
}

func id(n int) string { return fmt.Sprintf("%032x", n) }

// One sandbox serves request after request, each with its own request,
// body and request ID, up to Viceroy's five more than the first; the next
// goes to a fresh sandbox, named after that request.
// The log says which requests a sandbox served after its first.
func TestSandboxServesRequestsInTurn(t *testing.T) {
	srv, logs := startServeMany(t)
	for n := 0; n < 6; n++ {
		got := serve(t, srv, fmt.Sprintf("/r%d", n), fmt.Sprintf("body %d", n))
		want := served{id(0), id(n), fmt.Sprint(n + 1), fmt.Sprintf("/r%d body %d", n, n)}
		if got != want {
			t.Fatalf("request %d: %+v, want %+v", n, got, want)
		}
	}
	if got, want := serve(t, srv, "/r6", "x"), (served{id(6), id(6), "1", "/r6 x"}); got != want {
		t.Fatalf("the request after the sixth: %+v, want a fresh sandbox %+v", got, want)
	}
	if requests, sandboxes := hostOf(t, srv).Served(); requests != 7 || sandboxes != 2 {
		t.Fatalf("Served: %d requests, %d sandboxes; want 7 and 2", requests, sandboxes)
	}
	var want []string
	for n := 1; n < 6; n++ {
		want = append(want, fmt.Sprintf("fastlyhost: sandbox 0 serves request %d (reused: its request %d)", n, n+1))
	}
	if got := reuseLines(logs.String()); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("reuse in the log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// reuseLines are the log's lines about reused sandboxes.
func reuseLines(logs string) []string {
	var lines []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "(reused") {
			lines = append(lines, l)
		}
	}
	return lines
}

// A sandbox whose wait for a next request times out ends, and the next
// request gets a fresh one.
func TestSandboxWaitTimesOut(t *testing.T) {
	srv, logs := startServeMany(t)
	if got := serve(t, srv, "/?next_timeout=1ms", ""); got.sandbox != id(0) {
		t.Fatalf("first request served by sandbox %s", got.sandbox)
	}
	waitForLog(t, logs, "sandbox "+id(0)+" done")
	if got, want := serve(t, srv, "/", ""), (served{id(1), id(1), "1", "/ "}); got != want {
		t.Fatalf("after the wait timed out: %+v, want a fresh sandbox %+v", got, want)
	}
}

// A guest that stops asking for requests keeps its client until it ends;
// the next request gets a fresh sandbox.
func TestSandboxThatStopsAsking(t *testing.T) {
	srv, logs := startServeMany(t)
	serve(t, srv, "/", "")
	if got, want := serve(t, srv, "/?stop=1", ""), (served{id(0), id(1), "2", "/ "}); got != want {
		t.Fatalf("second request: %+v, want %+v", got, want)
	}
	if !strings.Contains(logs.String(), "sandbox "+id(0)+" done") {
		t.Fatalf("the client had its answer before the sandbox ended: %s", logs)
	}
	if got, want := serve(t, srv, "/", ""), (served{id(2), id(2), "1", "/ "}); got != want {
		t.Fatalf("third request: %+v, want a fresh sandbox %+v", got, want)
	}
}

// waitForLog waits for a line the guest prints when something has
// happened, rather than for a time.
func waitForLog(t *testing.T, logs *syncBuffer, line string) {
	t.Helper()
	for start := time.Now(); !strings.Contains(logs.String(), line); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatalf("no %q in the log: %s", line, logs)
		}
	}
}

// TestGuestCPU: a host asked to clock its instances adds up the CPU time
// of each one that ended (its start and its request here), no more than
// the time it lived; a host not asked counts none. Both count the guest's
// calls.
func TestGuestCPU(t *testing.T) {
	wasm, err := serveManyWasm()
	if err != nil {
		t.Fatal(err)
	}
	for _, clocked := range []bool{true, false} {
		h, err := New(context.Background(), wasm, &Manifest{}, Options{Timeout: time.Minute, GuestCPU: clocked,
			Log: log.New(io.Discard, "", 0), CacheDir: filepath.Join(os.TempDir(), "fastlyhost-test-cache")})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		began := time.Now()
		// The sandbox waits 10 ms for another request, then ends.
		serve(t, srv, "/?next_timeout=10ms", "")
		for deadline := time.Now().Add(10 * time.Second); h.Live() > 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d instances still live", h.Live())
			}
		}
		lived := time.Since(began)
		switch cpu := h.GuestCPU(); {
		case clocked && (cpu <= 0 || cpu > lived):
			t.Errorf("guest CPU %v for an instance that lived %v", cpu, lived)
		case !clocked && cpu != 0:
			t.Errorf("guest CPU %v, from a host not asked to clock it", cpu)
		}
		// One request: the guest took it (the first comes with the
		// instance) and waited once for another.
		if calls := h.HostCalls(); calls["fastly_http_downstream.next_request"] != 1 || calls["fastly_http_resp.send_downstream"] != 1 {
			t.Errorf("host calls %v", calls)
		}
		srv.Close()
		h.Close(context.Background())
	}
}
