package fastlyhost

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/tetratelabs/wazero/api"
)

// hostcall implements one Fastly host call. args are the call's i32/i64
// parameters; the result is its FastlyStatus.
type hostcall func(ctx context.Context, s *state, m api.Memory, args []uint64) Status

// Unsupported lists the Fastly imports the host answers with Unsupported on
// purpose: the guest cache, the image optimizer, trailers and handoffs,
// which the SDK reaches only through paths the waiting room does not take.
// An import in neither this list nor hostcalls fails the import
// guard test, so a new SDK call is noticed rather than silently stubbed.
var Unsupported = map[string]bool{
	"fastly_image_optimizer.transform_image_optimizer_request": true,
	"fastly_http_body.trailer_names_get":                       true,
	"fastly_http_body.trailer_value_get":                       true,
	"fastly_http_body.trailer_values_get":                      true,
	"fastly_http_cache.*":                                      true,
	"fastly_http_req.redirect_to_websocket_proxy_v2":           true,
	"fastly_http_req.redirect_to_grip_proxy_v2":                true,
}

// IsUnsupported reports whether module.name is deliberately unsupported.
func IsUnsupported(module, name string) bool {
	return Unsupported[module+"."+name] || Unsupported[module+".*"]
}

// hostcalls are the implemented Fastly host calls, by "module.name".
var hostcalls = map[string]hostcall{
	"fastly_abi.init": func(_ context.Context, _ *state, _ api.Memory, _ []uint64) Status { return stOK },

	// Requests.
	"fastly_http_req.new": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		h := s.handle()
		s.reqs[h] = &request{method: "GET", uri: "/", header: http.Header{}}
		return write32(m, a[0], h)
	},
	"fastly_http_req.close":                        okIfReq,
	"fastly_http_req.auto_decompress_response_set": okIfReq,
	"fastly_http_req.framing_headers_mode_set":     okIfReq,
	"fastly_http_req.cache_override_v2_set":        okIfReq,
	"fastly_http_req.version_get": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		if s.reqs[u32(a[0])] == nil {
			return stBadf
		}
		return write32(m, a[1], 2) // HTTP/1.1
	},
	"fastly_http_req.method_get": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		r := s.reqs[u32(a[0])]
		if r == nil {
			return stBadf
		}
		return writeBuf(m, a[1], a[2], a[3], []byte(r.method))
	},
	"fastly_http_req.method_set": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		r := s.reqs[u32(a[0])]
		b, ok := read(m, a[1], a[2])
		if r == nil || !ok {
			return stBadf
		}
		r.method = string(b)
		return stOK
	},
	"fastly_http_req.uri_get": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		r := s.reqs[u32(a[0])]
		if r == nil {
			return stBadf
		}
		return writeBuf(m, a[1], a[2], a[3], []byte(r.uri))
	},
	"fastly_http_req.uri_set": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		r := s.reqs[u32(a[0])]
		b, ok := read(m, a[1], a[2])
		if r == nil || !ok {
			return stBadf
		}
		if _, err := url.Parse(string(b)); err != nil {
			return stInval
		}
		r.uri = string(b)
		return stOK
	},
	"fastly_http_req.send_async": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		return s.send(m, a[0], a[1], a[2], a[3], a[4], false)
	},
	"fastly_http_req.send_async_streaming": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		return s.send(m, a[0], a[1], a[2], a[3], a[4], true)
	},
	"fastly_http_req.pending_req_poll_v2": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		p := s.pendings[u32(a[0])]
		if p == nil {
			return stBadf
		}
		select {
		case <-p.done:
		default:
			return both(write32(m, a[1], sendErrOK), write32(m, a[2], 0))
		}
		if st := s.finish(m, p, a[1], a[3], a[4]); st != stOK {
			return st
		}
		return write32(m, a[2], 1)
	},
	"fastly_http_req.pending_req_wait_v2": func(ctx context.Context, s *state, m api.Memory, a []uint64) Status {
		p := s.pendings[u32(a[0])]
		if p == nil {
			return stBadf
		}
		select {
		case <-p.done:
		case <-ctx.Done():
			return stError
		}
		return s.finish(m, p, a[1], a[2], a[3])
	},

	// Responses.
	"fastly_http_resp.new": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		h := s.handle()
		s.resps[h] = &response{status: 200, header: http.Header{}}
		return write32(m, a[0], h)
	},
	"fastly_http_resp.close":                    okIfResp,
	"fastly_http_resp.framing_headers_mode_set": okIfResp,
	"fastly_http_resp.status_get": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		r := s.resps[u32(a[0])]
		if r == nil {
			return stBadf
		}
		return write16(m, a[1], uint16(r.status))
	},
	"fastly_http_resp.status_set": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		r := s.resps[u32(a[0])]
		if r == nil {
			return stBadf
		}
		if a[1] < 100 || a[1] > 999 {
			return stInval
		}
		r.status = int(a[1])
		return stOK
	},
	"fastly_http_resp.header_value_get": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		r := s.resps[u32(a[0])]
		name, ok := read(m, a[1], a[2])
		if r == nil || !ok {
			return stBadf
		}
		v := r.header.Values(string(name))
		if len(v) == 0 {
			return stNone
		}
		return writeBuf(m, a[3], a[4], a[5], []byte(v[0]))
	},

	// Bodies.
	"fastly_http_body.new": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		h := s.handle()
		s.bodies[h] = newBody()
		return write32(m, a[0], h)
	},
	"fastly_http_body.read": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		b := s.bodies[u32(a[0])]
		if b == nil {
			return stBadf
		}
		// The guest's buffer may be huge; reading less is always allowed.
		buf := make([]byte, min(a[2], maxRead))
		n, err := b.read(buf)
		if err != nil {
			s.host.logf("body read: %v", err)
			return stError
		}
		if !m.Write(u32(a[1]), buf[:n]) {
			return stInval
		}
		return write32(m, a[3], uint32(n))
	},
	"fastly_http_body.write": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		b := s.bodies[u32(a[0])]
		data, ok := read(m, a[1], a[2])
		if b == nil || !ok {
			return stBadf
		}
		if err := b.write(data, a[3] == 1); err != nil {
			return stError
		}
		return write32(m, a[4], uint32(len(data)))
	},
	"fastly_http_body.append": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		dst, src := s.bodies[u32(a[0])], s.bodies[u32(a[1])]
		if dst == nil || src == nil {
			return stBadf
		}
		r, _ := src.reader()
		delete(s.bodies, u32(a[1]))
		if err := dst.appendFrom(r); err != nil {
			return stError
		}
		return stOK
	},
	"fastly_http_body.close": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		b := s.bodies[u32(a[0])]
		if b == nil {
			return stBadf
		}
		b.finish(false)
		return stOK
	},
	"fastly_http_body.abandon": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		b := s.bodies[u32(a[0])]
		if b == nil {
			return stBadf
		}
		b.finish(true)
		return stOK
	},
	"fastly_http_body.known_length": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		b := s.bodies[u32(a[0])]
		if b == nil {
			return stBadf
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.src != nil || b.sink != nil {
			return stNone
		}
		return write64(m, a[1], uint64(b.buf.Len()))
	},
	"fastly_http_body.trailer_append": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		if s.bodies[u32(a[0])] == nil {
			return stBadf
		}
		return stOK // trailers are accepted and dropped, as HTTP/1.1 without chunked trailers does
	},

	// Logging.
	"fastly_log.endpoint_get": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		name, ok := read(m, a[0], a[1])
		if !ok || reservedEndpoint(name) {
			return stInval
		}
		h := s.handle()
		s.logs[h] = string(name)
		return write32(m, a[2], h)
	},
	"fastly_log.write": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		name, found := s.logs[u32(a[0])]
		msg, ok := read(m, a[1], a[2])
		if !found || !ok {
			return stBadf
		}
		s.host.writeEntry(name, msg)
		return write32(m, a[3], uint32(len(msg)))
	},
}

