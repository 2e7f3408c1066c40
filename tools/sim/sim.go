// Package sim plays an event against an admission policy on a real Redis in
// virtual time: a flash crowd and a steady stream of visitors who poll,
// leave, get called, stay and go, and the measurements that say whether a
// design is exact about capacity, fair, busy and cheap.
//
// The policies (the waiting room's own script, and models of two other
// designs) take the time as an argument, so an hour of an event runs in
// seconds: every call passes the simulated clock. The visitors are the same
// for every policy: one seed draws who arrives when, who gives up, and who
// stays how long.
//
// Beside the visitors, a flood of bots (BotFlood) may take places it never
// comes back for, met by the edge before or after the armour of issue 10
// (Edge): the visitors are drawn the same with or without them.
//
// RunDistributed plays issue 26's distributed bots apart, on its own event
// loop: a botnet by address, /24 and autonomous system beside a crowd, every
// request of both through the real queue.Gate with the edge's own join
// counter (edge.NewJoinCounter) over Edge Rate Limiting modelled in virtual
// time. The door's proof of work is priced there, not hashed: a solve's
// hashes are drawn (geometric, of mean 2^bits) and divided by the solver's
// rate, since the bots' real work would take a hundred cores. The nonces
// the gate checks are real all the same: every request that offers one is
// decided in a copy of the room whose proof_of_work is 1 (a nonce in a
// couple of hashes), once the real room's gate has said which rung it asks
// (distributed.go says why that changes no other decision).
//
// Requests that fall in the same Config.Batch-long slot of simulated time
// are sent to the store concurrently, as an edge sends them; everything
// else (the visitors' choices, the clock, the measurements) runs in one
// goroutine in event order.
package sim

import (
	"container/heap"
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/resp"
)

// Config describes the event. The policy brings the room.
type Config struct {
	Visitors   int
	FlashCrowd int           // how many of them arrive in the first minute
	Spread     time.Duration // the rest arrive evenly over this time after it
	// Capacity is the most visitors the origin should have at once: the
	// yardstick for overshoot and utilisation, whatever the policy counts.
	Capacity int
	// Refresh is the slack an inversion must exceed: a visitor overtaken
	// by less than one queue-page refresh was not wronged by the policy
	// but by the timing of polls.
	Refresh  time.Duration
	StayMin  time.Duration // admitted visitors stay between StayMin and StayMax
	StayMax  time.Duration
	Activity time.Duration // an admitted visitor's interval between requests
	// Heartbeat, when not 0, is how often an admitted visitor's page pings
	// the edge's heartbeat while they stay (package heartbeat's script,
	// the page kept visible): each request of theirs loads a page whose
	// script starts anew, so the pings count from the last request.
	Heartbeat time.Duration
	// NoShowJoin visitors never come back after joining; NoShowWait ones
	// stop polling at a random point while waiting (and may be called in
	// their absence).
	NoShowJoin, NoShowWait float64
	Sample                 time.Duration // how often the room is sampled
	Seed                   int64
	// Batch is the length of the slots of simulated time (from Start)
	// whose requests go to the store concurrently, at most Concurrency at
	// once. It must be shorter than the shortest poll interval, so a
	// visitor has one request per batch.
	Batch       time.Duration
	Concurrency int
	// Edge is how the edge meets requests before the store: Before (the
	// zero value) or After.
	Edge Edge
	// Bots is a flood of clients beside the visitors, who never come back
	// for their place.
	Bots BotFlood
	// Admits are the operator's "admit N" during the event (the policy
	// must be an Admitter).
	Admits []Admit
}

// Admit is an operator's "admit N", At into the event: N more tickets
// called at once, beyond the rate and the capacity.
type Admit struct {
	At time.Duration
	N  int64
}

// Admitter is a policy whose operator can admit N at once.
type Admitter interface {
	Admit(ctx context.Context, n int64, now time.Time) error
}

