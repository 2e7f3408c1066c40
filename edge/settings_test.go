package edge

import (
	"encoding/base64"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/templates"
)

type mapConfig map[string]string

func (m mapConfig) Get(k string) (string, error) {
	if v, ok := m[k]; ok {
		return v, nil
	}
	return "", ErrNotFound
}

// defaultStoreTimeout is store_timeout's default, 1.5 s.
const defaultStoreTimeout = 1500 * time.Millisecond

func TestLoadSettings(t *testing.T) {
	room := `{"paths":["/"],"new_users_per_minute":5}`
	tests := []struct {
		name        string
		config      mapConfig
		rooms       int
		broken      bool
		adminPath   string
		timeout     time.Duration
		wantProblem string
	}{
		{"defaults", mapConfig{"upstash_url": "https://db"}, 0, false, DefaultAdminPath, defaultStoreTimeout, ""},
		{"everything set", mapConfig{"upstash_url": "https://db", "admin_path": "/ops/", "store_timeout": "0.25", "rooms": "a,b", "room.a": room, "room.b": room}, 2, false, "/ops", 250 * time.Millisecond, ""},
		{"bad admin path", mapConfig{"upstash_url": "https://db", "admin_path": "ops"}, 0, false, DefaultAdminPath, defaultStoreTimeout, "admin_path"},
		{"bad timeout", mapConfig{"upstash_url": "https://db", "store_timeout": "5000"}, 0, false, DefaultAdminPath, defaultStoreTimeout, "store_timeout"},
		// An old name is said once a sandbox (LoadSandboxLimits), not read
		// on every request.
		{"the timeout's old name", mapConfig{"upstash_url": "https://db", "store_timeout_ms": "250"}, 0, false, DefaultAdminPath, defaultStoreTimeout, ""},
		{"a timeout in fractions of a second", mapConfig{"upstash_url": "https://db", "store_timeout": "0.05"}, 0, false, DefaultAdminPath, 50 * time.Millisecond, ""},
		{"no upstash url: the backend says where", mapConfig{}, 0, false, DefaultAdminPath, defaultStoreTimeout, ""},
		{"bad index", mapConfig{"upstash_url": "https://db", "rooms": "A"}, 0, true, DefaultAdminPath, defaultStoreTimeout, "rooms"},
		{"one bad room", mapConfig{"upstash_url": "https://db", "rooms": "a,b", "room.a": room, "room.b": "{"}, 1, true, DefaultAdminPath, defaultStoreTimeout, `room "b"`},
		{"missing room", mapConfig{"upstash_url": "https://db", "rooms": "a,b", "room.a": room}, 1, true, DefaultAdminPath, defaultStoreTimeout, "room.b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := LoadSettings(tc.config)
			if len(s.Rooms) != tc.rooms || s.RoomsBroken != tc.broken || s.AdminPath != tc.adminPath || s.StoreTimeout != tc.timeout {
				t.Fatalf("got %d rooms, broken %v, admin %q, timeout %v", len(s.Rooms), s.RoomsBroken, s.AdminPath, s.StoreTimeout)
			}
			var all []string
			for _, p := range s.Problems {
				all = append(all, p.Error())
			}
			joined := strings.Join(all, "\n")
			if (tc.wantProblem == "") != (len(all) == 0) || !strings.Contains(joined, tc.wantProblem) {
				t.Fatalf("problems %q, want one mentioning %q", joined, tc.wantProblem)
			}
		})
	}
}

