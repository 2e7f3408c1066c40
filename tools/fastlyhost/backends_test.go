package fastlyhost

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// backendGuestWasm builds testdata/backendguest once for the package's
// tests.
var backendGuestWasm = sync.OnceValues(func() ([]byte, error) { return buildGuest("backendguest") })

// TestBackendCalls checks the backend calls and dynamic backends against
// what Viceroy answers (src/wiggle_abi/backend_impl.rs, req_impl.rs), as
// the SDK's integration_tests/backend first found them missing.
func TestBackendCalls(t *testing.T) {
	wasm, err := backendGuestWasm()
	if err != nil {
		t.Fatal(err)
	}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua := "none"
		if v, ok := r.Header["User-Agent"]; ok {
			ua = strings.Join(v, ",")
		}
		fmt.Fprintf(w, "host=%s path=%s ua=%s", r.Host, r.RequestURI, ua)
	}))
	t.Cleanup(origin.Close)
	originURL, _ := url.Parse(origin.URL)
	// A dynamic backend for dyn.example connects to the origin.
	t.Setenv(StandInsEnv, "other.example=http://127.0.0.1:1, dyn.example="+origin.URL)
	mustURL := func(s string) *url.URL {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	m := &Manifest{Backends: map[string]Backend{
		"origin":    {URL: originURL},
		"healthy":   {URL: mustURL("https://example.com"), OverrideHost: "over.example", Health: HealthHealthy},
		"unhealthy": {URL: mustURL("http://example.com:8080/base"), Health: HealthUnhealthy},
		"v6":        {URL: mustURL("http://[::1]:9/")},
	}}
	srv, _ := serveHost(t, wasm, m, 5*time.Second)

	// Statuses: 1 Error, 2 Inval, 5 Unsupported.
	tests := []struct {
		name, path, want string
	}{
		{"static backend", "/backend?name=healthy",
			`target=example.com:443 dynamic=false ssl=true override="over.example" health=healthy/<nil> connect=5 sslmin=5 keepalive=0/0`},
		{"static backend with a port", "/backend?name=unhealthy",
			`target=example.com:8080 dynamic=false ssl=false override="" health=unhealthy/<nil> connect=5 sslmin=5 keepalive=0/0`},
		{"IPv6 host keeps its brackets", "/backend?name=v6",
			`target=[::1]:9 dynamic=false ssl=false override="" health=unknown/<nil> connect=5 sslmin=5 keepalive=0/0`},
		{"unknown backend", "/backend?name=nope", "error: backend not found"},
		{"unknown backend is Inval", "/is_dynamic?name=nope", "2"},
		{"reserved flag", "/register?name=r&target=dyn.example&mask=1", "2"},
		{"flag Viceroy does not know", "/register?name=r&target=dyn.example&mask=0x80000", "2"},
		{"empty host override", "/register?name=r&target=dyn.example&mask=2", "2"},
		{"name of a static backend", "/register?name=origin&target=dyn.example&mask=0", "1"},
		{"target that is no authority", "/register?name=r&target=a%20b&mask=0", "1"},
		{"target with a path", "/register?name=r&target=dyn.example/x&mask=0", "1"},
		{"registered", "/register?name=r&target=dyn.example&mask=0", "0"},
		{"dynamic backend connects", "/dynamic?name=d&target=dyn.example&url=http://dyn.example/x",
			"target=dyn.example:80 dynamic=true ssl=false; 200 host=dyn.example path=/x ua=none"},
		{"dynamic TLS backend", "/dynamic?name=d&target=dyn.example&ssl=1&url=https://dyn.example/",
			"target=dyn.example:443 dynamic=true ssl=true; 200 host=dyn.example path=/ ua=none"},
		{"dynamic backend's host override", "/dynamic?name=d&target=dyn.example&override=over.test&url=http://dyn.example/",
			"target=dyn.example:80 dynamic=true ssl=false; 200 host=over.test path=/ ua=none"},
		{"dynamic backend to a reachable address", "/dynamic?name=d&target=" + originURL.Host + "&url=http://h/direct",
			"target=" + originURL.Host + " dynamic=true ssl=false; 200 host=h path=/direct ua=none"},
		{"name registered twice", "/dynamic?name=d&twice=1&target=dyn.example&url=http://dyn.example/",
			"again: backend name already in use; target=dyn.example:80 dynamic=true ssl=false; 200 host=dyn.example path=/ ua=none"},
		{"dynamic backends last one instance", "/backend?name=d", "error: backend not found"},
		{"send_v3", "/send_v3?name=origin&url=http://h/v3", "200 host=h path=/v3 ua=none"},
		{"send_v3 to an unknown backend", "/send_v3?name=nope&url=http://h/", "status 2"},
		{"send_async_v2", "/send_async_v2?name=origin&url=http://h/v2", "200 host=h path=/v2 ua=none"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, body := get(t, srv.URL+tc.path, nil)
			if body != tc.want {
				t.Errorf("GET %s = %q, want %q", tc.path, body, tc.want)
			}
		})
	}
}

func TestManifestBackendHealth(t *testing.T) {
	tests := []struct {
		health  string
		want    BackendHealth
		wantErr string
	}{
		{``, HealthUnknown, ""},
		{`health = "Healthy"`, HealthHealthy, ""},
		{`health = "unhealthy"`, HealthUnhealthy, ""},
		{`health = "unknown"`, HealthUnknown, ""},
		{`health = "sick"`, 0, "'health' field has invalid value 'sick'"},
		{`health = 1`, 0, "'health' field has invalid value 'not a string'"},
	}
	for _, tc := range tests {
		t.Run(tc.health, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "fastly.toml")
			toml := "[local_server.backends.b]\nurl = \"https://example.com\"\n" + tc.health + "\n"
			if err := os.WriteFile(path, []byte(toml), 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := LoadManifest(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("LoadManifest = %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Backends["b"].Health; got != tc.want {
				t.Errorf("Health = %d, want %d", got, tc.want)
			}
		})
	}
}
