package edge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

// mapSecrets is a secret store; err, when set, is what every read returns.
type mapSecrets struct {
	m   map[string]string
	err error
}

func (s mapSecrets) Get(name string) ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if v, ok := s.m[name]; ok {
		return []byte(v), nil
	}
	return nil, ErrNotFound
}

// unlinkedConfig is a config store the service has no link to.
type unlinkedConfig struct{}

func (unlinkedConfig) Get(string) (string, error) {
	return "", fmt.Errorf("config store %s: %w", ConfigStore, ErrStoreNotLinked)
}

type noTemplates struct{}

func (noTemplates) Get(string) (string, error) { return "", ErrNotFound }

// failingOrigin answers every request with err.
type failingOrigin struct{ err error }

func (o failingOrigin) Send(context.Context, *fsthttp.Request) (*fsthttp.Response, error) {
	return nil, o.err
}

// recordingTransport fails every store call with err and keeps the URLs.
type recordingTransport struct {
	err  error
	urls *[]string
}

func (t recordingTransport) RoundTrip(_ context.Context, r store.Request) (store.Response, error) {
	*t.urls = append(*t.urls, r.URL)
	return store.Response{}, t.err
}

// testKeys is a valid key set that is not the development one.
const testKeys = "k1:MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1ub3BxcnN0dXY="

// setupCase is a service ready to run except for what change breaks.
type setupCase struct {
	config  Config
	secrets map[string]string
	svc     Handler
	urls    []string
	logs    []string
}

func newSetupCase() *setupCase {
	c := &setupCase{
		config: mapConfig{
			KeyRooms: "main", KeyUpstashURL: "https://eu1-real-12345.upstash.io",
			KeyRoomPrefix + "main": `{"paths":["/"],"bypass_paths":["/static/"],"new_users_per_minute":60,"burst":10}`,
		},
		secrets: map[string]string{SecretUpstashToken: "real-token", SecretSigningKeys: testKeys, SecretAdminPassword: "s3cret-pass-of-16+"},
	}
	c.svc = Handler{Templates: noTemplates{}, Origin: failingOrigin{errors.New("connection refused")},
		UpstashViaBackend: true, Now: fixed(time.Unix(1_700_000_000, 0)),
		Logf: func(f string, a ...any) { c.logs = append(c.logs, fmt.Sprintf(f, a...)) }}
	return c
}

