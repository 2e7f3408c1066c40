package apitest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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

const (
	// apiToken is the token the native service holds.
	apiToken = "a-native-test-token-of-forty-characters!"
	// shopRoom lets one visitor in at a time, and no rate, so what the
	// API does is all that lets more in.
	shopRoom   = `{"paths":["/"],"max_active_users":1}`
	closedRoom = `{"paths":["/closed/"],"mode":"reject"}`
	// boxedIP is the client the native Limits keeps in its penalty box.
	boxedIP = "192.0.2.99"
)

// nativeEnv is the waiting room served natively by edge.Handler, with a
// real Redis behind the Upstash stand-in.
type nativeEnv struct {
	upstash *upstashdev.Server
	config  native.Map
	secrets native.Secrets
	now     time.Time

	logs devstack.LogBuffer
}

func newNativeEnv(t *testing.T) *nativeEnv {
	t.Helper()
	srv, upstashURL := redistest.Upstash(t)
	return &nativeEnv{
		upstash: srv, now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		config: native.Map{edge.KeyRooms: "shop, closed", edge.KeyUpstashURL: upstashURL,
			edge.KeyRoomPrefix + "shop": shopRoom, edge.KeyRoomPrefix + "closed": closedRoom},
		secrets: native.Secrets{edge.SecretSigningKeys: "k1:" + strings.Repeat("A", 43) + "=",
			edge.SecretUpstashToken: redistest.Token, edge.SecretAPIToken: apiToken},
	}
}

// boxOne is Limits with one client in the penalty box, boxedIP, and
// nobody ever put there.
type boxOne struct{}

func (boxOne) Count(string, string) (int, error)            { return 1, nil }
func (boxOne) Counted(string, string) (int, error)          { return 1, nil }
func (boxOne) Penalize(string, string, time.Duration) error { return nil }
func (boxOne) Penalized(_, client string) (bool, error)     { return client == boxedIP, nil }

// serve answers one request from ip for target (host and path).
func (e *nativeEnv) serve(t *testing.T, ip, method, target string, body []byte, header ...string) *fsttest.ResponseRecorder {
	t.Helper()
	r, err := fsthttp.NewRequest(method, "https://shop.test"+target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.RemoteAddr = ip
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	e.now = e.now.Add(time.Second)
	svc := &edge.Handler{Config: e.config, Templates: native.Map{}, Secrets: e.secrets,
		Upstash: native.Upstash{}, Limits: boxOne{}, Now: func() time.Time { return e.now },
		Logf: e.logs.Logf}
	w := fsttest.NewRecorder()
	svc.ServeHTTP(context.Background(), w, r)
	return w
}

// client is the API's client from ip.
func (e *nativeEnv) client(ip string) client {
	return func(t *testing.T, method, path string, body []byte, header ...string) exchange {
		t.Helper()
		h := apiHeaders(body, header)
		w := e.serve(t, ip, method, edge.DefaultAPIPath+path, body, h...)
		out := http.Header{}
		for k, vs := range w.HeaderMap {
			for _, v := range vs {
				out.Add(k, v)
			}
		}
		return exchange{method: method, path: path, sent: body, status: w.Code, header: out, body: w.Body.Bytes()}
	}
}

// apiHeaders is header with the token and the content type a client
// sends unless header sets them ("" for none).
func apiHeaders(body []byte, header []string) []string {
	set := map[string]bool{}
	for i := 0; i+1 < len(header); i += 2 {
		set[http.CanonicalHeaderKey(header[i])] = true
	}
	var out []string
	if !set["Authorization"] {
		out = append(out, "Authorization", "Bearer "+apiToken)
	}
	if !set["Content-Type"] && len(body) > 0 {
		out = append(out, "Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] != "" {
			out = append(out, header[i], header[i+1])
		}
	}
	return out
}

// repoDocument is the repository's api/openapi.json.
func repoDocument(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "api", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenAPINative holds the document to the handler served natively:
// every route's every documented answer is produced and checked.
func TestOpenAPINative(t *testing.T) {
	e := newNativeEnv(t)
	api := e.client("192.0.2.1")
	doc := api(t, http.MethodGet, "/openapi.json", nil, "Authorization", "")
	checkServedDocument(t, doc.body, repoDocument(t))
	s := newSpec(t, doc.body)
	s.check(t, doc)
	// A line to act on: one visitor in, three waiting.
	for i := 0; i < 4; i++ {
		e.serve(t, fmt.Sprintf("198.51.100.%d", i+1), http.MethodGet, "/", nil, "Accept", "application/json")
	}
	coverEveryAnswer(t, s, clients{api: api, stranger: e.client("192.0.2.2"), boxed: e.client(boxedIP)}, func(down bool) {
		if down {
			e.upstash.SetFaults(upstashdev.Faults{Status: 500})
		} else {
			e.upstash.SetFaults(upstashdev.Faults{})
		}
	}, "shop", "closed")
}
