// Package admin is the operator's panel: an HTML page per service that shows
// each room's line and lets an operator admit visitors at once, pause
// admission, queue everyone, or resume, during an event.
//
// The panel sits behind HTTP basic auth with the password from the secret
// store, compared in constant time; with no password configured it is
// disabled, never open. Its forms carry a CSRF token, an HMAC of the hour
// under the service's signing key, because a browser sends basic-auth
// credentials along with a form another site posts.
package admin

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// Panel serves the admin pages under Path.
type Panel struct {
	// Path is where the panel lives, e.g. /_wr/admin.
	Path  string
	Rooms []*queue.Room
	Store store.Store
	// Password is the admin password; one that PasswordProblem refuses
	// (an empty one included) disables the panel.
	Password []byte
	// Guesses limits wrong passwords from the requesting client; nil
	// limits nothing.
	Guesses Guesses
	// CSRFKey signs the forms' CSRF tokens.
	CSRFKey []byte
	Now     time.Time
	// Logf records what operators did and what failed.
	Logf func(format string, args ...any)
}

// Guesses limits the wrong passwords one client may try, so the password
// cannot be guessed at speed.
type Guesses interface {
	// Refused reports whether the client has tried too many wrong
	// passwords and must wait, and for how long at most.
	Refused() (retry time.Duration, refused bool)
	// Wrong counts a wrong password from the client.
	Wrong()
}

// MinPasswordLength is the shortest admin password the panel accepts: 16
// characters of a generated password (openssl rand -base64 24 gives 32)
// stand up to guessing even at the rate Guesses allows.
const MinPasswordLength = 16

// PasswordProblem says why password cannot open the panel, naming the
// secret and the rule, or is "" when it can.
func PasswordProblem(password []byte) string {
	switch {
	case len(password) == 0:
		return "set admin_password in the secret store"
	case len(password) < MinPasswordLength:
		return fmt.Sprintf("admin_password is shorter than %d characters; set a longer one (openssl rand -base64 24 makes one)", MinPasswordLength)
	}
	return ""
}

// maxForm bounds a form body: the panel's forms hold three short fields.
const maxForm = 8 << 10

// maxAdmit bounds one "admit N" to what one store call does safely: a
// typo should not open the floodgates, nor stall the database.
const maxAdmit = store.MaxCallsPerOp

// ServeHTTP answers one request to the panel.
func (p *Panel) ServeHTTP(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	if problem := PasswordProblem(p.Password); problem != "" {
		p.Logf("admin: refused %q %q: admin disabled: %s", r.Method, r.URL.Path, problem)
		text(w, fsthttp.StatusServiceUnavailable, "admin disabled: "+problem)
		return
	}
	// A client in the penalty box is refused before its password is
	// compared, so guessing on costs it nothing but time.
	if retry, refused := p.refused(); refused {
		p.Logf("admin: refused %q %q: too many wrong passwords from this client", r.Method, r.URL.Path)
		w.Header().Set("Retry-After", strconv.Itoa(int(retry/time.Second)))
		text(w, fsthttp.StatusTooManyRequests, fmt.Sprintf("admin: too many wrong passwords from your address; try again in %d minutes", int((retry+time.Minute-1)/time.Minute)))
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
	switch {
	case action == "" && (r.Method == fsthttp.MethodGet || r.Method == fsthttp.MethodHead):
		p.overview(ctx, w)
	case action == "admit" || action == "pause" || action == "resume" || action == "queue_all":
		if r.Method != fsthttp.MethodPost {
			w.Header().Set("Allow", "POST")
			text(w, fsthttp.StatusMethodNotAllowed, "admin: "+action+" takes a POST")
			return
		}
		p.act(ctx, w, r, action)
	default:
		text(w, fsthttp.StatusNotFound, "admin: no such page")
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

func (p *Panel) act(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request, action string) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxForm+1))
	if err != nil || len(body) > maxForm {
		text(w, fsthttp.StatusBadRequest, "admin: form missing or too large")
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		text(w, fsthttp.StatusBadRequest, "admin: form not understood")
		return
	}
	if !p.csrfValid(form.Get("csrf")) {
		p.Logf("admin: refused %s: missing or stale CSRF token", action)
		text(w, fsthttp.StatusForbidden, "admin: the form has expired or did not come from this panel; reload the panel and try again")
		return
	}
	room := p.room(form.Get("room"))
	if room == nil {
		text(w, fsthttp.StatusNotFound, "admin: no such room")
		return
	}
	policy := room.Policy(p.Now)
	var line store.Line
	switch action {
	case "admit":
		n, perr := strconv.ParseInt(form.Get("n"), 10, 64)
		if perr != nil || n < 1 || n > maxAdmit {
			text(w, fsthttp.StatusBadRequest, fmt.Sprintf("admin: n must be a whole number from 1 to %d", maxAdmit))
			return
		}
		line, err = p.Store.Admit(ctx, room.Name, policy, n, p.Now)
		action = fmt.Sprintf("admit %d", n)
	default:
		line, err = p.Store.Control(ctx, room.Name, policy, store.Control(action), p.Now)
	}
	if err != nil {
		p.Logf("admin: %s in room %s failed: %v", action, room.Name, err)
		text(w, fsthttp.StatusServiceUnavailable, "admin: the store did not answer: "+err.Error())
		return
	}
	p.Logf("admin: %s in room %s: now serving %d of %d, %d active, %s", action, room.Name, line.Admitted, line.Issued, line.Active, state(line))
	w.Header().Set("Location", p.Path)
	w.WriteHeader(fsthttp.StatusSeeOther)
}

