package contract

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

// wasmEnv is the wasm under test in the local Compute host, with a real
// Redis behind the Upstash stand-in and the demo origin.
type wasmEnv struct {
	stack *devstack.Stack
	logs  *devstack.LogBuffer

	mu      sync.Mutex
	clients map[string]*http.Client
}

func (e *wasmEnv) http(ip string) *http.Client {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.clients[ip]; ok {
		return c
	}
	d := &net.Dialer{Timeout: 30 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c := &http.Client{
		Transport:     &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 2},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       90 * time.Second,
	}
	e.clients[ip] = c
	return c
}

func (e *wasmEnv) send(t *testing.T, ip, method, target string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, e.stack.HostURL+target, bytes.NewReader(nil))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := e.http(ip).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{target: method + " " + target, status: resp.StatusCode, header: resp.Header, body: b}
}

func (e *wasmEnv) storeCalls() int            { return e.stack.StoreCalls() }
func (e *wasmEnv) faults(f upstashdev.Faults) { e.stack.Upstash.SetFaults(f) }

// TestContractThroughTheWasm meets every documented state through the
// wasm under test over real HTTP.
func TestContractThroughTheWasm(t *testing.T) {
	logs := &devstack.LogBuffer{}
	o := devstack.ForTest(logs, 30*time.Second)
	o.Adjust = func(m *fastlyhost.Manifest) {
		devstack.SetRooms(m, 5*time.Second, rooms(time.Now())...)
	}
	st, err := devstack.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	e := &wasmEnv{stack: st, logs: logs, clients: map[string]*http.Client{}}
	// fastly.toml's local config (devconfig.json) bypasses OPTIONS.
	exercise(t, e, true)
	if t.Failed() {
		t.Logf("log:\n%s", logs.String())
	}
}
