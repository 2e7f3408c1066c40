// The POP's snapshots of the lines (queue.Snapshot), kept in its cache.

package edge

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
)

// Cache is the POP's cache (Fastly's, at the edge): GetOrSet returns key's
// value, or runs fill once for every concurrent caller in the POP (request
// collapsing) and keeps its value for the TTL fill returns. Purge drops
// key's value in every POP (on Fastly, within about 150 ms).
type Cache interface {
	GetOrSet(key string, fill func() ([]byte, time.Duration, error)) ([]byte, error)
	Purge(key string) error
}

// SnapshotKey is the cache key of room's snapshot.
func SnapshotKey(room string) string { return "wr-snapshot/" + room }

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
func (h *Handler) changed(room string) {
	if h.Cache == nil {
		return
	}
	if err := h.Cache.Purge(SnapshotKey(room)); err != nil {
		h.Logf("room %s: snapshot not purged (it ends with its TTL): %v", room, err)
	}
}

// snapshots keeps the rooms' snapshots in a Cache; clock tells when a fill
// failed.
type snapshots struct {
	cache Cache
	clock func() time.Time
}

// Get implements queue.Snapshots.
func (c snapshots) Get(room *queue.Room, now time.Time, fill func() (queue.Snapshot, error)) (queue.Snapshot, error) {
	var filled *queue.Snapshot
	b, err := c.cache.GetOrSet(SnapshotKey(room.Name), func() ([]byte, time.Duration, error) {
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
