package modeltest

import (
	"fmt"
	"time"

	"github.com/edgequeue/waitingroom/draw"
	"github.com/edgequeue/waitingroom/store"
)

// The room's timeouts. Each is a whole number of seconds and a half, while
// every clock the test passes is a whole second, and line time only ever
// advances by whole seconds: no deadline (nor a pass's UsableUntil, a
// heartbeat after its issue) falls on a call's instant, so no check
// depends on how the script breaks a tie (< or <=), which the
// specification leaves open.
const (
	claimWindow  = 30500 * time.Millisecond
	sessionTTL   = 90500 * time.Millisecond
	queueTimeout = 60500 * time.Millisecond
	refresh      = 15500 * time.Millisecond
	heartbeat    = 20500 * time.Millisecond
	catchUp      = 30 * time.Second
	// outageStep is the most a silence taken for an outage counts.
	outageStep = 5 * time.Second
	// tolerance is how far before the last call's stamp a store failure
	// the edge reports may lie and still explain the silence since: the
	// clocks of two POPs differ by that much.
	tolerance = 2 * time.Second
)

func ms(d time.Duration) int64 { return d.Milliseconds() }

// msOf is t in ms, 0 for the zero time (no failure reported).
func msOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// state is where a ticket stands, as the model knows it.
type state int8

const (
	waiting state = iota // in line, not called
	called               // called; its claim window runs
	live                 // a live session
	ended                // ended: its place is held while a pass of it may still admit
	gone                 // no place: lapsed, passed over, ended and freed, or voided
)

func (s state) String() string {
	return [...]string{"waiting", "called", "live", "ended", "gone"}[s]
}

// place is one ticket of the current line. Times are line time, in ms.
type place struct {
	st state
	// seen is when a waiting ticket was last seen; until is a called
	// ticket's claim deadline or a session's expiry.
	seen, until int64
	// holdLo and holdHi bound how long an ended session's place is held:
	// the specification says until its pass stops admitting, at most
	// SessionTTL, and the pass the store knows may be a later renewal's.
	holdLo, holdHi int64
}

// identity is an event as the specification tells events apart: its
// name, pre-queue start and start.
type identity struct {
	name      string
	pq, start int64
}

func identityOf(e *store.Event) identity {
	return identity{e.ID, e.PrequeueFrom.UnixMilli(), e.Starts.UnixMilli()}
}

func (id identity) String() string {
	return fmt.Sprintf("%q (pre-queue %s, start %s)", id.name, clock(id.pq), clock(id.start))
}

// prequeue is an event's open pre-queue: its tickets from first on are
// held until the draw, at start (which the operator may move).
type prequeue struct {
	id           identity
	start, first int64
	commitment   string
}

// call is one store call, as the model needs it.
type call struct {
	op      string // join, vip, poll, renew, end, stats, or an operator's action
	arrival string
	invite  store.Invite
	ticket  store.Ticket // poll's; the session's for renew and end
	ref     store.SessionRef
	n       int64
	set     store.Overrides
	// down is the POP's down marker the call carries (Policy.FailedAt):
	// the latest store failure the edge observed, zero when none.
	down time.Time
}

// answer is what the store answered.
type answer struct {
	place store.Place // join, vip, poll
	ok    bool        // renew
	line  store.Line
}

// mismatch is an answer the model does not allow. check names the rule
// broken, and is the same for every breach of that rule, since rapid
// shrinks a failing sequence only while its failure stays the same;
// detail says what happened.
type mismatch struct{ check, detail string }

func (e *mismatch) Error() string { return e.check + ": " + e.detail }

func fail(check, format string, args ...any) error {
	return &mismatch{check, fmt.Sprintf(format, args...)}
}

// limits are the room's limits in force: the operator's overrides, or
// else the configured values.
type limits struct {
	rate   float64
	cap    int64
	closed bool
}