// get runs one request through the service.
func (c *setupCase) get(t *testing.T, path string) *fsttest.ResponseRecorder {
	t.Helper()
	svc := c.svc
	if svc.Config == nil {
		svc.Config = c.config
	}
	if svc.Secrets == nil {
		svc.Secrets = mapSecrets{m: c.secrets}
	}
	if svc.Upstash == nil {
		svc.Upstash = recordingTransport{err: errors.New("no database here"), urls: &c.urls}
	}
	r, err := fsthttp.NewRequest(fsthttp.MethodGet, "https://shop.test"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return browse(&svc, r)
}

// setupLines returns the log lines that say what to set.
func (c *setupCase) setupLines() []string {
	var out []string
	for _, l := range c.logs {
		if strings.HasPrefix(l, "setup: ") {
			out = append(out, l)
		}
	}
	return out
}

// TestPlaceholdersAreRefused: whatever the operator has not set yet, every
// request gets the 503 "not set up" page naming the setting, and logs one
// line naming it and the command that sets it.
func TestPlaceholdersAreRefused(t *testing.T) {
	cases := []struct {
		name    string
		change  func(c *setupCase)
		path    string
		setting string
		fix     string
	}{
		{"upstash_url left at the old placeholder", func(c *setupCase) {
			c.config.(mapConfig)[KeyUpstashURL] = "https://your-database.upstash.io"
		}, "/", "config upstash_url", "fastly config-store-entry delete --store-id="},
		{"upstash_url at an example host", func(c *setupCase) {
			c.config.(mapConfig)[KeyUpstashURL] = "https://db.example.com/"
		}, "/", "config upstash_url", "--key=upstash_url"},
		{"upstash_url not a URL", func(c *setupCase) {
			c.config.(mapConfig)[KeyUpstashURL] = "eu1-real-12345.upstash.io"
		}, "/", "config upstash_url", "--key=upstash_url"},
		{"no upstash_url and no backend to say where", func(c *setupCase) {
			delete(c.config.(mapConfig), KeyUpstashURL)
			c.svc.UpstashViaBackend = false
		}, "/", "config upstash_url", "fastly config-store-entry update"},
		{"signing keys missing", func(c *setupCase) { delete(c.secrets, SecretSigningKeys) },
			"/", "secret signing_keys", `echo "k1:$(openssl rand -base64 32)" | fastly secret-store-entry create --recreate-allow --stdin`},
		{"signing keys not a key set", func(c *setupCase) { c.secrets[SecretSigningKeys] = "changeme" },
			"/", "secret signing_keys", "--name=signing_keys"},
		{"signing keys from fastly.toml's local server", func(c *setupCase) {
			c.secrets[SecretSigningKeys] = "prod:" + devSigningKey
		}, "/", "secret signing_keys", "--name=signing_keys"},
		{"upstash token missing", func(c *setupCase) { delete(c.secrets, SecretUpstashToken) },
			"/", "secret upstash_token", "fastly secret-store-entry create --recreate-allow --store-id=<id of waiting_room_secrets"},
		{"upstash token blank", func(c *setupCase) { c.secrets[SecretUpstashToken] = " \n" },
			"/", "secret upstash_token", "--name=upstash_token"},
		{"upstash token from fastly.toml's local server", func(c *setupCase) { c.secrets[SecretUpstashToken] = devUpstashToken },
			"/", "secret upstash_token", "--name=upstash_token"},
		{"config store linked under another name", func(c *setupCase) { c.svc.Config = unlinkedConfig{} },
			"/static/logo.png", "waiting_room_config", "fastly service resource-link create --version=latest --autoclone --name=waiting_room_config"},
		{"secret store linked under another name", func(c *setupCase) {
			c.svc.Secrets = mapSecrets{err: fmt.Errorf("secret store: %w", ErrStoreNotLinked)}
		}, "/", "waiting_room_secrets", "--name=waiting_room_secrets --resource-id=<its id in `fastly secret-store list`>"},
		{"admin password from fastly.toml's local server", func(c *setupCase) { c.secrets[SecretAdminPassword] = devAdminPassword },
			DefaultAdminPath, "secret admin_password", "--name=admin_password"},
		{"admin panel without signing keys", func(c *setupCase) { delete(c.secrets, SecretSigningKeys) },
			DefaultAdminPath, "secret signing_keys", "--name=signing_keys"},
		{"origin backend at a host that does not exist", func(c *setupCase) {
			c.svc.Origin = failingOrigin{fmt.Errorf("backend origin: %w (DNS error)", ErrBackendUnresolvable)}
		}, "/static/logo.png", "backend origin", `fastly service backend update --version=latest --autoclone --name=origin --address="$H" --override-host="$H"`},
		{"upstash backend at a host that does not exist", func(c *setupCase) {
			delete(c.config.(mapConfig), KeyUpstashURL)
			c.svc.Upstash = recordingTransport{err: fmt.Errorf("backend upstash: %w", ErrBackendUnresolvable), urls: &c.urls}
		}, "/", "backend upstash", "H=<your database>.upstash.io; fastly service backend update"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newSetupCase()
			tc.change(c)
			for i := 1; i <= 2; i++ {
				w := c.get(t, tc.path)
				body := w.Body.String()
				if w.Code != fsthttp.StatusServiceUnavailable || !strings.Contains(body, "Not set up yet") ||
					!strings.Contains(body, "not configured yet") || !strings.Contains(body, "set "+tc.setting) {
					t.Fatalf("request %d: %d %s; want the 503 setup page naming %q", i, w.Code, body, tc.setting)
				}
				if strings.Contains(body, "fastly ") || strings.Contains(body, "real-token") {
					t.Fatalf("the visitors' page shows a command or a secret: %s", body)
				}
				lines := c.setupLines()
				if len(lines) != i {
					t.Fatalf("after %d requests, %d setup log lines: %q", i, len(lines), c.logs)
				}
				if l := lines[i-1]; !strings.Contains(l, tc.setting) || !strings.Contains(l, tc.fix) {
					t.Fatalf("log line %q should name %q and the fix %q", l, tc.setting, tc.fix)
				}
			}
		})
	}
}