// TestLoadSettingsUpstashURL: upstash_url is optional, and a value that is
// not a URL or still a placeholder is a setup error, not a URL to call.
func TestLoadSettingsUpstashURL(t *testing.T) {
	for v, want := range map[string]string{
		"":                                 "",
		"https://eu1-x-1.upstash.io":       "",
		"http://127.0.0.1:8079":            "",
		"db.test":                          "not an http(s) URL",
		"https://":                         "not an http(s) URL",
		"https://your-database.upstash.io": "placeholder",
		"https://db.example.com:443/":      "placeholder",
	} {
		cfg := mapConfig{}
		if v != "" {
			cfg[KeyUpstashURL] = v
		}
		s := LoadSettings(cfg)
		switch {
		case want == "" && (s.UpstashUnset != nil || s.UpstashURL != v):
			t.Errorf("%q: url %q, unset %v", v, s.UpstashURL, s.UpstashUnset)
		case want != "" && (s.UpstashUnset == nil || s.UpstashURL != "" || !strings.Contains(s.UpstashUnset.Error(), want)):
			t.Errorf("%q: url %q, unset %v; want a setup error saying %q", v, s.UpstashURL, s.UpstashUnset, want)
		}
		if len(s.Problems) != 0 {
			t.Errorf("%q: problems %v", v, s.Problems)
		}
	}
}

func TestLoadSettingsUnlinkedStore(t *testing.T) {
	s := LoadSettings(unlinkedConfig{})
	if s.Unlinked == nil || !s.RoomsBroken || len(s.Problems) != 0 || !strings.Contains(s.Unlinked.Error(), "resource-link create") {
		t.Fatalf("unlinked %v, broken %v, problems %v", s.Unlinked, s.RoomsBroken, s.Problems)
	}
}

// TestAdminPathRules: admin_path is a real path below "/" in normal form,
// of a few plain characters, clear of the beacon; anything else falls
// back to the default with a problem naming the value and the rule.
func TestAdminPathRules(t *testing.T) {
	for v, want := range map[string]string{
		"/ops":              "/ops",
		"/ops/":             "/ops",
		"/_wr/admin":        "/_wr/admin",
		"/a-b/c.d_e~f":      "/a-b/c.d_e~f",
		"/_wr/ops":          "/_wr/ops",
		"/":                 "",
		"//":                "",
		"///":               "",
		"/ops//":            "",
		"":                  "",
		"ops":               "",
		"/ops//x":           "",
		"/ops/./x":          "",
		"/ops/../x":         "",
		"/..":               "",
		"/ops?x=1":          "",
		"/ops#x":            "",
		"/o ps":             "",
		"/o%70s":            "",
		"/ops\\x":           "",
		"/ops\nx":           "",
		"/ops;x":            "",
		"/café":             "",
		"/_wr":              "",
		"/_wr/leave":        "",
		"/_wr/heartbeat":    "",
		"/_wr/heartbeat.js": "",
	} {
		s := LoadSettings(mapConfig{KeyAdminPath: v})
		if want != "" {
			if s.AdminPath != want || len(s.Problems) != 0 {
				t.Errorf("%q: admin path %q, problems %v; want %q", v, s.AdminPath, s.Problems, want)
			}
			continue
		}
		if s.AdminPath != DefaultAdminPath || len(s.Problems) != 1 || !strings.Contains(s.Problems[0].Error(), "admin_path: ") ||
			strings.ContainsAny(s.Problems[0].Error(), "\n\r") {
			t.Errorf("%q: admin path %q, problems %v; want the default and one problem", v, s.AdminPath, s.Problems)
		}
	}
}