// model is the reference: a room as the specification describes it.
type model struct {
	p       store.Policy // as configured; the event is passed per call
	started bool
	epoch   int64
	// raw is the last call's clock and lt the line time (ms).
	raw, lt int64
	// issued and pIssued count the tickets handed out in each lane;
	// admitted and pAdmitted are the line's positions (Line.Admitted,
	// PriorityAdmitted) as the last answer left them: the script decides
	// how far the rate lets the line move, the model checks each move.
	issued, pIssued     int64
	admitted, pAdmitted int64
	places              map[int64]*place // this line's tickets
	arrivals            map[string]int64 // this line's arrivals, and their tickets
	used                map[string]int   // invite uses taken, every line
	paused, queueAll    bool
	ov                  store.Overrides
	// count is live sessions plus called tickets, as the last answer said.
	count int64
	pre   *prequeue
	// dFirst..dLast is the drawn range being called, in order.
	dFirst, dLast int64
	order         []int64
	// last is this line's latest draw; drawn every event ever drawn,
	// keys every key drawn.
	last  *identity
	drawn map[identity]bool
	keys  map[string]identity
	// seen counts what the sequence exercised, for the test's summary.
	seen map[string]int
}

func newModel(p store.Policy) *model {
	m := &model{p: p, used: map[string]int{}, drawn: map[identity]bool{}, keys: map[string]identity{},
		seen: map[string]int{}}
	m.newLine()
	return m
}

// newLine forgets the line: a new epoch starts with no ticket.
func (m *model) newLine() {
	m.issued, m.pIssued, m.admitted, m.pAdmitted = 0, 0, 0, 0
	m.places, m.arrivals = map[int64]*place{}, map[string]int64{}
	m.pre, m.dFirst, m.dLast, m.order, m.last = nil, 1, 0, nil, nil
}

func (m *model) limits() limits {
	l := limits{rate: m.p.PerMinute, cap: int64(m.p.Capacity)}
	if m.ov.PerMinute != nil {
		l.rate = *m.ov.PerMinute
	}
	if m.ov.Capacity != nil {
		l.cap = int64(*m.ov.Capacity)
	}
	mode := m.p.Mode
	if m.ov.Mode != "" {
		mode = m.ov.Mode
	}
	if mode == store.Passthrough {
		l.rate, l.cap = 0, 0
	}
	l.closed = mode == store.Reject
	return l
}

// inLine reports whether a ticket waits or is called.
func (m *model) inLine() bool {
	for _, p := range m.places {
		if p.st == waiting || p.st == called {
			return true
		}
	}
	return false
}

// tick advances line time to the call at now (spec 9, as issue 34 has
// it): by the wall clock, except a silence the edge saw the store fail in
// (failedAt, the latest failure the call reports, ms; 0 for none), which
// is an outage and counts outageStep at most. A failure before the last
// call (beyond the clocks' tolerance) explains nothing since; a silence
// nobody saw fail counts in full, whether tickets wait or not, however
// seldom their holders poll.
func (m *model) tick(now, failedAt int64) {
	if !m.started {
		m.started, m.lt, m.raw = true, now, now
		return
	}
	gap := now - m.raw
	step := gap
	switch {
	case gap > ms(outageStep) && failedAt > 0 && failedAt >= m.raw-ms(tolerance):
		step = ms(outageStep)
		m.seen["silence the edge saw fail counted as an outage"]++
	case gap > ms(refresh) && m.inLine():
		m.seen["silence with tickets in line counted in full"]++
	case gap > ms(refresh):
		m.seen["quiet spell counted in full"]++
	}
	m.lt, m.raw = m.lt+step, now
}

// lapse takes away the places whose time ran out.
func (m *model) lapse() {
	for _, p := range m.places {
		switch {
		case p.st == waiting && m.lt-p.seen >= ms(queueTimeout),
			(p.st == called || p.st == live) && m.lt >= p.until,
			p.st == ended && m.lt >= p.holdHi:
			m.seen[p.st.String()+" place lapsed"]++
			p.st = gone
		}
	}
}

