// Package edge is the waiting room's HTTP surface: it turns a request into
// the facts a queue.Gate needs, and carries out the gate's decision by
// forwarding to the origin, serving a page, or answering JSON.
//
// Everything it reads from the platform comes through small interfaces
// (Config, Templates, Secrets, Origin, store.Transport), so main wires the
// Fastly SDK in and tests wire in real local services.
package edge

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/admin"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/templates"
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
}

// BusyRetry is how long the busy page asks a visitor to wait.
const BusyRetry = 5 * time.Second

// LeavePath is where pages send a departure beacon
// (navigator.sendBeacon("/_wr/leave")) to end the visitor's sessions at
// once, freeing their places for the next in line.
const LeavePath = "/_wr/leave"

// FailOpenHeader marks a request admitted only because the store could not
// be asked, in a room whose on_store_error is "open".
const FailOpenHeader = "Waiting-Room-Fail-Open"

// expired is a cookie that deletes the room's pass.
func expired(room *queue.Room) string {
	return room.CookieName + "=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax"
}

// obey carries out the origin's commands and returns the cookie to set in
// place of the one planned ("" to keep it).
func (s *Service) obey(ctx context.Context, gate *queue.Gate, room *queue.Room, session string, values []string) string {
	cmds, errs := queue.ParseCommands(values)
	for _, err := range errs {
		s.Logf("room %s: origin command ignored: %v", room.Name, err)
	}
	cookie := ""
	if cmds.Revoke && session != "" {
		if _, err := gate.Store.End(ctx, room.Name, room.Policy(), session, s.Now); err != nil {
			s.Logf("room %s: origin revoke of session %s failed: %v", room.Name, session, err)
		} else {
			s.Logf("room %s: origin revoked session %s", room.Name, session)
		}
		cookie = expired(room)
	}
	if cmds.Admit > 0 {
		line, err := gate.Store.Admit(ctx, room.Name, room.Policy(), cmds.Admit, s.Now)
		if err != nil {
			s.Logf("room %s: origin admit=%d failed: %v", room.Name, cmds.Admit, err)
		} else {
			s.Logf("room %s: origin admit=%d: now serving %d of %d", room.Name, cmds.Admit, line.Admitted, line.Issued)
		}
	}
	return cookie
}

// leave ends the visitor's sessions in every room on this host.
func (s *Service) leave(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request, settings Settings) {
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != fsthttp.MethodPost {
		w.Header().Set("Allow", "POST")
		w.WriteHeader(fsthttp.StatusMethodNotAllowed)
		return
	}
	gate, err := s.gate(settings)
	if err != nil {
		s.Logf("leave: cannot run the line: %s", describe(err))
		w.WriteHeader(fsthttp.StatusServiceUnavailable)
		return
	}
	for _, room := range settings.Rooms {
		if !room.Serves(r.Host) {
			continue
		}
		v := queue.Visitor{Passes: queue.CookieValues(r.Header.Values("Cookie"), room.CookieName), Now: s.Now}
		ended, err := gate.End(ctx, room, v)
		if err != nil {
			s.Logf("room %s: leave failed: %v", room.Name, err)
			continue
		}
		if ended {
			s.Logf("room %s: visitor left", room.Name)
			w.Header().Add("Set-Cookie", expired(room))
		}
	}
	w.WriteHeader(fsthttp.StatusNoContent)
}

