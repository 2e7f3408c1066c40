// Package upstashdev is a local stand-in for Upstash Redis's REST API, in
// front of a real redis-server. It reproduces the wire behaviour the
// waiting room and Upstash's own clients rely on: the routes (/, /pipeline,
// /multi-exec, and the command-in-path form), bearer or _token auth with 401
// on a bad token, {"result"} and {"error"} bodies with Upstash's status
// codes, Upstash-Encoding: base64, EVALSHA with NOSCRIPT, and Upstash's Lua
// shebang flags. It can also inject latency, error statuses and outages, and
// counts what it was asked, so tests can measure store calls per request.
package upstashdev

import (
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/edgequeue/waitingroom/tools/resp"
)

// MaxRequest is Upstash's request size limit (10 MB on Free and PAYG).
const MaxRequest = 10 << 20

// Faults are failures to inject into every REST request.
type Faults struct {
	// LatencyMS delays every answer.
	LatencyMS int `json:"latency_ms"`
	// Status, when set, answers every request with this HTTP status and an
	// error body, without running anything.
	Status int `json:"status"`
	// Drop closes every connection without an answer, as an outage does.
	Drop bool `json:"drop"`
	// LoseAnswers runs every request, then closes the connection without
	// its answer: the database did the work, and the client never hears
	// (a timeout or a network fault on the way back).
	LoseAnswers bool `json:"lose_answers"`
}

// Stats counts what the server was asked since the last reset.
type Stats struct {
	// Requests counts REST requests by route ("/", "/pipeline", ...).
	Requests map[string]int `json:"requests"`
	// Commands counts commands by upper-case name, pipelined ones included.
	Commands map[string]int `json:"commands"`
}

// Server is the REST stand-in. Create it with New.
type Server struct {
	token string
	pool  *resp.Pool

	mu      sync.Mutex
	faults  Faults
	stats   Stats
	aliases map[string]string // sha1 of Upstash source → sha1 of what Redis runs
}

// New returns a server that forwards to the Redis at redisAddr and accepts
// token.
func New(redisAddr, token string) *Server {
	s := &Server{token: token, pool: resp.NewPool(redisAddr, 64), aliases: map[string]string{}}
	s.resetStats()
	return s
}

func (s *Server) resetStats() {
	s.stats = Stats{Requests: map[string]int{}, Commands: map[string]int{}}
}

// SetFaults replaces the injected faults.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	s.faults = f
	s.mu.Unlock()
}

// Stats returns a copy of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Stats{Requests: map[string]int{}, Commands: map[string]int{}}
	for k, v := range s.stats.Requests {
		out.Requests[k] = v
	}
	for k, v := range s.stats.Commands {
		out.Commands[k] = v
	}
	return out
}