// Report is what a run measured. Everything but the Bot fields, Limited,
// Calls and Requests is about the visitors alone.
type Report struct {
	Policy             string
	Visitors, Admitted int
	Capacity           int
	// MaxLive is the most visitors on the origin at once: admitted and not
	// yet gone, whether or not the policy knows they are gone.
	MaxLive int64
	// Overshoot is how far MaxLive went past the capacity (0 is exact).
	Overshoot int64
	// MaxHeld is the most places the policy itself counted as taken
	// (sessions plus called visitors still inside their claim window),
	// or -1 when it counts none. In a sharded room it is the shards'
	// sum after each batch: each shard's latest answer (the most it
	// answered within the batch, when the batch called it), and the
	// room's stats at each sample.
	MaxHeld int64
	// Inversions counts visitors who kept polling and yet were overtaken:
	// a visitor who arrived later got in more than one refresh before them.
	Inversions int
	// LostPlaces counts visitors who kept polling and still lost their
	// place (called and not claimed in time, or passed over).
	LostPlaces int
	// NeverAdmitted counts visitors who kept polling to the end of the
	// event and never got in.
	NeverAdmitted int
	// Utilisation is the mean of live visitors / capacity over the samples
	// taken while visitors were waiting.
	Utilisation float64
	// MaxPerMinute is the most visitors called in one calendar minute, for
	// policies that keep the count (see MinuteCounter).
	MaxPerMinute int64
	// IdleHeld is the mean share of the capacity that sessions of visitors
	// who have gone still held, over the samples taken while visitors were
	// waiting, for policies that count their sessions (SessionCounter).
	IdleHeld float64
	// IdleElsewhere is the mean share of the capacity left idle in shards
	// nobody waited in while visitors waited in another, over the samples
	// taken while visitors were waiting, for policies whose room runs as
	// shards (ShardReader): what their fixed split of the places costs.
	IdleElsewhere float64
	// Calls counts store calls by the kind of visitor request that made
	// them; Requests counts visitor requests by kind: join, poll, session
	// (an admitted visitor's request), heartbeat (their page's ping) and
	// leave (a departure beacon).
	Calls, Requests map[string]int
	// StayMinutes is the time the admitted visitors stayed, added up.
	StayMinutes float64
	// WaitMinutes is the visitor-minutes spent waiting between polls: each
	// poll answered "wait" counts the time to the next. FarWaitMinutes is
	// their share after polls that left the visitor far from the front
	// (Answer.Far), FarCalls the store calls those polls made and
	// FarFills the snapshot fills among them.
	WaitMinutes, FarWaitMinutes float64
	FarCalls, FarFills          int
	// FromSnapshot counts the polls answered from a POP's snapshot, Fills
	// the store calls that filled a snapshot (counted in Calls too).
	FromSnapshot, Fills int
	// PeakCallsPerSecond is the most store calls made in one second of
	// simulated time.
	PeakCallsPerSecond int
	// PeakSecond is what the calls of that second were made for, by kind
	// of request (join, poll, session, heartbeat, leave): what a room's
	// busiest second is made of.
	PeakSecond map[string]int
	// WalkedIn counts visitors admitted at their first request.
	WalkedIn int
	// The wait is the time from arrival (the first request) to admission
	// of the admitted visitors who had to wait (those who walked in are
	// left out): its mean and percentiles.
	WaitMean, WaitP50, WaitP90, WaitP99 time.Duration
	// Bots counts the flood's clients, BotJoins their joins that reached
	// the store and BotCalls the store calls they caused.
	Bots, BotJoins, BotCalls int
	// Limited counts joins refused by the per-address limit (bots' or
	// visitors').
	Limited int
	// BotSessions counts bots let in at their join: a session nobody uses,
	// held until the inactivity timeout. BotCalled counts bots' tickets
	// called in: a place held for the claim window (seen only under a
	// CalledLister).
	BotSessions, BotCalled int
	// RedisMemory is what Redis allocated for the policy's keys at the end
	// of the event, RedisPeak the most it allocated during it, in bytes
	// over what it held before (clients' buffers and the script cache left
	// out).
	RedisMemory, RedisPeak int64
	// Duration is the simulated time the event took; Elapsed the real time
	// the run took.
	Duration, Elapsed time.Duration
	Timeline          []Sample
	// Estimates is how the waits shown compared with the waits that
	// followed.
	Estimates Estimates
	// Shards are the figures shard by shard: one shard, the room, for a
	// policy of one line.
	Shards ShardFigures
}

// HeldOvershoot is how far the places the policy counted as taken
// (MaxHeld) went past the capacity: 0 is exact.
func (r Report) HeldOvershoot() int64 {
	if r.Capacity <= 0 || r.MaxHeld <= int64(r.Capacity) {
		return 0
	}
	return r.MaxHeld - int64(r.Capacity)
}

// Sample is the room's state at one instant of the run.
type Sample struct {
	At            time.Duration
	Waiting, Live int64
	Admitted      int // admissions so far
}

// BotPlaces is the places the room gave to bots.
func (r Report) BotPlaces() int { return r.BotSessions + r.BotCalled }

