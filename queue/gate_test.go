package queue

import (
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
)

func TestWaitEstimateFromObservedAdmissions(t *testing.T) {
	room := &Room{Name: "r", NewUsersPerMinute: 1000}
	tests := []struct {
		name  string
		line  store.Line
		known bool
		wait  time.Duration
	}{
		{"observed pace, not the configured rate", store.Line{Admitted: 10, Issued: 30, Recent: 30, RecentSince: now.Add(-3 * time.Minute)}, true, time.Minute},
		{"rounded up to a whole second", store.Line{Admitted: 19, Issued: 30, Recent: 3, RecentSince: now.Add(-time.Minute)}, true, 20 * time.Second},
		{"nobody admitted lately", store.Line{Admitted: 10, Issued: 30, RecentSince: now.Add(-5 * time.Minute)}, false, 0},
		{"paused", store.Line{Admitted: 10, Issued: 30, Paused: true, Recent: 30, RecentSince: now.Add(-time.Minute)}, false, 0},
		{"queue-all", store.Line{Admitted: 10, Issued: 30, QueueAll: true, Recent: 30, RecentSince: now.Add(-time.Minute)}, false, 0},
		{"line just began", store.Line{Admitted: 1, Issued: 30, Recent: 1, RecentSince: now}, false, 0},
	}
	for _, tc := range tests {
		p := placeOf(room, store.Place{Ticket: 20, Line: tc.line}, now)
		if p.WaitKnown != tc.known || p.Wait != tc.wait {
			t.Errorf("%s: wait %v known %v, want %v known %v", tc.name, p.Wait, p.WaitKnown, tc.wait, tc.known)
		}
		if want := 20 - tc.line.Admitted - 1; p.Ahead != want {
			t.Errorf("%s: ahead %d, want %d", tc.name, p.Ahead, want)
		}
	}
}
