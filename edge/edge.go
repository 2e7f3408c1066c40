// Package edge is the waiting room's HTTP surface: it turns a request into
// the facts a queue.Gate needs, and carries out the gate's decision by
// forwarding to the origin, serving a page, or answering JSON.
//
// Everything it reads from the platform comes through small interfaces
// (Config, Templates, Secrets, Origin, store.Transport, Geo, ACLs, Bots),
// so main wires the Fastly SDK in and tests wire in real local services.
package edge

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// Origin forwards an admitted request to the protected site.
type Origin interface {
	Send(ctx context.Context, r *fsthttp.Request) (*fsthttp.Response, error)
}

// Service is one request's view of the waiting room and the platform.
type Service struct {
	Config    Config
	Templates Templates
	Secrets   Secrets
	Origin    Origin
	// Upstash carries store requests to the Upstash backend.
	Upstash store.Transport
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
	// Now is the time of the request.
	Now time.Time
	// Logf writes a log line.
	Logf func(format string, args ...any)
	// LogEndpoints opens the Fastly log endpoint the config names
	// (log_endpoint) for the request's structured line; nil writes none.
	LogEndpoints func(name string) LogEndpoint
	// POP is the Fastly POP serving the request, or "".
	POP string
	// Cache is the POP's cache, where waiting visitors far from the front
	// are answered from (queue.Snapshot); nil asks the store every poll.
	Cache Cache
	// Kept is what the sandbox keeps between the requests it serves; nil
	// reads and parses everything afresh.
	Kept *Kept

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

// ServeHTTP answers one request.
func (s *Service) ServeHTTP(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
	secure(w.Header(), pagePolicy)
	s.asked = readAsked(r)
	stripReserved(r.Header)
	if s.asked.refused != "" {
		s.Logf("%s ignored: %s", PassHeader, s.asked.refused)
	}
	s.keep()
	settings := s.loadSettings()
	for _, p := range settings.Problems {
		s.Logf("config: %v", p)
	}
	if settings.Unlinked != nil {
		s.notSetUp(w, settings.Unlinked)
		return
	}
	s, w = s.startLog(settings, w, r)
	defer s.finishLog(r)
	t, ok := s.normalize(w, r)
	if !ok {
		return
	}
	s.mark, s.marked = TakeArrivalMark(r.URL)
	dest, j, err := settings.Route(s.rulesRequest(r, t))
	if err != nil {
		s.Logf("rules: %v", err)
	}
	s.log.routed(dest, j)
	if s.preflight(w, r, dest, j.Room) {
		return
	}
	switch dest {
	case ToAdmin:
		s.admin(ctx, w, r, settings)
	case ToAPI:
		s.adminAPI(ctx, w, r, settings)
	case ToLeave:
		s.leave(ctx, w, r, settings)
	case ToInvite:
		s.invite(ctx, w, r, t, settings)
	case ToHeartbeat:
		s.heartbeatPing(ctx, w, r, settings)
	case ToHeartbeatScript:
		s.heartbeatScript(w, r)
	case ToUnavailable:
		s.problem(w, fsthttp.StatusServiceUnavailable, "Temporarily unavailable",
			"This site's waiting room is being set up. Please try again in a minute.")
	case ToBypass:
		r.Header.Set(BypassHeader, j.Bypass)
		s.forward(ctx, w, r, "", nil)
	case ToLine:
		if s.guard(w, r, t, settings) {
			s.enter(ctx, w, r, settings, j.Room)
		}
	default:
		s.forward(ctx, w, r, "", nil)
	}
}

// The examples the backend fixes show in place of the real host name.
const (
	originExample  = "<your site's host name>"
	upstashExample = "<your database>.upstash.io"
)

// unresolvable reports whether a store error came from a DNS failure of the
// upstash backend.
func unresolvable(err error) bool { return errors.Is(err, ErrBackendUnresolvable) }

// describe says what a setup error asks for, or passes another error on.
func describe(err error) string {
	var setup *SetupError
	if errors.As(err, &setup) {
		return "setup: " + setup.Error()
	}
	return err.Error()
}

// gate builds the line's machinery from the secrets and settings.
func (s *Service) gate(settings Settings) (*queue.Gate, error) {
	keys, err := s.keys()
	if err != nil {
		return nil, err
	}
	st, err := s.store(settings)
	if err != nil {
		return nil, err
	}
	g := &queue.Gate{Store: st, Keys: keys, Logf: s.Logf}
	if s.Cache != nil {
		g.Snapshots = snapshots{s.Cache, time.Now}
	}
	if s.Limits != nil {
		g.Joins = joinCounter{s.Limits}
	}
	return g, nil
}

// lineGate is gate for a request the line must answer: what the operator
// has to set gets the setup page, any other failure a 503 page logged
// under who; ok is false when it has answered.
func (s *Service) lineGate(w fsthttp.ResponseWriter, settings Settings, who string) (gate *queue.Gate, ok bool) {
	gate, err := s.gate(settings)
	if err == nil {
		return gate, true
	}
	var setup *SetupError
	if errors.As(err, &setup) {
		s.notSetUp(w, setup)
		return nil, false
	}
	s.Logf("%s: cannot run the line: %v", who, err)
	s.problem(w, fsthttp.StatusServiceUnavailable, "Temporarily unavailable",
		"This site's waiting room is not configured yet. Please try again in a minute.")
	return nil, false
}

// secret reads a secret the line cannot run without. What the operator has
// to fix comes back as a *SetupError; a failure to read, as a plain error.
func (s *Service) secret(name string) ([]byte, error) {
	v, err := s.Secrets.Get(name)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, secretProblem(name, "is missing")
	case errors.Is(err, ErrStoreNotLinked):
		return nil, storeNotLinked(SecretStore, "fastly secret-store list")
	case err != nil:
		return nil, fmt.Errorf("secret %s: %w", name, err)
	case len(bytes.TrimSpace(v)) == 0:
		return nil, secretProblem(name, "is blank")
	case !s.Local && IsDevSecret(name, v):
		return nil, secretProblem(name, "holds the public development value from fastly.toml's [local_server]")
	}
	return v, nil
}

