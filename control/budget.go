package control

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
)

// MaxStoreCalls is the most store calls one operator request (a page or
// form of the panel, a call to the API) makes, whatever the number of
// rooms, their shards or the audit entries. A call on a room of K shards
// is K calls, one to each shard (package store/shard); the audit log is
// read from shard 0 alone, one call however many rooms.
//
// Fastly Compute allows a client request 32 backend requests. A store call
// is one, except a call of the line's script (Stats, Operate), which is
// two when the database has lost the script (EVALSHA, then EVAL). EVAL
// caches the script again, so that happens at most once per database in a
// request, and a request reaches at most 8 databases (shard i of a room is
// on database i mod n, and a room has at most 8 shards): 18 calls are at
// most 18 + 8 = 26 backend requests. Even were every script call to need
// its EVAL, each request of the panel and the API stays within 32: a page
// spends half its rooms' calls on history (9 × 2 + 9 = 27 at most), and
// the largest action, live values on a room of 8 shards, reads its line
// and acts: 16 script calls, 32 requests.
//
// 18 is what the largest page needs: the panel's page of one room of 8
// shards reads its line and its history (2 × 8 = 16) and the audit log
// with the 2 it keeps. Pages are cut by what their rooms cost (Page): the
// panel shows up to three rooms at a time, the API lists up to four
// (RoomsPerPage), fewer when their shards would spend more, and the merged
// audit log reads what the budget allows and gives a cursor for the rest.
// Every Operator counts its calls and refuses the one past the budget
// (ErrBudget), so a page that would exceed it fails where it is tested
// instead of on Fastly.
const MaxStoreCalls = 18

// StatsCalls is what Stats and Overview cost per shard of the room: the
// line, and its history.
const StatsCalls = 2

// RoomsPerPage is the most rooms' Stats one page of the API reads: four,
// so that the pages of rooms of one shard each stay the pages clients
// know; a page of sharded rooms holds fewer (Page).
const RoomsPerPage = 4

// Shards is how many shards room r runs as, at least one: what a store
// call on it costs.
func Shards(r *queue.Room) int { return max(r.Shards, 1) }

// StatsCost is what Stats and Overview of room r cost.
func StatsCost(r *queue.Room) int { return StatsCalls * Shards(r) }

// Page is where a page of rooms that starts at rooms[from] ends (the index
// after its last room): at most most rooms, as many as fit in calls at
// StatsCost each, and never none, so that every room has a page; one room
// of 8 shards costs 16, which the pages of the panel and the API give.
func Page(rooms []*queue.Room, from, most, calls int) int {
	to, cost := from, 0
	for to < len(rooms) && to-from < most {
		c := StatsCost(rooms[to])
		if to > from && cost+c > calls {
			break
		}
		cost += c
		to++
	}
	return to
}

// ErrBudget: the request has made MaxStoreCalls store calls and may make
// no more. A page that meets it asks too much of one request: a bug.
var ErrBudget = errors.New("the request has made all the store calls one request may make")

// budget is the Store an Operator calls through: it counts the calls, K
// for a call on a room of K shards, and refuses, with a log line, any that
// would pass MaxStoreCalls.
type budget struct {
	store Store
	used  int
	logf  func(format string, args ...any)
	// shards is how many shards a room runs as, for History, whose call
	// carries no Policy.
	shards func(room string) int
}

// store is the Operator's store, behind the request's budget. An Operator
// serves one request, so the budget is the request's.
func (o *Operator) store() *budget {
	if o.calls == nil {
		o.calls = &budget{store: o.Store, logf: o.logf, shards: o.shardsOf}
	}
	return o.calls
}

// shardsOf is how many shards the configured room runs as (1 if none is
// configured by that name: the store reads it as one).
func (o *Operator) shardsOf(room string) int {
	if r, err := o.Room(room); err == nil {
		return Shards(r)
	}
	return 1
}

// left is how many store calls the request may still make.
func (b *budget) left() int { return MaxStoreCalls - b.used }

// spend counts calls store calls, for what, or refuses them all.
func (b *budget) spend(what string, calls int) error {
	if b.used+calls > MaxStoreCalls {
		b.logf("control: refused %d store calls for %s: the request has made %d of its %d (control.MaxStoreCalls)", calls, what, b.used, MaxStoreCalls)
		return fmt.Errorf("%w (%d): %s would be %d more, after %d", ErrBudget, MaxStoreCalls, what, calls, b.used)
	}
	b.used += calls
	return nil
}

func (b *budget) Stats(ctx context.Context, room string, p store.Policy, now time.Time) (store.Line, error) {
	if err := b.spend("the line of room "+room, max(p.Shards, 1)); err != nil {
		return store.Line{}, err
	}
	return b.store.Stats(ctx, room, p, now)
}

func (b *budget) Operate(ctx context.Context, room string, p store.Policy, a store.Action, now time.Time) (store.Line, error) {
	if err := b.spend(a.Op+" in room "+room, max(p.Shards, 1)); err != nil {
		return store.Line{}, err
	}
	return b.store.Operate(ctx, room, p, a, now)
}

func (b *budget) History(ctx context.Context, room string, from, to time.Time) ([]store.Minute, error) {
	if err := b.spend("the history of room "+room, b.shards(room)); err != nil {
		return nil, err
	}
	return b.store.History(ctx, room, from, to)
}

// Audit costs one call: every room's log is read from its shard 0.
func (b *budget) Audit(ctx context.Context, reads []store.AuditRead) ([][]store.AuditEntry, error) {
	if err := b.spend(fmt.Sprintf("the audit logs of %d rooms", len(reads)), 1); err != nil {
		return nil, err
	}
	return b.store.Audit(ctx, reads)
}
