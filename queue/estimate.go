package queue

import (
	"math"
	"time"

	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/store/shard"
)

// Unknown says why a Place shows no wait estimate (WaitKnown false).
type Unknown int

// The reasons for no estimate.
const (
	// UnknownPaused: entry is paused, or queue-all holds everyone: nobody
	// is called until the operator resumes.
	UnknownPaused Unknown = iota + 1
	// UnknownFull: the ticket needs places to free up in a full room, and
	// nobody has left it lately, so there is no pace to go by.
	UnknownFull
	// UnknownBeforeStart: the ticket waits for a scheduled sale to open:
	// it is in the pre-queue (its place is drawn at the start), or in the
	// priority lane, which the pre-queue holds until then.
	UnknownBeforeStart
)

// minPaceWindow is the shortest time a departure pace is measured over: in
// a line younger than that, one early departure is not a pace.
const minPaceWindow = time.Minute

// pace is what a wait estimate rests on, as estimateWait derives it from
// the room and the store's line.
type pace struct {
	// rate is the calls per second the rate allows (0: no rate).
	rate float64
	// capped says the room has a capacity; free is how many places are
	// free now (below zero when the operator's "admit N" overfilled it),
	// and departures the visitors leaving per second.
	capped     bool
	free       int64
	departures float64
}

// paceOf reads the pace from room (as it stands now) and the line l (of
// shard sh) at now.
//
// The rate is the room's new_users_per_minute, or the operator's live
// value: automatic calls never go faster, and go exactly that fast while
// tickets wait and places are free. An operator's "admit N" (which calls
// beyond the rate) is a one-off, not a pace, so it does not count.
//
// The capacity (max_active_users, or the live value) needs a free place
// for every call: places free now (capacity less live sessions and calls
// pending) are filled at once, and every later call waits for a
// departure. Departures are what the store's window of admissions (Recent
// since RecentSince) says once the growth of the room over the window is
// taken off: departures = calls − (held now − held at the start). A line
// younger than the window began empty, so that is exact: a burst that
// filled the room counts for nothing. For an older line the store does not
// say how full the room was when the window began; it is taken to have
// been as full as now, up to the capacity: a room that stays full calls
// exactly as fast as visitors leave, and places an "admit N" overfilled
// are not taken for departures. (A room that filled after a quiet spell
// in an older line is counted as if it had stayed full: the estimate is
// then too short until the window has passed the quiet spell.)
func paceOf(room *Room, l store.Line, sh int, now time.Time) pace {
	rate, capacity := room.NewUsersPerMinute, room.MaxActiveUsers
	if o := l.Overrides.PerMinute; o != nil {
		rate = *o
	}
	if o := l.Overrides.Capacity; o != nil {
		capacity = *o
	}
	// A shard's line has its share of the rate and capacity, as the
	// store splits them.
	if k := room.shards(); k > 1 {
		rate, capacity = rate/float64(k), int(shard.Split(int64(capacity), sh, k))
	}
	if l.Mode(room.Mode) == Passthrough {
		return pace{}
	}
	p := pace{rate: rate / 60, capped: capacity > 0}
	if !p.capped {
		return p
	}
	held, limit := l.Active+l.Called, int64(capacity)
	p.free = limit - held
	left := l.Recent - max(held-limit, 0)
	if l.RecentSince.Equal(time.UnixMilli(l.Epoch)) {
		// The window reaches back to the line's start (its epoch, in
		// Unix milliseconds), when nothing was held. Until as many have
		// left as the room holds, those who left are the shortest stays
		// alone: they say how soon visitors can leave, not how fast.
		if left = l.Recent - held; left < min(held, limit) {
			left = 0
		}
	}
	window := max(now.Sub(l.RecentSince), minPaceWindow)
	p.departures = float64(max(left, 0)) / window.Seconds()
	return p
}

// wait is how long calls more calls take at the pace: long enough for the
// rate to allow them, and for the departures that free a place for each
// call beyond the free places. ok is false when departures are needed and
// none were seen.
func (p pace) wait(calls float64) (time.Duration, bool) {
	var secs float64
	if p.rate > 0 {
		secs = calls / p.rate
	}
	if need := calls - float64(p.free); p.capped && need > 0 {
		if p.departures <= 0 {
			return 0, false
		}
		secs = max(secs, need/p.departures)
	}
	return time.Duration(math.Ceil(secs)) * time.Second, true
}

// estimateWait sets p's Wait and WaitMin (or why there is none) for a
// ticket that first to last calls of its lane reach (laneCalls), in room
// at now, from the line l.
//
// Paused or queue-all, nobody is called: no estimate. Nor in a pre-queue,
// or for a priority ticket while the pre-queue holds the lane, before the
// sale opens. Otherwise the pace is the rate's and the departures' (see
// paceOf), never the admissions merely observed lately: those include
// bursts (a room filling, an "admit N") that are not a pace, so a visitor
// is never told "less than a minute" while nobody is being called, nor
// does one burst swing the estimate from "not known" to "less than a
// minute" and back up. Without a departure seen where one is needed, the
// estimate is honestly not known (UnknownFull). Tickets ahead whose
// holders left are passed over without a call, which the estimate cannot
// foresee: the wait may be shorter.
func estimateWait(room *Room, p *Place, l store.Line, first, last int64, now time.Time) {
	switch {
	case p.Paused:
		p.Unknown = UnknownPaused
		return
	case p.Event != nil && p.Event.Prequeue, p.Priority && l.Event.Phase == store.Prequeue:
		p.Unknown = UnknownBeforeStart
		return
	}
	pc := paceOf(room, l, p.Shard, now)
	least, ok := pc.wait(laneCalls(room, l, p.Priority, first))
	most, ok2 := pc.wait(laneCalls(room, l, p.Priority, last))
	if !ok || !ok2 {
		p.Unknown = UnknownFull
		return
	}
	p.WaitMin, p.Wait, p.WaitKnown = least, most, true
}

// WaitRange is the span of waits the queue page shows for a known
// estimate: the earliest to the latest call in a shuffled group or a
// draw, else the estimate from 0.8 to 1.25 times, since a pace measured
// over a few minutes is no closer than that.
func (p Place) WaitRange() (least, most time.Duration) {
	if p.WaitMin < p.Wait {
		return p.WaitMin, p.Wait
	}
	return p.Wait * 3 / 5, p.Wait * 5 / 4
}
