package edge

import (
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/templates"
)

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