// ResetStats zeroes the counters.
func (s *Server) ResetStats() {
	s.mu.Lock()
	s.resetStats()
	s.mu.Unlock()
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_dev/") {
		s.control(w, r)
		return
	}
	s.mu.Lock()
	f := s.faults
	s.mu.Unlock()
	if f.LatencyMS > 0 {
		select {
		case <-time.After(time.Duration(f.LatencyMS) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
	}
	if f.Drop {
		hangUp(w)
		return
	}
	if f.Status != 0 {
		writeJSON(w, f.Status, errorBody(fmt.Sprintf("injected fault: HTTP %d", f.Status)))
		return
	}
	if f.LoseAnswers {
		s.serveREST(discard{header: http.Header{}}, r)
		hangUp(w)
		return
	}
	s.serveREST(w, r)
}

// hangUp closes the connection without an answer.
func hangUp(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			c.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// discard is a ResponseWriter for an answer that is lost.
type discard struct{ header http.Header }

func (d discard) Header() http.Header         { return d.header }
func (d discard) Write(p []byte) (int, error) { return len(p), nil }
func (d discard) WriteHeader(int)             {}

func (s *Server) serveREST(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Upstash-Sync-Token", syncToken())
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut:
	default:
		w.Header().Set("Allow", "HEAD, GET, POST, PUT")
		writeJSON(w, http.StatusMethodNotAllowed, errorBody("Method not allowed"))
		return
	}
	if !s.authorized(r) {
		writeJSON(w, http.StatusUnauthorized, errorBody("Unauthorized"))
		return
	}
	switch f := r.Header.Get("Upstash-Response-Format"); f {
	case "", "json":
	default:
		writeJSON(w, http.StatusBadRequest, errorBody("ERR unsupported response format: "+f+" (this stand-in answers json only)"))
		return
	}
	b64 := strings.Contains(strings.ToLower(r.Header.Get("Upstash-Encoding")), "base64")
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequest+1))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody("ERR reading request: "+err.Error()))
		return
	}
	if len(body) > MaxRequest {
		writeJSON(w, http.StatusBadRequest, errorBody(fmt.Sprintf("ERR max request size exceeded. Limit: %d bytes", MaxRequest)))
		return
	}
	route := r.URL.Path
	switch route {
	case "/pipeline", "/multi-exec":
		s.count(route)
		if r.Method != http.MethodPost && r.Method != http.MethodPut {
			writeJSON(w, http.StatusBadRequest, errorBody("ERR "+route+" takes a POST with a JSON array of commands"))
			return
		}
		cmds, err := decodeCommands(body)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody("ERR "+err.Error()))
			return
		}
		if route == "/pipeline" {
			s.pipeline(w, cmds, b64)
		} else {
			s.multiExec(w, cmds, b64)
		}
	case "/":
		s.count("/")
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			writeJSON(w, http.StatusOK, map[string]any{"result": "Welcome to the waiting room's Upstash REST stand-in"})
			return
		}
		cmd, err := decodeCommand(body)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody("ERR "+err.Error()))
			return
		}
		s.single(w, cmd, b64)
	default:
		s.count("/<command>")
		cmd, err := pathCommand(r.URL, body, r.Method)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody("ERR "+err.Error()))
			return
		}
		s.single(w, cmd, b64)
	}
}

func (s *Server) authorized(r *http.Request) bool {
	if h := r.Header.Get("Authorization"); h != "" {
		// Upstash does not fall back to _token when a header is present.
		t, ok := strings.CutPrefix(h, "Bearer ")
		return ok && t == s.token
	}
	return r.URL.Query().Get("_token") == s.token && s.token != ""
}

func (s *Server) count(route string, cmds ...[]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if route != "" {
		s.stats.Requests[route]++
	}
	for _, c := range cmds {
		s.stats.Commands[strings.ToUpper(c[0])]++
	}
}

func (s *Server) single(w http.ResponseWriter, cmd []string, b64 bool) {
	s.count("", cmd)
	v, err := s.pool.Do(s.translate(cmd)...)
	if err != nil {
		writeJSON(w, http.StatusBadGateway, errorBody("Redis unavailable: "+err.Error()))
		return
	}
	v = s.afterScriptLoad(cmd, v)
	if v.Kind == resp.Error {
		writeJSON(w, http.StatusBadRequest, errorBody(v.Str))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"result": toJSON(v, b64, true)})
}

func (s *Server) pipeline(w http.ResponseWriter, cmds [][]string, b64 bool) {
	s.count("", cmds...)
	c, err := s.pool.Get()
	if err != nil {
		writeJSON(w, http.StatusBadGateway, errorBody("Redis unavailable: "+err.Error()))
		return
	}
	items := make([]map[string]any, len(cmds))
	for i, cmd := range cmds {
		v, err := c.Do(s.translate(cmd)...)
		if err != nil {
			c.Close()
			writeJSON(w, http.StatusBadGateway, errorBody("Redis unavailable: "+err.Error()))
			return
		}
		items[i] = item(s.afterScriptLoad(cmd, v), b64)
	}
	s.pool.Put(c)
	writeJSON(w, http.StatusOK, items)
}