// event enters and draws the event passed (spec 8), as a call at now
// does before anything else, and reports whether it drew a pre-queue.
func (m *model) event(now int64, e *store.Event) bool {
	if m.pre != nil && e != nil && e.ID == m.pre.id.name && e.PrequeueFrom.UnixMilli() == m.pre.id.pq {
		m.pre.start = e.Starts.UnixMilli() // moved by the operator
	}
	// One drawn range is called at a time: a pre-queue whose start has
	// come waits for the range before it to be called through.
	if m.pre != nil && now >= m.pre.start && m.admitted >= m.dLast {
		m.draw()
		return true
	}
	if m.pre != nil || e == nil {
		return false
	}
	id := identityOf(e)
	if m.drawn[id] || now < id.pq || now >= e.Ends.UnixMilli() {
		return false
	}
	m.pre = &prequeue{id: id, start: id.start, first: m.issued + 1}
	m.seen["pre-queue opened"]++
	if now >= id.start && m.admitted >= m.dLast {
		m.draw() // entered after its start: an empty pre-queue, drawn at once
		return true
	}
	return false
}

func (m *model) draw() {
	m.seen["pre-queue drawn"]++
	id := m.pre.id
	m.dFirst, m.dLast, m.order = m.pre.first, m.issued, nil
	m.drawn[id] = true
	moved := identity{id.name, id.pq, m.pre.start}
	m.drawn[moved] = true
	m.last = &moved
}

// at is the ticket called at position p of the regular lane.
func (m *model) at(p int64) int64 {
	if m.dFirst <= p && p <= m.dLast {
		return m.order[p-m.dFirst]
	}
	return p
}

// callable lists the tickets the line could call next, in order (the
// regular lane, then the priority lane): those waiting, past the line's
// positions, not held by a pre-queue.
func (m *model) callable() []int64 {
	var out []int64
	for p := m.admitted + 1; p <= m.issued; p++ {
		if m.pre != nil && p >= m.pre.first {
			break
		}
		if t := m.at(p); m.places[t].st == waiting {
			out = append(out, t)
		}
	}
	if m.pre == nil {
		for q := m.pAdmitted + 1; q <= m.pIssued; q++ {
			if m.places[-q].st == waiting {
				out = append(out, -q)
			}
		}
	}
	return out
}

// learn follows the line's positions to where the answer says the call
// moved them, and checks the move: within each lane in order, never
// into a pre-queue before its draw, calling exactly the tickets that
// held a place (the others are passed over).
func (m *model) learn(l store.Line) (int64, error) {
	if l.Admitted < m.admitted || l.PriorityAdmitted < m.pAdmitted {
		return 0, fail("the line's positions never go back",
			"Admitted %d -> %d, PriorityAdmitted %d -> %d", m.admitted, l.Admitted, m.pAdmitted, l.PriorityAdmitted)
	}
	if l.Admitted > m.issued || l.PriorityAdmitted > m.pIssued {
		return 0, fail("the line reaches only tickets handed out",
			"Admitted %d of %d issued, PriorityAdmitted %d of %d", l.Admitted, m.issued, l.PriorityAdmitted, m.pIssued)
	}
	if m.pre != nil && l.Admitted >= m.pre.first {
		return 0, fail("no ticket of a pre-queue is called before its draw",
			"Admitted %d, pre-queue of %s from ticket %d", l.Admitted, m.pre.id, m.pre.first)
	}
	if m.pre != nil && l.PriorityAdmitted > m.pAdmitted {
		return 0, fail("the priority lane is not called during a pre-queue",
			"PriorityAdmitted %d -> %d, pre-queue of %s open", m.pAdmitted, l.PriorityAdmitted, m.pre.id)
	}
	var n int64
	reach := func(t int64) {
		p := m.places[t]
		if p.st == waiting {
			p.st, p.until = called, m.lt+ms(claimWindow)
			n++
		} else {
			m.seen["ticket passed over"]++
		}
	}
	for ; m.admitted < l.Admitted; m.admitted++ {
		reach(m.at(m.admitted + 1))
	}
	for ; m.pAdmitted < l.PriorityAdmitted; m.pAdmitted++ {
		reach(-m.pAdmitted - 1)
	}
	if n != l.CalledNow {
		return n, fail("a call calls the tickets the line reaches that hold places, and passes over only those that lost theirs",
			"the line moved over %d tickets that held places, CalledNow %d", n, l.CalledNow)
	}
	return n, nil
}

