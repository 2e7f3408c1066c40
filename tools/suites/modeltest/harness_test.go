package modeltest

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/native"
	"github.com/edgequeue/waitingroom/tools/redistest"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

// tb is what the harness needs of a test: *testing.T for the named
// sequences, *rapid.T for drawn ones.
type tb interface {
	Helper()
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// env is one redis-server and the Upstash stand-in in front of it, shared
// by every sequence of a test; each sequence has a room of its own.
type env struct {
	st     *store.Upstash
	srv    *upstashdev.Server
	redis  string // the redis-server's address
	script *scriptTransport
	rooms  int
	seen   map[string]int // what the sequences exercised
}

// newEnv starts the store. MODELTEST_SCRIPT names a script to run instead
// of the one package store embeds (it must speak the same protocol), so a
// fixed script can be checked against the model, or an old one shown to
// fail it.
func newEnv(t testing.TB) *env {
	e := &env{redis: redistest.Start(t), seen: map[string]int{}}
	e.srv = upstashdev.New(e.redis, redistest.Token)
	hs := httptest.NewServer(e.srv)
	t.Cleanup(hs.Close)
	if path := os.Getenv("MODELTEST_SCRIPT"); path != "" {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha1.Sum(src)
		e.script = &scriptTransport{src: string(src), sha: hex.EncodeToString(sum[:])}
		t.Logf("running the script in %s", path)
	}
	e.st = e.client(hs.URL, native.Upstash{})
	return e
}

// client is a store on the stand-in at url through tr.
func (e *env) client(url string, tr store.Transport) *store.Upstash {
	if e.script != nil {
		s := *e.script
		s.inner = tr
		tr = s
	}
	return &store.Upstash{URL: url, Token: redistest.Token, Transport: tr, Timeout: 10 * time.Second,
		RandomKey: "modeltest-random-key"}
}

// scriptTransport sends another script in place of the embedded one: it
// rewrites EVALSHA's digest and EVAL's source. The stand-in answers an
// EVALSHA of a script it has not seen with NOSCRIPT, and store.Upstash
// then sends the source.
type scriptTransport struct {
	inner    store.Transport
	src, sha string
}

func (s scriptTransport) RoundTrip(ctx context.Context, req store.Request) (store.Response, error) {
	var cmd []string
	if err := json.Unmarshal(req.Body, &cmd); err == nil && len(cmd) > 1 {
		switch strings.ToUpper(cmd[0]) {
		case "EVALSHA":
			cmd[1] = s.sha
		case "EVAL":
			cmd[1] = s.src
		}
		body, err := json.Marshal(cmd)
		if err != nil {
			return store.Response{}, err
		}
		req.Body = body
	}
	return s.inner.RoundTrip(ctx, req)
}

// basePolicy is a room's policy with these limits and the timeouts above.
func basePolicy(capacity int, perMinute float64, burst int, share float64) store.Policy {
	return store.Policy{PerMinute: perMinute, Burst: burst, Capacity: capacity,
		ClaimWindow: claimWindow, SessionTTL: sessionTTL, QueueTimeout: queueTimeout,
		CatchUp: catchUp, Heartbeat: heartbeat, PriorityShare: share}
}

// visitor is one client of the room, as the edge keeps it in its passes.
type visitor struct {
	name    string
	arrival string
	// arrived is when the arrival pass was first presented (zero: not
	// yet), past the arrivals the visitor held before, and when each was
	// first presented: a client keeps every pass it was given, and may
	// present any of them until it expires (queue.ArrivalTTL).
	arrived time.Time
	past    []pastArrival
	invite  *store.Invite // nil: the regular lane
	ticket  store.Ticket
	session store.SessionRef
	done    bool // ended their session, and left
}

// pastArrival is an arrival pass a visitor held before its current one.
type pastArrival struct {
	id      string
	arrived time.Time
}

// harness drives one room: the store, the model, the visitors and the
// clock. Every store call goes through do, which checks its answer.
type harness struct {
	t        tb
	st       *store.Upstash
	room     string
	now      time.Time
	ev       *store.Event
	m        *model
	vs       []*visitor
	arrivals int
	calls    int
	// priority sums the priority tickets the store reported handed out,
	// over every line; granted the uses of the invites presented.
	priority, pLine int64
	granted         int64
	invites         map[string]bool
	// maxGap, when set, bounds the silence between two calls (a Stats
	// call fills a longer one); lastCall is when the last call was made.
	maxGap   time.Duration
	lastCall time.Time
	// down is the POP's down marker: the latest store failure it
	// observed, which every call carries (Policy.FailedAt).
	down time.Time
}

func (e *env) harness(t tb, p store.Policy) *harness {
	e.rooms++
	t.Logf("policy: capacity %d, %g a minute, burst %d, priority share %g", p.Capacity, p.PerMinute, p.Burst, p.PriorityShare)
	return &harness{t: t, st: e.st, room: fmt.Sprint("m", e.rooms), now: t0, m: newModel(p), invites: map[string]bool{}}
}

var ctx = context.Background()

// when shows the clock, as the offset from the sequence's start.
func (h *harness) when() string { return clock(h.now.UnixMilli()) }

// do makes call c for who, and checks the answer against the model.
func (h *harness) do(who string, c call) answer {
	h.t.Helper()
	p := h.m.p
	p.Event, p.FailedAt = h.ev, h.down
	c.down = h.down
	var a answer
	var err error
	switch c.op {
	case "join":
		a.place, err = h.st.Join(ctx, h.room, p, store.Arrival{ID: c.arrival}, h.now)
	case "vip":
		a.place, err = h.st.JoinPriority(ctx, h.room, p, c.arrival, c.invite, h.now)
	case "poll":
		a.place, err = h.st.Poll(ctx, h.room, p, c.ticket, h.now)
	case "renew":
		a.ok, a.line, err = h.st.Renew(ctx, h.room, p, c.ref, h.now)
	case "end":
		a.line, err = h.st.End(ctx, h.room, p, c.ref, h.now)
	case "stats":
		a.line, err = h.st.Stats(ctx, h.room, p, h.now)
	default:
		a.line, err = h.st.Operate(ctx, h.room, p, store.Action{Op: c.op, N: c.n, Set: c.set,
			Actor: store.Actor{Via: "api", Client: "modeltest"}}, h.now)
	}
	if c.op == "join" || c.op == "vip" || c.op == "poll" {
		a.line = a.place.Line
	}
	if err != nil {
		h.t.Fatalf("%s %s: store call failed: %v", who, c.op, err)
	}
	h.calls++
	h.lastCall = h.now
	h.t.Logf("%s %s %s", h.when(), who, describe(c, a))
	if err := h.m.step(h.now.UnixMilli(), c, h.ev, a); err != nil {
		var mm *mismatch
		if !errors.As(err, &mm) {
			h.t.Fatalf("%v", err)
		}
		h.t.Logf("MISMATCH: %s", mm.detail)
		h.t.Fatalf("%s", mm.check)
	}
	h.countPriority(c, a.line)
	switch c.op {
	case "join", "vip", "poll":
		h.m.seen[c.op+" answered "+outcomeName(a.place.Outcome)]++
	case "renew":
		h.m.seen[fmt.Sprint("renew answered ", a.ok)]++
	}
	return a
}

// countPriority checks that every priority ticket the store reports
// handed out traces to a use of an invite presented.
func (h *harness) countPriority(c call, l store.Line) {
	h.t.Helper()
	if c.op == "vip" && !h.invites[c.invite.ID] {
		h.invites[c.invite.ID] = true
		h.granted += int64(c.invite.Uses)
	}
	if c.op == store.OpReset {
		h.pLine = 0
	}
	if l.PriorityIssued > h.pLine {
		h.priority += l.PriorityIssued - h.pLine
		h.pLine = l.PriorityIssued
	}
	if h.priority > h.granted {
		h.t.Fatalf("every priority ticket uses an invite's use: %d handed out, %d uses granted", h.priority, h.granted)
	}
}

// describe is one line of a sequence's log: the call and its answer.
func describe(c call, a answer) string {
	var s string
	switch c.op {
	case "join":
		s = fmt.Sprintf("join %s -> %s ticket %d", c.arrival, outcomeName(a.place.Outcome), a.place.Ticket)
	case "vip":
		s = fmt.Sprintf("join %s with invite %s (%d uses) -> %s ticket %d", c.arrival, c.invite.ID, c.invite.Uses,
			outcomeName(a.place.Outcome), a.place.Ticket)
	case "poll":
		s = fmt.Sprintf("poll ticket %d of epoch %d -> %s ticket %d", c.ticket.Number, c.ticket.Epoch,
			outcomeName(a.place.Outcome), a.place.Ticket)
	case "renew", "end":
		s = fmt.Sprintf("%s session %s (pass usable until %s", c.op, c.ref.ID, clock(c.ref.UsableUntil.UnixMilli()))
		if !c.ref.FailedAt.IsZero() {
			s += ", renewal failed at " + clock(c.ref.FailedAt.UnixMilli())
		}
		s += ")"
		if c.op == "renew" {
			s += fmt.Sprintf(" -> %v", a.ok)
		}
	case store.OpAdmit:
		s = fmt.Sprintf("operator: admit %d", c.n)
	case store.OpLimits:
		s = "operator: limits " + overridesString(c.set)
	default:
		s = "operator: " + c.op
	}
	l := a.line
	return s + fmt.Sprintf("  [issued %d admitted %d, priority %d/%d, active %d called %d, called now %d]",
		l.Issued, l.Admitted, l.PriorityAdmitted, l.PriorityIssued, l.Active, l.Called, l.CalledNow)
}

// advance moves the clock on, with no call (unless maxGap asks for one).
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	to := h.now.Add(d)
	for h.maxGap > 0 && h.calls > 0 && to.Sub(h.lastCall) > h.maxGap {
		h.now = h.lastCall.Add(h.maxGap)
		h.do("someone", call{op: "stats"})
	}
	h.now = to
}

