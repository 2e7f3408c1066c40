// The request's facts, the first stage of serving it: what it asked in the
// waiting room's own headers (read, then stripped) and its arrival mark
// (taken off its URL), its target in the one normal form the rules and
// the origin act on, and what only the platform knows of it. The stages
// after this one read them.

package edge

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/edgequeue/waitingroom/match"
	"github.com/edgequeue/waitingroom/urlnorm"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// What a client asks of the line in the waiting room's own request
// headers, read before stripReserved removes them (the origin never sees
// them): the pass of an app without a cookie jar, and whether a request
// is the queue's poll.

// PassHeader carries a room's pass for a client that keeps no cookies (a
// native app, a script): in a request, the passes the client holds, as
// `name=pass` pairs separated by `;` as in a Cookie header, each name a
// room's cookie_name; in a response, the pass the edge issued,
// `name=pass`, or `name=` when the pass is withdrawn. Authorization is
// left to the origin.
const PassHeader = ReservedPrefix + "Pass"

// PollHeader marks a request as a poll of the visitor's place (the queue
// page's script sends "1"): when the gate admits it, the edge answers
// "admitted" itself instead of forwarding the poll to the origin.
const PollHeader = ReservedPrefix + "Poll"

// WorkHeader carries the solution of the proof of work a room asks of a
// newcomer (package challenge) for a client that is not the work page: the
// nonce found for the challenge the edge answered with ("work"), sent with
// the arrival pass. A browser's work page keeps it in the cookie named by
// workCookie instead.
const WorkHeader = ReservedPrefix + "Work"

// Bounds on PassHeader: a client holds one pass per room it is in, a few
// hundred bytes each. Beyond them the header is ignored (and logged), so a
// bloated one costs no more than a scan of its length.
const (
	maxPassLines = 4
	maxPassBytes = 8 << 10
)

// asked is what a request asked of the line in the reserved headers.
type asked struct {
	// passes are the PassHeader lines, when within bounds.
	passes []string
	// passHeader is true when the request carried PassHeader at all
	// (even empty, even oversized): the client reads passes there.
	passHeader bool
	// json is true when the request asked for JSON (Accept).
	json bool
	// poll is true for PollHeader: 1.
	poll bool
	// refused says why PassHeader was ignored, for the log, or is "".
	refused string
	// work is WorkHeader's value, "" without one.
	work string
}

// readAsked reads what r asks of the line, before the reserved headers
// are stripped.
func readAsked(r *fsthttp.Request) asked {
	a := asked{json: wantsJSON(r), poll: r.Header.Get(PollHeader) == "1", work: r.Header.Get(WorkHeader)}
	lines := r.Header.Values(PassHeader)
	a.passHeader = len(lines) > 0
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	switch {
	case len(lines) > maxPassLines:
		a.refused = strconv.Itoa(len(lines)) + " lines, more than " + strconv.Itoa(maxPassLines)
	case size > maxPassBytes:
		a.refused = strconv.Itoa(size) + " bytes, more than " + strconv.Itoa(maxPassBytes)
	default:
		a.passes = lines
	}
	return a
}

// ReservedPrefix begins every header through which the waiting room and
// its origin speak (FailOpenHeader, queue.CommandHeader, and any to
// come). A visitor's request never carries one to the origin:
// stripReserved removes them all as the request arrives.
const ReservedPrefix = "Waiting-Room-"

// stripReserved removes every header that begins with ReservedPrefix, in
// any case, so a visitor cannot pose as the edge ("Waiting-Room-Fail-Open:
// store-unavailable" on an admitted request) to the origin.
func stripReserved(h fsthttp.Header) {
	for _, k := range h.Keys() {
		if len(k) >= len(ReservedPrefix) && strings.EqualFold(k[:len(ReservedPrefix)], ReservedPrefix) {
			h.Del(k)
		}
	}
}

// ArrivalMark is the query parameter the arrival redirect adds to the URL
// it sends a visitor back to; its value is MarkArrival's. The edge takes
// it off every request before anything else reads the query: the origin
// never receives it, and the visitor's pages drop it from the address bar.
const ArrivalMark = "_wr_arrival"

