package edge

import (
	"context"
	"fmt"
	"net/url"

	"github.com/edgequeue/waitingroom/urlnorm"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// LeavePath is where pages send a departure beacon
// (navigator.sendBeacon("/_wr/leave")) to end the visitor's sessions at
// once, freeing their places for the next in line.
const LeavePath = "/_wr/leave"

// leave ends the visitor's sessions in every room on this host.
func (q *request) leave(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != fsthttp.MethodPost {
		w.Header().Set("Allow", "POST")
		w.WriteHeader(fsthttp.StatusMethodNotAllowed)
		return
	}
	if why := crossSite(r); why != "" {
		// A page on another site must not end a visitor's session by
		// posting here with their cookie (SameSite=Lax would not stop a
		// top-level form post): only the site's own pages may.
		q.Logf("leave: refused: %s", why)
		w.WriteHeader(fsthttp.StatusForbidden)
		return
	}
	gate, err := q.gate()
	if err != nil {
		q.Logf("leave: cannot run the line: %s", describe(err))
		w.WriteHeader(fsthttp.StatusServiceUnavailable)
		return
	}
	for _, room := range q.settings.Rooms {
		if !room.Serves(r.Host) {
			continue
		}
		ended, err := gate.End(ctx, room, q.visitor(r, room))
		if err != nil {
			q.Logf("room %s: leave failed: %v", room.Name, err)
			continue
		}
		if ended {
			q.Logf("room %s: visitor left", room.Name)
			w.Header().Add("Set-Cookie", expired(room))
		}
	}
	w.WriteHeader(fsthttp.StatusNoContent)
}

// crossSite says why r comes from another site, or "" when it does not:
// the browser's Sec-Fetch-Site when it sends one, else the Origin header
// against the request's host. A request with neither (an old browser, or
// a script with the cookie, which could as well end the session from the
// site itself) is let through.
func crossSite(r *fsthttp.Request) string {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "same-site", "none":
	default:
		return fmt.Sprintf("Sec-Fetch-Site %q", site)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || !sameHost(u.Host, r.Host) {
		return fmt.Sprintf("Origin %q is not the host %q", origin, r.Host)
	}
	return ""
}

// sameHost compares two hosts in normal form (case, port and trailing dot
// aside); a host that has none is nobody's.
func sameHost(a, b string) bool {
	na, errA := urlnorm.Host(a)
	nb, errB := urlnorm.Host(b)
	return errA == nil && errB == nil && na != "" && na == nb
}
