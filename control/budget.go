package control

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/edgequeue/waitingroom/store"
)

// MaxStoreCalls is the most store calls one operator request (a page or
// form of the panel, a call to the API) makes, whatever the number of
// rooms or audit entries. Fastly Compute allows a client request 32
// backend requests; a store call is one, or two when the database has
// lost the line's script and it is sent again (EVALSHA, then EVAL), so 8
// calls stay within 16. Every page is cut to fit: the panel shows three
// rooms at a time (two calls each) and the audit log with what is left,
// the API lists four rooms a page (RoomsPerPage), and the merged audit
// log reads what the budget allows and gives a cursor for the rest. Every
// Operator counts its calls and refuses the one past the budget
// (ErrBudget), so a page that would exceed it fails where it is tested
// instead of on Fastly.
const MaxStoreCalls = 8

// StatsCalls is what Stats and Overview cost: the line, and its history.
const StatsCalls = 2

// RoomsPerPage is how many rooms' Stats one request reads.
const RoomsPerPage = MaxStoreCalls / StatsCalls

// ErrBudget: the request has made MaxStoreCalls store calls and may make
// no more. A page that meets it asks too much of one request: a bug.
var ErrBudget = errors.New("the request has made all the store calls one request may make")

// budget is the Store an Operator calls through: it counts the calls and
// refuses, with a log line, any past MaxStoreCalls.
type budget struct {
	store Store
	used  int
	logf  func(format string, args ...any)
}

// store is the Operator's store, behind the request's budget. An Operator
// serves one request, so the budget is the request's.
func (o *Operator) store() *budget {
	if o.calls == nil {
		o.calls = &budget{store: o.Store, logf: o.logf}
	}
	return o.calls
}

// left is how many store calls the request may still make.
func (b *budget) left() int { return MaxStoreCalls - b.used }

// spend counts one call, for what, or refuses it.
func (b *budget) spend(what string) error {
	if b.used >= MaxStoreCalls {
		b.logf("control: refused a store call for %s: the request has made its %d (control.MaxStoreCalls)", what, MaxStoreCalls)
		return fmt.Errorf("%w (%d): %s would be one more", ErrBudget, MaxStoreCalls, what)
	}
	b.used++
	return nil
}

func (b *budget) Stats(ctx context.Context, room string, p store.Policy, now time.Time) (store.Line, error) {
	if err := b.spend("the line of room " + room); err != nil {
		return store.Line{}, err
	}
	return b.store.Stats(ctx, room, p, now)
}

func (b *budget) Operate(ctx context.Context, room string, p store.Policy, a store.Action, now time.Time) (store.Line, error) {
	if err := b.spend(a.Op + " in room " + room); err != nil {
		return store.Line{}, err
	}
	return b.store.Operate(ctx, room, p, a, now)
}

func (b *budget) History(ctx context.Context, room string, from, to time.Time) ([]store.Minute, error) {
	if err := b.spend("the history of room " + room); err != nil {
		return nil, err
	}
	return b.store.History(ctx, room, from, to)
}

func (b *budget) Audit(ctx context.Context, reads []store.AuditRead) ([][]store.AuditEntry, error) {
	if err := b.spend(fmt.Sprintf("the audit logs of %d rooms", len(reads))); err != nil {
		return nil, err
	}
	return b.store.Audit(ctx, reads)
}