// standing is what a poll of p answers (spec 2), and what it does to p:
// a poll is a sign of life, and claims a called ticket.
func (m *model) standing(p *place, lim limits) []store.Outcome {
	switch {
	case p.st == live:
		p.until = m.lt + ms(sessionTTL)
		return []store.Outcome{store.Admitted}
	case p.st == called && (lim.closed || m.queueAll):
		// The call is held, and kept while its holder polls.
		p.until = m.lt + ms(claimWindow)
		if lim.closed {
			return []store.Outcome{store.Closed}
		}
		return []store.Outcome{store.Waiting}
	case p.st == called:
		p.st, p.until = live, m.lt+ms(sessionTTL)
		return []store.Outcome{store.Admitted}
	case p.st == waiting:
		p.seen = m.lt
		if lim.closed {
			return []store.Outcome{store.Closed}
		}
		return []store.Outcome{store.Waiting}
	case lim.closed:
		return []store.Outcome{store.Closed, store.Lost}
	}
	return []store.Outcome{store.Lost}
}

// holds reports whether t is a ticket of this line that holds a place.
func (m *model) holds(t int64) bool {
	p := m.places[t]
	return p != nil && (p.st == waiting || p.st == called || p.st == live)
}

// end ends the session of p (spec 4), its pass usable until uu (ms): its
// place is held while that pass, or a later renewal's, may admit.
func (m *model) end(p *place, now, uu int64) {
	ttl := ms(sessionTTL)
	clamp := func(d int64) int64 { return min(max(d, 0), ttl) }
	pass := uu - now
	switch p.st {
	case live:
		renewal := p.until - ttl + ms(heartbeat) - m.lt
		p.st = ended
		p.holdLo = min(m.lt+clamp(min(pass, renewal)), p.until)
		p.holdHi = min(m.lt+clamp(max(pass, renewal)), p.until)
	case ended:
		p.holdLo = min(p.holdLo, m.lt+clamp(pass))
	}
	if p.st == ended && m.lt >= p.holdHi {
		p.st = gone
	}
}

// counts are the called tickets, and bounds on the live sessions (ended
// ones whose places are held included, since they count against the
// capacity).
func (m *model) counts() (calledN, liveLo, liveHi int64) {
	for _, p := range m.places {
		switch p.st {
		case called:
			calledN++
		case live:
			liveLo++
			liveHi++
		case ended:
			if m.lt < p.holdLo {
				liveLo++
			}
			liveHi++
		}
	}
	return calledN, liveLo, liveHi
}

func contains(outs []store.Outcome, o store.Outcome) bool {
	for _, x := range outs {
		if x == o {
			return true
		}
	}
	return false
}

