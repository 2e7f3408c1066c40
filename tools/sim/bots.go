package sim

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Arrival is how the edge meets a request that carries no pass: it decides
// what a client that never comes back costs the line.
type Arrival int

const (
	// JoinAtFirstRequest makes every request without a pass a store join
	// that takes a ticket: the edge before the armour of issue 10.
	JoinAtFirstRequest Arrival = iota
	// JoinOnReturn answers a request without a pass with a signed arrival
	// pass and a redirect, with no store call; the visitor joins when it
	// comes back with that pass. A client that never returns costs nothing.
	JoinOnReturn
)

// String names the handling in reports.
func (a Arrival) String() string {
	if a == JoinOnReturn {
		return "join on return"
	}
	return "join at first request"
}

// Edge is how the edge meets requests before they reach the store: the
// handling of a request without a pass, and the limit on joins per client
// address (Fastly's Edge Rate Limiting, modelled by joinLimiter; 0 is no
// limit). Every visitor has an address of their own; bots share
// BotFlood.IPs.
type Edge struct {
	Arrival             Arrival
	JoinsPerIPPerMinute int
}

// The edge before and after issue 10's armour.
var (
	// Before joins every request without a pass, with no limit.
	Before = Edge{Arrival: JoinAtFirstRequest}
	// After joins on return, with joins_per_ip_per_minute at its default.
	After = Edge{Arrival: JoinOnReturn, JoinsPerIPPerMinute: 30}
)

// String names the edge in reports.
func (e Edge) String() string {
	if e.JoinsPerIPPerMinute > 0 {
		return fmt.Sprintf("%s, %d joins per address a minute", e.Arrival, e.JoinsPerIPPerMinute)
	}
	return e.Arrival.String()
}

// BotFlood is clients that make the requests that take a place in line and
// then never come back for it: they never poll, so whatever the room gives
// them is wasted.
type BotFlood struct {
	// PerSecond bots arrive, evenly spaced, during the first For of the
	// event.
	PerSecond float64
	For       time.Duration
	// IPs is how many client addresses the bots share; 0 gives each bot
	// its own.
	IPs int
	// KeepCookies bots follow the one redirect with the pass it set (so
	// under JoinOnReturn they join, and the per-address limit is what
	// bounds them); the others never send a second request.
	KeepCookies bool
}

// Count is how many bots the flood sends.
func (b BotFlood) Count() int {
	if b.PerSecond <= 0 {
		return 0
	}
	return int(b.PerSecond * b.For.Seconds())
}

// at is when bot i arrives, after the event's start.
func (b BotFlood) at(i int) time.Duration {
	return time.Duration(float64(i) * float64(time.Second) / b.PerSecond)
}

// client is the address bot i comes from.
func (b BotFlood) client(i int) string {
	if b.IPs > 0 {
		return "ip" + strconv.Itoa(i%b.IPs)
	}
	return "bot" + strconv.Itoa(i)
}

// CalledLister is a policy that can list the tickets it has called and that
// have not been claimed yet: how the simulator sees which places bots took.
// A called ticket stays listed for the claim window, so sampling more often
// than that sees every one.
type CalledLister interface {
	CalledTickets(ctx context.Context) ([]int64, error)
}

// joinLimiter models the edge's limit on joins per client address, on
// Fastly's Edge Rate Limiting as edge.Limits offers it: a client in the
// penalty box is refused; otherwise its join is counted, and a client with
// more than limit joins counted in the last minute is refused and boxed for
// a minute, the platform's shortest penalty. So no address gets more than
// limit joins through in any minute.
type joinLimiter struct {
	limit  int
	counts map[string][]time.Time // each client's joins counted in the last minute
	boxed  map[string]time.Time   // each client's penalty end
}

func newJoinLimiter(limit int) *joinLimiter {
	return &joinLimiter{limit: limit, counts: map[string][]time.Time{}, boxed: map[string]time.Time{}}
}

// allow reports whether client may join at now; a limit of 0 allows all.
func (l *joinLimiter) allow(client string, now time.Time) bool {
	if l.limit <= 0 {
		return true
	}
	if now.Before(l.boxed[client]) {
		return false
	}
	seen := l.counts[client]
	for len(seen) > 0 && !seen[0].After(now.Add(-time.Minute)) {
		seen = seen[1:]
	}
	seen = append(seen, now)
	l.counts[client] = seen
	if len(seen) > l.limit {
		l.boxed[client] = now.Add(time.Minute)
		return false
	}
	return true
}