// newVisitor is a newcomer with an arrival pass of their own (and an
// invite, for the priority lane).
func (h *harness) newVisitor(inv *store.Invite) *visitor {
	v := &visitor{name: fmt.Sprint("v", len(h.vs)+1), invite: inv}
	h.fresh(v)
	h.vs = append(h.vs, v)
	return v
}

// fresh gives v a new arrival pass, as the edge does to a newcomer and
// to a holder whose place is gone; v keeps the one it held.
func (h *harness) fresh(v *visitor) {
	if !v.arrived.IsZero() {
		v.past = append(v.past, pastArrival{v.arrival, v.arrived})
	}
	h.arrivals++
	v.arrival, v.arrived = fmt.Sprint("a", h.arrivals), time.Time{}
}

// expired reports whether an arrival pass first presented at arrived can
// no longer be: the edge refuses it, and gives a new one.
func (h *harness) expired(arrived time.Time) bool {
	return !arrived.IsZero() && h.now.Sub(arrived) >= queue.ArrivalTTL
}

// replayable lists the arrival passes v may still present: the current
// one and the earlier ones, until each expires.
func (h *harness) replayable(v *visitor) []string {
	var ids []string
	if !h.expired(v.arrived) {
		ids = append(ids, v.arrival)
	}
	for _, a := range v.past {
		if !h.expired(a.arrived) {
			ids = append(ids, a.id)
		}
	}
	return ids
}

