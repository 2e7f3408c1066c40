package edge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
)

// seenPolicy is a database that answers every poll with err and records
// the policy it was called with.
type seenPolicy struct {
	shard.Backend
	err  error
	seen store.Policy
}

func (s *seenPolicy) Poll(ctx context.Context, room string, p store.Policy, t store.Ticket, now time.Time) (store.Place, error) {
	s.seen = p
	return store.Place{}, s.err
}

// TestDownMarker checks the POP's down marker: every call carries the
// latest failure the POP saw for its line (or the later one the call
// carries already), and a call the store did not answer writes it, kept
// as long as the longest a place waits for its holder.
func TestDownMarker(t *testing.T) {
	now := time.UnixMilli(1700000100000)
	earlier, later := time.UnixMilli(1700000050000), time.UnixMilli(1700000060000)
	p := store.Policy{QueueTimeout: 15 * time.Minute, SessionTTL: 90 * time.Second, ClaimWindow: time.Minute}
	ms := func(t time.Time) []byte { return []byte(fmt.Sprint(t.UnixMilli())) }
	tests := []struct {
		name       string
		marker     []byte // the POP's marker for line "shop#1"; nil for none
		carries    time.Time
		cacheErr   error
		callErr    error
		wantSent   time.Time // the failure the call carries to the store
		wantMarker []byte
		wantLog    bool
	}{
		{name: "no failure seen", wantSent: time.Time{}},
		{name: "the POP saw one", marker: ms(earlier), wantSent: earlier, wantMarker: ms(earlier)},
		{name: "the call carries a later one", marker: ms(earlier), carries: later, wantSent: later, wantMarker: ms(earlier)},
		{name: "the POP's is later", marker: ms(later), carries: earlier, wantSent: later, wantMarker: ms(later)},
		{name: "the call fails", marker: ms(earlier), callErr: fmt.Errorf("timed out: %w", store.ErrUnavailable),
			wantSent: earlier, wantMarker: ms(now)},
		{name: "the store refuses the call", callErr: store.ErrRejected},
		{name: "a marker that is not a time", marker: []byte("x"), wantMarker: []byte("x"), wantLog: true},
		{name: "the cache fails", marker: ms(earlier), cacheErr: errors.New("cache down"), carries: later, wantSent: later,
			wantMarker: ms(earlier), wantLog: true},
		{name: "the cache fails as the call does", cacheErr: errors.New("cache down"), callErr: store.ErrUnavailable, wantLog: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &memCache{values: map[string][]byte{}, ttls: map[string]time.Duration{}}
			if tc.marker != nil {
				c.values[downKey("shop#1")] = tc.marker
			}
			c.err = tc.cacheErr
			db := &seenPolicy{err: tc.callErr}
			logged := 0
			d := downMarked{db, c, func(string, ...any) { logged++ }}
			pp := p
			pp.FailedAt = tc.carries
			if _, err := d.Poll(context.Background(), "shop#1", pp, store.Ticket{Number: 1}, now); err != tc.callErr {
				t.Fatalf("error %v, want the call's %v", err, tc.callErr)
			}
			if !db.seen.FailedAt.Equal(tc.wantSent) {
				t.Errorf("the call carried %v, want %v", db.seen.FailedAt, tc.wantSent)
			}
			if got := c.values[downKey("shop#1")]; string(got) != string(tc.wantMarker) {
				t.Errorf("marker %q, want %q", got, tc.wantMarker)
			}
			if string(tc.wantMarker) == string(ms(now)) && c.ttls[downKey("shop#1")] != 15*time.Minute {
				t.Errorf("marker kept %v, want the queue timeout", c.ttls[downKey("shop#1")])
			}
			if (logged > 0) != tc.wantLog {
				t.Errorf("%d log lines, want some: %v", logged, tc.wantLog)
			}
		})
	}
}

// memCache is one POP's cache without expiry: what was set stays.
type memCache struct {
	values map[string][]byte
	ttls   map[string]time.Duration
	err    error
}

func (m *memCache) Purge(key string) error {
	delete(m.values, key)
	return m.err
}

func (m *memCache) Get(key string) ([]byte, error) {
	return m.values[key], m.err
}

func (m *memCache) Set(key string, value []byte, ttl time.Duration) error {
	if m.err == nil {
		m.values[key], m.ttls[key] = value, ttl
	}
	return m.err
}

func (m *memCache) GetOrSet(key string, fill func() ([]byte, time.Duration, error)) ([]byte, error) {
	if m.err != nil {
		return nil, m.err
	}
	if b, ok := m.values[key]; ok {
		return b, nil
	}
	b, ttl, err := fill()
	if err == nil {
		m.values[key], m.ttls[key] = b, ttl
	}
	return b, err
}

