package devstack

import (
	"crypto/sha256"
	"fmt"
	"html"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edgequeue/waitingroom/heartbeat"
)

// DemoOrigin is the site make serve protects: a page that shows it was
// reached (and runs the heartbeat script), a slow endpoint, a large streamed download, an upload that
// answers with its length and SHA-256, any status code with headers, a
// page that sends a room command, and one that shows the waiting room's
// request headers.
func DemoOrigin() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
		if err != nil || ms < 0 || ms > 60000 {
			ms = 2000
		}
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		fmt.Fprintf(w, "slow answer after %d ms\n", ms)
	})
	mux.HandleFunc("/download", func(w http.ResponseWriter, r *http.Request) {
		mb, err := strconv.Atoi(r.URL.Query().Get("mb"))
		if err != nil || mb < 1 || mb > 1024 {
			mb = 16
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(mb<<20))
		chunk := make([]byte, 1<<20)
		for i := range chunk {
			chunk[i] = byte(i)
		}
		for i := 0; i < mb; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
	})
	mux.HandleFunc("/status/", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		if err != nil || code < 200 || code > 599 {
			code = http.StatusBadRequest
		}
		w.Header().Set("X-Demo", "kept")
		w.Header().Add("Set-Cookie", "demo=1; Path=/")
		w.Header().Set("Cache-Control", "max-age=30")
		w.WriteHeader(code)
		fmt.Fprintf(w, "status %d\n", code)
	})
	mux.HandleFunc("/command", func(w http.ResponseWriter, r *http.Request) {
		// The origin steering its room, e.g. /command?c=revoke or ?c=admit=5.
		w.Header().Set("Waiting-Room-Command", r.URL.Query().Get("c"))
		fmt.Fprintf(w, "sent command %q\n", r.URL.Query().Get("c"))
	})
	mux.HandleFunc("/headers", func(w http.ResponseWriter, r *http.Request) {
		// Only the headers the edge set: an empty line would read as one
		// set to nothing.
		for _, k := range []string{"Waiting-Room-Fail-Open", "Waiting-Room-Bypass"} {
			if v := r.Header.Values(k); len(v) > 0 {
				fmt.Fprintf(w, "%s: %s\n", k, strings.Join(v, ", "))
			}
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// The page says when and where the visitor got through, so no
		// browser may show a kept copy; and a page kept for the back
		// button sends no departure beacon (heartbeat.js), which
		// tools/suites/pagetest checks on this page.
		w.Header().Set("Cache-Control", "no-store")
		// The page runs the waiting room's heartbeat, as an operator's
		// pages would: a reader who keeps it open keeps their place.
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Demo origin</title>%s</head>
<body style="font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto">
<h1>You reached the origin</h1>
<p>The waiting room let you through to <code>%s</code> at %s.</p>
<p>Try <a href="/slow?ms=2000">a slow page</a> or <a href="/download?mb=16">a 16 MB download</a>.</p>
</body></html>
`, heartbeat.Tag(), html.EscapeString(r.URL.RequestURI()), time.Now().Format(time.TimeOnly))
	})
	return mux
}

// OriginRequest is a request as the demo origin received it.
type OriginRequest struct {
	Method string
	// URI is the request's target: its path and query.
	URI    string
	Header http.Header
}

// originLog keeps the requests the demo origin received, in order.
type originLog struct {
	mu   sync.Mutex
	seen []OriginRequest
}

// wrap records each request before h serves it.
func (l *originLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.seen = append(l.seen, OriginRequest{Method: r.Method, URI: r.RequestURI, Header: r.Header.Clone()})
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// OriginRequests returns the requests the demo origin received since the
// stack started, in order; nil unless Options.RecordOrigin was set.
func (s *Stack) OriginRequests() []OriginRequest {
	if s.origin == nil {
		return nil
	}
	s.origin.mu.Lock()
	defer s.origin.mu.Unlock()
	return append([]OriginRequest(nil), s.origin.seen...)
}
