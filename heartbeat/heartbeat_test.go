package heartbeat

import (
	"strings"
	"testing"
	"time"
)

func TestEvery(t *testing.T) {
	for _, tc := range []struct {
		h    time.Duration
		want int
	}{
		{10 * time.Second, 10},
		{10 * time.Second / 3, 4},
		{20*time.Second + time.Millisecond, 21},
		{time.Millisecond, 1},
		{0, 1},
	} {
		if got := Every(tc.h); got != tc.want {
			t.Errorf("Every(%v) = %d, want %d", tc.h, got, tc.want)
		}
	}
}

// TestScript: the script is small, names the paths the edge serves, and
// its version changes with its content.
func TestScript(t *testing.T) {
	if n := len(Script); n == 0 || n > 1536 {
		t.Errorf("the script is %d bytes, want 1 to 1536", n)
	}
	for _, want := range []string{`"` + Path + `"`, `"/_wr/leave"`, "visibilityState", "pagehide", "sendBeacon", "next_seconds", "leave_beacon"} {
		if !strings.Contains(Script, want) {
			t.Errorf("the script does not hold %s", want)
		}
	}
	v := Version()
	if len(v) != 16 || strings.Trim(v, "0123456789abcdef") != "" {
		t.Errorf("version %q, want 16 hex digits", v)
	}
	saved := Script
	defer func() { Script = saved }()
	Script += " "
	if Version() == v {
		t.Error("the version did not change with the script")
	}
	Script = saved
	if want := `<script src="/_wr/heartbeat.js?v=` + v + `" defer></script>`; Tag() != want {
		t.Errorf("tag %s, want %s", Tag(), want)
	}
}
