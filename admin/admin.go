// Package admin is the operator's panel: an HTML page per service that
// shows each room's line (its numbers now, and charts of the last hour and
// day), its configured and live limits, and the audit log of operator
// actions, and lets an operator steer each room during an event: admit
// visitors at once, pause, queue everyone, resume, set live limits and
// mode, clear them, or reset the line.
//
// The panel sits behind HTTP basic auth with the password from the secret
// store, compared in constant time; with no password configured it is
// disabled, never open. Its forms carry a CSRF token, an HMAC of the hour
// under the service's signing key, because a browser sends basic-auth
// credentials along with a form another site posts. It needs no script:
// the charts are inline SVG drawn at the edge, and the page refreshes
// itself with a meta refresh the operator can turn off.
package admin

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/control"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// Panel serves the admin pages under Path.
type Panel struct {
	// Path is where the panel lives, e.g. /_wr/admin.
	Path  string
	Rooms []*queue.Room
	// Op reads the rooms and carries out the operator's actions.
	Op Operator
	// SetActionID, when set, names the action a form posts by the form's
	// id field (control.Operator.ActionID).
	SetActionID func(id string)
	// Actor is who the panel acts as in the audit log: "panel" and the
	// requesting client's keyed hash.
	Actor store.Actor
	// Password is the admin password; one that Password().Problem refuses
	// (an empty one included) disables the panel.
	Password []byte
	// Guesses limits wrong passwords from the requesting client; nil
	// limits nothing.
	Guesses control.Guesses
	// CSRFKey signs the forms' CSRF tokens.
	CSRFKey []byte
	Now     time.Time
	// Logf records what operators did and what failed.
	Logf func(format string, args ...any)
}

// Operator is what the panel reads and does: [control.Operator], which
// the admin API shares, so both check the same inputs the same way.
type Operator interface {
	Overview(ctx context.Context, room string, span time.Duration) (control.Stats, []control.Point, error)
	Audit(ctx context.Context, cursor string, limit int) (control.AuditPage, error)
	// Acts carries out the actions of control.Actions.
	control.Acts
}

// Password is the secret that opens the panel: 16 characters of a
// generated password (openssl rand -base64 24 gives 32) stand up to
// guessing even at the rate control.Guesses allows.
func Password() control.Secret {
	return control.Secret{Name: "admin_password", Opens: "the panel", MinLength: 16, Make: "openssl rand -base64 24"}
}

// ServeHTTP answers one request to the panel.
func (p *Panel) ServeHTTP(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	if problem := Password().Problem(p.Password); problem != "" {
		p.Logf("admin: refused %q %q: admin disabled: %s", r.Method, r.URL.Path, problem)
		text(w, fsthttp.StatusServiceUnavailable, "admin disabled: "+problem)
		return
	}
	// A client in the penalty box is refused before its password is
	// compared, so guessing on costs it nothing but time.
	if retry, refused := p.refused(); refused {
		p.Logf("admin: refused %q %q: too many wrong passwords from this client", r.Method, r.URL.Path)
		w.Header().Set("Retry-After", strconv.Itoa(int(retry/time.Second)))
		text(w, fsthttp.StatusTooManyRequests, fmt.Sprintf("admin: too many wrong passwords from your address; try again in %d minutes", control.RetryMinutes(retry)))
		return
	}
	if !p.authorized(r) {
		if r.Header.Get("Authorization") != "" && p.Guesses != nil {
			// A browser's first request carries no password: only a
			// password tried and wrong counts.
			p.Guesses.Wrong()
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="waiting room admin", charset="UTF-8"`)
		text(w, fsthttp.StatusUnauthorized, "admin: wrong or missing password")
		return
	}
	action := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, p.Path), "/")
	a, isAction := control.ActionNamed(action)
	switch {
	case action == "" && (r.Method == fsthttp.MethodGet || r.Method == fsthttp.MethodHead):
		p.overview(ctx, w, r)
	case isAction:
		if r.Method != fsthttp.MethodPost {
			w.Header().Set("Allow", "POST")
			p.Logf("admin: refused %q %q: not a POST", r.Method, r.URL.Path)
			p.failed(w, r, fsthttp.StatusMethodNotAllowed, "Not done", action+" takes a POST, from the panel's form.")
			return
		}
		p.act(ctx, w, r, a)
	default:
		p.Logf("admin: refused %q %q: no such page", r.Method, r.URL.Path)
		p.failed(w, r, fsthttp.StatusNotFound, "No such page", "The panel has no page "+strconv.Quote(action)+".")
	}
}

func (p *Panel) refused() (time.Duration, bool) {
	if p.Guesses == nil {
		return 0, false
	}
	return p.Guesses.Refused()
}

func (p *Panel) authorized(r *fsthttp.Request) bool {
	auth := r.Header.Get("Authorization")
	const prefix = "Basic "
	if len(auth) <= len(prefix) || !strings.EqualFold(auth[:len(prefix)], prefix) || len(auth) > 1024 {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(auth[len(prefix):]))
	if err != nil {
		return false
	}
	_, pass, ok := strings.Cut(string(raw), ":")
	if !ok {
		return false
	}
	// Comparing digests keeps the comparison constant-time whatever the
	// lengths are.
	got, want := sha256.Sum256([]byte(pass)), sha256.Sum256(p.Password)
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// csrfToken is valid for the hour it was made in and the next one.
func (p *Panel) csrfToken(hour int64) string {
	m := hmac.New(sha256.New, p.CSRFKey)
	fmt.Fprintf(m, "waiting-room-admin-csrf|%d", hour)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (p *Panel) csrfValid(token string) bool {
	hour := p.Now.Unix() / 3600
	for _, h := range []int64{hour, hour - 1} {
		if hmac.Equal([]byte(token), []byte(p.csrfToken(h))) {
			return true
		}
	}
	return false
}

// eventNote says where the room stands in its current or next scheduled
// event: when the pre-queue opens, the draw's commitment while it is open,
// and the drawn range and the key once drawn, so the operator can publish
// them.
func eventNote(room *queue.Room, st store.EventState, now time.Time) string {
	const at = "15:04 UTC on 2 Jan"
	e := room.At(now).Event()
	if e == nil {
		for i := range room.Events {
			if next := &room.Events[i]; now.Before(next.PrequeueFrom) {
				return fmt.Sprintf("Next event %s: pre-queue from %s, opens %s, ends %s.", next.Name,
					next.PrequeueFrom.Format(at), next.Starts.Format(at), next.Ends.Format(at))
			}
		}
		return ""
	}
	switch st.Phase {
	case store.Prequeue:
		return fmt.Sprintf("Event %s: pre-queue open since %s (tickets from %d), opens %s. Draw commitment (SHA-256 of the key): %s.",
			e.Name, e.PrequeueFrom.Format(at), st.First, e.Starts.Format(at), st.Commitment)
	case store.Drawn:
		return fmt.Sprintf("Event %s: opened %s, ends %s. Drawn tickets %d to %d; draw key %s (commitment %s).",
			e.Name, e.Starts.Format(at), e.Ends.Format(at), st.DrawFirst, st.DrawLast, st.Key, st.Commitment)
	}
	return fmt.Sprintf("Event %s: pre-queue from %s, opens %s.", e.Name, e.PrequeueFrom.Format(at), e.Starts.Format(at))
}

func text(w fsthttp.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	io.WriteString(w, msg+"\n")
}
