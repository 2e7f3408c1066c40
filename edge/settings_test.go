package edge

import (
	"errors"
	"strings"
	"testing"
	"time"
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