// TestAPIPathRules: api_path follows admin_path's rules (a bad one falls
// back to the default with a problem), and must not overlap the panel's
// path: then the API is off, and a problem says why.
func TestAPIPathRules(t *testing.T) {
	for _, tc := range []struct {
		admin, api string
		want       string
		problem    string
	}{
		{"", "", DefaultAPIPath, ""},
		{"", "/ops/api/", "/ops/api", ""},
		{"/ops", "/ops-api", "/ops-api", ""},
		{"", "/_wr/api/../x", DefaultAPIPath, "api_path: "},
		{"", "/", DefaultAPIPath, "api_path: "},
		{"", "/_wr/leave", DefaultAPIPath, "api_path: "},
		{"", "/_wr/heartbeat", DefaultAPIPath, "must not hold /_wr/heartbeat, the heartbeat's path"},
		{"", "/_wr/heartbeat.js", DefaultAPIPath, "must not hold /_wr/heartbeat.js, the heartbeat script's path"},
		{"", "/a%70i", DefaultAPIPath, "api_path: "},
		{"", "/_wr/admin", "", "overlaps admin_path"},
		{"", "/_wr/admin/api", "", "overlaps admin_path"},
		{"/_wr/api/admin", "", "", "overlaps admin_path"},
		{"/ops", "/ops", "", "overlaps admin_path"},
	} {
		config := mapConfig{}
		if tc.admin != "" {
			config[KeyAdminPath] = tc.admin
		}
		if tc.api != "" {
			config[KeyAPIPath] = tc.api
		}
		s := LoadSettings(config)
		if s.APIPath != tc.want || (tc.problem == "") != (len(s.Problems) == 0) ||
			(tc.problem != "" && (len(s.Problems) != 1 || !strings.Contains(s.Problems[0].Error(), tc.problem))) {
			t.Errorf("admin %q, api %q: API at %q, problems %q; want %q and a problem %q", tc.admin, tc.api, s.APIPath, s.Problems, tc.want, tc.problem)
		}
	}
}

func TestHSTSMaxAge(t *testing.T) {
	for v, want := range map[string]int{"0": 0, "300": 300, "63072000": 63072000, "-1": -1, "63072001": -1, "1y": -1, "": -1} {
		s := LoadSettings(mapConfig{KeyHSTSMaxAge: v})
		switch {
		case want >= 0 && (s.HSTSMaxAge != want || len(s.Problems) != 0):
			t.Errorf("%q: %d, problems %v", v, s.HSTSMaxAge, s.Problems)
		case want < 0 && (s.HSTSMaxAge != 0 || len(s.Problems) != 1 || !strings.Contains(s.Problems[0].Error(), "hsts_max_age")):
			t.Errorf("%q: %d, problems %v; want 0 and a problem", v, s.HSTSMaxAge, s.Problems)
		}
	}
	if s := LoadSettings(mapConfig{}); s.HSTSMaxAge != 0 {
		t.Errorf("default %d", s.HSTSMaxAge)
	}
}

// TestGlobalBypass: the config store's bypass key is parsed as a room's
// bypass_* fields, and every error names its field after "bypass.". An
// invalid set is left out whole and reported.
func TestGlobalBypass(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		problem     string // "" when valid
	}{
		{"every rule", `{"bypass_ips":["192.0.2.7","2001:db8::/32"],"bypass_acl":"office","bypass_paths":["/healthz"],` +
			`"bypass_extensions":["css",".woff2"],"bypass_methods":["OPTIONS"],"bypass_headers":[{"name":"X-Probe","value":"p1"},` +
			`{"name":"X-Partner","secret":"partner_token"}],"bypass_cookies":["staff","preview=yes"],"bypass_verified_bots":true}`, ""},
		{"no rules", `{}`, ""},
		{"bad address", `{"bypass_ips":["192.0.2.7","10.0.0.1/8"]}`, `bypass.bypass_ips[1]: "10.0.0.1/8" has bits set past its /8`},
		{"bad extension", `{"bypass_extensions":["tar.gz"]}`, `bypass.bypass_extensions[0]: "tar.gz" must be one extension`},
		{"header without value", `{"bypass_headers":[{"name":"X-Probe"}]}`, "bypass.bypass_headers[0]: value or secret: set exactly one"},
		{"bad cookie", `{"bypass_cookies":["a b"]}`, `bypass.bypass_cookies[0]: "a b" must be a cookie name`},
		{"bad method", `{"bypass_methods":["GET /"]}`, `bypass.bypass_methods[0]: "GET /" is not a method`},
		{"bad ACL name", `{"bypass_acl":"my acl"}`, `bypass.bypass_acl: "my acl" may only hold`},
		{"room field", `{"paths":["/"]}`, `bypass: unknown field "paths" (the global rules are bypass_ips,`},
		{"wrong type", `{"bypass_ips":"192.0.2.7"}`, "bypass: bypass_ips: must be a list, not a JSON string"},
		{"wrong type inside", `{"bypass_headers":[{"name":1}]}`, "bypass: bypass_headers.name: must be a string, not a JSON number"},
		{"not an object", `["OPTIONS"]`, "bypass: must be a JSON object of bypass_* fields, not a JSON array"},
		{"not JSON", `{bypass_ips:1}`, "bypass: is not valid JSON (at byte 2)"},
		{"empty", ``, "bypass: is empty: write {} for no rules, or delete the key"},
		{"trailing data", `{} {}`, "bypass: unexpected data after the JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := LoadSettings(mapConfig{KeyUpstashURL: "https://db", KeyBypass: tc.value})
			var problems []string
			for _, p := range s.Problems {
				problems = append(problems, p.Error())
			}
			if tc.problem == "" {
				if len(problems) != 0 || s.Bypass == nil {
					t.Fatalf("problems %q, rules %v; want valid rules", problems, s.Bypass)
				}
				return
			}
			if len(problems) != 1 || !strings.HasPrefix(problems[0], tc.problem) || s.Bypass != nil {
				t.Fatalf("problems %q, rules %v; want none and one problem starting %q", problems, s.Bypass, tc.problem)
			}
		})
	}
}

