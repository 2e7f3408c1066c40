// A client that keeps no cookies, answered after one redirect instead of
// redirected for ever. The arrival redirect (line.go) sends a new visitor
// back to their URL with a mark; a request that comes back marked and
// still without a pass is from a client that dropped the pass, and gets a
// page (or JSON) saying that the line needs the cookie, or for an app the
// PassHeader. The mark is taken off every request as it arrives
// (TakeArrivalMark, with the request's facts), so the origin never sees
// it, and it is signed, bound to the client and short lived, so a crafted
// or shared one changes nothing for anybody else.

package edge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/locale"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/templates"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// MarkTTL is how long after the arrival redirect a marked request without
// a pass is taken for a client that dropped the pass. A client follows a
// redirect at once; a mark older than this is more likely a bookmark or
// an address from the browser's history, and gets the arrival redirect
// again (with a fresh mark) rather than the cookies page.
const MarkTTL = time.Minute

// markBytes is how much of the HMAC a mark keeps: 96 bits, beyond
// guessing, in 16 characters of the URL.
const markBytes = 12

// MarkArrival is the arrival mark for a redirect that room gives at at to
// the client at ip with userAgent: the time (Unix seconds, base 36), a dot,
// and an HMAC of it, the room and the client's network and User-Agent
// (queue.Binding's ip_prefix+user_agent) under the current signing key.
// Nobody can forge one, and one copied to another client, another room or
// kept past MarkTTL counts for nothing.
func MarkArrival(keys *queue.KeySet, room, userAgent string, ip net.IP, at time.Time) string {
	stamp := strconv.FormatInt(at.Unix(), 36)
	return stamp + "." + markMAC(keys, room, userAgent, ip, stamp)
}

// markMAC is the signature of a mark stamped stamp.
func markMAC(keys *queue.KeySet, room, userAgent string, ip net.IP, stamp string) string {
	m := hmac.New(sha256.New, keys.Key())
	// The label keeps these MACs apart from every other HMAC made with
	// the signing key; NULs cannot occur in a room name or a stamp.
	m.Write([]byte("waiting-room arrival mark\x00" + room + "\x00" + queue.Binding(queue.BindBoth, userAgent, ip) + "\x00" + stamp))
	var sum [sha256.Size]byte
	return base64.RawURLEncoding.EncodeToString(m.Sum(sum[:0])[:markBytes])
}

// checkMark reports how long ago room gave r's client the arrival
// redirect that carried mark, or why mark is not one it gave this client
// within MarkTTL of now.
func checkMark(keys *queue.KeySet, room string, r *fsthttp.Request, mark string, now time.Time) (time.Duration, error) {
	stamp, sig, ok := strings.Cut(mark, ".")
	secs, err := strconv.ParseInt(stamp, 36, 64)
	if !ok || err != nil || len(stamp) > 13 {
		return 0, errors.New("not a mark")
	}
	want := markMAC(keys, room, r.Header.Get("User-Agent"), clientIP(r), stamp)
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return 0, errors.New("not signed for this room and client (forged, copied, or signed with a retired key)")
	}
	age := now.Sub(time.Unix(secs, 0))
	if age > MarkTTL || age < -MarkTTL {
		return age, fmt.Errorf("given %s ago, more than %s", age.Truncate(time.Second), MarkTTL)
	}
	return age, nil
}

// marked is r's URI with mark added as ArrivalMark, last.
func marked(r *fsthttp.Request, mark string) string {
	uri := r.URL.RequestURI()
	if r.URL.RawQuery == "" {
		return strings.TrimSuffix(uri, "?") + "?" + ArrivalMark + "=" + mark
	}
	return uri + "&" + ArrivalMark + "=" + mark
}

// noCookies answers a client that came back from the arrival redirect,
// age ago, without the pass it was given: its browser blocks cookies, or
// it is a script or an app without a cookie jar that does not use
// PassHeader. Another redirect would only start a loop ("too many
// redirects"), so it gets 403 and a page in the visitor's language saying
// that the line keeps their place in a cookie, with a link back to the
// page they asked for; a client that asked for JSON gets the "cookies"
// state, which names the cookie and the header (and carries a fresh
// arrival pass in PassHeader: enter gives it). Nothing is stored.
func (q *request) noCookies(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room, age time.Duration) {
	q.Logf("room %s: no cookies: the arrival pass given %s ago did not come back (cookies blocked, or a client without a cookie jar or %s); answered 403 asking for them",
		room.Name, age.Truncate(time.Millisecond), PassHeader)
	q.log.explain("no cookies")
	w.Header().Set("Cache-Control", "no-store")
	if wantsJSON(r) {
		q.json(w, fsthttp.StatusForbidden, cookiesJSON{Room: room.Name, Status: "cookies", Cookie: room.CookieName,
			Header: PassHeader, URL: r.URL.RequestURI()})
		return
	}
	lang := speak(w, r, room)
	values := map[string]string{"room": room.Name, "retry_url": r.URL.RequestURI(),
		"retry_label": locale.Text(lang, locale.TryAgain), "apps_note": locale.Text(lang, locale.CookiesApps)}
	brand(values, lang, room)
	values["title"] = room.Look.Text(lang, "cookies_title")
	values["text"] = room.Look.Text(lang, "cookies_text")
	q.page(w, fsthttp.StatusForbidden, templates.Cookies.Name, templates.Cookies, values)
}

// unmark sends a browser that the gate admits at a marked URL on to the
// same URL without the mark (307: the method and body go again), with
// the pass, instead of forwarding: the origin's page would otherwise show
// under the mark, in the address bar, in the Referer of every request it
// makes and to its scripts. It costs no store call: the pass it gives
// admits within the heartbeat.
func (q *request) unmark(w fsthttp.ResponseWriter, r *fsthttp.Request, room *queue.Room, d queue.Decision) {
	if c := q.cookie(room, d); c != "" {
		w.Header().Add("Set-Cookie", c)
	}
	w.Header().Set("Location", r.URL.RequestURI())
	q.problem(w, fsthttp.StatusTemporaryRedirect, "Continuing", "You are being taken to the page you asked for.")
}
