package queue

import (
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/store"
)

// TestWaitEstimate: what the wait rests on in each state of a room, for a
// ticket with ten calls to go (ticket 20, now serving 10).
func TestWaitEstimate(t *testing.T) {
	rate := &Room{Name: "r", NewUsersPerMinute: 60}
	capped := &Room{Name: "r", MaxActiveUsers: 10}
	both := &Room{Name: "r", MaxActiveUsers: 10, NewUsersPerMinute: 6}
	saleRoom, err := ParseRoom("sale", []byte(sale))
	if err != nil {
		t.Fatal(err)
	}
	inPrequeue := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	// An old line's window is the store's last minutes; a young line's
	// reaches back to its start (its epoch).
	old := func(l store.Line) store.Line {
		l.Epoch, l.RecentSince = now.Add(-time.Hour).UnixMilli(), now.Add(-270*time.Second)
		return l
	}
	young := func(age time.Duration, l store.Line) store.Line {
		l.Epoch = now.Add(-age).UnixMilli()
		l.RecentSince = time.UnixMilli(l.Epoch)
		return l
	}
	line := store.Line{Issued: 100, Admitted: 10}
	with := func(l store.Line, f func(*store.Line)) store.Line { f(&l); return l }
	full := func(active, recent int64) func(*store.Line) {
		return func(l *store.Line) { l.Active, l.Called, l.Recent = active-1, 1, recent }
	}
	perMinute, capacity := func(v float64) *float64 { return &v }, func(v int) *int { return &v }
	tests := []struct {
		name    string
		room    *Room
		line    store.Line
		ticket  int64
		at      time.Time
		wait    time.Duration
		unknown Unknown
	}{
		{"rate room: the rate, not the calls observed", rate, old(with(line, func(l *store.Line) { l.Recent = 30 })), 20, now, 10 * time.Second, 0},
		{"rate room: nobody called lately", rate, old(line), 20, now, 10 * time.Second, 0},
		{"rate room: an operator's admit N is no pace", rate, old(with(line, func(l *store.Line) { l.Recent = 1270 })), 20, now, 10 * time.Second, 0},
		{"rate room: the line just began", rate, young(time.Second, with(line, func(l *store.Line) { l.Recent = 11 })), 20, now, 10 * time.Second, 0},
		{"rate room: the operator's live rate", rate, old(with(line, func(l *store.Line) { l.Overrides.PerMinute = perMinute(30) })), 20, now, 20 * time.Second, 0},
		{"rate room: rounded up to a whole second", &Room{Name: "r", NewUsersPerMinute: 7}, old(line), 20, now, 86 * time.Second, 0},
		{"full room, young line: nobody has left", capped, young(10*time.Second, with(line, full(10, 10))), 20, now, 0, UnknownFull},
		{"full room, young line: the next visitor waits for a departure too", capped, young(10*time.Second, with(line, full(10, 10))), 11, now, 0, UnknownFull},
		{"full room, young line: fewer left than the room holds", capped, young(2*time.Minute, with(line, full(10, 19))), 20, now, 0, UnknownFull},
		{"full room, young line: turned over once", capped, young(2*time.Minute, with(line, full(10, 20))), 20, now, 2 * time.Minute, 0},
		{"full room, young line: the pace is measured over a minute at least", capped, young(20*time.Second, with(line, full(10, 20))), 20, now, time.Minute, 0},
		{"full room: departures, one every 6 s", capped, old(with(line, full(10, 45))), 20, now, time.Minute, 0},
		{"full room: nobody called lately", capped, old(with(line, full(10, 0))), 20, now, 0, UnknownFull},
		{"overfilled by an admit N: its calls are no departures, and the room must drain first", capped, old(with(line, full(15, 50))), 20, now, 90 * time.Second, 0},
		{"free places are filled at once", capped, old(with(line, full(5, 45))), 13, now, 0, 0},
		{"beyond the free places, departures", capped, old(with(line, full(5, 45))), 20, now, 30 * time.Second, 0},
		{"a free room, young, nobody left: the free places still fill", capped, young(time.Second, with(line, full(5, 5))), 13, now, 0, 0},
		{"the operator's live capacity", capped, old(with(line, func(l *store.Line) { full(10, 45)(l); l.Overrides.Capacity = capacity(15) })), 20, now, 30 * time.Second, 0},
		{"the operator lifts the capacity, leaving the rate", both, old(with(line, func(l *store.Line) { full(10, 45)(l); l.Overrides.Capacity = capacity(0) })), 20, now, 100 * time.Second, 0},
		{"rate and capacity: the rate holds back", both, old(with(line, full(1, 45))), 20, now, 100 * time.Second, 0},
		{"rate and capacity: the capacity holds back", both, old(with(line, full(10, 9))), 20, now, 5 * time.Minute, 0},
		{"rate and capacity: full, nobody left", both, young(10*time.Second, with(line, full(10, 10))), 20, now, 0, UnknownFull},
		{"passthrough: called at once", capped, old(with(line, func(l *store.Line) { full(10, 0)(l); l.Overrides.Mode = Passthrough })), 20, now, 0, 0},
		{"paused", rate, old(with(line, func(l *store.Line) { l.Paused = true })), 20, now, 0, UnknownPaused},
		{"queue-all", capped, old(with(line, func(l *store.Line) { full(10, 45)(l); l.QueueAll = true })), 20, now, 0, UnknownPaused},
		{"in the pre-queue", saleRoom, old(with(line, func(l *store.Line) { l.Event = store.EventState{Phase: store.Prequeue, First: 15} })), 20, inPrequeue, 0, UnknownBeforeStart},
		{"priority lane held by the pre-queue", saleRoom, old(with(line, func(l *store.Line) {
			l.Event, l.PriorityIssued = store.EventState{Phase: store.Prequeue, First: 15}, 3
		})), -2, inPrequeue, 0, UnknownBeforeStart},
		// The sale's rate: 100 a minute.
		{"ahead of the pre-queue", saleRoom, old(with(line, func(l *store.Line) { l.Event = store.EventState{Phase: store.Prequeue, First: 25} })), 20, inPrequeue, 6 * time.Second, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := placeOf(tc.room.At(tc.at), store.Place{Ticket: tc.ticket, Line: tc.line}, tc.at)
			known := tc.unknown == 0
			if p.WaitKnown != known || p.Unknown != tc.unknown || p.Wait != tc.wait || p.WaitMin != tc.wait {
				t.Errorf("wait %v..%v known %v (unknown %d), want %v known %v (unknown %d)", p.WaitMin, p.Wait, p.WaitKnown, p.Unknown, tc.wait, known, tc.unknown)
			}
		})
	}
}