// ServeHTTP answers one request.
func (s *Service) ServeHTTP(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
	settings := LoadSettings(s.Config)
	for _, p := range settings.Problems {
		s.Logf("config: %v", p)
	}
	if settings.Unlinked != nil {
		s.notSetUp(w, settings.Unlinked)
		return
	}
	path := r.URL.Path
	if path == settings.AdminPath || strings.HasPrefix(path, settings.AdminPath+"/") {
		s.admin(ctx, w, r, settings)
		return
	}
	if path == LeavePath {
		s.leave(ctx, w, r, settings)
		return
	}
	room := queue.Match(settings.Rooms, r.Host, path)
	if room == nil {
		if settings.RoomsBroken {
			s.problem(w, fsthttp.StatusServiceUnavailable, "Temporarily unavailable",
				"This site's waiting room is being set up. Please try again in a minute.")
			return
		}
		s.forward(ctx, w, r, "", nil)
		return
	}
	if room.Bypasses(path) {
		s.forward(ctx, w, r, "", nil)
		return
	}
	gate, err := s.gate(settings)
	if err != nil {
		var setup *SetupError
		if errors.As(err, &setup) {
			s.notSetUp(w, setup)
			return
		}
		s.Logf("room %s: cannot run the line: %v", room.Name, err)
		s.problem(w, fsthttp.StatusServiceUnavailable, "Temporarily unavailable",
			"This site's waiting room is not configured yet. Please try again in a minute.")
		return
	}
	d := gate.Decide(ctx, room, queue.Visitor{Passes: queue.CookieValues(r.Header.Values("Cookie"), room.CookieName), Now: s.Now})
	switch d.Action {
	case queue.Admit:
		switch {
		case d.FailOpen:
			s.Logf("room %s: admit (%s): %v", room.Name, d.Why, d.Err)
			if unresolvable(d.Err) {
				s.Logf("setup: %v", backendUnresolvable("upstash", upstashExample))
			}
			r.Header.Set(FailOpenHeader, "store-unavailable")
		case d.Why != "session":
			s.Logf("room %s: admit (%s)%s", room.Name, d.Why, refusal(d.Err))
		}
		s.forward(ctx, w, r, s.cookie(room, d), func(cmds []string) string {
			return s.obey(ctx, gate, room, d.Session, cmds)
		})
	case queue.Wait:
		s.Logf("room %s: wait (%s) ticket %d, now serving %d%s", room.Name, d.Why, d.Place.Ticket, d.Place.Admitted, refusal(d.Err))
		s.queuePage(w, r, room, d)
	case queue.Closed:
		w.Header().Set("Retry-After", "300")
		s.problem(w, fsthttp.StatusServiceUnavailable, "Closed for now",
			"This part of the site is closed at the moment. Please come back later.")
	default:
		s.Logf("room %s: busy (%s): %v", room.Name, d.Why, d.Err)
		if unresolvable(d.Err) {
			// Not an outage that retrying cures: the backend's address
			// is wrong, so say what to set rather than "busy".
			s.notSetUp(w, backendUnresolvable("upstash", upstashExample))
			return
		}
		s.busy(w, r, room)
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

// notSetUp refuses a request the waiting room cannot handle until its
// operator sets something: every visitor gets the same 503 page, naming the
// setting (never its value), and every request logs what to set and how.
func (s *Service) notSetUp(w fsthttp.ResponseWriter, e *SetupError) {
	s.Logf("setup: %v", e)
	w.Header().Set("Retry-After", "60")
	s.problem(w, fsthttp.StatusServiceUnavailable, "Not set up yet",
		"This site's waiting room is not configured yet, so nobody can be let in. Please try again later. "+
			"(For the site's operator: set "+e.Setting+"; the service's log says how.)")
}

func refusal(err error) string {
	if err == nil {
		return ""
	}
	return "; offered pass refused: " + err.Error()
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
	return &queue.Gate{Store: st, Keys: keys}, nil
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

func (s *Service) keys() (*queue.KeySet, error) {
	raw, err := s.secret(SecretSigningKeys)
	if err != nil {
		return nil, err
	}
	keys, err := queue.ParseKeySet(string(raw))
	if err != nil {
		return nil, secretProblem(SecretSigningKeys, "is not a key set ("+err.Error()+")")
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

func (s *Service) admin(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request, settings Settings) {
	p := &admin.Panel{Path: settings.AdminPath, Rooms: settings.Rooms, Now: s.Now, Logf: s.Logf}
	// Without a password the panel is disabled (it says so); any other
	// problem with it is the operator's to fix.
	pw, err := s.Secrets.Get(SecretAdminPassword)
	switch {
	case errors.Is(err, ErrStoreNotLinked):
		s.notSetUp(w, storeNotLinked(SecretStore, "fastly secret-store list"))
		return
	case err == nil && !s.Local && IsDevSecret(SecretAdminPassword, pw):
		s.notSetUp(w, secretProblem(SecretAdminPassword, "holds the public development value from fastly.toml's [local_server]"))
		return
	case err == nil:
		p.Password = []byte(strings.TrimSpace(string(pw)))
	case !errors.Is(err, ErrNotFound):
		s.Logf("admin: secret %s: %v", SecretAdminPassword, err)
	}
	if len(p.Password) > 0 {
		keys, err := s.keys()
		if err == nil {
			var st *store.Upstash
			if st, err = s.store(settings); err == nil {
				p.CSRFKey, p.Store = keys.Key(), st
			}
		}
		var setup *SetupError
		switch {
		case errors.As(err, &setup):
			s.notSetUp(w, setup)
			return
		case err != nil:
			s.Logf("admin: %v", err)
			s.problem(w, fsthttp.StatusServiceUnavailable, "Admin unavailable", "The panel cannot reach its secrets; see the log.")
			return
		}
	}
	p.ServeHTTP(ctx, w, r)
}

// cookie renders the decision's pass as a Set-Cookie value, or "".
func (s *Service) cookie(room *queue.Room, d queue.Decision) string {
	if d.Pass == "" {
		return ""
	}
	return fmt.Sprintf("%s=%s; Path=/; Max-Age=%d; HttpOnly; Secure; SameSite=Lax",
		room.CookieName, d.Pass, int(d.PassTTL/time.Second))
}

// forward streams the request to the origin and the answer back, adding
// setCookie (when not empty) beside the origin's own cookies. The origin's
// commands header never reaches the visitor; when obey is given, it carries
// the commands out and may replace the cookie.
func (s *Service) forward(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request, setCookie string, obey func([]string) string) {
	resp, err := s.Origin.Send(ctx, r)
	if err != nil {
		s.Logf("origin: %s %s: %v", r.Method, r.URL.Path, err)
		if errors.Is(err, ErrBackendUnresolvable) {
			s.notSetUp(w, backendUnresolvable("origin", originExample))
			return
		}
		s.problem(w, fsthttp.StatusBadGateway, "The site did not answer", "The site could not be reached. Please try again in a moment.")
		return
	}
	defer resp.Body.Close()
	cmds := resp.Header.Values(queue.CommandHeader)
	resp.Header.Del(queue.CommandHeader)
	if len(cmds) > 0 && obey != nil {
		if c := obey(cmds); c != "" {
			setCookie = c
		}
	}
	w.Header().Reset(resp.Header)
	if setCookie != "" {
		w.Header().Add("Set-Cookie", setCookie)
		// A response that admits someone must not be cached and replayed
		// to others along with its cookie.
		w.Header().Set("Cache-Control", "private, no-store")
	}
	w.WriteHeader(resp.StatusCode)
	if _, err := io.Copy(w, resp.Body); err != nil {
		s.Logf("origin: %s %s: streaming the answer: %v", r.Method, r.URL.Path, err)
	}
}

// placeJSON is the queue page's facts for clients that ask for JSON.
type placeJSON struct {
	Room                 string `json:"room"`
	Status               string `json:"status"`
	Ticket               int64  `json:"ticket"`
	Position             int64  `json:"position"`
	Ahead                int64  `json:"ahead"`
	NowServing           int64  `json:"now_serving"`
	Issued               int64  `json:"issued"`
	Paused               bool   `json:"paused"`
	EstimatedWaitSeconds *int64 `json:"estimated_wait_seconds"`
	RefreshSeconds       int    `json:"refresh_seconds"`
}

// busyJSON is the busy page for clients that ask for JSON.
type busyJSON struct {
	Room              string `json:"room"`
	Status            string `json:"status"`
	RetryAfterSeconds int    `json:"retry_after_seconds"`
}

func wantsJSON(r *fsthttp.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

func (s *Service) queuePage(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room, d queue.Decision) {
	pl := d.Place
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	refresh := strconv.Itoa(int(pl.PollEvery / time.Second))
	h.Set("Refresh", refresh)
	if c := s.cookie(room, d); c != "" {
		h.Add("Set-Cookie", c)
	}
	status := "The site is busy, so visitors are let in in the order they arrived."
	if pl.Paused {
		status = "Entry is paused for the moment; your place is kept."
	}
	if wantsJSON(r) {
		doc := placeJSON{Room: room.Name, Status: "waiting", Ticket: pl.Ticket, Position: pl.Ahead + 1, Ahead: pl.Ahead,
			NowServing: pl.Admitted, Issued: pl.Issued, Paused: pl.Paused, RefreshSeconds: int(pl.PollEvery / time.Second)}
		if pl.WaitKnown {
			secs := int64(pl.Wait / time.Second)
			doc.EstimatedWaitSeconds = &secs
		}
		s.json(w, room.QueueStatusCode, doc)
		return
	}
	s.page(w, room.QueueStatusCode, room.Template, templates.Queue, map[string]string{
		"room": room.Name, "ticket": strconv.FormatInt(pl.Ticket, 10),
		"position": strconv.FormatInt(pl.Ahead+1, 10), "ahead": strconv.FormatInt(pl.Ahead, 10),
		"now_serving": strconv.FormatInt(pl.Admitted, 10), "issued": strconv.FormatInt(pl.Issued, 10),
		"wait": describeWait(pl), "refresh_seconds": refresh, "status": status,
	})
}

// describeWait says the estimate in words a visitor reads at a glance.
func describeWait(p queue.Place) string {
	switch {
	case !p.WaitKnown && p.Paused:
		return "unknown while entry is paused"
	case !p.WaitKnown:
		return "not known yet: nobody has been let in during the last few minutes"
	case p.Wait < time.Minute:
		return "less than a minute"
	case p.Wait < 2*time.Minute:
		return "about 1 minute"
	case p.Wait < 2*time.Hour:
		return fmt.Sprintf("about %d minutes", int((p.Wait+30*time.Second)/time.Minute))
	}
	return fmt.Sprintf("about %d hours", int((p.Wait+30*time.Minute)/time.Hour))
}

func (s *Service) busy(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room) {
	secs := strconv.Itoa(int(BusyRetry / time.Second))
	w.Header().Set("Retry-After", secs)
	w.Header().Set("Cache-Control", "no-store")
	if wantsJSON(r) {
		s.json(w, fsthttp.StatusServiceUnavailable, busyJSON{room.Name, "busy", int(BusyRetry / time.Second)})
		return
	}
	s.page(w, fsthttp.StatusServiceUnavailable, templates.Busy.Name, templates.Busy, map[string]string{"room": room.Name, "retry_seconds": secs})
}

func (s *Service) problem(w fsthttp.ResponseWriter, code int, title, message string) {
	w.Header().Set("Cache-Control", "no-store")
	s.page(w, code, templates.Problem.Name, templates.Problem, map[string]string{"title": title, "message": message})
}

// page renders a page from the operator's template called name in the KV
// store, or from the embedded default when there is none or it is broken.
func (s *Service) page(w fsthttp.ResponseWriter, code int, name string, kind templates.Page, values map[string]string) {
	t := s.template(name, kind)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	if t == nil {
		io.WriteString(w, "The waiting room cannot show this page; see the log.\n")
		return
	}
	io.WriteString(w, t.Render(values))
}

func (s *Service) template(name string, kind templates.Page) *templates.Template {
	src, err := s.Templates.Get(name)
	switch {
	case err == nil:
		t, perr := kind.Parse(src)
		if perr == nil {
			return t
		}
		s.Logf("template %s from the KV store: %v; serving the default", name, perr)
	case errors.Is(err, ErrNotFound):
		if name != kind.Name {
			s.Logf("template %s: not in the KV store; serving the default %s", name, kind.Name)
		}
	default:
		s.Logf("template %s: %v; serving the default", name, err)
	}
	t, err := kind.Default()
	if err != nil {
		s.Logf("%v", err)
		return nil
	}
	return t
}

func (s *Service) json(w fsthttp.ResponseWriter, code int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		s.Logf("json: %v", err)
		code, body = fsthttp.StatusInternalServerError, []byte(`{"status":"error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(body, '\n'))
}
