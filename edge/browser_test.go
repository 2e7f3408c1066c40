package edge

import (
	"context"
	"strings"

	"github.com/fastly/compute-sdk-go/fsthttp"
	"github.com/fastly/compute-sdk-go/fsttest"
)

// browse serves r as a browser sees it: a visitor without a pass is sent
// back at once with an arrival cookie (307 to the same URL), which a
// browser follows with the cookie. The answer to that second request is
// returned; any other answer is returned as it is.
func browse(svc *Service, r *fsthttp.Request) *fsttest.ResponseRecorder {
	w := fsttest.NewRecorder()
	svc.ServeHTTP(context.Background(), w, r)
	cookie := w.HeaderMap.Get("Set-Cookie")
	if w.Code != fsthttp.StatusTemporaryRedirect || cookie == "" || w.HeaderMap.Get("Location") != r.URL.RequestURI() {
		return w
	}
	again := r.Clone()
	again.Header.Add("Cookie", strings.SplitN(cookie, ";", 2)[0])
	w = fsttest.NewRecorder()
	svc.ServeHTTP(context.Background(), w, again)
	return w
}