// failingConfig fails every read with err.
type failingConfig struct{ err error }

func (c failingConfig) Get(string) (string, error) { return "", c.err }

// TestLoadSettingsReadErrors: a key that cannot be read is a problem that
// names it, every key alike, and the rooms count as broken.
func TestLoadSettingsReadErrors(t *testing.T) {
	s := LoadSettings(failingConfig{errors.New("config store: too many requests")})
	var problems []string
	for _, p := range s.Problems {
		problems = append(problems, p.Error())
	}
	for _, key := range []string{KeyAdminPath, KeyAPIPath, KeyUpstashURL, KeyStoreTimeout, KeyHSTSMaxAge, KeyBypass, KeyRooms} {
		want := key + ": config store: too many requests"
		found := false
		for _, p := range problems {
			found = found || p == want
		}
		if !found {
			t.Errorf("problems %q lack %q", problems, want)
		}
	}
	if !s.RoomsBroken || s.StoreTimeout != defaultStoreTimeout {
		t.Errorf("rooms broken %v, timeout %v; want broken and the default", s.RoomsBroken, s.StoreTimeout)
	}
}

// countingConfig is a config store that counts reads and can fail.
type countingConfig struct {
	m     mapConfig
	fail  string // a key whose read fails
	reads int
}

func (c *countingConfig) Get(k string) (string, error) {
	c.reads++
	if k == c.fail {
		return "", errors.New("store unavailable")
	}
	return c.m.Get(k)
}

// A kept sandbox parses the config again only when a value it read
// changed, appeared or went away; a failed read is not kept.
func TestKeptSettings(t *testing.T) {
	room := `{"paths":["/"],"new_users_per_minute":5}`
	base := func() mapConfig { return mapConfig{"rooms": "a", "room.a": room} }
	tests := []struct {
		name   string
		change func(c *countingConfig)
		kept   bool // the second request gets the first's parsed rooms
		check  func(s Settings) bool
	}{
		{"unchanged", func(*countingConfig) {}, true, nil},
		{"a room changed", func(c *countingConfig) { c.m["room.a"] = `{"paths":["/"],"new_users_per_minute":7}` }, false,
			func(s Settings) bool { return s.Rooms[0].NewUsersPerMinute == 7 }},
		{"a key appeared", func(c *countingConfig) { c.m["hsts_max_age"] = "60" }, false,
			func(s Settings) bool { return s.HSTSMaxAge == 60 }},
		{"a room went away", func(c *countingConfig) { c.m["rooms"] = ""; delete(c.m, "room.a") }, false,
			func(s Settings) bool { return len(s.Rooms) == 0 }},
		{"a key failed to read", func(c *countingConfig) { c.fail = "hsts_max_age" }, false,
			func(s Settings) bool { return len(s.Problems) == 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &countingConfig{m: base()}
			k := &Kept{}
			first := k.Settings(c)
			if len(first.Rooms) != 1 {
				t.Fatalf("first request: %d rooms, problems %v", len(first.Rooms), first.Problems)
			}
			tc.change(c)
			second := k.Settings(c)
			if kept := len(second.Rooms) == 1 && second.Rooms[0] == first.Rooms[0]; kept != tc.kept {
				t.Fatalf("rooms kept: %v, want %v", kept, tc.kept)
			}
			if tc.check != nil && !tc.check(second) {
				t.Fatalf("the change did not take effect: %+v", second)
			}
			// What the second request parsed is kept in turn, unless a
			// read failed.
			third := k.Settings(c)
			if keptAgain := len(third.Rooms) == len(second.Rooms) && (len(third.Rooms) == 0 || third.Rooms[0] == second.Rooms[0]); keptAgain != (c.fail == "") {
				t.Fatalf("third request: kept %v, want %v", keptAgain, c.fail == "")
			}
		})
	}
}

