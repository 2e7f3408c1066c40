package edge

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
)

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