// TestSetUpServiceRuns: the same service with everything set reaches the
// store (and only the store's failure is reported), so the refusals above
// come from the one thing each case changed.
func TestSetUpServiceRuns(t *testing.T) {
	for _, local := range []bool{false, true} {
		c := newSetupCase()
		c.svc.Local = local
		if local {
			// The local host runs with fastly.toml's development secrets.
			c.secrets = map[string]string{SecretUpstashToken: devUpstashToken, SecretSigningKeys: "dev:" + devSigningKey, SecretAdminPassword: devAdminPassword}
		}
		w := c.get(t, "/")
		if w.Code != fsthttp.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "busy") || len(c.setupLines()) != 0 {
			t.Fatalf("local=%v: %d %s %q; want the busy page of a store that failed", local, w.Code, w.Body, c.logs)
		}
		if len(c.urls) != 1 || c.urls[0] != "https://eu1-real-12345.upstash.io/" {
			t.Fatalf("local=%v: store calls %q", local, c.urls)
		}
		if w := c.get(t, DefaultAdminPath); w.Code != fsthttp.StatusUnauthorized {
			t.Fatalf("local=%v: admin without credentials: %d %s", local, w.Code, w.Body)
		}
	}
}

// TestUpstashHostTypedOnce: with no upstash_url, store calls go to the
// upstash backend, which alone says where the database is.
func TestUpstashHostTypedOnce(t *testing.T) {
	c := newSetupCase()
	delete(c.config.(mapConfig), KeyUpstashURL)
	if w := c.get(t, "/"); len(c.setupLines()) != 0 || len(c.urls) != 1 || c.urls[0] != UpstashBackendURL+"/" {
		t.Fatalf("%d %s: store calls %q, logs %q", w.Code, w.Body, c.urls, c.logs)
	}
}

func TestIsPlaceholderHost(t *testing.T) {
	for host, want := range map[string]bool{
		"origin.example.com": true, "Example.NET.": true, "example.org": true, "db.upstash.example": true,
		"x.invalid": true, "your-database.upstash.io": true, "your-database.upstash.example.com": true,
		"eu1-real-12345.upstash.io": false, "shop.example.co.uk": false, "notexample.com": false, "127.0.0.1": false, "": false,
	} {
		if got := IsPlaceholderHost(host); got != want {
			t.Errorf("IsPlaceholderHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestIsDevSecret(t *testing.T) {
	cases := []struct {
		name, value string
		want        bool
	}{
		{SecretUpstashToken, "dev-upstash-token\n", true},
		{SecretUpstashToken, "real-token", false},
		{SecretAdminPassword, devAdminPassword, true},
		{SecretAdminPassword, "dev-admin-password-2", false},
		{SecretSigningKeys, "new:" + testKeys[3:] + ",old:" + devSigningKey, true},
		{SecretSigningKeys, testKeys, false},
		{SecretAPIToken, " " + devAPIToken + "\n", true},
		{SecretAPIToken, devAPIToken + "x", false},
		{SecretAPIToken, devAdminPassword, false},
		{"other", devAdminPassword, false},
	}
	for _, c := range cases {
		if got := IsDevSecret(c.name, []byte(c.value)); got != c.want {
			t.Errorf("IsDevSecret(%s, %q) = %v, want %v", c.name, c.value, got, c.want)
		}
	}
}
