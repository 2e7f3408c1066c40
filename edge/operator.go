package edge

import (
	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
)

// operator is the operator's view of the rooms, for the panel and the
// API: the store and the keys it needs, or the setup problem that keeps
// them away (a *SetupError the caller shows as the setup page).
func (q *request) operator() (*control.Operator, *queue.KeySet, error) {
	keys, err := q.keys()
	if err != nil {
		return nil, nil, err
	}
	st, err := q.store()
	if err != nil {
		return nil, nil, err
	}
	o := &control.Operator{Rooms: q.settings.Rooms, Store: st, Now: q.now, Logf: q.Logf, Logged: q.acted}
	if q.Limits != nil {
		o.Decoys = func(room string) (int, error) { return q.Limits.Counted(DecoyCounter, room) }
	}
	return o, keys, nil
}

// acted logs an operator's action and drops the snapshots of its room,
// whose line it changed.
func (q *request) acted(e store.AuditEntry) {
	q.logAction(e)
	q.changed(e.Room, q.shardsOf(e.Room))
}