// fakeSecrets is a secret store that counts reads and can fail.
type fakeSecrets struct {
	m     map[string]string
	err   error
	reads int
}

func (f *fakeSecrets) Get(name string) ([]byte, error) {
	f.reads++
	if f.err != nil {
		return nil, f.err
	}
	v, ok := f.m[name]
	if !ok {
		return nil, ErrNotFound
	}
	return []byte(v), nil
}

// Secrets and templates are read again once they are For old; a missing
// one is remembered as missing, a failed read not at all.
func TestKeptSecretsAndTemplates(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		after     time.Duration
		err       error // the first read's failure
		reads     int   // of the store over both requests, of k (as a secret and a template) and missing
		wantValue string
	}{
		{"within the time", DefaultKeptFor - time.Millisecond, nil, 3, "old"},
		{"after the time", DefaultKeptFor, nil, 6, "new"},
		{"the clock went back", -time.Second, nil, 6, "new"},
		{"a failed read is not kept", time.Second, errors.New("unavailable"), 6, "new"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			secrets := &fakeSecrets{m: map[string]string{"k": "old"}, err: tc.err}
			k := &Kept{}
			now := t0
			h := &Handler{Kept: k, Secrets: secrets, Templates: (*fakeTemplates)(secrets), Now: func() time.Time { return now }}
			s := testRequest(h)
			s.secrets.Get("k")
			s.templates.Get("k")
			if _, err := s.secrets.Get("missing"); !errors.Is(err, ErrNotFound) && tc.err == nil {
				t.Fatalf("missing secret: %v", err)
			}
			secrets.m["k"], secrets.err = "new", nil
			now = t0.Add(tc.after)
			s = testRequest(h)
			v, err := s.secrets.Get("k")
			tv, terr := s.templates.Get("k")
			if err != nil || terr != nil || string(v) != tc.wantValue || tv != tc.wantValue {
				t.Fatalf("secret %q %v, template %q %v; want %q", v, err, tv, terr, tc.wantValue)
			}
			s.secrets.Get("missing")
			if secrets.reads != tc.reads {
				t.Fatalf("%d reads of the store, want %d", secrets.reads, tc.reads)
			}
		})
	}
}

// fakeTemplates reads templates from a fakeSecrets.
type fakeTemplates fakeSecrets

func (f *fakeTemplates) Get(name string) (string, error) {
	v, err := (*fakeSecrets)(f).Get(name)
	return string(v), err
}

// Keys and templates are parsed once per source; a bad one is not kept.
func TestKeptParsing(t *testing.T) {
	k := &Kept{}
	raw := "k1:" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	a, err := k.keySet(raw)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := k.keySet(raw); b != a {
		t.Fatal("the same keys were parsed again")
	}
	if _, err := k.keySet("bad"); err == nil {
		t.Fatal("a bad key set parsed")
	}
	if b, _ := k.keySet(raw); b != a {
		t.Fatal("a bad key set replaced the kept one")
	}

	src := "<!doctype html><title>{{title}}</title>{{message}}"
	t1, err := k.parse(templates.Problem, "problem.html", src)
	if err != nil {
		t.Fatal(err)
	}
	if t2, _ := k.parse(templates.Problem, "problem.html", src); t2 != t1 {
		t.Fatal("the same template was parsed again")
	}
	if t2, _ := k.parse(templates.Problem, "problem.html", src+" "); t2 == t1 {
		t.Fatal("a changed template was not parsed again")
	}
	if _, err := k.parse(templates.Problem, "problem.html", "{{nosuchfield}}"); err == nil {
		t.Fatal("a bad template parsed")
	}
}

