package edge

import (
	"fmt"
	"net/netip"
	"strconv"
	"time"

	"github.com/edgequeue/waitingroom/queue"
)

// Limits counts what clients do, so that one client cannot take many
// places in a line or guess the admin password at speed. At the edge it is
// Fastly's Edge Rate Limiting: counters and penalty boxes shared within a
// POP (not across POPs), which may undercount by up to 10%. A nil Limits
// limits nothing.
type Limits interface {
	// Count adds one event for client to the named counter and reports
	// the events counted in the last minute, this one included.
	Count(counter, client string) (int, error)
	// Counted reports the events counted for client in the named counter
	// in the last minute, adding none.
	Counted(counter, client string) (int, error)
	// Penalize puts client in the named penalty box for d (whole minutes,
	// one at least: the platform's granularity).
	Penalize(box, client string, d time.Duration) error
	// Penalized reports whether client is in the named penalty box.
	Penalized(box, client string) (bool, error)
}

// joinCounter counts joins by client, network and autonomous system, and
// room, with the edge's Limits; geo finds an address's autonomous system
// (nil: unknown, not limited by it).
type joinCounter struct {
	limits Limits
	geo    Geo
}

// NewJoinCounter is the edge's join counter over l and g (nil: no
// autonomous system is known, so none is limited): what the edge's gate
// counts joins with, for a gate run outside the edge (the simulator's, in
// virtual time).
func NewJoinCounter(l Limits, g Geo) queue.JoinCounter { return joinCounter{limits: l, geo: g} }

// maxCounterName is the longest rate counter name Fastly accepts.
const maxCounterName = 64

// Join counts a join by each scope room limits, the address first, and
// stops at the first scope beyond its limit: a refused join is counted
// where it was refused, not in the wider scopes it never reached. Only an
// address beyond its own limit is put in the penalty box: a network or an
// autonomous system beyond its limit refuses the join, but boxing the
// address that happened to join next would let one bot behind a carrier's
// NAT or in a mobile carrier's AS send everyone there to the decoy.
func (j joinCounter) Join(room *queue.Room, v queue.Visitor) (string, error) {
	scopes := [...]struct {
		name, counter string
		key           func() (string, error)
		limit         int
		boxes         bool
	}{
		{"address", "wr_joins_", func() (string, error) { return v.Client, nil }, room.JoinsPerIPPerMinute, true},
		{"network", "wr_jnet_", func() (string, error) { return NetworkKey(v.Addr), nil }, room.JoinsPerNetworkPerMinute, false},
		{"autonomous system", "wr_jas_", func() (string, error) { return j.asKey(v.Addr) }, room.JoinsPerASPerMinute, false},
	}
	for _, s := range scopes {
		if s.limit <= 0 {
			continue
		}
		key, err := s.key()
		if err != nil {
			return "", err
		}
		if key == "" {
			continue // unknown: not limited by this scope
		}
		n, err := j.limits.Count(counterName(s.counter, room), key)
		if err != nil {
			return "", err
		}
		if n > s.limit {
			if s.boxes && room.Decoys() && v.Client != "" {
				// The address that went beyond its own limit is
				// decoyed for a while (queue's hostile): a place
				// refused now is not taken by its next arrival
				// either.
				if err := j.limits.Penalize(counterName("wr_jbox_", room), v.Client, JoinPenalty); err != nil {
					return s.name, fmt.Errorf("%s not put in the penalty box: %w", v.Client, err)
				}
			}
			return s.name, nil
		}
	}
	return "", nil
}

func (j joinCounter) Joins(room *queue.Room, client string) (int, error) {
	return j.limits.Counted(counterName("wr_joins_", room), client)
}

// JoinPenalty is how long an address that joined beyond a limit is sent
// to the decoy line: the platform's shortest penalty.
const JoinPenalty = time.Minute

func (j joinCounter) Penalized(room *queue.Room, v queue.Visitor) (bool, error) {
	if v.Client == "" {
		return false, nil
	}
	return j.limits.Penalized(counterName("wr_jbox_", room), v.Client)
}

// asKey names addr's autonomous system for the counters ("AS54113"), or
// "" when the platform knows none.
func (j joinCounter) asKey(addr netip.Addr) (string, error) {
	if j.geo == nil || !addr.IsValid() {
		return "", nil
	}
	as, err := j.geo.AS(addr)
	if err != nil || as <= 0 {
		return "", err
	}
	return "AS" + strconv.Itoa(as), nil
}

// counterName is the name of room's counter called prefix (one per scope).
func counterName(prefix string, room *queue.Room) string {
	name := prefix + room.Name
	if len(name) > maxCounterName {
		// Room names are up to 64 characters; two rooms whose names
		// agree as far as the name fits (55 to 57 characters) would
		// share a counter, which only counts more.
		name = name[:maxCounterName]
	}
	return name
}
