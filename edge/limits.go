package edge

import (
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

// joinCounter counts joins per client and room with the edge's Limits.
type joinCounter struct{ limits Limits }

// maxCounterName is the longest rate counter name Fastly accepts.
const maxCounterName = 64

func (j joinCounter) Join(room *queue.Room, client string) (bool, error) {
	n, err := j.limits.Count(joinsCounter(room), client)
	return n <= room.JoinsPerIPPerMinute, err
}

func (j joinCounter) Joins(room *queue.Room, client string) (int, error) {
	return j.limits.Counted(joinsCounter(room), client)
}

// joinsCounter is the name of room's counter of joins.
func joinsCounter(room *queue.Room) string {
	name := "wr_joins_" + room.Name
	if len(name) > maxCounterName {
		// Room names are up to 64 characters; two rooms sharing their
		// first 55 would share a counter, which only counts more.
		name = name[:maxCounterName]
	}
	return name
}