func (s *Server) multiExec(w http.ResponseWriter, cmds [][]string, b64 bool) {
	s.count("", cmds...)
	c, err := s.pool.Get()
	if err != nil {
		writeJSON(w, http.StatusBadGateway, errorBody("Redis unavailable: "+err.Error()))
		return
	}
	fail := func(err error) {
		c.Close()
		writeJSON(w, http.StatusBadGateway, errorBody("Redis unavailable: "+err.Error()))
	}
	if _, err := c.Do("MULTI"); err != nil {
		fail(err)
		return
	}
	for _, cmd := range cmds {
		if _, err := c.Do(s.translate(cmd)...); err != nil {
			fail(err)
			return
		}
	}
	v, err := c.Do("EXEC")
	if err != nil {
		fail(err)
		return
	}
	s.pool.Put(c)
	if v.Kind == resp.Error {
		// A command refused while queueing discards the whole transaction.
		writeJSON(w, http.StatusBadRequest, errorBody(v.Str))
		return
	}
	items := make([]map[string]any, len(v.Array))
	for i, e := range v.Array {
		items[i] = item(e, b64)
	}
	writeJSON(w, http.StatusOK, items)
}

func item(v resp.Value, b64 bool) map[string]any {
	if v.Kind == resp.Error {
		return errorBody(v.Str)
	}
	return map[string]any{"result": toJSON(v, b64, true)}
}

func errorBody(msg string) map[string]any { return map[string]any{"error": msg} }

// toJSON turns a reply into the JSON Upstash sends: with base64 encoding
// every string is encoded except a top-level "OK".
func toJSON(v resp.Value, b64, top bool) any {
	switch v.Kind {
	case resp.Status, resp.Bulk, resp.Error:
		if b64 && !(top && v.Kind == resp.Status && v.Str == "OK") {
			return base64.StdEncoding.EncodeToString([]byte(v.Str))
		}
		return v.Str
	case resp.Int:
		return v.Int
	case resp.Array:
		out := make([]any, len(v.Array))
		for i, e := range v.Array {
			out[i] = toJSON(e, b64, false)
		}
		return out
	}
	return nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func syncToken() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// decodeCommand reads one command: a JSON array of strings, numbers
// (kept as their literal text) and booleans.
func decodeCommand(body []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw []any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("invalid command: %v", err)
	}
	return commandArgs(raw)
}

func decodeCommands(body []byte) ([][]string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw [][]any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("invalid command array: %v", err)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("empty command array")
	}
	cmds := make([][]string, len(raw))
	for i, r := range raw {
		c, err := commandArgs(r)
		if err != nil {
			return nil, err
		}
		cmds[i] = c
	}
	return cmds, nil
}

func commandArgs(raw []any) ([]string, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	args := make([]string, len(raw))
	for i, a := range raw {
		switch v := a.(type) {
		case string:
			args[i] = v
		case json.Number:
			args[i] = v.String()
		case bool:
			args[i] = fmt.Sprint(v)
		default:
			return nil, fmt.Errorf("invalid command: argument %d is not a string, number or boolean", i)
		}
	}
	return args, nil
}

// pathCommand reads the command-in-path form: /set/foo/bar, with a POST
// body appended as the last argument and query pairs after it.
func pathCommand(u *url.URL, body []byte, method string) ([]string, error) {
	var args []string
	for _, seg := range strings.Split(strings.Trim(u.EscapedPath(), "/"), "/") {
		a, err := url.PathUnescape(seg)
		if err != nil {
			return nil, fmt.Errorf("invalid path segment %q", seg)
		}
		args = append(args, a)
	}
	if (method == http.MethodPost || method == http.MethodPut) && len(body) > 0 {
		args = append(args, string(body))
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		k, _ = url.QueryUnescape(k)
		v, _ = url.QueryUnescape(v)
		if k == "_token" {
			continue
		}
		args = append(args, k, v)
	}
	return args, nil
}