// maxRead bounds one body read, so a guest's buffer size never makes the
// host allocate more than this.
const maxRead = 1 << 20

func init() {
	addHeaderCalls("fastly_http_req", func(s *state, h uint32) http.Header {
		if r := s.reqs[h]; r != nil {
			return r.header
		}
		return nil
	})
	addHeaderCalls("fastly_http_resp", func(s *state, h uint32) http.Header {
		if r := s.resps[h]; r != nil {
			return r.header
		}
		return nil
	})
}

// addHeaderCalls defines the header calls requests and responses share;
// headers returns a handle's headers, or nil for an unknown handle.
func addHeaderCalls(module string, headers func(s *state, h uint32) http.Header) {
	hostcalls[module+".header_names_get"] = func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		h := headers(s, u32(a[0]))
		if h == nil {
			return stBadf
		}
		return writeMulti(m, headerNames(h), a[1], a[2], a[3], a[4], a[5])
	}
	hostcalls[module+".header_values_get"] = func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		h := headers(s, u32(a[0]))
		name, ok := read(m, a[1], a[2])
		if h == nil || !ok {
			return stBadf
		}
		return writeMulti(m, h.Values(string(name)), a[3], a[4], a[5], a[6], a[7])
	}
	hostcalls[module+".header_values_set"] = func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		h := headers(s, u32(a[0]))
		if h == nil {
			return stBadf
		}
		return setValues(m, h, a[1], a[2], a[3], a[4])
	}
}

