package queue

import (
	"net"
	"testing"
)

func TestBinding(t *testing.T) {
	ua1, ua2 := "Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0", "curl/8.5.0"
	ip := func(s string) net.IP { return net.ParseIP(s) }
	for _, c := range []struct {
		name      string
		mode      BindMode
		ua1, ua2  string
		ip1, ip2  net.IP
		wantSame  bool
		wantBlank bool
	}{
		{"none binds nothing", BindNone, ua1, ua2, ip("192.0.2.1"), ip("198.51.100.1"), true, true},
		{"user agent: same browser elsewhere", BindUserAgent, ua1, ua1, ip("192.0.2.1"), ip("198.51.100.1"), true, false},
		{"user agent: another browser", BindUserAgent, ua1, ua2, ip("192.0.2.1"), ip("192.0.2.1"), false, false},
		{"ip prefix: same /24", BindIPPrefix, ua1, ua2, ip("192.0.2.1"), ip("192.0.2.254"), true, false},
		{"ip prefix: v4-mapped is the same", BindIPPrefix, ua1, ua1, ip("192.0.2.1"), ip("::ffff:192.0.2.9"), true, false},
		{"ip prefix: next /24", BindIPPrefix, ua1, ua1, ip("192.0.2.1"), ip("192.0.3.1"), false, false},
		{"ip prefix: same /48", BindIPPrefix, ua1, ua1, ip("2001:db8:1:2::1"), ip("2001:db8:1:ffff::1"), true, false},
		{"ip prefix: next /48", BindIPPrefix, ua1, ua1, ip("2001:db8:1::1"), ip("2001:db8:2::1"), false, false},
		{"both: another browser on the network", BindBoth, ua1, ua2, ip("192.0.2.1"), ip("192.0.2.2"), false, false},
		{"both: same browser, another network", BindBoth, ua1, ua1, ip("192.0.2.1"), ip("203.0.113.1"), false, false},
		{"both: same browser and network", BindBoth, ua1, ua1, ip("192.0.2.1"), ip("192.0.2.77"), true, false},
		{"no address is its own network", BindIPPrefix, ua1, ua1, nil, ip("192.0.2.1"), false, false},
	} {
		a, b := Binding(c.mode, c.ua1, c.ip1), Binding(c.mode, c.ua2, c.ip2)
		if (a == b) != c.wantSame || (a == "") != c.wantBlank {
			t.Errorf("%s: %q vs %q", c.name, a, b)
		}
	}
	// The user agent's text cannot pose as a network.
	if Binding(BindUserAgent, "ip\x00192.0.2.0/24", nil) == Binding(BindIPPrefix, "", net.ParseIP("192.0.2.1")) {
		t.Error("a user agent collided with a network binding")
	}
}
