package settings

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var errNotFound = errors.New("not found")

// source is a config store in a map; fail, when set, is every read's error.
type source struct {
	values map[string]string
	fail   error
}

func (s source) Get(key string) (string, error) {
	if s.fail != nil {
		return "", s.fail
	}
	if v, ok := s.values[key]; ok {
		return v, nil
	}
	return "", errNotFound
}

func TestReaderNumbers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		values  map[string]string
		key     string
		want    float64
		problem string // the one problem, or "" for none
	}{
		{"missing: the default", nil, KeyStoreTimeout, 1.5, ""},
		{"a fraction of a second", map[string]string{KeyStoreTimeout: "0.25"}, KeyStoreTimeout, 0.25, ""},
		{"the least", map[string]string{KeyStoreTimeout: "0.05"}, KeyStoreTimeout, 0.05, ""},
		{"the most", map[string]string{KeyStoreTimeout: "30"}, KeyStoreTimeout, 30, ""},
		{"below the range", map[string]string{KeyStoreTimeout: "0.01"}, KeyStoreTimeout, 1.5,
			`store_timeout: "0.01" must be a number of seconds from 0.05 to 30; using 1.5`},
		{"above the range", map[string]string{KeyStoreTimeout: "1500"}, KeyStoreTimeout, 1.5, `store_timeout: "1500" must be`},
		{"not a number", map[string]string{KeyStoreTimeout: "soon"}, KeyStoreTimeout, 1.5, `store_timeout: "soon" must be`},
		{"NaN", map[string]string{KeyStoreTimeout: "NaN"}, KeyStoreTimeout, 1.5, `store_timeout: "NaN" must be`},
		{"white space", map[string]string{KeyStoreTimeout: " 1"}, KeyStoreTimeout, 1.5, `store_timeout: " 1" must be`},
		{"empty", map[string]string{KeyHSTSMaxAge: ""}, KeyHSTSMaxAge, 0, `hsts_max_age: "" must be a whole number of seconds from 0 (off) to 63072000; using 0`},
		{"a whole duration", map[string]string{KeyHSTSMaxAge: "31536000"}, KeyHSTSMaxAge, 31536000, ""},
		{"a fraction where whole seconds are asked", map[string]string{KeySandboxLifetime: "1.5"}, KeySandboxLifetime, 60,
			`sandbox_lifetime: "1.5" must be a whole number of seconds from 1 to 3600; using 60`},
		{"a count", map[string]string{KeySandboxRequests: "0"}, KeySandboxRequests, 100,
			`sandbox_requests: "0" must be a whole number of requests from 1 to 10000; using 100`},
		{"the old name", map[string]string{"store_timeout_ms": "1500"}, KeyStoreTimeout, 1.5,
			"store_timeout_ms was renamed store_timeout, in seconds: set store_timeout instead"},
		{"the old name beside the new", map[string]string{"store_timeout_ms": "1500", KeyStoreTimeout: "2"}, KeyStoreTimeout, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reader{Source: source{values: tc.values}, NotFound: errNotFound}
			if got := r.Number(tc.key); got != tc.want {
				t.Errorf("%s = %v, want %v", tc.key, got, tc.want)
			}
			r.OldNames()
			checkProblems(t, r.Problems, tc.problem)
		})
	}
}

func checkProblems(t *testing.T, problems []error, want string) {
	t.Helper()
	switch {
	case want == "" && len(problems) != 0:
		t.Errorf("problems %q, want none", problems)
	case want != "" && (len(problems) != 1 || !strings.Contains(problems[0].Error(), want)):
		t.Errorf("problems %q, want one saying %q", problems, want)
	}
}

func TestReaderDuration(t *testing.T) {
	r := &Reader{Source: source{values: map[string]string{KeyStoreTimeout: "0.3"}}, NotFound: errNotFound}
	if got := r.Duration(KeyStoreTimeout); got != 300*time.Millisecond {
		t.Errorf("0.3 s read as %v", got)
	}
	if got := r.Duration(KeySandboxLifetime); got != time.Minute {
		t.Errorf("the default sandbox lifetime is %v", got)
	}
}

func TestReaderNumberOr(t *testing.T) {
	r := &Reader{Source: source{values: map[string]string{KeySandboxRequests: "x"}}, NotFound: errNotFound}
	if got := r.NumberOr(KeySandboxRequests, 20); got != 20 {
		t.Errorf("got %v, want the caller's 20", got)
	}
	checkProblems(t, r.Problems, `sandbox_requests: "x" must be a whole number of requests from 1 to 10000; using 20`)
}

