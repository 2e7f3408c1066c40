package queue

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestCORSOrigins: an origin is accepted only as a browser writes it in
// its Origin header, since anything else would never match; each refusal
// names the entry and what to write instead.
func TestCORSOrigins(t *testing.T) {
	many := make([]string, MaxCORSOrigins+1)
	for i := range many {
		many[i] = fmt.Sprintf("%q", fmt.Sprintf("https://a%d.test", i))
	}
	tests := []struct {
		name, origins, wantErr string
	}{
		{"none", `[]`, ""},
		{"several", `["https://app.example.com","http://localhost:3000","https://[::1]:8443","https://xn--caf-dma.test"]`, ""},
		{"the most", `[` + strings.Join(many[:MaxCORSOrigins], ",") + `]`, ""},
		{"too many", `[` + strings.Join(many, ",") + `]`, "cors_origins: at most 16 origins, got 17"},
		{"wildcard", `["*"]`, `cors_origins[0]: "*" must begin with https://`},
		{"wildcard host", `["https://*.example.com"]`, "may not hold a wildcard"},
		{"null", `["null"]`, "must begin with https://"},
		{"no scheme", `["app.example.com"]`, "must begin with https://"},
		{"other scheme", `["ftp://app.example.com"]`, "must begin with https://"},
		{"upper-case scheme", `["HTTPS://app.example.com"]`, "must begin with https://"},
		{"path", `["https://app.example.com/"]`, "no path"},
		{"query", `["https://app.example.com?x"]`, "no path"},
		{"fragment", `["https://app.example.com#x"]`, "no path"},
		{"user", `["https://me@app.example.com"]`, "user name"},
		{"upper case", `["https://App.example.com"]`, `has 'A' in its host name`},
		{"space", `["https://app example.com"]`, `has ' '`},
		{"no host", `["https://"]`, "has no host"},
		{"no host with port", `["https://:8443"]`, "has no host"},
		{"trailing dot", `["https://app.example.com."]`, "empty label"},
		{"empty label", `["https://app..example.com"]`, "empty label"},
		{"default https port", `["https://app.example.com:443"]`, "default port 443"},
		{"default http port", `["http://app.example.com:80"]`, "default port 80"},
		{"port zero", `["https://app.example.com:0"]`, "not a number from 1 to 65535"},
		{"port leading zero", `["https://app.example.com:0443"]`, "not a number"},
		{"port too big", `["https://app.example.com:65536"]`, "not a number"},
		{"port not a number", `["https://app.example.com:x"]`, "not a number"},
		{"empty port", `["https://app.example.com:"]`, "not a number"},
		{"bad ipv6", `["https://[::G]"]`, "IPv6"},
		{"ipv6 upper case", `["https://[::A]"]`, "IPv6"},
		{"twice", `["https://a.test","https://b.test","https://a.test"]`, `cors_origins[2]: "https://a.test" is listed twice`},
		{"second bad", `["https://a.test","https://b.test/x"]`, `cors_origins[1]: "https://b.test/x"`},
		{"long", `["https://` + strings.Repeat("a", 300) + `.test"]`, "longer than"},
		{"not a list", `"https://a.test"`, "cors_origins"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":5,"cors_origins":`+tc.origins+`}`))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidRoom) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one naming %q", err, tc.wantErr)
			}
			if r != nil {
				t.Fatalf("a refused room came back: %+v", r)
			}
		})
	}
}

// TestAllowsOrigin: the comparison is exact, as browsers write origins.
func TestAllowsOrigin(t *testing.T) {
	r, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":5,"cors_origins":["https://app.example.com","http://localhost:3000"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for origin, want := range map[string]bool{
		"https://app.example.com": true, "http://localhost:3000": true,
		"https://app.example.com.evil.test": false, "https://evil.test/https://app.example.com": false,
		"http://app.example.com": false, "https://APP.example.com": false, "http://localhost:3001": false,
		"": false, "null": false, "*": false,
	} {
		if got := r.AllowsOrigin(origin); got != want {
			t.Errorf("AllowsOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
}
