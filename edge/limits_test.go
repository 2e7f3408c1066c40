package edge

import (
	"net"
	"testing"
)

func TestClientKey(t *testing.T) {
	for _, c := range []struct{ ip, want string }{
		{"192.0.2.7", "192.0.2.7"},
		{"::ffff:192.0.2.7", "192.0.2.7"},
		{"2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"2001:db8::1", "2001:db8::/64"},
		{"::1", "::/64"},
	} {
		if got := ClientKey(net.ParseIP(c.ip)); got != c.want {
			t.Errorf("ClientKey(%s) = %q, want %q", c.ip, got, c.want)
		}
	}
	if got := ClientKey(nil); got != "" {
		t.Errorf("ClientKey(nil) = %q, want \"\"", got)
	}
	// Two addresses of one /64 are one client; the next /64 is another.
	a := ClientKey(net.ParseIP("2001:db8:0:7::1"))
	b := ClientKey(net.ParseIP("2001:db8:0:7:ffff::2"))
	c := ClientKey(net.ParseIP("2001:db8:0:8::1"))
	if a != b || a == c {
		t.Errorf("same /64 %q %q, other %q", a, b, c)
	}
}
