// Package edge is the waiting room's HTTP surface: it turns a request into
// the facts a queue.Gate needs, and carries out the gate's decision by
// forwarding to the origin, serving a page, or answering JSON.
//
// Two things serve a request, and they live for different times:
//
//   - a Handler holds the platform's ports (Config, Templates, Secrets,
//     Origin, store.Transport, Limits, Geo, ACLs, Bots, log endpoints, the
//     POP's Cache) and what the sandbox keeps between requests (Kept). It
//     is built once per sandbox, knows nothing of any one request, and
//     serves them one at a time through ServeHTTP.
//   - a request is one request's state while the Handler serves it: its
//     time, the settings read for it, what it asked in the reserved
//     headers, and its structured log line. ServeHTTP makes one per
//     request; the surfaces that answer it (the line, pages, the panel,
//     the API, invites, the heartbeat) are its methods.
//
// Everything the edge reads from the platform comes through the ports'
// small interfaces, so package platform wires the Fastly SDK in and tests
// wire in real local services.
//
// # Reading order
//
// A visitor's request meets one file per stage, in this order:
// handler.go (ServeHTTP), facts.go (the request's facts), route.go (the
// room), line.go (the gate's decision), gate.go (the store call, or what
// the POP keeps instead), then forward.go (the origin's answer, for one
// admitted) or pages.go (the answer to a visitor who waits). Beside the path,
// and never a stop on it: settings.go (what a sandbox reads and keeps),
// setup.go (the "Not set up yet" checks), accesslog.go (the structured
// log, which wraps the response), client.go (the names a client goes
// by), nocookies.go (a client that keeps no cookie), session.go (the
// heartbeat and the leave link), invite.go and operator.go (the admin
// panel and API). A stage calls the stages after it and the files beside
// the path, never one before it; every stage reads the request's state
// and the platform's ports, which this file declares. A test holds this
// (tools/suites/layout).
package edge

