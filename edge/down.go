// The POP's down marker: the latest store failure it saw for each line,
// which its every store call reports (store.Policy.FailedAt).

package edge

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
)

// downKey is the cache key of the POP's down marker for line, a store
// room name (a shard's own: each shard's database fails on its own).
func downKey(line string) string { return "wr-down/" + line }

// downMarked is a database whose line calls carry the POP's down marker for
// their line, and which marks the line down when a call fails (the store
// could not be reached or timed out). The store counts the silence since
// its last call as an outage only when a caller saw it fail: line time
// follows the wall clock otherwise. So a POP whose calls failed tells the
// store on its first call that succeeds, whoever makes it, and a
// visitor's place outlives the outage. The marker costs a cache read a
// call, and a write only when a call fails.
type downMarked struct {
	shard.Backend
	cache Cache
	logf  func(format string, args ...any)
}

// policy is p carrying the POP's latest failure for line, when it is later
// than what p already carries.
func (m downMarked) policy(line string, p store.Policy) store.Policy {
	b, err := m.cache.Get(downKey(line))
	if err != nil {
		m.logf("room %s: the POP's down marker not read (the call reports no failure): %v", line, err)
		return p
	}
	if b == nil {
		return p
	}
	ms, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || ms <= 0 {
		m.logf("room %s: the POP's down marker %q is not a time: ignored", line, b)
		return p
	}
	if at := time.UnixMilli(ms); at.After(p.FailedAt) {
		p.FailedAt = at
	}
	return p
}

// note marks line down at now when err says the store could not be
// reached, and passes err on. The marker is kept as long as the longest
// a place waits for its holder (the queue timeout, the session's
// inactivity timeout, the claim window): a holder whose calls fail calls
// at least that often to keep the place, and each failure writes the
// marker again, so it is there when the store answers again; a failure
// older than that explains no silence (a night after one timed-out poll
// counts in full).
func (m downMarked) note(line string, p store.Policy, now time.Time, err error) error {
	if !errors.Is(err, store.ErrUnavailable) {
		return err
	}
	ttl := max(p.QueueTimeout, p.SessionTTL, p.ClaimWindow)
	if serr := m.cache.Set(downKey(line), strconv.AppendInt(nil, now.UnixMilli(), 10), ttl); serr != nil {
		m.logf("room %s: the POP's down marker not written (the next call cannot report the failure): %v", line, serr)
	}
	return err
}

// Join implements store.Store, downMarked.
func (m downMarked) Join(ctx context.Context, room string, p store.Policy, a store.Arrival, now time.Time) (store.Place, error) {
	pl, err := m.Backend.Join(ctx, room, m.policy(room, p), a, now)
	return pl, m.note(room, p, now, err)
}

// JoinPriority implements store.Store, downMarked.
func (m downMarked) JoinPriority(ctx context.Context, room string, p store.Policy, arrival string, inv store.Invite, now time.Time) (store.Place, error) {
	pl, err := m.Backend.JoinPriority(ctx, room, m.policy(room, p), arrival, inv, now)
	return pl, m.note(room, p, now, err)
}

// Poll implements store.Store, downMarked.
func (m downMarked) Poll(ctx context.Context, room string, p store.Policy, t store.Ticket, now time.Time) (store.Place, error) {
	pl, err := m.Backend.Poll(ctx, room, m.policy(room, p), t, now)
	return pl, m.note(room, p, now, err)
}

// Renew implements store.Store, downMarked.
func (m downMarked) Renew(ctx context.Context, room string, p store.Policy, s store.SessionRef, now time.Time) (bool, store.Line, error) {
	ok, l, err := m.Backend.Renew(ctx, room, m.policy(room, p), s, now)
	return ok, l, m.note(room, p, now, err)
}

// End implements store.Store, downMarked.
func (m downMarked) End(ctx context.Context, room string, p store.Policy, s store.SessionRef, now time.Time) (store.Line, error) {
	l, err := m.Backend.End(ctx, room, m.policy(room, p), s, now)
	return l, m.note(room, p, now, err)
}

// Admit implements store.Store, downMarked.
func (m downMarked) Admit(ctx context.Context, room string, p store.Policy, n int64, now time.Time) (store.Line, error) {
	l, err := m.Backend.Admit(ctx, room, m.policy(room, p), n, now)
	return l, m.note(room, p, now, err)
}

// Control implements store.Store, downMarked.
func (m downMarked) Control(ctx context.Context, room string, p store.Policy, c store.Control, now time.Time) (store.Line, error) {
	l, err := m.Backend.Control(ctx, room, m.policy(room, p), c, now)
	return l, m.note(room, p, now, err)
}

// Operate implements store.Store, downMarked.
func (m downMarked) Operate(ctx context.Context, room string, p store.Policy, a store.Action, now time.Time) (store.Line, error) {
	l, err := m.Backend.Operate(ctx, room, m.policy(room, p), a, now)
	return l, m.note(room, p, now, err)
}

// Stats implements store.Store, downMarked.
func (m downMarked) Stats(ctx context.Context, room string, p store.Policy, now time.Time) (store.Line, error) {
	l, err := m.Backend.Stats(ctx, room, m.policy(room, p), now)
	return l, m.note(room, p, now, err)
}
