// The request's way to the origin, and the origin's commands on the way back.

package edge

import (
	"context"
	"errors"
	"io"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// FailOpenHeader marks a request admitted only because the store could not
// be asked, in a room whose on_store_error is "open".
const FailOpenHeader = "Waiting-Room-Fail-Open"

// hstsHeader is Strict-Transport-Security; see Settings.HSTSMaxAge.
const hstsHeader = "Strict-Transport-Security"

// obey carries out the origin's commands and returns the cookie to set in
// place of the one planned ("" to keep it).
func (q *request) obey(ctx context.Context, gate *queue.Gate, room *queue.Room, d queue.Decision, values []string) string {
	cmds, errs := queue.ParseCommands(values)
	for _, err := range errs {
		q.Logf("room %s: origin command ignored: %v", room.Name, err)
	}
	cookie := ""
	if session := d.Session; cmds.Revoke && session.ID != "" {
		if _, err := gate.Store.End(ctx, room.Name, room.Policy(q.now), session, q.now); err != nil {
			q.Logf("room %s: origin revoke of session %s failed: %v", room.Name, session.ID, err)
		} else {
			q.Logf("room %s: origin revoked session %s", room.Name, session.ID)
		}
		cookie = expired(room)
	}
	if cmds.Admit > 0 {
		// An operator action like the panel's: in the audit log, and in
		// the log endpoint's action lines.
		e, err := gate.Admit(ctx, room, cmds.Admit, store.Actor{Via: "origin"}, q.now)
		if err != nil {
			q.Logf("room %s: origin admit=%d failed: %v", room.Name, cmds.Admit, err)
		} else {
			q.Logf("room %s: origin admit=%d: now serving %d of %d", room.Name, cmds.Admit, e.After.Admitted, e.After.Issued)
			q.acted(e)
		}
	}
	return cookie
}

// forward streams the request to the origin and the answer back, adding
// setCookie (when not empty) beside the origin's own cookies. The origin's
// commands header never reaches the visitor; when obey is given, it carries
// the commands out and may replace the cookie.
func (q *request) forward(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request, setCookie string, obey func([]string) string) {
	resp, err := q.Origin.Send(ctx, r)
	if err != nil {
		q.Logf("origin: %q %q: %v", r.Method, r.URL.Path, err)
		if errors.Is(err, ErrBackendUnresolvable) {
			q.notSetUp(w, backendUnresolvable("origin", originExample))
			return
		}
		q.problem(w, fsthttp.StatusBadGateway, "The site did not answer", "The site could not be reached. Please try again in a moment.")
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
	// The origin's answer takes the origin's headers, not the edge's
	// (its own Content-Security-Policy...), except for the HSTS the
	// operator asked the edge to add when the origin sets none, the pass
	// the edge gives a client in PassHeader, which only the edge may
	// give, and the cookies the edge set already (the work page's,
	// cleared by the join it served).
	hsts, pass := w.Header().Get(hstsHeader), w.Header().Get(PassHeader)
	edgeCookies := w.Header().Values("Set-Cookie")
	w.Header().Reset(resp.Header)
	for _, c := range edgeCookies {
		w.Header().Add("Set-Cookie", c)
	}
	if hsts != "" && w.Header().Get(hstsHeader) == "" {
		w.Header().Set(hstsHeader, hsts)
	}
	w.Header().Del(PassHeader)
	if pass != "" {
		w.Header().Set(PassHeader, pass)
	}
	if setCookie != "" {
		w.Header().Add("Set-Cookie", setCookie)
		// A response that admits someone must not be cached and replayed
		// to others along with its cookie.
		w.Header().Set("Cache-Control", "private, no-store")
	}
	w.WriteHeader(resp.StatusCode)
	if _, err := io.Copy(w, resp.Body); err != nil {
		q.Logf("origin: %q %q: streaming the answer: %v", r.Method, r.URL.Path, err)
	}
}

// Origin forwards an admitted request to the protected site.
type Origin interface {
	Send(ctx context.Context, r *fsthttp.Request) (*fsthttp.Response, error)
}
