package fastlyhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/tetratelabs/wazero/sys"
)

// Reusable sandboxes, as Viceroy has them (src/execute.rs, src/sandbox.rs,
// src/sandbox/async_item.rs): every client request gets the next request
// ID; a request goes to the sandbox that most recently asked for one
// (fastly_http_downstream.next_request) and still waits, else to a fresh
// instance, whose sandbox ID (its FASTLY_TRACE_ID) is the ID of the first
// request it serves. A request handed to a sandbox that then stops waiting
// without taking it is served by a fresh instance instead, so none is lost.

// Viceroy's limits on reuse.
const (
	// nextReqAcceptMax is how many requests a sandbox may take after its
	// first (NEXT_REQ_ACCEPT_MAX); past it, next_request promises nothing.
	nextReqAcceptMax = 5
	// nextReqPendingMax bounds the promises waiting for a request at once
	// (NEXT_REQ_PENDING_MAX); like Viceroy's, the list keeps a promise the
	// sandbox gave up until a request comes past it.
	nextReqPendingMax = 5
	// nextReqTimeout is the longest, and the default, wait for a next
	// request (NEXT_REQ_TIMEOUT).
	nextReqTimeout = 10 * time.Second
)

// downstream is one client request, with the metadata Viceroy keeps for it
// (DownstreamMetadata in src/downstream.rs) and where its response goes.
type downstream struct {
	id     uint64
	w      http.ResponseWriter
	r      *http.Request
	header http.Header // as received, with Host: the guest's copy and the original headers
	client net.IP
	server net.IP

	// released is closed when ServeHTTP may return: the response is
	// complete and the sandbox has moved on, or the sandbox has ended. The
	// fields below are the sandbox's and are read only after released.
	released chan struct{}
	err      error // the sandbox's failure, when it ended while serving this request
	sent     bool  // the guest sent a response
	timedOut bool

	// complete: the response is sent, and its body too when streamed.
	// asked: the guest asked for another request after this one.
	complete, asked, done bool
	stopClient            func() bool
}

func newDownstream(w http.ResponseWriter, r *http.Request, id uint64) *downstream {
	header := r.Header.Clone()
	header.Set("Host", r.Host)
	d := &downstream{id: id, w: w, r: r, header: header, released: make(chan struct{})}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		d.client = net.ParseIP(host)
	}
	if tcp, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok {
		d.server = tcp.IP
	}
	return d
}

// guestRequest is the request as the guest sees it.
func (d *downstream) guestRequest() *request {
	return &request{method: d.r.Method, uri: guestURI(d.r), header: d.header.Clone()}
}

// guestURI is the URI the guest reads for r: the target as the client sent
// it, not re-encoded from r.URL, after the Host, as Viceroy's
// prepare_request (src/downstream.rs) builds it.
func guestURI(r *http.Request) string {
	return "http://" + r.Host + pathAndQuery(r.RequestURI)
}

// waiter is a sandbox's standing promise to take a request (an entry of
// Viceroy's pending_reuse).
type waiter struct {
	next   chan *downstream // holds at most the one request handed over
	closed bool             // guarded by Host.waitMu
}

// nextRequest is the object behind a request promise handle.
type nextRequest struct {
	waiter   *waiter // nil: the promise resolves to no request
	deadline time.Time
}

// register adds a waiter, or returns nil when enough already wait.
func (h *Host) register() *waiter {
	h.waitMu.Lock()
	defer h.waitMu.Unlock()
	if len(h.waiting) >= nextReqPendingMax {
		return nil
	}
	w := &waiter{next: make(chan *downstream, 1)}
	h.waiting = append(h.waiting, w)
	return w
}

// handOff gives d to the sandbox that most recently asked and still
// waits, as Viceroy's reuse_or_spawn_guest pops its list.
func (h *Host) handOff(d *downstream) bool {
	h.waitMu.Lock()
	defer h.waitMu.Unlock()
	for len(h.waiting) > 0 {
		w := h.waiting[len(h.waiting)-1]
		h.waiting = h.waiting[:len(h.waiting)-1]
		if !w.closed {
			w.closed = true
			w.next <- d
			return true
		}
	}
	return false
}

// withdraw closes w and returns the request handed to it, if any.
func (h *Host) withdraw(w *waiter) *downstream {
	h.waitMu.Lock()
	w.closed = true
	h.waitMu.Unlock()
	select {
	case d := <-w.next:
		return d
	default:
		return nil
	}
}

// sandbox is one instance of the module and the requests it serves, one
// after another.
type sandbox struct {
	host   *Host
	state  *state
	id     uint64
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer // nil: no time limit but the parent context's

	// current is the request being served, under handle; open are the
	// requests whose ServeHTTP still waits (a streamed response may outlive
	// its turn).
	current  *downstream
	handle   uint32
	open     []*downstream
	meta     map[uint32]*downstream // downstream request handles
	accepted int                    // requests taken after the first
	served   int                    // requests taken, the first included
	promise  uint32                 // the outstanding request promise, or 0
}

type sandboxKey struct{}

// sandboxOf returns the sandbox a host call runs in.
func sandboxOf(ctx context.Context) *sandbox {
	sb, _ := ctx.Value(sandboxKey{}).(*sandbox)
	return sb
}

// newSandbox prepares an instance serving d first. Each request it takes
// gets timeout (none if 0) to be answered in.
func (h *Host) newSandbox(parent context.Context, d *downstream, timeout time.Duration) *sandbox {
	ctx, cancel := context.WithCancelCause(parent)
	sb := &sandbox{host: h, id: d.id, ctx: ctx, cancel: cancel, meta: map[uint32]*downstream{}}
	if timeout > 0 {
		sb.timer = time.AfterFunc(timeout, func() { cancel(context.DeadlineExceeded) })
	}
	sb.state = h.newState()
	sb.take(d)
	return sb
}