// AdmittedBy is how many visitors had been admitted d into the event, as
// the sample taken then saw them (the samples' granularity).
func (r Report) AdmittedBy(d time.Duration) int {
	n := 0
	for _, s := range r.Timeline {
		if s.At > d {
			return n
		}
		n = s.Admitted
	}
	return r.Admitted
}

// KeepCallsPerMinute is the store calls admitted visitors' requests and
// pings made to keep their sessions, per minute of their stay.
func (r Report) KeepCallsPerMinute() float64 {
	if r.StayMinutes == 0 {
		return 0
	}
	return float64(r.Calls["session"]+r.Calls["heartbeat"]) / r.StayMinutes
}

// WaitCallsPerMinute is the store calls waiting visitors' polls made per
// visitor-minute waiting.
func (r Report) WaitCallsPerMinute() float64 {
	return perMinute(r.Calls["poll"], r.WaitMinutes)
}

// FarCallsPerMinute is the store calls polls far from the front made per
// visitor-minute waiting far from the front.
func (r Report) FarCallsPerMinute() float64 { return perMinute(r.FarCalls, r.FarWaitMinutes) }

func perMinute(calls int, minutes float64) float64 {
	if minutes == 0 {
		return 0
	}
	return float64(calls) / minutes
}

// TotalCalls is every store call the visitors' and bots' requests caused.
func (r Report) TotalCalls() int { return sum(r.Calls) }

// CallsPerRequest is the store calls divided by visitor requests.
func (r Report) CallsPerRequest() float64 { return ratio(sum(r.Calls), sum(r.Requests)) }

// CallsPerAdmitted is the store calls divided by the visitors admitted: what
// one served visitor costs in store calls.
func (r Report) CallsPerAdmitted() float64 { return ratio(sum(r.Calls), r.Admitted) }

// CallsPer is the store calls a request of the kind made on average.
func (r Report) CallsPer(kind string) float64 { return ratio(r.Calls[kind], r.Requests[kind]) }

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// SessionCounter is a policy that counts the sessions it holds.
type SessionCounter interface {
	Sessions(ctx context.Context, now time.Time) (int64, error)
}

// ShardReader is a policy whose room runs as shards, each with its share
// of the places: Lines reads each shard's line, and Shares says each one's
// places.
type ShardReader interface {
	Lines(ctx context.Context, now time.Time) ([]store.Line, error)
	Shares() []int64
}

// MinuteCounter is a policy that counts the visitors it called in each
// calendar minute (a rate-limited room).
type MinuteCounter interface {
	CalledIn(ctx context.Context, minute time.Time) (int64, error)
}

type kind int

const (
	arrive kind = iota // a first request
	join               // the request that comes back with an arrival pass
	poll
	activity
	ping
	sample
	admit // the operator's "admit N"
)

type event struct {
	at   time.Time
	kind kind
	v    *Visitor
	seq  int
	// beat is a heartbeat's page: it pings only while that page is the
	// visitor's last (Visitor.page).
	beat int
	// n is how many an admit calls.
	n int64
}

