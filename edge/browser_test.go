package edge

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

// browse serves r as a browser sees it: a visitor without a pass is sent
// back at once with an arrival cookie (307 to the same URL, marked),
// which a browser follows with the cookie. browse asks for the URL
// without the mark, as a page that dropped it does, and returns the
// answer to that second request; any other answer is returned as it is.
func browse(svc *Handler, r *fsthttp.Request) *fsttest.ResponseRecorder {
	w := fsttest.NewRecorder()
	svc.ServeHTTP(context.Background(), w, r)
	cookie := w.HeaderMap.Get("Set-Cookie")
	if w.Code != fsthttp.StatusTemporaryRedirect || cookie == "" || !backTo(w.HeaderMap.Get("Location"), r.URL.RequestURI()) {
		return w
	}
	again := r.Clone()
	again.Header.Add("Cookie", strings.SplitN(cookie, ";", 2)[0])
	w = fsttest.NewRecorder()
	svc.ServeHTTP(context.Background(), w, again)
	return w
}

// backTo reports whether location is uri, but for the arrival mark.
func backTo(location, uri string) bool {
	u, err := url.Parse(location)
	if err != nil {
		return false
	}
	TakeArrivalMark(u)
	return u.RequestURI() == uri
}

// fixed is a clock stopped at t.
func fixed(t time.Time) func() time.Time { return func() time.Time { return t } }

// testRequest is a request h serves, for tests that call its methods:
// h's time, and no settings or headers read.
func testRequest(h *Handler) *request {
	q := &request{Handler: h, now: h.now()}
	q.keep()
	return q
}