// next is the call v's page makes now: a renewal of their session, a
// poll of their ticket, or a join with their arrival pass.
func (h *harness) next(v *visitor) (call, bool) {
	switch {
	case v.done:
		return call{}, false
	case v.session.ID != "":
		return call{op: "renew", ticket: sessionTicket(v.session), ref: v.session}, true
	case v.ticket.Number != 0:
		return call{op: "poll", ticket: v.ticket}, true
	}
	return h.joinCall(v), true
}

// sessionTicket is the ticket a session was (its id is
// "<epoch>.<ticket>"): a visitor's page may hold a session and, after a
// replayed arrival took a new ticket, a ticket besides.
func sessionTicket(s store.SessionRef) store.Ticket {
	var t store.Ticket
	fmt.Sscanf(s.ID, "%d.%d", &t.Epoch, &t.Number)
	return t
}

// joinCall is v's join, with their arrival pass (a new one once it
// expired) and invite.
func (h *harness) joinCall(v *visitor) call {
	if h.expired(v.arrived) {
		h.fresh(v)
	}
	if v.arrived.IsZero() {
		v.arrived = h.now
	}
	return h.joinWith(v, v.arrival)
}

// joinWith is v's join with the arrival pass arrival.
func (h *harness) joinWith(v *visitor, arrival string) call {
	if v.invite != nil {
		return call{op: "vip", arrival: arrival, invite: *v.invite}
	}
	return call{op: "join", arrival: arrival}
}

// visit makes v's next call, and reports whether v had one to make.
func (h *harness) visit(v *visitor) bool {
	h.t.Helper()
	c, ok := h.next(v)
	if ok {
		h.apply(v, c, h.do(v.name, c))
	}
	return ok
}

// apply is what v's page makes of an answer.
func (h *harness) apply(v *visitor, c call, a answer) {
	switch c.op {
	case "join", "vip", "poll":
		switch a.place.Outcome {
		case store.Waiting, store.Admitted:
			v.ticket = store.Ticket{Number: a.place.Ticket, Epoch: a.line.Epoch}
		case store.Lost:
			// The edge sends the holder back to the door with a new
			// arrival pass.
			v.ticket, v.session = store.Ticket{}, store.SessionRef{}
			h.fresh(v)
		}
		if a.place.Outcome == store.Admitted {
			v.session = store.SessionRef{ID: a.place.Session, Epoch: a.line.Epoch, UsableUntil: h.now.Add(heartbeat)}
		}
	case "renew":
		if a.ok {
			v.session.UsableUntil, v.session.FailedAt = h.now.Add(heartbeat), time.Time{}
		} else {
			// The holder is a newcomer again, sent through the join door
			// with a new arrival pass.
			v.ticket, v.session = store.Ticket{}, store.SessionRef{}
			h.fresh(v)
		}
	case "end":
		v.ticket, v.session, v.done = store.Ticket{}, store.SessionRef{}, true
	}
}

