// The structured log: one JSON line per request (package accesslog) to the
// Fastly log endpoint the config store names, gathered while the request
// is served and written once it has been answered.

package edge

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/edgequeue/waitingroom/accesslog"
	"github.com/edgequeue/waitingroom/match"
	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/settings"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// The config store's keys for the structured log (package settings).
const (
	KeyLogEndpoint = settings.KeyLogEndpoint
	KeyLogClientIP = settings.KeyLogClientIP
)

// maxLogEndpoint is the longest endpoint name accepted; Fastly's are far
// shorter.
const maxLogEndpoint = 255

// LogEndpoint is a Fastly log endpoint: each Write is one entry.
type LogEndpoint interface {
	Write(line []byte) error
}

// loadLogSettings reads the structured log's keys into s; a bad value is
// a problem for the log and leaves the default (no lines; hashed
// addresses).
func loadLogSettings(rd *settings.Reader, s *Settings) {
	if v, ok := rd.Value(KeyLogEndpoint); ok {
		if problem := checkLogEndpoint(v); problem != "" {
			rd.Problems = append(rd.Problems, fmt.Errorf("%s: %q %s; no structured log lines are written", KeyLogEndpoint, v, problem))
		} else {
			s.LogEndpoint = v
		}
	}
	s.LogClientIP = rd.Bool(KeyLogClientIP, "client addresses are logged as hashes")
}

// checkLogEndpoint says why v cannot name a log endpoint, or "". Fastly
// reserves stdout, stderr and names beginning fst_managed_ (in any case):
// opening one fails.
func checkLogEndpoint(v string) string {
	lower := strings.ToLower(v)
	switch {
	case v == "":
		return "is empty: name the endpoint, or delete the key"
	case len(v) > maxLogEndpoint:
		return fmt.Sprintf("is longer than %d bytes", maxLogEndpoint)
	case !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return "holds control characters or is not UTF-8"
	case lower == "stdout" || lower == "stderr" || strings.HasPrefix(lower, "fst_managed_"):
		return "is reserved by Fastly (stdout, stderr and fst_managed_*)"
	}
	return ""
}

// requestLog is one request's line while the request is served.
type requestLog struct {
	endpoint LogEndpoint
	name     string
	line     accesslog.Request
	// keys are the signing keys, once the request has read them.
	keys *queue.KeySet
}

// startLog begins r's line when the config names a log endpoint and the
// platform can open one, and returns w wrapped to see the status; the
// request's store calls are then counted into the line (store). Otherwise
// it returns w as it is.
func (q *request) startLog(w fsthttp.ResponseWriter, r *fsthttp.Request) fsthttp.ResponseWriter {
	if q.settings.LogEndpoint == "" || q.LogEndpoints == nil {
		return w
	}
	q.log = &requestLog{endpoint: q.LogEndpoints(q.settings.LogEndpoint), name: q.settings.LogEndpoint}
	q.log.line = accesslog.Request{Time: q.now, Method: r.Method, Path: r.URL.Path, POP: q.POP,
		ShowClientIP: q.settings.LogClientIP,
		// Only a target that cannot be read is answered before the rules
		// place the request.
		Decision: "invalid"}
	return &statusWriter{ResponseWriter: w, status: &q.log.line.Status}
}

// finishLog writes the line of r, answered.
func (q *request) finishLog(r *fsthttp.Request) {
	l := q.log
	if l == nil {
		return
	}
	if l.line.Status == 0 {
		// The platform answers 200 for a handler that wrote nothing.
		l.line.Status = fsthttp.StatusOK
	}
	if ip := clientAddr(clientIP(r)); ip.IsValid() {
		l.line.Client = ip.String()
		if c, err := (facts{q}).Country(ip); err == nil {
			l.line.Country = c
		}
		if !l.line.ShowClientIP {
			// Without the signing keys (not set up yet) there is no key
			// to hash with, and the line has no client.
			if keys, err := q.keys(); err == nil {
				l.line.ClientKey = keys.Key()
			}
		}
	}
	l.write(q.Logf, l.line.Line())
}

// logAction writes the line of an operator's action (control.Operator's
// Logged), when the request's lines are written.
func (q *request) logAction(e store.AuditEntry) {
	if q.log != nil {
		q.log.write(q.Logf, accesslog.Action(e))
	}
}

// write writes a line to the endpoint; a failure costs one plain log line
// (logf), never the request.
func (l *requestLog) write(logf func(format string, args ...any), line []byte) {
	if err := l.endpoint.Write(line); err != nil {
		logf("log endpoint %q: %v", l.name, err)
	}
}

// decisionNames are the destinations as a line's decision names them:
// one word each, for dashboards to group by.
var decisionNames = [...]string{ToAdmin: "admin", ToAPI: "api", ToLeave: "departure", ToInvite: "invite",
	ToHeartbeat: "heartbeat", ToHeartbeatScript: "heartbeat-script",
	ToLine: "line", ToBypass: "bypass", ToOrigin: "origin", ToUnavailable: "unavailable"}

// decisionName is dest's name in a line; a destination without one is
// named as it explains itself.
func decisionName(dest Destination) string {
	if dest >= 0 && int(dest) < len(decisionNames) && decisionNames[dest] != "" {
		return decisionNames[dest]
	}
	return dest.String()
}

// routed notes where the rules sent the request (decisionName), its room,
// and the bypass rule that let it through.
func (l *requestLog) routed(dest Destination, j match.Judgement[*queue.Room]) {
	if l == nil {
		return
	}
	l.line.Decision = decisionName(dest)
	if j.Room != nil {
		l.line.Room = j.Room.Name
	}
	if dest == ToBypass {
		l.line.Why = j.Bypass
	}
}

// decided notes the gate's decision for a request in the line.
func (l *requestLog) decided(d queue.Decision) {
	if l == nil {
		return
	}
	l.line.Decision = "line/" + d.Action.String()
	l.line.Why, l.line.FailOpen, l.line.Waited = d.Why, d.FailOpen, d.Waited
	if d.Action == queue.Wait {
		l.line.Ticket, l.line.Ahead = d.Place.Ticket, d.Place.Ahead
	}
}

// explain replaces the gate's reason with why, for an answer the edge
// chose beyond the gate's decision.
func (l *requestLog) explain(why string) {
	if l != nil {
		l.line.Why = why
	}
}

// countedTransport counts a request's store calls and their latency.
type countedTransport struct {
	next store.Transport
	line *accesslog.Request
}

func (c countedTransport) RoundTrip(ctx context.Context, req store.Request) (store.Response, error) {
	start := time.Now()
	resp, err := c.next.RoundTrip(ctx, req)
	c.line.StoreCalls++
	c.line.StoreTime += time.Since(start)
	return resp, err
}

// statusWriter notes the status a response is sent with.
type statusWriter struct {
	fsthttp.ResponseWriter
	status *int
}

func (w *statusWriter) WriteHeader(code int) {
	if *w.status == 0 {
		*w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	w.sent()
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Append(body io.ReadCloser) error {
	w.sent()
	return w.ResponseWriter.Append(body)
}

func (w *statusWriter) Close() error {
	w.sent()
	return w.ResponseWriter.Close()
}

// sent notes the 200 a body sends without WriteHeader.
func (w *statusWriter) sent() {
	if *w.status == 0 {
		*w.status = fsthttp.StatusOK
	}
}