import (
	"context"
	"net/netip"
	"time"

	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// Handler serves the waiting room over the platform's ports. Build one
// per sandbox and let it serve the sandbox's requests, one at a time.
// Serving a request changes none of its fields; only Kept learns.
type Handler struct {
	Config    Config
	Templates Templates
	Secrets   Secrets
	Origin    Origin
	// Upstash carries store requests to the Upstash backend.
	Upstash store.Transport
	// UpstashDatabase carries store requests to the Upstash database j
	// (1 and up, the backend upstash_<j>) of a config that spreads the
	// rooms' shards over several (upstash_databases); nil has none but
	// the one.
	UpstashDatabase func(j int) store.Transport
	// Limits counts joins and failed logins per client; nil limits nothing.
	Limits Limits
	// Geo, ACLs and Bots answer the rules that need the platform
	// (countries, bypass_acl, bypass_verified_bots); nil means unknown.
	Geo  Geo
	ACLs ACLs
	Bots Bots
	// UpstashViaBackend is true when Upstash is a Fastly backend, which
	// knows the database's host: then upstash_url may be left out.
	UpstashViaBackend bool
	// Local is true in a local host (Viceroy or the project's), where
	// fastly.toml's public development secrets are expected; a deployed
	// service refuses them.
	Local bool
	// Now tells the time each request is served at; nil is time.Now.
	Now func() time.Time
	// Logf writes a log line.
	Logf func(format string, args ...any)
	// LogEndpoints opens the Fastly log endpoint the config names
	// (log_endpoint) for a request's structured line; nil writes none.
	LogEndpoints func(name string) LogEndpoint
	// POP is the Fastly POP serving the requests, or "".
	POP string
	// Cache is the POP's cache, where waiting visitors far from the front
	// are answered from (queue.Snapshot); nil asks the store every poll.
	Cache Cache
	// Kept is what the sandbox keeps between the requests it serves; nil
	// reads and parses everything afresh.
	Kept *Kept
}

// ServeHTTP answers one request.
func (h *Handler) ServeHTTP(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
	secure(w.Header(), pagePolicy)
	q := h.newRequest(r)
	stripReserved(r.Header)
	if q.asked.refused != "" {
		q.Logf("%s ignored: %s", PassHeader, q.asked.refused)
	}
	for _, p := range q.settings.Problems {
		q.Logf("config: %v", p)
	}
	if q.settings.Unlinked != nil {
		q.notSetUp(w, q.settings.Unlinked)
		return
	}
	w = q.startLog(w, r)
	defer q.finishLog(r)
	t, ok := q.normalize(w, r)
	if !ok {
		return
	}
	q.mark, q.marked = TakeArrivalMark(r.URL)
	dest, j, err := q.settings.Route(q.rulesRequest(r, t))
	if err != nil {
		q.Logf("rules: %v", err)
	}
	q.log.routed(dest, j)
	if q.preflight(w, r, dest, j.Room) {
		return
	}
	switch dest {
	case ToAdmin:
		q.admin(ctx, w, r)
	case ToAPI:
		q.adminAPI(ctx, w, r)
	case ToLeave:
		q.leave(ctx, w, r)
	case ToInvite:
		q.invite(ctx, w, r, t)
	case ToHeartbeat:
		q.heartbeatPing(ctx, w, r)
	case ToHeartbeatScript:
		q.heartbeatScript(w, r)
	case ToUnavailable:
		q.problem(w, fsthttp.StatusServiceUnavailable, "Temporarily unavailable",
			"This site's waiting room is being set up. Please try again in a minute.")
	case ToBypass:
		r.Header.Set(BypassHeader, j.Bypass)
		q.forward(ctx, w, r, "", nil)
	case ToLine:
		if q.guard(w, r, t) {
			q.enter(ctx, w, r, j.Room)
		}
	default:
		q.forward(ctx, w, r, "", nil)
	}
}

// now is the time of a request the handler begins to serve.
func (h *Handler) now() time.Time {
	if h.Now == nil {
		return time.Now()
	}
	return h.Now()
}

// request is one request while a Handler serves it: the Handler's ports,
// and what is this request's alone. The answers to it are its methods.
type request struct {
	*Handler

	// now is the time of the request.
	now time.Time
	// settings are the config store's, as read for this request.
	settings Settings
	// secrets and templates are the Handler's stores as this request
	// reads them: through Kept, when the Handler keeps one. Read these,
	// not the Handler's Secrets and Templates.
	secrets   Secrets
	templates Templates
	// sent is the request as the platform handed it over, for the
	// platform's verdicts on it (Bots).
	sent *fsthttp.Request
	// log gathers the request's structured line, when one is written.
	log *requestLog
	// asked is what the request asked in the reserved headers, read
	// before they are stripped.
	asked asked
	// mark is the request's arrival mark (ArrivalMark), taken off its
	// URL as it arrived; marked is true when it carried one at all.
	mark   string
	marked bool
}

// newRequest begins serving r: its time, what it asks in the reserved
// headers (before they are stripped), and the settings.
func (h *Handler) newRequest(r *fsthttp.Request) *request {
	q := &request{Handler: h, now: h.now(), sent: r, asked: readAsked(r)}
	q.keep()
	q.settings = q.loadSettings()
	return q
}

// Geo tells where a client address is: Fastly's geolocation at the edge.
type Geo interface {
	// Country is the ISO 3166-1 alpha-2 code of ip's country as the
	// platform reports it, or "" when it has no record of ip.
	Country(ip netip.Addr) (string, error)
	// AS is the number of the autonomous system ip belongs to, or 0 when
	// the platform has no record of ip.
	AS(ip netip.Addr) (int, error)
}

// ACLs looks client addresses up in the service's Fastly ACLs.
type ACLs interface {
	// Lookup returns the action ("ALLOW", "BLOCK", ...) of the entry of
	// the ACL called name that matches ip, or "" when no entry does. It
	// returns an error wrapping ErrNotFound when the service has no ACL
	// of that name.
	Lookup(name string, ip netip.Addr) (string, error)
}

// Bots is what Fastly's bot detection made of the request.
type Bots interface {
	// Verified reports whether bot detection analysed r, detected a bot,
	// and verified it is the bot it claims to be.
	Verified(r *fsthttp.Request) (bool, error)
	// Bad reports whether bot detection analysed r and detected a bot it
	// did not verify, other than an accessibility tool (a screen reader
	// is a person's).
	Bad(r *fsthttp.Request) (bool, error)
}