// Values for the SDK's SendErrorDetailTag.
const (
	sendErrOK            = 1
	sendErrConnRefused   = 7
	sendErrConnTimeout   = 9
	sendErrInternalError = 22
)

func okIfReq(_ context.Context, s *state, _ api.Memory, a []uint64) Status {
	if s.reqs[u32(a[0])] == nil {
		return stBadf
	}
	return stOK
}

func okIfResp(_ context.Context, s *state, _ api.Memory, a []uint64) Status {
	if s.resps[u32(a[0])] == nil {
		return stBadf
	}
	return stOK
}

func u32(v uint64) uint32 { return uint32(v) }

func both(statuses ...Status) Status {
	for _, s := range statuses {
		if s != stOK {
			return s
		}
	}
	return stOK
}

func boolStatus(ok bool) Status {
	if ok {
		return stOK
	}
	return stInval
}

func read(m api.Memory, ptr, n uint64) ([]byte, bool) {
	b, ok := m.Read(u32(ptr), u32(n))
	if !ok {
		return nil, false
	}
	return append([]byte(nil), b...), true
}

func write16(m api.Memory, ptr uint64, v uint16) Status {
	var b [2]byte
	binary.LittleEndian.PutUint16(b[:], v)
	return boolStatus(m.Write(u32(ptr), b[:]))
}

func write32(m api.Memory, ptr uint64, v uint32) Status {
	return boolStatus(m.WriteUint32Le(u32(ptr), v))
}

func write64(m api.Memory, ptr uint64, v uint64) Status {
	return boolStatus(m.WriteUint64Le(u32(ptr), v))
}

// writeBuf writes v into the guest buffer (ptr, max), or reports the size
// needed with BufLen, which the SDK retries with a larger buffer.
func writeBuf(m api.Memory, ptr, max, nwritten uint64, v []byte) Status {
	if uint64(len(v)) > max {
		return both(write32(m, nwritten, uint32(len(v))), stBufLen)
	}
	return both(boolStatus(m.Write(u32(ptr), v)), write32(m, nwritten, uint32(len(v))))
}

