package contract

import (
	"context"
	"net/http"
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

	clients devstack.Clients
}

func (e *wasmEnv) send(t *testing.T, ip, method, target string, header ...string) answer {
	t.Helper()
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Add(header[i], header[i+1])
	}
	resp, b, err := e.clients.Send(ip, method, e.stack.HostURL+target, nil, h)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
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
	e := &wasmEnv{stack: st, logs: logs}
	// fastly.toml's local config (devconfig.json) bypasses OPTIONS.
	exercise(t, e, true)
	if t.Failed() {
		t.Logf("log:\n%s", logs.String())
	}
}