func TestLoadSandboxLimits(t *testing.T) {
	def := SandboxLimits{100, time.Minute}
	tests := []struct {
		name    string
		config  Config
		want    SandboxLimits
		problem string // in the one problem expected, or "" for none
	}{
		{"defaults", mapConfig{}, def, ""},
		{"set", mapConfig{KeySandboxRequests: "1", KeySandboxLifetime: "5"}, SandboxLimits{1, 5 * time.Second}, ""},
		{"the largest", mapConfig{KeySandboxRequests: "10000", KeySandboxLifetime: "3600"},
			SandboxLimits{10000, time.Hour}, ""},
		{"zero requests", mapConfig{KeySandboxRequests: "0"}, def, `sandbox_requests: "0" must be a whole number of requests from 1 to 10000; using 100`},
		{"too many requests", mapConfig{KeySandboxRequests: "10001"}, def, "sandbox_requests: \"10001\""},
		{"not a number", mapConfig{KeySandboxLifetime: "1m"}, def, `sandbox_lifetime: "1m" must be a whole number of seconds from 1 to 3600; using 60`},
		{"negative", mapConfig{KeySandboxLifetime: "-1"}, def, "sandbox_lifetime: \"-1\""},
		{"a fraction", mapConfig{KeySandboxLifetime: "1.5"}, def, "sandbox_lifetime: \"1.5\" must be a whole number of seconds"},
		{"the old name", mapConfig{"sandbox_seconds": "5"}, def, "sandbox_seconds was renamed sandbox_lifetime, in seconds"},
		{"the store timeout's old name", mapConfig{"store_timeout_ms": "250"}, def, "store_timeout_ms was renamed store_timeout, in seconds: set store_timeout instead"},
		{"an old name beside its new one", mapConfig{"store_timeout_ms": "250", KeyStoreTimeout: "0.25"}, def, ""},
		{"store not linked", failingConfig{ErrStoreNotLinked}, def, ""},
		{"store failing", failingConfig{errors.New("boom")}, def, "sandbox_requests: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := LoadSandboxLimits(tc.config, def)
			if got != tc.want {
				t.Fatalf("limits %+v, want %+v", got, tc.want)
			}
			switch {
			case tc.problem == "" && len(problems) != 0:
				t.Fatalf("problems %v, want none", problems)
			case tc.problem != "" && (len(problems) == 0 || !strings.Contains(problems[0].Error(), tc.problem)):
				t.Fatalf("problems %v, want one saying %q", problems, tc.problem)
			}
		})
	}
}

// The caller's defaults apply where the config says nothing or is wrong.
func TestLoadSandboxLimitsDefaults(t *testing.T) {
	def := SandboxLimits{1, time.Second}
	got, problems := LoadSandboxLimits(mapConfig{KeySandboxLifetime: "x"}, def)
	if got != def || len(problems) != 1 || !strings.Contains(problems[0].Error(), "using 1") {
		t.Fatalf("%+v %v, want %+v and one problem using 1", got, problems, def)
	}
}

// Each build has its own default number of requests (the settings table's
// TinyGoDefault for TinyGo); the lifetime is one.
func TestDefaultSandboxLimits(t *testing.T) {
	want := SandboxLimits{100, time.Minute}
	if runtime.Compiler == "tinygo" {
		want.Requests = 20
	}
	if got := DefaultSandboxLimits(); got != want {
		t.Fatalf("%s build: %+v, want %+v", runtime.Compiler, got, want)
	}
}
