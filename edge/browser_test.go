package edge

import (
	"context"
	"net/url"
	"strings"

	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

// browse serves r as a browser sees it: a visitor without a pass is sent
// back at once with an arrival cookie (307 to the same URL, marked),
// which a browser follows with the cookie. browse asks for the URL
// without the mark, as a page that dropped it does, and returns the
// answer to that second request; any other answer is returned as it is.
func browse(svc *Service, r *fsthttp.Request) *fsttest.ResponseRecorder {
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