// TakeArrivalMark removes every ArrivalMark parameter from u's query (a
// name that reads as it once percent-decoded too) and returns the first
// one's value; found is false, and u untouched, when there is none. The
// other parameters keep their bytes and their order.
func TakeArrivalMark(u *url.URL) (mark string, found bool) {
	q := u.RawQuery
	var kept []byte
	for start := 0; start <= len(q) && q != ""; {
		end := strings.IndexByte(q[start:], '&')
		if end < 0 {
			end = len(q)
		} else {
			end += start
		}
		part := q[start:end]
		name, value, _ := strings.Cut(part, "=")
		switch {
		case isMarkName(name) && !found:
			mark, found = value, true
			kept = append(make([]byte, 0, len(q)), q[:max(start-1, 0)]...)
		case isMarkName(name):
		case found:
			if len(kept) > 0 {
				kept = append(kept, '&')
			}
			kept = append(kept, part...)
		}
		start = end + 1
	}
	if found {
		u.RawQuery = string(kept)
	}
	return mark, found
}

// isMarkName reports whether a query parameter's raw name is ArrivalMark.
func isMarkName(name string) bool {
	if name == ArrivalMark {
		return true
	}
	if len(name) < len(ArrivalMark) || strings.IndexByte(name, '%') < 0 {
		return false
	}
	decoded, err := url.QueryUnescape(name)
	return err == nil && decoded == ArrivalMark
}

// The request's target: its host and path in the one form the rules and
// the origin act on, and what a protected room asks of it.

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

// What only the platform knows of a request (its country, bot detection's
// verdict, Fastly ACLs, secrets), for the rules of package match.

// facts answers the rules' questions about a request from the Handler's
// platform interfaces. The rules (package match) ask each at most once per request
// and hand every error back, prefixed with the room and rule, for the log,
// treating the fact as unknown; so facts only says what failed. A nil
// interface (the native build's tests) is unknown.
type facts struct{ q *request }

var _ match.Facts = facts{}

// Country is ip's country as the platform reports it.
func (f facts) Country(ip netip.Addr) (string, error) {
	if f.q.Geo == nil {
		return "", nil
	}
	c, err := f.q.Geo.Country(ip)
	if err != nil {
		return "", fmt.Errorf("geolocation of %s failed, so its country is unknown: %w", ip, err)
	}
	return c, nil
}

// VerifiedBot reports whether bot detection verified the request as a
// known bot.
func (f facts) VerifiedBot() (bool, error) {
	if f.q.Bots == nil {
		return false, nil
	}
	v, err := f.q.Bots.Verified(f.q.sent)
	if err != nil {
		return false, fmt.Errorf("bot detection failed, so the request is not a verified bot: %w", err)
	}
	return v, nil
}

// ACL returns the action of the entry of ACL name matching ip, or "".
func (f facts) ACL(name string, ip netip.Addr) (string, error) {
	if f.q.ACLs == nil {
		return "", nil
	}
	action, err := f.q.ACLs.Lookup(name, ip)
	switch {
	case errors.Is(err, ErrNotFound):
		return "", errors.New("no ACL of that name is linked to this service (fastly compute acl list-acls lists them; link one with fastly service resource-link create), so the rule lets nobody through")
	case err != nil:
		return "", fmt.Errorf("lookup of %s failed, so the rule does not let it through: %w", ip, err)
	}
	return action, nil
}

// Secret returns the secret store's value called name without the white
// space around it (as `echo` adds). A blank value is an error: it would
// match a blank header.
func (f facts) Secret(name string) ([]byte, error) {
	if f.q.secrets == nil {
		return nil, nil
	}
	v, err := f.q.secrets.Get(name)
	v = bytes.TrimSpace(v)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, fmt.Errorf("missing from %s, so the rule lets nobody through", SecretStore)
	case err != nil:
		return nil, fmt.Errorf("cannot be read, so the rule lets nobody through: %w", err)
	case len(v) == 0:
		return nil, errors.New("is blank, so the rule lets nobody through")
	}
	return v, nil
}