// step runs one call through the model: c made at now (ms) with the event
// e passed, and a the store's answer. It returns a *mismatch when the
// answer is not one the specification allows.
func (m *model) step(now int64, c call, e *store.Event, a answer) error {
	l := a.line
	if c.op == store.OpReset && m.started {
		m.newLine()
		m.lt, m.raw = now, now
	}
	first := !m.started
	m.tick(now, max(msOf(c.down), msOf(c.ref.FailedAt)))
	switch {
	case first:
		m.epoch = l.Epoch
	case c.op == store.OpReset:
		if l.Epoch <= m.epoch {
			return fail("a reset starts a later epoch", "epoch %d -> %d", m.epoch, l.Epoch)
		}
		m.epoch = l.Epoch
	case l.Epoch != m.epoch:
		return fail("the epoch changes only on a reset", "epoch %d -> %d", m.epoch, l.Epoch)
	}
	switch c.op {
	case store.OpLimits:
		m.ov = m.ov.With(c.set)
	case store.OpClear:
		m.ov = store.Overrides{}
	}
	lim := m.limits()
	if m.event(now, e) {
		if err := m.checkDraw(l.Event); err != nil {
			return err
		}
	}
	m.lapse()
	callable := len(m.callable())

	// What the operation asks about, decided on the places as they stand.
	known, isKnown := m.arrivals[c.arrival]
	gone := c.op == "join" && isKnown && !m.holds(known)
	subject, subjectTicket, want, fresh := m.decide(c, lim)
	issued, pIssued := m.issued, m.pIssued
	switch {
	case fresh > 0:
		issued++
	case fresh < 0:
		pIssued++
	}
	if l.Issued != issued || l.PriorityIssued != pIssued {
		check := "tickets are handed out only by Join and JoinPriority, one per new arrival"
		switch {
		case c.op == "poll" && l.PriorityIssued != pIssued:
			check = "Poll hands out no priority ticket: a lost priority place comes back only through an invite's use"
		case c.op == "poll":
			check = "Poll hands out no ticket: a lost place comes back only through the join door"
		case contains(want, store.InviteSpent):
			check = "an invite hands out at most its uses in new priority tickets"
		case gone:
			check = "a known arrival whose place is gone takes no new ticket: its holder comes back as a new arrival"
		case c.op == "join" || c.op == "vip":
			check = "a replayed arrival whose ticket holds a place takes no second ticket; a new arrival takes one"
		}
		return fail(check, "%s: Issued %d -> %d, PriorityIssued %d -> %d, want %d and %d",
			c.op, m.issued, l.Issued, m.pIssued, l.PriorityIssued, issued, pIssued)
	}
	if fresh != 0 {
		m.issued, m.pIssued = issued, pIssued
		m.places[fresh] = &place{st: waiting, seen: m.lt}
		m.arrivals[c.arrival] = fresh
		if c.op == "vip" {
			m.used[c.invite.ID]++
		}
	}

	// How far the line moved: automatic calls obey the switches.
	blocked := ""
	switch {
	case lim.closed:
		blocked = "closed"
	case m.queueAll && c.op != string(store.Resume):
		blocked = "queue-all"
	case m.paused && c.op != string(store.Resume):
		blocked = "paused"
	}
	if blocked != "" && c.op != store.OpAdmit && l.CalledNow > 0 {
		return fail("no ticket is called while "+blocked+" (except by an operator's admit)",
			"%s called %d", c.op, l.CalledNow)
	}
	calledNow, err := m.learn(l)
	if err != nil {
		return err
	}
	if c.op == store.OpAdmit && !lim.closed && !m.queueAll && calledNow < min(c.n, int64(callable)) {
		return fail("admit N calls N more tickets while they wait",
			"admit %d called %d, with %d waiting to be called", c.n, calledNow, callable)
	}

	// The operation's answer.
	switch c.op {
	case "join", "vip", "poll":
		if fresh != 0 {
			subject, subjectTicket = m.places[fresh], fresh
		}
		if subject != nil {
			want = m.standing(subject, lim)
		}
		if err := m.checkPlace(c, a.place, want, subjectTicket); err != nil {
			return err
		}
	case "renew":
		p := m.places[c.ticket.Number]
		ok := c.ticket.Epoch == m.epoch && p != nil && p.st == live
		if ok {
			p.until = m.lt + ms(sessionTTL)
		}
		if a.ok != ok {
			check := "Renew extends a session the store holds"
			if a.ok {
				check = "Renew answers false for a session that lapsed, ended or was reset: it is never taken back"
			}
			st := "none"
			if p != nil && c.ticket.Epoch == m.epoch {
				st = p.st.String()
			}
			return fail(check, "renew of %s (ticket %s) answered %v", c.ref.ID, st, a.ok)
		}
	case "end":
		if p := m.places[c.ticket.Number]; c.ticket.Epoch == m.epoch && p != nil {
			m.end(p, now, c.ref.UsableUntil.UnixMilli())
		}
	case string(store.Pause):
		m.paused = true
	case string(store.QueueAll):
		m.queueAll = true
	case string(store.Resume):
		m.paused, m.queueAll = false, false
	}

	if err := m.checkLine(c, l, lim); err != nil {
		return err
	}
	return m.checkEvent(e, l.Event)
}

