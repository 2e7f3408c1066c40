package contract

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/edge"
	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/native"
	"github.com/edgequeue/waitingroom/tools/redistest"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

// nativeEnv is the waiting room served natively by edge.Handler, with a
// real Redis behind the Upstash stand-in, the demo origin, and no global
// bypass rule. Its clock moves a second a request.
type nativeEnv struct {
	upstash *upstashdev.Server
	origin  native.Origin
	config  native.Map
	secrets native.Secrets
	limits  *minuteLimits
	now     time.Time

	logs devstack.LogBuffer
}

func (e *nativeEnv) send(t *testing.T, ip, method, target string, header ...string) answer {
	t.Helper()
	r, err := fsthttp.NewRequest(method, "https://shop.test"+target, bytes.NewReader(nil))
	if err != nil {
		t.Fatal(err)
	}
	r.RemoteAddr = ip
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	e.now = e.now.Add(time.Second)
	e.limits.now = e.now
	svc := &edge.Handler{Config: e.config, Templates: native.Map{}, Secrets: e.secrets, Origin: e.origin,
		Upstash: native.Upstash{}, Limits: e.limits, Now: func() time.Time { return e.now }, Local: true,
		Logf: e.logs.Logf}
	w := fsttest.NewRecorder()
	svc.ServeHTTP(context.Background(), w, r)
	out := http.Header{}
	for k, vs := range w.HeaderMap {
		for _, v := range vs {
			out.Add(k, v)
		}
	}
	return answer{target: method + " " + target, status: w.Code, header: out, body: w.Body.Bytes()}
}

func (e *nativeEnv) storeCalls() int { return devstack.TakeCalls(e.upstash) }

func (e *nativeEnv) faults(f upstashdev.Faults) { e.upstash.SetFaults(f) }

// minuteLimits counts events per counter and client in the minute before
// now, as Fastly's rate counters do; it boxes nobody.
type minuteLimits struct {
	now    time.Time
	events map[string][]time.Time
}

func (l *minuteLimits) Count(counter, client string) (int, error) {
	k := counter + " " + client
	var kept []time.Time
	for _, at := range l.events[k] {
		if l.now.Sub(at) < time.Minute {
			kept = append(kept, at)
		}
	}
	l.events[k] = append(kept, l.now)
	return len(l.events[k]), nil
}
func (l *minuteLimits) Counted(counter, client string) (int, error) {
	n := 0
	for _, at := range l.events[counter+" "+client] {
		if l.now.Sub(at) < time.Minute {
			n++
		}
	}
	return n, nil
}
func (l *minuteLimits) Penalize(string, string, time.Duration) error { return nil }
func (l *minuteLimits) Penalized(string, string) (bool, error)       { return false, nil }

// TestContractNatively meets every documented state through edge.Handler.
func TestContractNatively(t *testing.T) {
	srv, upstashURL := redistest.Upstash(t)
	origin := httptest.NewServer(devstack.DemoOrigin())
	t.Cleanup(origin.Close)
	base, err := url.Parse(origin.URL)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	config := native.Map{edge.KeyUpstashURL: upstashURL}
	var names []string
	for _, r := range rooms(now) {
		names = append(names, r[0])
		config[edge.KeyRoomPrefix+r[0]] = r[1]
	}
	config[edge.KeyRooms] = strings.Join(names, ",")
	e := &nativeEnv{upstash: srv, origin: native.Origin{Base: base, Client: origin.Client()}, config: config, now: now,
		limits:  &minuteLimits{events: map[string][]time.Time{}},
		secrets: native.Secrets{edge.SecretSigningKeys: "k1:" + strings.Repeat("A", 43) + "=", edge.SecretUpstashToken: redistest.Token}}
	exercise(t, e, false)
	if t.Failed() {
		t.Logf("log:\n%s", e.logs.String())
	}
}
