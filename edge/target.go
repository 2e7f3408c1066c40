// The request's target: its host and path in the one form the rules and
// the origin act on, and what a protected room asks of it.

package edge

import (
	"errors"
	"strconv"

	"github.com/edgequeue/waitingroom/urlnorm"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// target is a request's host and path in normal form (package urlnorm).
type target struct {
	host string
	path urlnorm.Path
	// sent is the path as the client sent it, for the log.
	sent string
}

// normalize reads r's host, path and query, and makes r's path the normal
// form, so the origin acts on the path the rules judged. What cannot be
// normalised (see urlnorm) is answered 400 with a log line quoting it, and
// ok is false.
func (q *request) normalize(w fsthttp.ResponseWriter, r *fsthttp.Request) (t target, ok bool) {
	t.sent = urlnorm.WirePath(r.URL)
	var err error
	t.host, err = urlnorm.Host(r.Host)
	if err == nil {
		t.path, err = urlnorm.ParsePath(t.sent)
	}
	if err == nil {
		err = urlnorm.CheckQuery(r.URL.RawQuery)
	}
	if err != nil {
		q.badRequest(w, err)
		return t, false
	}
	t.path.SetOn(r.URL)
	return t, true
}

// badRequest answers a request whose target cannot be served: 400, a
// page saying what is wrong with it, and a log line quoting it.
func (q *request) badRequest(w fsthttp.ResponseWriter, err error) {
	q.Logf("refused: %v", err)
	why := "it cannot be read"
	var bad *urlnorm.Error
	if errors.As(err, &bad) {
		why = "its " + bad.Part + " " + bad.Problem
	}
	q.problem(w, fsthttp.StatusBadRequest, "Bad request", "This address cannot be served: "+why+".")
}

// guard answers what a request a room protects may not be, and reports
// whether it may go on to the room's line:
//   - an ambiguous path (an encoded slash...: urlnorm.Path.Ambiguous) is
//     refused 400, since no one reading of it is what every origin acts on;
//   - plain HTTP outside a local host is redirected (308, same host, path
//     and query) to https: the room's pass cookie is Secure, so a browser
//     would never send it back over http and every poll would join the
//     line again. A local host (Viceroy, ours) serves only plain HTTP, and
//     browsers keep Secure cookies for http://localhost, so it is let be.
//
// Over TLS it adds Strict-Transport-Security when the operator set
// hsts_max_age; forward keeps it on the origin's answer.
func (q *request) guard(w fsthttp.ResponseWriter, r *fsthttp.Request, t target) bool {
	if t.path.Ambiguous != "" {
		q.badRequest(w, &urlnorm.Error{Part: "path", Value: t.sent,
			Problem: t.path.Ambiguous + ", which this part of the site does not accept"})
		return false
	}
	tls := r.URL.Scheme == "https" || r.TLSInfo.Protocol != ""
	if !tls && !q.Local {
		location := "https://" + t.host + t.path.Escaped
		if r.URL.RawQuery != "" {
			location += "?" + r.URL.RawQuery
		}
		w.Header().Set("Location", location)
		w.WriteHeader(fsthttp.StatusPermanentRedirect)
		return false
	}
	if tls && q.settings.HSTSMaxAge > 0 {
		w.Header().Set(hstsHeader, "max-age="+strconv.Itoa(q.settings.HSTSMaxAge))
	}
	return true
}