// decide is what a join or poll asks about (spec 1 and 2): the place it
// is answered for, or the outcomes it may have without one, and the
// ticket it hands out (0: none).
//
// A join presents an arrival the line knows for as long as its pass may
// be presented (the harness presents none past queue.ArrivalTTL), and a
// known arrival takes no second ticket, whether its place holds or is
// gone (issue 34): one solution buys one place, and a holder whose place
// is gone comes back as a new arrival, judged again.
func (m *model) decide(c call, lim limits) (subject *place, ticket int64, want []store.Outcome, fresh int64) {
	switch c.op {
	case "join", "vip":
		known, ok := m.arrivals[c.arrival]
		switch {
		case ok && m.holds(known):
			// Answered as a poll of its ticket (closed: a live session
			// stays one, a place in line is kept).
			return m.places[known], known, nil, 0
		case lim.closed:
			return nil, 0, []store.Outcome{store.Closed}, 0
		case ok && c.op == "join":
			m.seen["known arrival whose place is gone"]++
			return nil, 0, []store.Outcome{store.Lost}, 0
		case ok && m.used[c.invite.ID] >= c.invite.Uses:
			// An invite's arrival whose place is gone: a new place
			// costs another of the invite's uses (its uses guard that
			// door), and a spent invite hands out nothing.
			m.seen["known arrival whose place is gone"]++
			return nil, 0, []store.Outcome{store.Lost, store.InviteSpent}, 0
		case c.op == "vip" && m.used[c.invite.ID] >= c.invite.Uses:
			return nil, 0, []store.Outcome{store.InviteSpent}, 0
		case c.op == "vip":
			return nil, 0, nil, -m.pIssued - 1
		}
		return nil, 0, nil, m.issued + 1
	case "poll":
		if c.ticket.Epoch == m.epoch && m.places[c.ticket.Number] != nil {
			return m.places[c.ticket.Number], c.ticket.Number, nil, 0
		}
		if lim.closed {
			return nil, 0, []store.Outcome{store.Lost, store.Closed}, 0
		}
		return nil, 0, []store.Outcome{store.Lost}, 0
	}
	return nil, 0, nil, 0
}

// checkPlace compares a join's or poll's answer with the outcomes the
// model allows.
func (m *model) checkPlace(c call, got store.Place, want []store.Outcome, ticket int64) error {
	if !contains(want, got.Outcome) {
		return fail(fmt.Sprintf("%s answers %v", c.op, outcomes(want)), "answered %s for ticket %d", outcomeName(got.Outcome), got.Ticket)
	}
	if (got.Outcome == store.Waiting || got.Outcome == store.Admitted) && got.Ticket != ticket {
		return fail("a join or poll answers with the ticket that holds the place", "ticket %d, want %d", got.Ticket, ticket)
	}
	if got.Outcome == store.Admitted {
		if id := fmt.Sprintf("%d.%d", m.epoch, got.Ticket); got.Session != id {
			return fail("a called ticket becomes the session <epoch>.<ticket>", "session %q, want %q", got.Session, id)
		}
	}
	return nil
}

