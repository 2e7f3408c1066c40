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

// TestJoinPenalty: in a room with a decoy line, an address that joins
// beyond its own limit is boxed for JoinPenalty (the decoy's judgement); a
// network or an autonomous system beyond its limit refuses the join but
// boxes nobody, so one bot cannot send its carrier's other clients to the
// decoy; in a room without a decoy line nobody is boxed.
func TestJoinPenalty(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		name, def string
		joins     []string // addresses, in order; the last is over
		over      string
		boxed     bool
	}{
		{"an address beyond its limit, a decoy line", `{"paths":["/"],"max_active_users":1,"joins_per_ip_per_minute":1,"proof_of_work":12}`,
			[]string{"203.0.113.1", "203.0.113.1"}, "address", true},
		{"a bystander in a network beyond its limit", `{"paths":["/"],"max_active_users":1,"joins_per_network_per_minute":1,"proof_of_work":12}`,
			[]string{"203.0.113.1", "203.0.113.2"}, "network", false},
		{"a bystander in an AS beyond its limit", `{"paths":["/"],"max_active_users":1,"joins_per_as_per_minute":1,"proof_of_work":12}`,
			[]string{"198.51.100.1", "192.0.2.1"}, "autonomous system", false},
		{"an address beyond its limit in a network beyond it", `{"paths":["/"],"max_active_users":1,"joins_per_ip_per_minute":2,"joins_per_network_per_minute":2,"proof_of_work":12}`,
			[]string{"203.0.113.1", "203.0.113.1", "203.0.113.1"}, "address", true},
		{"no proof of work, no decoy line", `{"paths":["/"],"max_active_users":1,"joins_per_ip_per_minute":1}`,
			[]string{"203.0.113.1", "203.0.113.1"}, "address", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			room, err := queue.ParseRoom("shop", []byte(tc.def))
			if err != nil {
				t.Fatal(err)
			}
			clock := now
			j := joinCounter{newMemLimits(&clock), &platform{as: 64500}}
			var v queue.Visitor
			for i, ip := range tc.joins {
				a := netip.MustParseAddr(ip)
				v = queue.Visitor{Client: ClientKey(a.AsSlice()), Addr: a}
				want := ""
				if i == len(tc.joins)-1 {
					want = tc.over
				}
				if got, err := j.Join(room, v); got != want || err != nil {
					t.Fatalf("join %d from %s: over %q (%v), want %q", i+1, ip, got, err, want)
				}
			}
			for _, at := range []struct {
				after time.Duration
				boxed bool
			}{{0, tc.boxed}, {JoinPenalty - time.Second, tc.boxed}, {JoinPenalty, false}} {
				clock = now.Add(at.after)
				if boxed, err := j.Penalized(room, v); boxed != at.boxed || err != nil {
					t.Errorf("%v after: boxed %v (%v), want %v", at.after, boxed, err, at.boxed)
				}
			}
		})
	}
}
