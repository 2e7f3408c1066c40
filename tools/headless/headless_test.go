package headless

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestTabReports: what a tab reports against its page, each page in a
// tab of its own. A page's HTTP status is not a problem; a console error,
// an exception and a CSP violation are, and so is the violation of an
// inline style attribute, which the browser's own message may not name
// the same way (the tab's listener reports the directive).
func TestTabReports(t *testing.T) {
	pages := map[string]struct {
		policy, body string
		status       int
	}{
		"/clean":     {"default-src 'none'", "<h1>Hello</h1>", http.StatusOK},
		"/missing":   {"default-src 'none'", "<h1>Not here</h1>", http.StatusNotFound},
		"/style":     {"default-src 'none'", "<style>h1{color:red}</style><h1>Hello</h1>", http.StatusOK},
		"/attribute": {"default-src 'none'", "<h1 style='color:red'>Hello</h1>", http.StatusOK},
		"/console":   {"", "<script>console.error('broken')</script>", http.StatusOK},
		"/throws":    {"", "<script>null.x</script>", http.StatusOK},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if p.policy != "" {
			w.Header().Set("Content-Security-Policy", p.policy)
		}
		w.WriteHeader(p.status)
		w.Write([]byte("<!doctype html><html lang=en><title>t</title>" + p.body))
	}))
	defer srv.Close()
	b := Start(t, "the browser driver's own test", 800, 600)
	for _, tc := range []struct {
		path   string
		status int64
		want   string // in the problems; "" for none
	}{
		{"/clean", http.StatusOK, ""},
		{"/missing", http.StatusNotFound, ""},
		{"/style", http.StatusOK, "violation: style-src-elem blocked inline"},
		{"/attribute", http.StatusOK, "violation: style-src-attr blocked inline"},
		{"/console", http.StatusOK, "broken"},
		{"/throws", http.StatusOK, "TypeError"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			tab := b.Tab(t, nil)
			if status := tab.Load("loading", chromedp.Navigate(srv.URL+tc.path)); status != tc.status {
				t.Fatalf("status %d, want %d", status, tc.status)
			}
			var got []string
			Await(5*time.Second, func() bool {
				got = append(got, tab.Problems()...)
				return tc.want != "" && strings.Contains(strings.Join(got, "\n"), tc.want)
			})
			if tc.want == "" && len(got) > 0 {
				t.Errorf("problems %q, want none", got)
			}
			if tc.want != "" && !strings.Contains(strings.Join(got, "\n"), tc.want) {
				t.Errorf("problems %q, want one saying %q", got, tc.want)
			}
			if docs := tab.Responses(); len(docs) == 0 || docs[0].Type != "Document" || docs[0].Status != tc.status {
				t.Errorf("responses %+v, want the page's first", docs)
			}
		})
	}
}