// checkLine checks what every answer reports of the line against the
// model: the counts, the capacity, the switches, and that no place the
// line could fill is left empty.
func (m *model) checkLine(c call, l store.Line, lim limits) error {
	calledN, liveLo, liveHi := m.counts()
	if l.Called != calledN || l.Active < liveLo || l.Active > liveHi {
		want := fmt.Sprint(liveLo)
		if liveHi > liveLo {
			want = fmt.Sprintf("%d to %d", liveLo, liveHi)
		}
		check := "the store holds exactly the places the specification holds"
		switch {
		case l.Active > liveHi:
			check = "a session lapses SessionTTL of line time after its last renewal, an ended one when its pass stops admitting"
		case l.Called > calledN:
			check = "a call lapses a claim window of line time after it is made"
		case l.Active < liveLo || l.Called < calledN:
			check = "no session or called ticket is lost before its time"
		}
		return fail(check, "Active %d, Called %d; want Active %s, Called %d (%s)", l.Active, l.Called, want, calledN, m.describe())
	}
	count := l.Active + l.Called
	if count > m.count+l.CalledNow {
		return fail("sessions and calls grow only by tickets called",
			"Active+Called %d -> %d with CalledNow %d", m.count, count, l.CalledNow)
	}
	if c.op != store.OpAdmit && l.CalledNow > 0 && lim.cap > 0 && count > lim.cap {
		return fail("automatic calls keep sessions and calls within the capacity",
			"Active+Called %d, capacity %d, CalledNow %d", count, lim.cap, l.CalledNow)
	}
	m.count = count
	if l.Paused != m.paused || l.QueueAll != m.queueAll {
		return fail("the switches are the operator's", "Paused %v QueueAll %v, want %v %v", l.Paused, l.QueueAll, m.paused, m.queueAll)
	}
	if !sameOverrides(l.Overrides, m.ov) {
		return fail("the overrides are the operator's", "%s, want %s", overridesString(l.Overrides), overridesString(m.ov))
	}
	if lim.rate == 0 && !lim.closed && !m.paused && !m.queueAll {
		next := m.callable()
		if len(next) > 0 && lim.cap > 0 && count >= lim.cap {
			m.seen["ticket waiting for a full room"]++
		}
		if len(next) > 0 && (lim.cap == 0 || count < lim.cap) {
			return fail("with no rate limit, a free place goes to the next waiting ticket at once",
				"ticket %d waits; Active+Called %d, capacity %d", next[0], count, lim.cap)
		}
	}
	return nil
}

// checkDraw checks a call that drew a pre-queue, and learns the order.
func (m *model) checkDraw(got store.EventState) error {
	if got.Phase != store.Drawn || got.DrawFirst != m.dFirst || got.DrawLast != m.dLast {
		return fail("a pre-queue is drawn at the first call at or after its start",
			"%s: phase %d, drawn %d..%d; want drawn %d..%d", *m.last, got.Phase, got.DrawFirst, got.DrawLast, m.dFirst, m.dLast)
	}
	if got.Key == "" || store.Commitment(got.Key) != got.Commitment {
		return fail("a draw reveals its key, whose SHA-256 is the commitment", "key %q, commitment %q", got.Key, got.Commitment)
	}
	if m.pre.commitment != "" && m.pre.commitment != got.Commitment {
		return fail("a pre-queue is drawn with the key committed to when it opened",
			"commitment %q at the draw, %q before", got.Commitment, m.pre.commitment)
	}
	if prev, dup := m.keys[got.Key]; dup {
		return fail("no draw key is drawn twice", "%s drawn with the key of %s", *m.last, prev)
	}
	m.keys[got.Key] = *m.last
	m.pre = nil
	order, err := draw.Order(got.Key, m.dFirst, m.dLast)
	if err != nil {
		return fail("a draw's range can be listed", "%v", err)
	}
	m.order = order
	return nil
}

