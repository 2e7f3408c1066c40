package edge

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

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