func TestReaderBool(t *testing.T) {
	for _, tc := range []struct {
		value   string
		set     bool
		want    bool
		problem string
	}{
		{"", false, false, ""},
		{"true", true, true, ""},
		{"false", true, false, ""},
		{"yes", true, false, `log_client_ip: "yes" must be true or false; hashes`},
		{"TRUE", true, false, `log_client_ip: "TRUE" must be true or false`},
	} {
		values := map[string]string{}
		if tc.set {
			values[KeyLogClientIP] = tc.value
		}
		r := &Reader{Source: source{values: values}, NotFound: errNotFound}
		if got := r.Bool(KeyLogClientIP, "hashes"); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.value, got, tc.want)
		}
		checkProblems(t, r.Problems, tc.problem)
	}
}

// A store that fails is a problem naming the key, and Failed keeps the
// first error, so a caller can tell an unlinked store.
func TestReaderFailures(t *testing.T) {
	boom := errors.New("boom")
	r := &Reader{Source: source{fail: boom}, NotFound: errNotFound}
	if got := r.Number(KeyStoreTimeout); got != 1.5 {
		t.Errorf("got %v, want the default", got)
	}
	if _, ok := r.Value(KeyAdminPath); ok {
		t.Error("a failed read reported a value")
	}
	if !errors.Is(r.Failed, boom) || len(r.Problems) != 2 || r.Problems[0].Error() != "store_timeout: boom" || r.Problems[1].Error() != "admin_path: boom" {
		t.Errorf("failed %v, problems %q", r.Failed, r.Problems)
	}
}

// Every rename names a setting of the table, and no old name is in use.
func TestRenames(t *testing.T) {
	for _, rn := range Renames {
		_, store := Lookup(Store[:], rn.New)
		_, room := Lookup(Room[:], rn.New)
		if !store && !room {
			t.Errorf("%s was renamed %s, which is no setting", rn.Old, rn.New)
		}
		if _, ok := Lookup(Store[:], rn.Old); ok {
			t.Errorf("%s is still a key", rn.Old)
		}
		if _, ok := Lookup(Room[:], rn.Old); ok {
			t.Errorf("%s is still a room setting", rn.Old)
		}
		if got, ok := Renamed(rn.Old); !ok || got != rn {
			t.Errorf("Renamed(%q) = %v, %v", rn.Old, got, ok)
		}
	}
	if _, ok := Renamed(KeyStoreTimeout); ok {
		t.Error("a current name reads as renamed")
	}
}

// The table keeps its own rules: one name per row, durations named
// without a unit and counted in seconds, a default inside its range, and a
// doc line for each.
func TestTable(t *testing.T) {
	for _, table := range [][]Setting{Store[:], Room[:], Event[:]} {
		seen := map[string]bool{}
		for _, s := range table {
			if seen[s.Name] {
				t.Errorf("%s: twice", s.Name)
			}
			seen[s.Name] = true
			for _, suffix := range []string{"_ms", "_seconds", "_secs", "_minutes"} {
				if strings.HasSuffix(s.Name, suffix) {
					t.Errorf("%s: a name carries its unit", s.Name)
				}
			}
			if s.Kind == Duration && s.Unit != "seconds" {
				t.Errorf("%s: a duration in %q", s.Name, s.Unit)
			}
			if s.Kind.Numeric() && s.Ranged && s.DefaultText == "" && (s.Default < s.Min || s.Default > s.Max) {
				t.Errorf("%s: default %v outside %v to %v", s.Name, s.Default, s.Min, s.Max)
			}
			if s.Kind.Numeric() && s.Check(s.Default) != nil && s.Choices == "" {
				t.Errorf("%s: default %v breaks its rule: %v", s.Name, s.Default, s.Check(s.Default))
			}
			if s.Doc == "" || strings.Contains(s.Doc, "\n") {
				t.Errorf("%s: the doc must be one line", s.Name)
			}
		}
	}
}

func TestRule(t *testing.T) {
	for name, want := range map[string]string{
		KeyStoreTimeout:    "a number of seconds from 0.05 to 30",
		KeyHSTSMaxAge:      "a whole number of seconds from 0 (off) to 63072000",
		KeySandboxRequests: "a whole number of requests from 1 to 10000",
		KeyLogClientIP:     "true or false",
		KeyAdminPath:       "a path",
	} {
		if got := Get(Store[:], name).Rule(); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if got := Get(Room[:], "mode").Rule(); got != "one of fifo, random, passthrough, reject" {
		t.Errorf("mode: %q", got)
	}
}