func TestSnapshotsInTheCache(t *testing.T) {
	room, err := queue.ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":10,"snapshot_ttl":1.5}`))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1_800_000_000, 0)
	snap := queue.Snapshot{Line: store.Line{Epoch: 3, Issued: 50, Admitted: 20}, At: at}
	good, _ := snap.MarshalText()
	down := errors.New("store timed out")
	// The fill failed at failedAt; the request began at at, before it
	// (it waited on that fill), or a second after it.
	failedAt := at.Add(500 * time.Millisecond)
	marker := []byte(snapshotDown + strconv.FormatInt(failedAt.UnixNano(), 10))
	tests := []struct {
		name     string
		cached   []byte
		now      time.Time
		fillErr  error
		cacheErr error
		want     error
		fills    int
	}{
		{"a miss fills and keeps it for the TTL", nil, at, nil, nil, nil, 1},
		{"a hit reads the POP's snapshot", good, at, nil, nil, nil, 0},
		{"a failed fill is kept as such for the TTL", nil, at, down, nil, nil, 1},
		{"waited on the failed fill: the store is down, no call", marker, at, nil, nil, store.ErrUnavailable, 0},
		{"began after the failed fill: ask the store", marker, failedAt.Add(time.Second), nil, nil, queue.ErrNoSnapshot, 0},
		{"a failure marker without its time: ask the store", []byte(snapshotDown + "x"), at, nil, nil, queue.ErrNoSnapshot, 0},
		{"a value that is not a snapshot", []byte("wr-snapshot-9 1 2"), at, nil, nil, queue.ErrBadSnapshot, 0},
		{"the cache fails", nil, at, nil, errors.New("cache broke"), errors.New(""), 0},
	}
	for _, tc := range tests {
		c := &memCache{values: map[string][]byte{}, ttls: map[string]time.Duration{}, err: tc.cacheErr}
		if tc.cached != nil {
			c.values[SnapshotKey("shop", 0)] = tc.cached
		}
		fills := 0
		got, err := snapshots{c, func() time.Time { return failedAt }}.Get(room, 0, tc.now, func() (queue.Snapshot, error) {
			fills++
			return snap, tc.fillErr
		})
		switch {
		case fills != tc.fills:
			t.Errorf("%s: %d fills, want %d", tc.name, fills, tc.fills)
		case tc.want == nil && tc.fillErr == nil && (err != nil || got.Line != snap.Line || !got.At.Equal(at)):
			t.Errorf("%s: %+v, %v; want the snapshot", tc.name, got, err)
		case tc.want != nil && tc.want.Error() != "" && !errors.Is(err, tc.want):
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		case tc.want != nil && err == nil:
			t.Errorf("%s: no error", tc.name)
		}
		if tc.fills == 1 && c.ttls[SnapshotKey("shop", 0)] != 1500*time.Millisecond {
			t.Errorf("%s: kept for %v, want the room's 1.5s", tc.name, c.ttls[SnapshotKey("shop", 0)])
		}
		if tc.fillErr != nil && string(c.values[SnapshotKey("shop", 0)]) != string(marker) {
			t.Errorf("%s: cached %q, want the failure marker", tc.name, c.values[SnapshotKey("shop", 0)])
		}
	}
}

func TestOperatorActionsDropTheSnapshot(t *testing.T) {
	c := &memCache{values: map[string][]byte{SnapshotKey("shop", 0): []byte("x"), SnapshotKey("other", 0): []byte("y")}, ttls: map[string]time.Duration{}}
	var logged []string
	s := testRequest(&Handler{Cache: c, Logf: func(f string, a ...any) { logged = append(logged, f) }})
	s.acted(store.AuditEntry{Room: "shop", Action: store.OpAdmit, N: 5})
	if _, ok := c.values[SnapshotKey("shop", 0)]; ok {
		t.Error("the room's snapshot outlived an operator's action")
	}
	if _, ok := c.values[SnapshotKey("other", 0)]; !ok {
		t.Error("another room's snapshot was dropped")
	}
	// A sharded room's action drops every shard's snapshot.
	for i := 0; i < 3; i++ {
		c.values[SnapshotKey("shop", i)] = []byte("x")
	}
	s.changed("shop", 3)
	for i := 0; i < 3; i++ {
		if _, ok := c.values[SnapshotKey("shop", i)]; ok {
			t.Errorf("shard %d's snapshot outlived an action on the room of 3 shards", i)
		}
	}
	c.err = errors.New("purge refused")
	s.changed("shop", 1)
	if len(logged) != 1 {
		t.Errorf("a failed purge logged %q, want one line", logged)
	}
}

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
