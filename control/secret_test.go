package control

import (
	"testing"
	"time"
)

func TestSecretProblem(t *testing.T) {
	s := Secret{Name: "api_token", Opens: "the API", MinLength: 4, Make: "openssl rand -base64 3"}
	for _, tc := range []struct {
		name, value, want string
	}{
		{"empty", "", "set api_token in the secret store to enable the API"},
		{"short", "abc", "api_token is shorter than 4 characters; set a longer one (openssl rand -base64 3 makes one)"},
		{"long enough", "abcd", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.Problem([]byte(tc.value)); got != tc.want {
				t.Errorf("Problem(%q) = %q, want %q", tc.value, got, tc.want)
			}
		})
	}
}

func TestRetryMinutes(t *testing.T) {
	for _, tc := range []struct {
		retry time.Duration
		want  int
	}{
		{0, 0}, {time.Second, 1}, {time.Minute, 1}, {time.Minute + time.Second, 2}, {5 * time.Minute, 5},
	} {
		if got := RetryMinutes(tc.retry); got != tc.want {
			t.Errorf("RetryMinutes(%v) = %d, want %d", tc.retry, got, tc.want)
		}
	}
}