// writeMulti writes as many whole NUL-terminated values as fit, from index
// cursor, and the cursor to continue from (-1 when done).
func writeMulti(m api.Memory, values []string, ptr, max, cursor, endingCursor, nwritten uint64) Status {
	i := int(u32(cursor))
	var out []byte
	for ; i < len(values); i++ {
		v := values[i]
		if uint64(len(out)+len(v)+1) > max {
			if len(out) == 0 {
				return both(write32(m, nwritten, uint32(len(v)+1)), stBufLen)
			}
			break
		}
		out = append(append(out, v...), 0)
	}
	next := int64(i)
	if i >= len(values) {
		next = -1
	}
	return both(boolStatus(m.Write(u32(ptr), out)), write64(m, endingCursor, uint64(next)), write32(m, nwritten, uint32(len(out))))
}

// setValues replaces a header's values with the NUL-separated list given.
func setValues(m api.Memory, h http.Header, namePtr, nameLen, valPtr, valLen uint64) Status {
	name, ok1 := read(m, namePtr, nameLen)
	vals, ok2 := read(m, valPtr, valLen)
	if !ok1 || !ok2 {
		return stInval
	}
	key := http.CanonicalHeaderKey(string(name))
	h.Del(key)
	for _, v := range strings.Split(strings.TrimSuffix(string(vals), "\x00"), "\x00") {
		h[key] = append(h[key], v)
	}
	return stOK
}

func headerNames(h http.Header) []string {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, strings.ToLower(k))
	}
	sort.Strings(names)
	return names
}

func writeIP(m api.Memory, ip net.IP, ptr, nwritten uint64) Status {
	if ip == nil {
		return stNone
	}
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	}
	return both(boolStatus(m.Write(u32(ptr), ip)), write32(m, nwritten, uint32(len(ip))))
}

func (b *body) read(p []byte) (int, error) {
	b.mu.Lock()
	if b.buf.Len() > 0 {
		defer b.mu.Unlock()
		return b.buf.Read(p)
	}
	src := b.src
	b.mu.Unlock()
	if src == nil || len(p) == 0 {
		return 0, nil
	}
	// A read that returns no bytes means the end to the guest, so keep
	// reading until there are bytes or the source really ends.
	for {
		n, err := src.Read(p)
		if n > 0 {
			return n, nil
		}
		if errors.Is(err, io.EOF) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

func (b *body) write(p []byte, front bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return errors.New("write to a closed body")
	}
	if b.sink != nil && !front {
		if _, err := b.sink.Write(p); err != nil {
			return err
		}
		if b.flush != nil {
			b.flush()
		}
		return nil
	}
	if front {
		rest := append([]byte(nil), b.buf.Bytes()...)
		b.buf.Reset()
		b.buf.Write(p)
		b.buf.Write(rest)
		return nil
	}
	b.buf.Write(p)
	return nil
}

func (b *body) appendFrom(r io.Reader) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if werr := b.write(buf[:n], false); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (b *body) finish(abandoned bool) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	done := b.close
	b.mu.Unlock()
	if done != nil {
		done(abandoned)
	}
}

// framing headers are the host's to set, as in Fastly's automatic mode.
var framing = []string{"Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive"}

// sendDownstream starts the client's response: the status and headers now,
// the body now (buffered) or as the guest writes it (streaming).
func (s *state) sendDownstream(r *response, b *body, streaming bool) Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent {
		return stError
	}
	s.sent = true
	h := s.w.Header()
	for k, v := range r.header {
		h[k] = append([]string(nil), v...)
	}
	for _, k := range framing {
		h.Del(k)
	}
	data, n := b.reader()
	if !streaming && n >= 0 {
		h.Set("Content-Length", fmt.Sprint(n))
	}
	s.w.WriteHeader(r.status)
	flusher, _ := s.w.(http.Flusher)
	if _, err := io.Copy(s.w, data); err != nil {
		s.host.logf("response body: %v", err)
	}
	if !streaming {
		return stOK
	}
	b.mu.Lock()
	b.buf.Reset()
	b.src = nil
	b.sink = s.w
	if flusher != nil {
		flusher.Flush()
		b.flush = flusher.Flush
	}
	b.mu.Unlock()
	return stOK
}

