// The operator's surfaces, beside the visitor's path: the admin panel and
// the admin API, each opened by its secret with wrong guesses limited per
// client, both acting through one control.Operator.

package edge

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/admin"
	"github.com/edgequeue/waitingroom/api"
	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// adminPolicy is the admin panel's Content-Security-Policy: its pages have
// inline style and forms that post to the panel, and nothing else.
const adminPolicy = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Wrong admin passwords: more than maxWrongPasswords in a minute from one
// client (ClientKey) put it in the penalty box for wrongPasswordPenalty.
// Ten a minute is plenty for an operator's typos; against a 16-character
// password it is no rate at all.
const (
	maxWrongPasswords    = 10
	wrongPasswordPenalty = 5 * time.Minute
	// wrongPasswords names the counter and the penalty box in Limits.
	wrongPasswords = "admin_wrong_password"
)

func (q *request) admin(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
	secure(w.Header(), adminPolicy)
	p := &admin.Panel{Path: q.settings.AdminPath, Rooms: q.settings.Rooms, Now: q.now, Logf: q.Logf}
	if client := clientKey(r); q.Limits != nil && client != "" {
		p.Guesses = guesses{q.Handler, client}
	}
	// Without a usable password the panel is disabled (it says so); any
	// other problem with it is the operator's to fix.
	pw, err := q.secrets.Get(SecretAdminPassword)
	switch {
	case errors.Is(err, ErrStoreNotLinked):
		q.notSetUp(w, storeNotLinked(SecretStore, "fastly secret-store list"))
		return
	case err == nil && !q.Local && IsDevSecret(SecretAdminPassword, pw):
		q.notSetUp(w, secretProblem(SecretAdminPassword, "holds the public development value from fastly.toml's [local_server]"))
		return
	case err == nil:
		p.Password = []byte(strings.TrimSpace(string(pw)))
	case !errors.Is(err, ErrNotFound):
		q.Logf("admin: secret %s: %v", SecretAdminPassword, err)
	}
	if admin.Password().Problem(p.Password) == "" {
		op, keys, err := q.operator()
		if err == nil {
			p.Op, p.CSRFKey = op, keys.Key()
			p.SetActionID = func(id string) { op.ActionID = id }
			p.Actor = store.Actor{Via: "panel", Client: ClientHash(keys, r)}
		}
		var setup *SetupError
		switch {
		case errors.As(err, &setup):
			q.notSetUp(w, setup)
			return
		case err != nil:
			q.Logf("admin: %v", err)
			q.problem(w, fsthttp.StatusServiceUnavailable, "Admin unavailable", "The panel cannot reach its secrets; see the log.")
			return
		}
	}
	p.ServeHTTP(ctx, w, r)
}

// guesses is control.Guesses over Limits for one client. A Limits that fails
// limits nothing (and says so in the log): an operator must not be locked
// out of the panel by the platform's counters.
type guesses struct {
	h      *Handler
	client string
}

func (g guesses) Refused() (time.Duration, bool) {
	in, err := g.h.Limits.Penalized(wrongPasswords, g.client)
	if err != nil {
		g.h.Logf("admin: %v; wrong passwords not limited", err)
		return 0, false
	}
	return wrongPasswordPenalty, in
}

func (g guesses) Wrong() {
	n, err := g.h.Limits.Count(wrongPasswords, g.client)
	if err != nil {
		g.h.Logf("admin: %v; wrong passwords not limited", err)
		return
	}
	if n <= maxWrongPasswords {
		return
	}
	if err := g.h.Limits.Penalize(wrongPasswords, g.client, wrongPasswordPenalty); err != nil {
		g.h.Logf("admin: %v; wrong passwords not limited", err)
		return
	}
	g.h.Logf("admin: %d wrong passwords in a minute from %s: refused for %v", n, g.client, wrongPasswordPenalty)
}

// apiPolicy is the admin API's Content-Security-Policy: its answers are
// data, never a page to render.
const apiPolicy = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"

func (q *request) adminAPI(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
	secure(w.Header(), apiPolicy)
	h := &api.Handler{Path: q.settings.APIPath, Logf: q.Logf}
	if client := clientKey(r); q.Limits != nil && client != "" {
		// One budget of wrong guesses per client for the panel's
		// password and the API's token alike.
		h.Guesses = guesses{q.Handler, client}
	}
	token, err := q.secrets.Get(SecretAPIToken)
	switch {
	case errors.Is(err, ErrStoreNotLinked):
		h.Disabled = storeNotLinked(SecretStore, "fastly secret-store list").Error()
	case err == nil && !q.Local && IsDevSecret(SecretAPIToken, token):
		h.Disabled = secretProblem(SecretAPIToken, "holds the public development value from fastly.toml's [local_server]").Error()
	case err == nil:
		h.Token = []byte(strings.TrimSpace(string(token)))
	case !errors.Is(err, ErrNotFound):
		q.Logf("api: secret %s: %v", SecretAPIToken, err)
		h.Disabled = "secret " + SecretAPIToken + " cannot be read; see the log"
	}
	if h.Disabled == "" && api.Token().Problem(h.Token) == "" {
		if op, keys, err := q.operator(); err == nil {
			h.Operator, h.Client = op, ClientHash(keys, r)
		} else {
			q.Logf("api: %v", err)
			h.Unavailable = describe(err)
		}
	}
	h.ServeHTTP(ctx, w, r)
}

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