type events []*event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	if !e[i].at.Equal(e[j].at) {
		return e[i].at.Before(e[j].at)
	}
	return e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(*event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// Start is the simulated clock's first instant.
var Start = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// Run plays the event against p, with redis the Redis behind it (for its
// memory).
func Run(ctx context.Context, cfg Config, p Policy, redis *resp.Pool) (Report, error) {
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	shards := 1
	if s, ok := p.(Sharded); ok {
		shards = s.Shards()
	}
	r := &run{cfg: cfg, p: p, redis: redis, rng: rand.New(rand.NewSource(cfg.Seed)),
		shardCalls: make([]int, shards), secondKind: map[string]int{}, held: make([]int64, shards), batchHeld: make([]int64, shards),
		rep: Report{Policy: p.Name(), Visitors: cfg.Visitors, Capacity: cfg.Capacity, MaxHeld: -1,
			Bots: cfg.Bots.Count(), Calls: map[string]int{}, Requests: map[string]int{},
			Shards: ShardFigures{Shards: shards, PeakPerSecond: make([]int, shards), Joined: make([]int, shards)}},
		limiter: newJoinLimiter(cfg.Edge.JoinsPerIPPerMinute), botTickets: map[int64]bool{}}
	began := time.Now()
	rep, err := r.play(ctx)
	rep.Elapsed = time.Since(began)
	return rep, err
}

type run struct {
	cfg        Config
	p          Policy
	redis      *resp.Pool
	rng        *rand.Rand
	q          events
	seq        int
	rep        Report
	waits      []time.Duration
	visitors   []*Visitor // the visitors, bots left out
	pending    int        // visitors and bots who have not joined or gone yet
	waiting    int        // visitors polling for a place
	live       int        // admitted visitors who have not gone
	utilSum    float64
	idleSum    float64
	elseSum    float64 // the samples' IdleElsewhere
	utilN      int
	lastMinute time.Time
	memBefore  int64
	second     int64          // the second of simulated time whose calls are counted
	perSecond  int            // and their count
	secondKind map[string]int // and theirs by kind of request
	shardCalls []int          // and each shard's
	// held is each shard's places taken at its latest answer, and
	// batchHeld the most it answered in the batch being settled (-1:
	// not called in it).
	held, batchHeld []int64
	joins           []admission // the visitors' first joins, by shard
	limiter         *joinLimiter
	botTickets      map[int64]bool // bots' tickets not yet seen called
	estimates       estimateTally
}

func (r *run) at(t time.Time, k kind, v *Visitor) {
	r.seq++
	heap.Push(&r.q, &event{at: t, kind: k, v: v, seq: r.seq})
}

func (r *run) play(ctx context.Context) (Report, error) {
	for i := 0; i < r.cfg.Visitors; i++ {
		var t time.Duration
		if i < r.cfg.FlashCrowd {
			t = time.Duration(r.rng.Int63n(int64(time.Minute)))
		} else if rest := r.cfg.Visitors - r.cfg.FlashCrowd; rest > 0 {
			t = time.Minute + time.Duration(int64(r.cfg.Spread)*int64(i-r.cfg.FlashCrowd)/int64(rest))
		}
		v := &Visitor{ID: i, Session: "s" + strconv.Itoa(i), pollsLeft: -1, beacon: r.rng.Intn(2) == 0,
			client: "v" + strconv.Itoa(i), returns: true}
		r.visitors = append(r.visitors, v)
		switch x := r.rng.Float64(); {
		case x < r.cfg.NoShowJoin:
			v.pollsLeft = 0
		case x < r.cfg.NoShowJoin+r.cfg.NoShowWait:
			v.pollsLeft = 1 + r.rng.Intn(20)
		}
		v.steady = v.pollsLeft < 0
		r.at(Start.Add(t), arrive, v)
	}
	// The bots draw nothing from the seed: the visitors are the same with
	// or without them.
	for i := 0; i < r.rep.Bots; i++ {
		b := &Visitor{ID: r.cfg.Visitors + i, Session: "b" + strconv.Itoa(i), bot: true,
			client: r.cfg.Bots.client(i), returns: r.cfg.Bots.KeepCookies}
		r.at(Start.Add(r.cfg.Bots.at(i)), arrive, b)
	}
	r.pending = r.cfg.Visitors + r.rep.Bots
	for _, a := range r.cfg.Admits {
		r.estimates.admits = append(r.estimates.admits, Start.Add(a.At))
		r.seq++
		heap.Push(&r.q, &event{at: Start.Add(a.At), kind: admit, seq: r.seq, n: a.N})
	}
	r.at(Start, sample, nil)
	r.lastMinute = Start
	var err error
	if r.memBefore, err = r.usedMemory(); err != nil {
		return r.rep, err
	}
	var now time.Time
	for r.q.Len() > 0 {
		e := heap.Pop(&r.q).(*event)
		now = e.at
		if e.kind == sample {
			if r.pending == 0 && r.waiting == 0 && r.live == 0 {
				break
			}
			if err := r.sample(ctx, now); err != nil {
				return r.rep, err
			}
			r.at(now.Add(r.cfg.Sample), sample, nil)
			continue
		}
		if e.kind == admit {
			a, ok := r.p.(Admitter)
			if !ok {
				return r.rep, fmt.Errorf("%s: the operator cannot admit", r.p.Name())
			}
			if err := a.Admit(ctx, e.n, now); err != nil {
				return r.rep, fmt.Errorf("%s: admit %d at %v: %w", r.p.Name(), e.n, now.Sub(Start), err)
			}
			continue
		}
		// The batch is the rest of e's slot. Slots are fixed, not
		// counted from the first event, so no event moves the batches'
		// bounds: a bot that makes no store call leaves the visitors'
		// calls in the same batches, in the same order, at the same
		// times (the script's line time stamps each call with the
		// latest time it has seen, so their order matters).
		end := Start.Add(e.at.Sub(Start).Truncate(r.cfg.Batch) + r.cfg.Batch)
		batch := []*event{e}
		for r.q.Len() > 0 && r.q[0].kind != sample && r.q[0].kind != admit && r.q[0].at.Before(end) {
			batch = append(batch, heap.Pop(&r.q).(*event))
		}
		if err := r.handle(ctx, batch); err != nil {
			return r.rep, err
		}
	}
	r.rep.Duration = now.Sub(Start)
	r.finish()
	mem, err := r.usedMemory()
	r.rep.RedisMemory = max(0, mem-r.memBefore)
	return r.rep, err
}

func (r *run) finish() {
	if r.utilN > 0 {
		r.rep.Utilisation = r.utilSum / float64(r.utilN)
		r.rep.IdleHeld = r.idleSum / float64(r.utilN)
		r.rep.IdleElsewhere = r.elseSum / float64(r.utilN)
	}
	if r.rep.Capacity > 0 && r.rep.MaxLive > int64(r.rep.Capacity) {
		r.rep.Overshoot = r.rep.MaxLive - int64(r.rep.Capacity)
	}
	r.rep.Inversions = r.overtaken()
	r.shardOrder()
	r.rep.Estimates = r.estimates.report()
	for _, v := range r.visitors {
		if v.steady && v.admitted.IsZero() {
			r.rep.NeverAdmitted++
		}
	}
	sort.Slice(r.waits, func(i, j int) bool { return r.waits[i] < r.waits[j] })
	var total time.Duration
	for _, w := range r.waits {
		total += w
	}
	if len(r.waits) > 0 {
		r.rep.WaitMean = total / time.Duration(len(r.waits))
	}
	r.rep.WaitP50, r.rep.WaitP90, r.rep.WaitP99 = percentile(r.waits, 50), percentile(r.waits, 90), percentile(r.waits, 99)
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := int(math.Ceil(float64(p)/100*float64(len(d)))) - 1
	if i < 0 {
		i = 0
	}
	return d[i]
}

// step is one request of a batch: what the visitor asks, and the answer.
type step struct {
	e      *event
	kind   string // the request kind, "" when the visitor makes none
	answer Answer
	err    error
}

// handle plays a batch of events: the visitors' choices in event order, the
// store calls concurrently, then the answers in event order again.
func (r *run) handle(ctx context.Context, batch []*event) error {
	steps := make([]step, len(batch))
	for i, e := range batch {
		steps[i] = step{e: e, kind: r.request(e), answer: Answer{Held: -1}}
		e.v.tally = shardTally{}
	}
	sem := make(chan struct{}, r.cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range steps {
		s := &steps[i]
		if s.kind == "" || s.kind == "arrive" || s.kind == "limited" {
			continue // no store call
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			s.answer, s.err = r.call(ctx, s.kind, s.e)
		}()
	}
	wg.Wait()
	for i := range r.batchHeld {
		r.batchHeld[i] = -1
	}
	for i := range steps {
		if err := r.settle(&steps[i]); err != nil {
			return err
		}
	}
	r.heldAfterBatch()
	return nil
}

// heldAfterBatch sums the shards' places taken after a batch of a sharded
// room: each shard's latest answer, or the most it answered in the batch,
// whose calls ran at once. A shard's count changes only at its calls (it
// may be lower than its latest answer by then, as places lapse; never
// higher), so the sum is never below what the shards held.
func (r *run) heldAfterBatch() {
	if len(r.held) < 2 {
		return // a room of one line: each answer is the room's (Answer.Held)
	}
	var sum int64
	for i, h := range r.batchHeld {
		if h >= 0 {
			r.held[i] = h
		}
		sum += r.held[i]
	}
	r.rep.MaxHeld = max(r.rep.MaxHeld, sum)
}

// request decides what the visitor of e does, and returns the kind of
// request they make: join, poll, session or leave, which call the store,
// or arrive (a first request answered with an arrival pass) or limited (a
// join refused by the per-address limit), which do not.
func (r *run) request(e *event) string {
	v := e.v
	switch e.kind {
	case arrive:
		v.arrived = e.at
		if r.cfg.Edge.Arrival == JoinOnReturn {
			return "arrive"
		}
		return r.joinRequest(v, e.at)
	case join:
		return r.joinRequest(v, e.at)
	case poll:
		if !v.waiting {
			return ""
		}
		if v.pollsLeft == 0 {
			// Gone: the tab was closed. Whatever the policy holds for
			// them stays until it times out.
			v.waiting = false
			r.waiting--
			return ""
		}
		if v.pollsLeft > 0 {
			v.pollsLeft--
		}
		return "poll"
	case activity:
		if !e.at.Before(v.leaves) {
			r.live--
			if v.beacon {
				return "leave"
			}
			return "" // idle: the session lapses on its own
		}
		// A new page: its script's pings replace the last page's.
		v.page++
		return "session"
	case ping:
		if e.beat != v.page || v.leaves.Sub(e.at) < r.cfg.Batch {
			// The page was left, or is left in this batch, whose calls
			// run at once: a ping racing the departure is not played.
			return ""
		}
		return "heartbeat"
	}
	return ""
}

// joinRequest is a join, or a limited request when the client's address
// has had its joins for the minute.
func (r *run) joinRequest(v *Visitor, now time.Time) string {
	if !r.limiter.allow(v.client, now) {
		return "limited"
	}
	return "join"
}

func (r *run) call(ctx context.Context, kind string, e *event) (Answer, error) {
	v, now := e.v, e.at
	switch kind {
	case "join":
		return r.p.Join(ctx, v, now)
	case "poll":
		return r.p.Poll(ctx, v, now)
	case "session", "heartbeat":
		// The heartbeat keeps a session as a request does (Gate.Keep
		// shares Gate.Decide's renewal).
		n, err := r.p.Visit(ctx, v, now)
		return Answer{Calls: n, Held: -1}, err
	default: // leave
		n, err := r.p.Leave(ctx, v, now)
		return Answer{Calls: n, Held: -1}, err
	}
}

// settle follows a request: admitted visitors start their stay, waiting
// ones poll again, and active ones come back after their next pause.
func (r *run) settle(s *step) error {
	if s.kind == "" {
		return nil
	}
	v, now := s.e.v, s.e.at
	if s.err != nil {
		return fmt.Errorf("%s: visitor %d's %s at %v: %w", r.p.Name(), v.ID, s.kind, now.Sub(Start), s.err)
	}
	r.rep.Requests[s.kind]++
	r.rep.Calls[s.kind] += s.answer.Calls
	r.countPerSecond(now, s.kind, s.answer.Calls, v.tally)
	r.rep.Fills += s.answer.Fills
	if s.answer.Held > r.rep.MaxHeld {
		r.rep.MaxHeld = s.answer.Held
	}
	if v.bot {
		r.rep.BotCalls += s.answer.Calls
	}
	switch s.kind {
	case "arrive":
		if v.returns {
			// The browser follows the redirect at once, with the pass.
			r.at(now, join, v)
		} else {
			r.pending--
		}
		return nil
	case "limited":
		// A visitor refused here gives up too: none is, as each has an
		// address of their own and joins once.
		r.pending--
		r.rep.Limited++
		return nil
	case "join":
		r.pending--
		if v.bot {
			r.botJoined(v, s.answer)
			return nil
		}
		if v.Shard < len(r.rep.Shards.Joined) {
			r.rep.Shards.Joined[v.Shard]++
			r.joins = append(r.joins, admission{arrived: v.arrived, shard: v.Shard})
		}
	case "session":
		r.next(now, v)
		r.beat(now, v)
		return nil
	case "heartbeat":
		r.beat(now, v)
		return nil
	case "leave":
		return nil
	case "poll":
		v.waiting = false
		r.waiting--
		if s.answer.Lost && v.steady {
			r.rep.LostPlaces++
			v.lost = true
		}
		if s.answer.Lost {
			v.shown = nil // about a place the visitor no longer holds
		}
		r.waited(s.answer)
	}
	if !s.answer.Admitted {
		v.waiting = true
		r.waiting++
		r.at(now.Add(s.answer.Next), poll, v)
		if v.steady && !v.lost {
			v.shown = append(v.shown, shownAt{at: now, lasted: s.answer.Next, Shown: s.answer.Shown})
		}
		return nil
	}
	v.admitted = now
	r.estimates.add(v.shown, now)
	v.shown = nil
	r.rep.Admitted++
	r.live++
	if int64(r.live) > r.rep.MaxLive {
		r.rep.MaxLive = int64(r.live)
	}
	if s.kind == "join" {
		r.rep.WalkedIn++
	} else {
		r.waits = append(r.waits, now.Sub(v.arrived))
	}
	stay := r.cfg.StayMin + time.Duration(r.rng.Int63n(int64(r.cfg.StayMax-r.cfg.StayMin)+1))
	v.leaves = now.Add(stay)
	r.rep.StayMinutes += stay.Minutes()
	r.next(now, v)
	v.page++
	r.beat(now, v)
	return nil
}

// waited counts a poll's answer in the time waited and its cost.
func (r *run) waited(a Answer) {
	if a.Snapshot {
		r.rep.FromSnapshot++
	}
	if a.Admitted {
		return
	}
	r.rep.WaitMinutes += a.Next.Minutes()
	if a.Far {
		r.rep.FarWaitMinutes += a.Next.Minutes()
		r.rep.FarCalls += a.Calls
		r.rep.FarFills += a.Fills
	}
}

// countPerSecond adds calls made at now for a request of kind to their
// second's count, keeping the peak and what it was made of, and each
// shard's calls (tally; in a room of one line, calls are shard 0's) to
// its count, keeping each shard's peak, and the places each shard
// answered it held to the batch's. Requests are settled in time order, so
// a second is done once a later one starts.
func (r *run) countPerSecond(now time.Time, kind string, calls int, tally shardTally) {
	if sec := now.Unix(); sec != r.second {
		r.second, r.perSecond = sec, 0
		clear(r.shardCalls)
		clear(r.secondKind)
	}
	r.perSecond += calls
	r.secondKind[kind] += calls
	if r.perSecond > r.rep.PeakCallsPerSecond {
		r.rep.PeakCallsPerSecond = r.perSecond
		r.rep.PeakSecond = maps.Clone(r.secondKind)
	}
	if tally.calls == nil && len(r.shardCalls) == 1 {
		tally.calls = []int{calls}
	}
	peaks := r.rep.Shards.PeakPerSecond
	for i, n := range tally.calls {
		if i < len(r.shardCalls) {
			r.shardCalls[i] += n
			peaks[i] = max(peaks[i], r.shardCalls[i])
		}
	}
	for i, h := range tally.held {
		if i < len(r.batchHeld) {
			r.batchHeld[i] = max(r.batchHeld[i], h)
		}
	}
}

// shardOrder measures the order of the steady visitors' admissions
// within and across shards, and the bound a sharded policy states for it
// at the run's imbalance.
func (r *run) shardOrder() {
	f := &r.rep.Shards
	var adm []admission
	for _, v := range r.visitors {
		if v.steady && !v.lost && !v.admitted.IsZero() && v.Shard < f.Shards {
			adm = append(adm, admission{arrived: v.arrived, admitted: v.admitted, shard: v.Shard})
		}
	}
	f.Across, f.Within = order(adm, f.Shards, r.cfg.Refresh, r.cfg.Batch)
	f.Imbalance = imbalance(r.joins, f.Shards)
	if s, ok := r.p.(Sharded); ok {
		f.Bound = s.OrderBound(f.Imbalance, r.cfg)
	}
}

// next schedules v's next request: after Activity, or their departure
// when it comes first, so that they count as live until the moment they
// leave and no longer (with an inactivity timeout shorter than Activity,
// a silent departure counted late would show a place held twice).
func (r *run) next(now time.Time, v *Visitor) {
	at := now.Add(r.cfg.Activity)
	if v.leaves.Before(at) {
		at = v.leaves
	}
	r.at(at, activity, v)
}

// beat schedules the next ping of v's page, when pages ping. The ping a
// page's script sends as it loads is not played: it follows the request
// that loaded the page, which renewed the session if it was due, so it
// never calls the store.
func (r *run) beat(now time.Time, v *Visitor) {
	if r.cfg.Heartbeat <= 0 {
		return
	}
	r.seq++
	heap.Push(&r.q, &event{at: now.Add(r.cfg.Heartbeat), kind: ping, v: v, seq: r.seq, beat: v.page})
}

// botJoined records what a bot's join took: a session at once, or a
// ticket that will be called unless it lapses first. The bot never comes
// back.
func (r *run) botJoined(v *Visitor, a Answer) {
	r.rep.BotJoins++
	if a.Admitted {
		r.rep.BotSessions++
		return
	}
	r.botTickets[v.Ticket] = true
}

// overtaken counts steady visitors (who polled until admitted and never
// lost their place) admitted more than one refresh after some visitor who
// arrived later: admissions out of arrival order. Arrivals less than one
// batch apart may have reached the store at once, so neither came first.
func (r *run) overtaken() int {
	var steady []*Visitor
	for _, v := range r.visitors {
		if v.steady && !v.lost && !v.admitted.IsZero() {
			steady = append(steady, v)
		}
	}
	sort.Slice(steady, func(i, j int) bool { return steady[i].arrived.Before(steady[j].arrived) })
	// earliest[i] is the earliest admission among steady[i:].
	earliest := make([]time.Time, len(steady)+1)
	for i := len(steady) - 1; i >= 0; i-- {
		earliest[i] = steady[i].admitted
		if next := earliest[i+1]; !next.IsZero() && next.Before(earliest[i]) {
			earliest[i] = next
		}
	}
	n := 0
	for i, v := range steady {
		later := i + sort.Search(len(steady)-i, func(k int) bool {
			return steady[i+k].arrived.Sub(v.arrived) >= r.cfg.Batch
		})
		if e := earliest[later]; !e.IsZero() && v.admitted.Sub(e) > r.cfg.Refresh {
			n++
		}
	}
	return n
}

// sample records the room's state, utilisation while visitors wait, and
// once a minute the policy's own count and Redis's memory.
func (r *run) sample(ctx context.Context, now time.Time) error {
	r.rep.Timeline = append(r.rep.Timeline, Sample{At: now.Sub(Start), Waiting: int64(r.waiting), Live: int64(r.live), Admitted: r.rep.Admitted})
	if r.waiting > 0 && r.cfg.Capacity > 0 {
		r.utilSum += float64(r.live) / float64(r.cfg.Capacity)
		r.utilN++
		if sc, ok := r.p.(SessionCounter); ok {
			sessions, err := sc.Sessions(ctx, now)
			if err != nil {
				return err
			}
			r.idleSum += float64(max(0, sessions-int64(r.live))) / float64(r.cfg.Capacity)
		}
		if sr, ok := r.p.(ShardReader); ok {
			lines, err := sr.Lines(ctx, now)
			if err != nil {
				return err
			}
			r.elseSum += float64(idleElsewhere(lines, sr.Shares())) / float64(r.cfg.Capacity)
		}
	}
	held, ok, err := r.p.Held(ctx, now)
	if err != nil {
		return err
	}
	if err := r.seeBotCalls(ctx); err != nil {
		return err
	}
	if ok && held > r.rep.MaxHeld {
		r.rep.MaxHeld = held
	}
	minute := now.Truncate(time.Minute)
	if minute.Equal(r.lastMinute) {
		return nil
	}
	if mc, ok := r.p.(MinuteCounter); ok {
		n, err := mc.CalledIn(ctx, r.lastMinute)
		if err != nil {
			return err
		}
		r.rep.MaxPerMinute = max(r.rep.MaxPerMinute, n)
	}
	r.lastMinute = minute
	mem, err := r.usedMemory()
	r.rep.RedisPeak = max(r.rep.RedisPeak, mem-r.memBefore)
	return err
}

// idleElsewhere is how many places the shards whose lines are empty
// leave free while another shard's line waits (each shard's places its
// share of shares): places a room of one line would have called a
// visitor to.
func idleElsewhere(lines []store.Line, shares []int64) int64 {
	var free, waiting int64
	for i, l := range lines {
		if l.Waiting() > 0 {
			waiting += l.Waiting()
			continue
		}
		free += max(shares[i]-l.Active-l.Called, 0)
	}
	if waiting == 0 {
		return 0
	}
	return free
}

// seeBotCalls counts the bots' tickets among those called and not claimed.
func (r *run) seeBotCalls(ctx context.Context) error {
	cl, ok := r.p.(CalledLister)
	if !ok || len(r.botTickets) == 0 {
		return nil
	}
	called, err := cl.CalledTickets(ctx)
	for _, t := range called {
		if r.botTickets[t] {
			delete(r.botTickets, t)
			r.rep.BotCalled++
		}
	}
	return err
}

// usedMemory is what Redis allocated for the keys: its total, less what
// it took at startup, its clients' buffers and its script cache.
func (r *run) usedMemory() (int64, error) {
	v, err := r.redis.Do("MEMORY", "STATS")
	if err != nil {
		return 0, err
	}
	stats := map[string]int64{}
	for i := 0; i+1 < len(v.Array); i += 2 {
		stats[v.Array[i].Str] = v.Array[i+1].Int
	}
	total, ok := stats["total.allocated"]
	if !ok {
		return 0, fmt.Errorf("MEMORY STATS has no total.allocated")
	}
	return total - stats["startup.allocated"] - stats["clients.normal"] - stats["lua.caches"], nil
}