// endSession is v leaving: their page ends the session.
func (h *harness) endSession(v *visitor) {
	h.t.Helper()
	c := call{op: "end", ticket: sessionTicket(v.session), ref: v.session}
	h.apply(v, c, h.do(v.name, c))
}

// replay is one of v's arrival passes presented again (a second tab, a
// reload, a bot that keeps its passes): what the answer says of the
// current one is v's; of an earlier one, only the model's.
func (h *harness) replay(v *visitor, arrival string) {
	h.t.Helper()
	c := h.joinWith(v, arrival)
	a := h.do(v.name+" (replay)", c)
	if arrival == v.arrival {
		if v.arrived.IsZero() {
			v.arrived = h.now
		}
		h.apply(v, c, a)
	}
}

// lose is v's next call whose answer is lost on the way back: the store
// did the work, the page never heard, and retries the same call after
// delay.
func (h *harness) lose(v *visitor, delay time.Duration) {
	h.t.Helper()
	c, ok := h.next(v)
	if !ok {
		return
	}
	h.do(v.name+" (answer lost)", c)
	h.advance(delay)
	h.apply(v, c, h.do(v.name+" (retry)", c))
}

// keepCalling runs the room for d: every period, each visitor in callers
// makes their next call, and the rest stay silent (and lapse). When no
// caller has a call to make, someone else's Stats call keeps the room
// busy, as a room's other visitors do.
func (h *harness) keepCalling(d, period time.Duration, callers []*visitor) {
	h.t.Helper()
	for t := period; t <= d; t += period {
		h.advance(period)
		busy := false
		for _, v := range callers {
			busy = h.visit(v) || busy
		}
		if !busy {
			h.do("someone", call{op: "stats"})
		}
	}
}

// Who saw an outage, for outage.
const (
	// seenByPOP: the POP's calls failed (its down marker, which every
	// call carries from then on) and so did the session holders'
	// renewals (their unrenewed passes carry the failure).
	seenByPOP = "the POP"
	// seenByPasses: only the session holders' renewals failed, at
	// another POP; their passes carry the failure to this one.
	seenByPasses = "the session holders' passes"
	// seenByNobody: nobody called while the store was down, so nobody
	// saw it fail: a quiet spell, as far as anyone can tell.
	seenByNobody = "nobody"
)

// outage is a silence of d in which the store could not be reached, seen
// by seen (one of the above); then everyone comes back.
func (h *harness) outage(d time.Duration, seen string) {
	h.t.Helper()
	failedAt := h.now.Add(min(heartbeat, d/2))
	h.t.Logf("%s the store is down for %v, seen failing by %s at %s", h.when(), d, seen, clock(failedAt.UnixMilli()))
	h.advance(d)
	if seen == seenByPOP {
		h.down = failedAt
	}
	for _, v := range h.vs {
		if v.session.ID != "" && !v.done {
			if seen != seenByNobody {
				v.session.FailedAt = failedAt
			}
			h.visit(v)
		}
	}
	for _, v := range h.vs {
		if v.session.ID == "" && v.ticket.Number != 0 {
			h.visit(v)
		}
	}
}

// operate is an operator's action.
func (h *harness) operate(op string, n int64, set store.Overrides) {
	h.t.Helper()
	h.do("operator", call{op: op, n: n, set: set})
}

// schedule passes event name from now on: its pre-queue opens pq from
// now, it starts lead after that and lasts length.
func (h *harness) schedule(name string, pq, lead, length time.Duration) {
	from := h.now.Add(pq)
	h.ev = &store.Event{ID: name, PrequeueFrom: from, Starts: from.Add(lead), Ends: from.Add(lead + length)}
	h.t.Logf("%s event %s scheduled: pre-queue %s, start %s, end %s", h.when(), name,
		clock(from.UnixMilli()), clock(h.ev.Starts.UnixMilli()), clock(h.ev.Ends.UnixMilli()))
}

// moveStart moves the event's start to by from now (not before its
// pre-queue opens), and its end along if need be.
func (h *harness) moveStart(by time.Duration) {
	e := *h.ev
	e.Starts = h.now.Add(by)
	if e.Starts.Before(e.PrequeueFrom) {
		e.Starts = e.PrequeueFrom
	}
	if !e.Ends.After(e.Starts) {
		e.Ends = e.Starts.Add(time.Minute)
	}
	h.ev = &e
	h.t.Logf("%s event %s moved: start %s, end %s", h.when(), e.ID, clock(e.Starts.UnixMilli()), clock(e.Ends.UnixMilli()))
}