// TestWaitEstimateAfterABurst follows a visitor far back in a full room of
// ten, through a young line's first minutes: ten called at once as it
// began, then one departure (and call) every 12 s from the first minute
// on. The estimate is "not known" until as many have left as the room
// holds, then comes down as the departures go on: it never says "less
// than a minute", nor goes back up by more than a tenth (a pace averaged
// over minutes drifts down between two departures).
func TestWaitEstimateAfterABurst(t *testing.T) {
	room := &Room{Name: "r", MaxActiveUsers: 10}
	epoch := now.Add(-10 * time.Minute)
	var shown []time.Duration
	for at := time.Duration(0); at <= 4*time.Minute; at += 10 * time.Second {
		left := max(int64(at-time.Minute)/int64(12*time.Second), 0)
		l := store.Line{Epoch: epoch.UnixMilli(), RecentSince: epoch, Issued: 200, Admitted: 10 + left, Active: 10, Recent: 10 + left}
		p := placeOf(room.At(epoch.Add(at)), store.Place{Ticket: 150, Line: l}, epoch.Add(at))
		switch {
		case left < 10 && (p.WaitKnown || p.Unknown != UnknownFull):
			t.Fatalf("at %v, %d left: wait %v known %v, want not known (the room is full)", at, left, p.Wait, p.WaitKnown)
		case left < 10:
			continue
		case !p.WaitKnown || p.Wait < time.Minute:
			t.Fatalf("at %v, %d left: wait %v known %v", at, left, p.Wait, p.WaitKnown)
		case len(shown) > 0 && p.Wait > shown[len(shown)-1]*11/10:
			t.Fatalf("at %v: wait %v after %v: it went back up", at, p.Wait, shown[len(shown)-1])
		}
		shown = append(shown, p.Wait)
	}
	if len(shown) < 2 || shown[len(shown)-1] >= shown[0] {
		t.Fatalf("estimates %v: want them to come down", shown)
	}
}

// TestWaitRange: the range the page shows.
func TestWaitRange(t *testing.T) {
	tests := []struct {
		name        string
		place       Place
		least, most time.Duration
	}{
		{"first come, first served", Place{WaitMin: 10 * time.Minute, Wait: 10 * time.Minute}, 6 * time.Minute, 12*time.Minute + 30*time.Second},
		{"a shuffled group", Place{WaitMin: 5 * time.Minute, Wait: 9 * time.Minute}, 5 * time.Minute, 9 * time.Minute},
		{"called at once", Place{}, 0, 0},
	}
	for _, tc := range tests {
		if least, most := tc.place.WaitRange(); least != tc.least || most != tc.most {
			t.Errorf("%s: %v..%v, want %v..%v", tc.name, least, most, tc.least, tc.most)
		}
	}
}