// shebang matches a Lua script's first line with flags.
var shebang = regexp.MustCompile(`^#!lua([^\n]*)`)

// redisFlags are the shebang flags real Redis knows; Upstash adds others
// (allow-key-locking) that Redis would refuse.
var redisFlags = map[string]bool{"no-writes": true, "allow-oom": true, "allow-stale": true, "no-cluster": true, "allow-cross-slot-keys": true}

// translate rewrites scripting commands for Redis: Upstash-only shebang
// flags are removed, and an EVALSHA of the original source's digest runs
// the rewritten script.
func (s *Server) translate(cmd []string) []string {
	name := strings.ToUpper(cmd[0])
	switch {
	case (name == "EVAL" || name == "EVAL_RO") && len(cmd) > 1:
		out := append([]string(nil), cmd...)
		out[1] = s.normalize(cmd[1])
		return out
	case (name == "EVALSHA" || name == "EVALSHA_RO") && len(cmd) > 1:
		s.mu.Lock()
		alias, ok := s.aliases[strings.ToLower(cmd[1])]
		s.mu.Unlock()
		if ok {
			out := append([]string(nil), cmd...)
			out[1] = alias
			return out
		}
	case name == "SCRIPT" && len(cmd) > 2 && strings.EqualFold(cmd[1], "LOAD"):
		return []string{cmd[0], cmd[1], s.normalize(cmd[2])}
	}
	return cmd
}

// normalize strips unknown shebang flags and remembers the digest alias.
func (s *Server) normalize(src string) string {
	m := shebang.FindStringSubmatchIndex(src)
	if m == nil {
		return src
	}
	var kept []string
	flags := strings.TrimSpace(src[m[2]:m[3]])
	flags = strings.TrimPrefix(flags, "flags=")
	for _, f := range strings.Split(flags, ",") {
		if f = strings.TrimSpace(f); redisFlags[f] {
			kept = append(kept, f)
		}
	}
	// With no flag left, the shebang goes too (a comment keeps the line
	// numbers of error messages): Redis runs the script the same, and the
	// embedded Redis's Lua does not read shebangs at all.
	line := "--"
	if len(kept) > 0 {
		line = "#!lua flags=" + strings.Join(kept, ",")
	}
	out := line + src[m[1]:]
	if out != src {
		s.mu.Lock()
		s.aliases[digest(src)] = digest(out)
		s.mu.Unlock()
	}
	return out
}

// afterScriptLoad makes SCRIPT LOAD answer the digest of the source the
// client sent, as Upstash does, rather than of the rewritten one.
func (s *Server) afterScriptLoad(cmd []string, v resp.Value) resp.Value {
	if v.Kind == resp.Bulk && len(cmd) > 2 && strings.EqualFold(cmd[0], "SCRIPT") && strings.EqualFold(cmd[1], "LOAD") {
		v.Str = digest(cmd[2])
	}
	return v
}

func digest(src string) string {
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:])
}

// control serves /_dev/faults and /_dev/stats, which real Upstash lacks.
func (s *Server) control(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		writeJSON(w, http.StatusUnauthorized, errorBody("Unauthorized"))
		return
	}
	switch {
	case r.URL.Path == "/_dev/faults" && r.Method == http.MethodPost:
		var f Faults
		if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&f); err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody("faults: "+err.Error()))
			return
		}
		s.SetFaults(f)
		writeJSON(w, http.StatusOK, f)
	case r.URL.Path == "/_dev/stats" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.Stats())
	case r.URL.Path == "/_dev/stats" && r.Method == http.MethodDelete:
		s.ResetStats()
		w.WriteHeader(http.StatusNoContent)
	default:
		writeJSON(w, http.StatusNotFound, errorBody("no such control; try POST /_dev/faults, GET or DELETE /_dev/stats"))
	}
}