// take makes d the request being served: new request and body handles
// (the same number, as for the first request), the response going to d's
// client, and the time limit starting again.
func (sb *sandbox) take(d *downstream) {
	s := sb.state
	sb.served++
	if sb.served > 1 {
		// Viceroy's log names only the request; saying which sandbox
		// serves it shows reuse at work (make serve, the benchmarks).
		sb.host.logf("fastlyhost: sandbox %d serves request %d (reused: its request %d)", sb.id, d.id, sb.served)
	}
	h := s.handle()
	s.reqs[h] = d.guestRequest()
	s.bodies[h] = &body{src: d.r.Body, srcLen: d.r.ContentLength}
	sb.meta[h] = d
	sb.current, sb.handle = d, h
	sb.open = append(sb.open, d)
	// A client that goes away takes the instance serving it along, as it
	// always has here; Viceroy lets such a guest run on.
	d.stopClient = context.AfterFunc(d.r.Context(), func() { sb.cancel(context.Cause(d.r.Context())) })
	if sb.timer != nil {
		sb.timer.Reset(sb.host.timeout)
	}
	s.mu.Lock()
	s.w, s.sent = d.w, false
	s.mu.Unlock()
	// Backend requests follow the instance, not one client's connection.
	s.client = d.r.WithContext(sb.ctx)
}

// release lets d's ServeHTTP return once its response is complete and the
// guest has asked for another request. A guest that never asks keeps its
// client until it ends, as before sandboxes were reused: the response is
// whole, and whatever the guest does after answering is done, when the
// client hears back.
func (sb *sandbox) release(d *downstream) {
	if d.done || !d.complete || !d.asked {
		return
	}
	d.sent = true
	sb.close(d)
}

// close ends d's wait in ServeHTTP.
func (sb *sandbox) close(d *downstream) {
	d.done = true
	d.stopClient()
	close(d.released)
	for i, o := range sb.open {
		if o == d {
			sb.open = append(sb.open[:i], sb.open[i+1:]...)
			break
		}
	}
}

// responded marks d's response complete.
func (sb *sandbox) responded(d *downstream) {
	d.complete = true
	sb.release(d)
}

// await waits for the request p promises, until its deadline.
func (sb *sandbox) await(ctx context.Context, p *nextRequest) *downstream {
	if p.waiter == nil {
		return nil
	}
	timer := time.NewTimer(time.Until(p.deadline))
	defer timer.Stop()
	select {
	case d := <-p.waiter.next:
		return d
	case <-timer.C:
	case <-ctx.Done():
	case <-sb.host.closing:
	}
	// Past the deadline Viceroy still takes a request already handed over.
	d := sb.host.withdraw(p.waiter)
	if d != nil && ctx.Err() != nil {
		sb.host.spawn(d)
		return nil
	}
	return d
}

// run runs the instance to its end and settles every request still
// waiting on it.
func (sb *sandbox) run(argv []string, stdout, stderr io.Writer) error {
	err := sb.host.instantiate(sb, argv, stdout, stderr)
	if sb.timer != nil {
		sb.timer.Stop()
	}
	if p, ok := lookup[*nextRequest](sb.state, uint64(sb.promise)); ok && p.waiter != nil {
		if d := sb.host.withdraw(p.waiter); d != nil {
			sb.host.spawn(d)
		}
	}
	var exit *sys.ExitError
	timedOut := errors.Is(context.Cause(sb.ctx), context.DeadlineExceeded)
	switch {
	case err == nil, errors.As(err, &exit) && exit.ExitCode() == 0:
		err = nil
	case timedOut:
		err = fmt.Errorf("no answer within %v", sb.host.timeout)
	}
	sb.cancel(nil)
	s := sb.state
	s.mu.Lock()
	sent := s.sent
	s.mu.Unlock()
	if d := sb.current; d.done && err != nil {
		// Its client has its answer already; only the log can tell.
		sb.host.logf("%s %s: guest failed after answering: %v", d.r.Method, d.r.URL.RequestURI(), err)
	}
	for _, d := range append([]*downstream(nil), sb.open...) {
		if d == sb.current {
			d.err, d.sent, d.timedOut = err, sent, timedOut
		} else {
			d.sent = true // a streamed response, which ends with the instance
		}
		sb.close(d)
	}
	return err
}

// spawn serves d with a fresh instance.
func (h *Host) spawn(d *downstream) {
	h.sandboxes.Add(1)
	sb := h.newSandbox(context.Background(), d, h.timeout)
	h.running.Add(1)
	h.live.Add(1)
	go func() {
		defer h.running.Done()
		defer h.live.Add(-1)
		out := &lineWriter{log: h.log}
		sb.run([]string{"main.wasm"}, out, out)
		out.Flush()
	}()
}

// answer tells d's client what became of its request, once released.
func (h *Host) answer(d *downstream) {
	w, r := d.w, d.r
	switch {
	case d.err != nil && !d.sent:
		code := http.StatusInternalServerError
		if d.timedOut {
			code = http.StatusGatewayTimeout
		}
		h.logf("%s %s: guest failed: %v", r.Method, r.URL.RequestURI(), d.err)
		http.Error(w, fmt.Sprintf("fastlyhost: the service failed: %v", d.err), code)
	case d.err != nil:
		h.logf("%s %s: guest failed after answering: %v", r.Method, r.URL.RequestURI(), d.err)
	case !d.sent:
		h.logf("%s %s: guest sent no response", r.Method, r.URL.RequestURI())
		http.Error(w, "fastlyhost: the service sent no response", http.StatusInternalServerError)
	}
}