func (p *Panel) room(name string) *queue.Room {
	for _, r := range p.Rooms {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func (p *Panel) overview(ctx context.Context, w fsthttp.ResponseWriter) {
	var b strings.Builder
	b.WriteString(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Waiting room admin</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;color:#1d2330}table{border-collapse:collapse}td,th{border:1px solid #d6dbe4;padding:.4rem .8rem;text-align:right}th:first-child,td:first-child{text-align:left}form{display:inline}</style>
</head><body><h1>Waiting room admin</h1>`)
	if len(p.Rooms) == 0 {
		b.WriteString("<p>No rooms are configured.</p>")
	}
	csrf := html.EscapeString(p.csrfToken(p.Now.Unix() / 3600))
	action := html.EscapeString(p.Path)
	b.WriteString("<table><tr><th>Room</th><th>Mode</th><th>Waiting</th><th>Now serving</th><th>Issued</th><th>Active</th><th>Called</th><th>Capacity</th><th>Rate / min</th><th>State</th><th>Actions</th></tr>")
	for _, base := range p.Rooms {
		room := base.At(p.Now)
		name := html.EscapeString(room.Name)
		line, err := p.Store.Stats(ctx, room.Name, room.Policy(p.Now), p.Now)
		if err != nil {
			p.Logf("admin: reading room %s failed: %v", room.Name, err)
			fmt.Fprintf(&b, `<tr><td>%s</td><td colspan="10">store did not answer: %s</td></tr>`, name, html.EscapeString(err.Error()))
			continue
		}
		fmt.Fprintf(&b, `<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>`,
			name, html.EscapeString(string(room.Mode)), line.Waiting(), line.Admitted, line.Issued, line.Active, line.Called,
			limit(float64(room.MaxActiveUsers)), limit(room.NewUsersPerMinute), state(line))
		fmt.Fprintf(&b, `<form method="post" action="%s/admit"><input type="hidden" name="csrf" value="%s"><input type="hidden" name="room" value="%s"><input name="n" type="number" min="1" max="%d" value="10" aria-label="visitors to admit"> <button>Admit</button></form> `,
			action, csrf, name, maxAdmit)
		for _, c := range []struct{ action, label string }{{"pause", "Pause"}, {"queue_all", "Queue all"}, {"resume", "Resume"}} {
			fmt.Fprintf(&b, `<form method="post" action="%s/%s"><input type="hidden" name="csrf" value="%s"><input type="hidden" name="room" value="%s"><button>%s</button></form> `,
				action, c.action, csrf, name, c.label)
		}
		b.WriteString("</td></tr>")
		if e := eventNote(base, line, p.Now); e != "" {
			fmt.Fprintf(&b, `<tr><td></td><td colspan="10" style="text-align:left">%s</td></tr>`, html.EscapeString(e))
		}
	}
	b.WriteString("</table></body></html>\n")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(fsthttp.StatusOK)
	io.WriteString(w, b.String())
}

// eventNote says where the room stands in its current or next scheduled
// event: when the pre-queue opens, the draw's commitment while it is open,
// and the drawn range and the key once drawn, so the operator can publish
// them.
func eventNote(room *queue.Room, l store.Line, now time.Time) string {
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
	st := l.Event
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

func state(l store.Line) string {
	switch {
	case l.QueueAll:
		return "queueing all"
	case l.Paused:
		return "paused"
	}
	return "admitting"
}

func limit(v float64) string {
	if v == 0 {
		return "none"
	}
	return fmt.Sprintf("%g", v)
}

func text(w fsthttp.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	io.WriteString(w, msg+"\n")
}
