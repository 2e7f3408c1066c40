package edge

import (
	"github.com/edgequeue/waitingroom/accesslog"
	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// operator is the operator's view of the rooms, for the panel and the
// API: the store and the keys it needs, or the setup problem that keeps
// them away (a *SetupError the caller shows as the setup page).
func (s *Service) operator(settings Settings) (*control.Operator, *queue.KeySet, error) {
	keys, err := s.keys()
	if err != nil {
		return nil, nil, err
	}
	st, err := s.store(settings)
	if err != nil {
		return nil, nil, err
	}
	return &control.Operator{Rooms: settings.Rooms, Store: st, Now: s.Now, Logf: s.Logf, Logged: s.acted}, keys, nil
}

// acted logs an operator's action and drops the snapshots of its room,
// whose line it changed.
func (s *Service) acted(e store.AuditEntry) {
	s.logAction(e)
	s.changed(e.Room)
}

// ClientHash names the client of r in audit entries and log lines
// without keeping its address: an HMAC of the address under the service's
// signing key, so the same client has the same name across requests and
// nobody without the key can tell which address it was. 16 hex digits
// tell apart the operators and clients a log will ever hold.
func ClientHash(keys *queue.KeySet, r *fsthttp.Request) string {
	return accesslog.ClientHash(keys.Key(), clientAddr(clientIP(r)).String())
}
