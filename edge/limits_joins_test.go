package edge

import (
	"net/netip"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
)

// TestJoinCounterScopes: a join is counted by address, then network,
// then autonomous system, each only where the room limits it, and the
// first scope beyond its limit refuses it, uncounted by the wider ones.
func TestJoinCounterScopes(t *testing.T) {
	room, err := queue.ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":1,"joins_per_ip_per_minute":2,"joins_per_network_per_minute":3,"joins_per_as_per_minute":4}`))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	limits := newMemLimits(&now)
	geo := &platform{as: 64500}
	j := joinCounter{limits, geo}
	join := func(ip string) string {
		t.Helper()
		a := netip.MustParseAddr(ip)
		over, err := j.Join(room, queue.Visitor{Client: ClientKey(a.AsSlice()), Addr: a})
		if err != nil {
			t.Fatal(err)
		}
		return over
	}
	for i, tc := range []struct{ ip, over string }{
		{"203.0.113.1", ""}, {"203.0.113.1", ""}, {"203.0.113.1", "address"},
		{"203.0.113.2", ""}, {"203.0.113.3", "network"},
		{"198.51.100.1", ""}, {"198.51.100.2", "autonomous system"},
		{"2001:db8:1:2::1", "autonomous system"}, // the same AS, from IPv6
	} {
		if got := join(tc.ip); got != tc.over {
			t.Errorf("join %d, from %s: over %q, want %q", i, tc.ip, got, tc.over)
		}
	}
	if n := geo.calls["as"]; n != 6 {
		t.Errorf("%d lookups of the AS, want 6: one per join that reached that scope", n)
	}
	geo.calls = nil
	off, _ := queue.ParseRoom("open", []byte(`{"paths":["/"],"max_active_users":1,"joins_per_ip_per_minute":0}`))
	if over, err := j.Join(off, queue.Visitor{Client: "203.0.113.1", Addr: netip.MustParseAddr("203.0.113.1")}); over != "" || err != nil || geo.calls["as"] != 0 {
		t.Errorf("a room that limits nothing: over %q, %v, %d AS lookups", over, err, geo.calls["as"])
	}
}

func TestNetworkKey(t *testing.T) {
	for _, tc := range []struct{ ip, want string }{
		{"203.0.113.77", "203.0.113.0/24"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1::/48"},
		{"::ffff:203.0.113.77", "203.0.113.0/24"},
	} {
		if got := NetworkKey(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("NetworkKey(%s) = %q, want %q", tc.ip, got, tc.want)
		}
	}
	if got := NetworkKey(netip.Addr{}); got != "" {
		t.Errorf("the zero Addr: %q", got)
	}
}
