package sim

import (
	"context"
	"time"
)

// A Policy is an admission design under test: the waiting room's own, or a
// model of another design. The simulator calls it once per visitor request;
// it answers what the visitor sees and how many store calls it made.
//
// Calls for different visitors run concurrently, as requests at the edge
// do, so a Policy keeps per-visitor state only in that visitor's fields.
type Policy interface {
	// Name labels the policy in reports.
	Name() string
	// Join is a newcomer's first request.
	Join(ctx context.Context, v *Visitor, now time.Time) (Answer, error)
	// Poll is a waiting visitor's queue page refreshing.
	Poll(ctx context.Context, v *Visitor, now time.Time) (Answer, error)
	// Visit is an admitted visitor's request to the site. An admitted
	// visitor who is turned away is an error: no design may do that.
	Visit(ctx context.Context, v *Visitor, now time.Time) (calls int, err error)
	// Leave is an admitted visitor's departure beacon.
	Leave(ctx context.Context, v *Visitor, now time.Time) (calls int, err error)
	// Held is what the policy counts as occupying the origin, or ok false
	// when it counts nothing.
	Held(ctx context.Context, now time.Time) (held int64, ok bool, err error)
}

// Answer is a policy's reply to a Join or a Poll.
type Answer struct {
	Admitted bool
	// Next is when the visitor's queue page polls again.
	Next time.Duration
	// Lost says the visitor's place was given away and they start again
	// at the back.
	Lost bool
	// Held is the policy's count of occupied places after the call, or -1
	// when the answer does not say.
	Held  int64
	Calls int
	// Far says a waiting visitor is far from the front: by the policy's
	// own measure, they would not be let in within the next two refreshes'
	// worth of admissions (see Ours.far and the models').
	Far bool
	// Snapshot says the answer came from the POP's snapshot of the line
	// rather than from a store call about the visitor's ticket; Fills is
	// how many of Calls filled the snapshot.
	Snapshot bool
	Fills    int
	// Shown is the wait estimate the visitor's page showed with a waiting
	// answer; a policy that estimates nothing leaves it unknown.
	Shown Shown
}

// Shown is a wait estimate as a queue page shows it: the range from Least
// to Most (queue.Place.WaitRange), or "not known" when Known is false.
type Shown struct {
	Known       bool
	Least, Most time.Duration
}

// Visitor is one simulated person. Policies keep their state for the
// visitor in the exported fields.
type Visitor struct {
	ID int
	// Session is the visitor's session identifier.
	Session string
	// Ticket is the place the policy gave the visitor.
	Ticket int64
	// Pass is the room's cookie as the waiting room's gate last set it
	// (Ours).
	Pass string
	// Shard is the shard of a sharded room the visitor's place is in
	// (Ours; 0 in a room of one line).
	Shard int

	arrived, admitted, leaves time.Time
	pollsLeft                 int       // polls before a NoShowWait visitor gives up; -1 never
	waiting                   bool      // polling for a place
	beacon                    bool      // leaves by beacon rather than going idle
	steady                    bool      // never stops polling while waiting
	lost                      bool      // lost their place at least once
	bot                       bool      // a BotFlood client, not a visitor
	returns                   bool      // follows the redirect of an arrival pass
	client                    string    // the address the requests come from
	page                      int       // the admitted visitor's pages loaded, the last one pinging
	shown                     []shownAt // the estimates shown since the visitor joined
	// tally is what the visitor's last request asked each shard of a
	// sharded room (Ours), reset by the run before each request.
	tally shardTally
}