// checkEvent checks the event's phase the answer reports.
func (m *model) checkEvent(e *store.Event, got store.EventState) error {
	if e == nil {
		return nil
	}
	id := identityOf(e)
	switch {
	case m.pre != nil && m.pre.id.name == id.name && m.pre.id.pq == id.pq:
		if got.Phase != store.Prequeue || got.First != m.pre.first {
			return fail("an event's pre-queue opens at its first call at or after its pre-queue start, and holds until its draw",
				"%s: phase %d from ticket %d; want the pre-queue from ticket %d", m.pre.id, got.Phase, got.First, m.pre.first)
		}
		if got.Commitment == "" || (m.pre.commitment != "" && got.Commitment != m.pre.commitment) {
			return fail("an open pre-queue publishes one commitment", "%q, before %q", got.Commitment, m.pre.commitment)
		}
		m.pre.commitment = got.Commitment
	case m.last != nil && *m.last == id:
		if got.Phase != store.Drawn || got.DrawFirst != m.dFirst || got.DrawLast != m.dLast {
			return fail("a drawn event stays drawn",
				"%s: phase %d, drawn %d..%d; want drawn %d..%d", id, got.Phase, got.DrawFirst, got.DrawLast, m.dFirst, m.dLast)
		}
	case m.drawn[id] || (m.last != nil && m.last.name == id.name && m.last.pq == id.pq):
		// Drawn by an earlier line (the line was reset since), or the
		// draw's start moved: the specification says nothing of the
		// phase reported, only that it is not entered again.
		if got.Phase == store.Prequeue {
			return fail("an event is entered at most once", "%s reports a pre-queue again", id)
		}
	default:
		if got.Phase != store.NotEntered {
			return fail("an event is entered at the first call at or after its pre-queue start",
				"%s: phase %d, want not entered", id, got.Phase)
		}
	}
	return nil
}

func sameOverrides(a, b store.Overrides) bool { return overridesString(a) == overridesString(b) }

func overridesString(o store.Overrides) string {
	s := "{"
	if o.Capacity != nil {
		s += fmt.Sprintf(" capacity %d", *o.Capacity)
	}
	if o.PerMinute != nil {
		s += fmt.Sprintf(" rate %g", *o.PerMinute)
	}
	if o.Burst != nil {
		s += fmt.Sprintf(" burst %d", *o.Burst)
	}
	if o.Mode != "" {
		s += " mode " + string(o.Mode)
	}
	return s + " }"
}

// describe lists the tickets of the line, for a failure's detail.
func (m *model) describe() string {
	s := fmt.Sprintf("line time %s:", clock(m.lt))
	for t := -m.pIssued; t <= m.issued; t++ {
		p := m.places[t]
		if p == nil {
			continue
		}
		s += fmt.Sprintf(" %d %s", t, p.st)
		switch p.st {
		case waiting:
			s += " seen " + clock(p.seen)
		case called, live:
			s += " until " + clock(p.until)
		case ended:
			s += fmt.Sprintf(" held until %s..%s", clock(p.holdLo), clock(p.holdHi))
		}
		s += ";"
	}
	return s
}

var outcomeNames = [...]string{store.Waiting: "Waiting", store.Admitted: "Admitted", store.Lost: "Lost",
	store.InviteSpent: "InviteSpent", store.Closed: "Closed"}

func outcomeName(o store.Outcome) string {
	if o >= 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome %d", o)
}

func outcomes(os []store.Outcome) string {
	s := ""
	for i, o := range os {
		if i > 0 {
			s += " or "
		}
		s += outcomeName(o)
	}
	return s
}

// t0 is when every sequence starts; clock shows a time (ms) as the
// offset from it.
var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func clock(at int64) string {
	return "+" + (time.Duration(at-t0.UnixMilli()) * time.Millisecond).String()
}