// send starts a backend request and returns its pending handle.
func (s *state) send(m api.Memory, reqH, bodyH, namePtr, nameLen, pendingOut uint64, streaming bool) Status {
	p, st := s.start(m, reqH, bodyH, namePtr, nameLen, streaming)
	if st != stOK {
		return st
	}
	h := s.handle()
	s.pendings[h] = p
	return write32(m, pendingOut, h)
}

// start starts a backend request. A request to a backend the instance
// does not know fails with Inval, which the SDK reports as
// ErrBackendNotFound.
func (s *state) start(m api.Memory, reqH, bodyH, namePtr, nameLen uint64, streaming bool) (*pending, Status) {
	r, b := s.reqs[u32(reqH)], s.bodies[u32(bodyH)]
	name, ok := read(m, namePtr, nameLen)
	if r == nil || b == nil || !ok {
		return nil, stBadf
	}
	backend, via, found := s.backend(string(name))
	if !found {
		return nil, stInval
	}
	guest, err := url.Parse(r.uri)
	if err != nil {
		return nil, stInval
	}
	target, err := upstreamURL(backend.URL, r.uri)
	if err != nil {
		s.host.logf("backend request: %v", err)
		return nil, stInval
	}
	if via != nil {
		target.Scheme, target.Host = via.Scheme, via.Host
	}
	var content io.Reader
	length := int64(-1)
	if streaming {
		pr, pw := io.Pipe()
		buffered, _ := b.reader()
		content = io.MultiReader(buffered, pr)
		b.mu.Lock()
		b.buf.Reset()
		b.src = nil
		b.sink = pw
		b.close = func(abandoned bool) {
			if abandoned {
				pw.CloseWithError(errors.New("body abandoned"))
			} else {
				pw.Close()
			}
		}
		b.mu.Unlock()
	} else {
		content, length = b.reader()
	}
	// Requests outlive host calls, so they follow the guest instance's
	// deadline rather than one call's context.
	req, err := http.NewRequestWithContext(s.client.Context(), r.method, "/", content)
	if err != nil {
		return nil, stInval
	}
	req.URL = target
	req.ContentLength = length
	if length == 0 {
		req.Body = http.NoBody
	}
	for k, v := range r.header {
		req.Header[k] = append([]string(nil), v...)
	}
	for _, k := range framing {
		req.Header.Del(k)
	}
	req.Header.Del("Host")
	// Viceroy's rule: override_host, else the guest's Host header, else
	// the guest URI's authority.
	switch {
	case backend.OverrideHost != "":
		req.Host = backend.OverrideHost
	case r.header.Get("Host") != "":
		req.Host = r.header.Get("Host")
	default:
		req.Host = guest.Host
	}
	// Go's client would add its own User-Agent; Viceroy's hyper client
	// sends only the guest's headers.
	if _, set := req.Header["User-Agent"]; !set {
		req.Header["User-Agent"] = nil
	}
	p := &pending{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.resp, p.err = s.host.client.Do(req)
	}()
	return p, stOK
}

// finish turns a completed backend request into response and body handles,
// or into the send error the SDK reports.
func (s *state) finish(m api.Memory, p *pending, errDetail, respOut, bodyOut uint64) Status {
	if p.err != nil {
		s.host.logf("backend request: %v", p.err)
		tag := uint32(sendErrInternalError)
		var ne net.Error
		switch {
		case errors.As(p.err, &ne) && ne.Timeout():
			tag = sendErrConnTimeout
		case strings.Contains(p.err.Error(), "connection refused"):
			tag = sendErrConnRefused
		}
		write32(m, errDetail, tag)
		write32(m, errDetail+4, 0)
		return stError
	}
	resp := &response{status: p.resp.StatusCode, header: p.resp.Header.Clone()}
	rh := s.handle()
	s.resps[rh] = resp
	b := newBody()
	b.src, b.srcLen = p.resp.Body, p.resp.ContentLength
	bh := s.handle()
	s.bodies[bh] = b
	return both(write32(m, errDetail, sendErrOK), write32(m, respOut, rh), write32(m, bodyOut, bh))
}