// keys reads and parses the signing keys. A request whose line is logged
// keeps them in its log, so the line's client hash does not read and
// parse them a second time.
func (s *Service) keys() (*queue.KeySet, error) {
	if s.log != nil && s.log.keys != nil {
		return s.log.keys, nil
	}
	raw, err := s.secret(SecretSigningKeys)
	if err != nil {
		return nil, err
	}
	keys, err := s.parseKeys(string(raw))
	if err != nil {
		return nil, secretProblem(SecretSigningKeys, "is not a key set ("+err.Error()+")")
	}
	if s.log != nil {
		s.log.keys = keys
	}
	return keys, nil
}

func (s *Service) store(settings Settings) (*store.Upstash, error) {
	url := settings.UpstashURL
	switch {
	case settings.UpstashUnset != nil:
		return nil, settings.UpstashUnset
	case url == "" && s.UpstashViaBackend:
		url = UpstashBackendURL
	case url == "":
		// Without a Fastly backend, nothing else says where the database is.
		return nil, upstashURLProblem("is missing")
	}
	token, err := s.secret(SecretUpstashToken)
	if err != nil {
		return nil, err
	}
	return &store.Upstash{URL: url, Token: strings.TrimSpace(string(token)),
		Transport: s.Upstash, Timeout: settings.StoreTimeout, RandomKey: randomKey(token)}, nil
}

// randomKey seeds a new line's random calling order with a value visitors
// cannot know, derived from the store token.
func randomKey(token []byte) string {
	m := hmac.New(sha256.New, token)
	m.Write([]byte("waiting-room random order"))
	return hex.EncodeToString(m.Sum(nil))
}
