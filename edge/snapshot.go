// The POP's snapshots of the lines (queue.Snapshot), kept in its cache.

package edge

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
)

// Cache is the POP's cache (Fastly's, at the edge): GetOrSet returns key's
// value, or runs fill once for every concurrent caller in the POP (request
// collapsing) and keeps its value for the TTL fill returns. Get returns
// key's value, nil when the POP has none. Set keeps value under key in the
// POP for ttl, in place of any value it had. Purge drops key's value in
// every POP (on Fastly, within about 150 ms).
type Cache interface {
	GetOrSet(key string, fill func() ([]byte, time.Duration, error)) ([]byte, error)
	Get(key string) ([]byte, error)
	Set(key string, value []byte, ttl time.Duration) error
	Purge(key string) error
}

// SnapshotKey is the cache key of the snapshot of shard i of room (each
// shard is a line of its own): shard 0's is the room's, as it always was.
func SnapshotKey(room string, i int) string { return "wr-snapshot/" + shard.Name(room, i) }

// snapshotDown, then the time, is cached in place of a snapshot whose fill
// failed, for as long. The requests that waited on that fill (the cache
// collapsed them behind it) began before that time: they are told the
// store is down at once, instead of each filling in turn behind it and
// each waiting out the store's timeout. A request that begins later asks
// the store itself, so an outage that ended costs nobody a busy page.
const snapshotDown = "wr-snapshot down "

// changed drops room's snapshots after an operator's action or an
// origin's command changed its line: far-from-front visitors then see a
// pause or an "admit N" at their next poll, not a TTL later. A failed purge
// costs only that: the snapshots still end with their TTL.
// A sharded room's action changed every shard's line.
func (h *Handler) changed(room string, shards int) {
	if h.Cache == nil {
		return
	}
	for i := 0; i < max(shards, 1); i++ {
		if err := h.Cache.Purge(SnapshotKey(room, i)); err != nil {
			h.Logf("room %s: snapshot of shard %d not purged (it ends with its TTL): %v", room, i, err)
		}
	}
}

// snapshots keeps the rooms' snapshots in a Cache; clock tells when a fill
// failed.
type snapshots struct {
	cache Cache
	clock func() time.Time
}

// Get implements queue.Snapshots.
func (c snapshots) Get(room *queue.Room, shard int, now time.Time, fill func() (queue.Snapshot, error)) (queue.Snapshot, error) {
	var filled *queue.Snapshot
	b, err := c.cache.GetOrSet(SnapshotKey(room.Name, shard), func() ([]byte, time.Duration, error) {
		s, err := fill()
		if err != nil {
			return strconv.AppendInt([]byte(snapshotDown), c.clock().UnixNano(), 10), room.SnapshotTTL(), nil
		}
		filled = &s
		b, err := s.MarshalText()
		return b, room.SnapshotTTL(), err
	})
	switch {
	case filled != nil:
		// The filler has it already, whatever the cache did with it.
		return *filled, nil
	case err != nil:
		return queue.Snapshot{}, fmt.Errorf("snapshot cache: %w", err)
	case bytes.HasPrefix(b, []byte(snapshotDown)):
		failed, err := strconv.ParseInt(string(b[len(snapshotDown):]), 10, 64)
		if err == nil && now.UnixNano() < failed {
			return queue.Snapshot{}, fmt.Errorf("%w: the POP's snapshot fill this request waited on failed", store.ErrUnavailable)
		}
		return queue.Snapshot{}, fmt.Errorf("%w: the POP's last snapshot fill failed", queue.ErrNoSnapshot)
	}
	var s queue.Snapshot
	err = s.UnmarshalText(b)
	return s, err
}

// Peek implements queue.Snapshots.
func (c snapshots) Peek(room *queue.Room, shard int) (queue.Snapshot, error) {
	b, err := c.cache.Get(SnapshotKey(room.Name, shard))
	switch {
	case err != nil:
		return queue.Snapshot{}, fmt.Errorf("snapshot cache: %w", err)
	case b == nil || bytes.HasPrefix(b, []byte(snapshotDown)):
		return queue.Snapshot{}, queue.ErrNoSnapshot
	}
	var s queue.Snapshot
	err = s.UnmarshalText(b)
	return s, err
}
