// Package sim drives the waiting room's real store script on a real Redis
// in virtual time: a flash crowd and a steady stream of visitors who poll,
// leave, get called, stay and go, and the measurements that say whether the
// room is exact about capacity, fair, and busy.
//
// The script takes the time as an argument, so an hour of an event runs in
// seconds: every call passes the simulated clock. Calls go through the
// production store client and the Upstash REST stand-in, in process.
package sim

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
	"github.com/edgequeue/waitingroom/tools/resp"
)

// Config describes the event and the room.
type Config struct {
	Visitors   int
	FlashCrowd int           // how many of them arrive in the first minute
	Spread     time.Duration // the rest arrive evenly over this time after it
	// Room is the room under test: its policy, poll intervals and
	// heartbeat are the ones the edge uses.
	Room     *queue.Room
	StayMin  time.Duration // admitted visitors stay between StayMin and StayMax
	StayMax  time.Duration
	Activity time.Duration // an admitted visitor's interval between requests
	// NoShowJoin visitors never come back after joining; NoShowWait ones
	// stop polling at a random point while waiting (and may be called in
	// their absence).
	NoShowJoin, NoShowWait float64
	Sample                 time.Duration // how often utilisation is sampled
	Seed                   int64
}

// Report is what a run measured.
type Report struct {
	Visitors, Admitted int
	Capacity           int
	// MaxActive is the most live sessions seen after any call; MaxHeld adds
	// the called visitors still inside their claim window.
	MaxActive, MaxHeld int64
	// Overshoot is how far MaxActive went past the capacity (0 is exact).
	Overshoot int64
	// Inversions counts visitors who kept polling and yet were overtaken:
	// a visitor holding a higher ticket got in more than one refresh
	// interval before them (the slack a poll's timing allows).
	Inversions int
	// LostPlaces counts visitors who kept polling and still lost their
	// place (called and not claimed in time, or passed over).
	LostPlaces int
	// Utilisation is the mean of live sessions / capacity over the samples
	// taken while visitors were waiting.
	Utilisation float64
	// MaxPerMinute is the most visitors called in one calendar minute.
	MaxPerMinute int64
	// Calls counts store calls by operation; Requests counts visitor
	// requests by kind.
	Calls, Requests map[string]int
	// Waited is the time from arrival to admission of admitted visitors.
	WaitP50, WaitP90, WaitP99 time.Duration
	// RedisMemory is used_memory at the end, in bytes, and its growth.
	RedisMemory, RedisGrowth int64
	// Duration is the simulated time the event took.
	Duration time.Duration
	Timeline []Sample
}

// Sample is the room's state at one instant of the run.
type Sample struct {
	At                      time.Duration
	Waiting, Active, Called int64
}

// CallsPerRequest is the store calls divided by visitor requests.
func (r Report) CallsPerRequest() float64 {
	calls, reqs := 0, 0
	for _, n := range r.Calls {
		calls += n
	}
	for _, n := range r.Requests {
		reqs += n
	}
	if reqs == 0 {
		return 0
	}
	return float64(calls) / float64(reqs)
}

type kind int

const (
	arrive kind = iota
	poll
	activity
	sample
)

type event struct {
	at   time.Time
	kind kind
	v    *visitor
	seq  int
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

type visitor struct {
	id        int
	ticket    int64
	epoch     int64
	session   string
	arrived   time.Time
	admitted  time.Time
	leaves    time.Time // when an admitted visitor goes
	renewed   time.Time
	pollsLeft int   // polls before a NoShowWait visitor gives up; -1 never
	waiting   bool  // polling for a place
	beacon    bool  // leaves by beacon rather than going idle
	first     int64 // the ticket drawn on arrival
	steady    bool  // never stops polling while waiting
}

// Run plays the event against st, the store client under test, with redis
// the Redis behind it (for memory and per-minute counts).
func Run(ctx context.Context, cfg Config, st *store.Upstash, room string, redis *resp.Pool) (Report, error) {
	r := &run{cfg: cfg, st: st, room: room, redis: redis, rng: rand.New(rand.NewSource(cfg.Seed)),
		policy: cfg.Room.Policy(), refresh: time.Duration(cfg.Room.RefreshSeconds) * time.Second,
		start: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
		rep:   Report{Visitors: cfg.Visitors, Capacity: cfg.Room.MaxActiveUsers, Calls: map[string]int{}, Requests: map[string]int{}}}
	return r.play(ctx)
}

type run struct {
	cfg        Config
	policy     store.Policy
	refresh    time.Duration
	st         *store.Upstash
	room       string
	redis      *resp.Pool
	rng        *rand.Rand
	start      time.Time
	q          events
	seq        int
	rep        Report
	waits      []time.Duration
	visitors   []*visitor
	waiting    int // visitors polling for a place
	sessions   int // admitted visitors who have not left
	utilSum    float64
	utilN      int
	lastMinute int64
	memBefore  int64
}

func (r *run) at(t time.Time, k kind, v *visitor) {
	r.seq++
	heap.Push(&r.q, &event{at: t, kind: k, v: v, seq: r.seq})
}

func (r *run) play(ctx context.Context) (Report, error) {
	var err error
	if r.memBefore, err = r.usedMemory(); err != nil {
		return r.rep, err
	}
	for i := 0; i < r.cfg.Visitors; i++ {
		var t time.Duration
		if i < r.cfg.FlashCrowd {
			t = time.Duration(r.rng.Int63n(int64(time.Minute)))
		} else if rest := r.cfg.Visitors - r.cfg.FlashCrowd; rest > 0 {
			t = time.Minute + time.Duration(int64(r.cfg.Spread)*int64(i-r.cfg.FlashCrowd)/int64(rest))
		}
		v := &visitor{id: i, pollsLeft: -1, beacon: r.rng.Intn(2) == 0}
		r.visitors = append(r.visitors, v)
		switch x := r.rng.Float64(); {
		case x < r.cfg.NoShowJoin:
			v.pollsLeft = 0
		case x < r.cfg.NoShowJoin+r.cfg.NoShowWait:
			v.pollsLeft = 1 + r.rng.Intn(20)
		}
		r.at(r.start.Add(t), arrive, v)
	}
	r.at(r.start, sample, nil)
	var now time.Time
	pending := r.cfg.Visitors
	for r.q.Len() > 0 {
		e := heap.Pop(&r.q).(*event)
		now = e.at
		if e.kind == sample {
			if pending == 0 && r.waiting == 0 && r.sessions == 0 {
				break
			}
			if err := r.sample(ctx, now); err != nil {
				return r.rep, err
			}
			r.at(now.Add(r.cfg.Sample), sample, nil)
			continue
		}
		if e.kind == arrive {
			pending--
		}
		if err := r.handle(ctx, e, now); err != nil {
			return r.rep, err
		}
	}
	r.rep.Duration = now.Sub(r.start)
	if r.utilN > 0 {
		r.rep.Utilisation = r.utilSum / float64(r.utilN)
	}
	if r.rep.Capacity > 0 && r.rep.MaxActive > int64(r.rep.Capacity) {
		r.rep.Overshoot = r.rep.MaxActive - int64(r.rep.Capacity)
	}
	r.rep.Inversions = r.overtaken()
	sort.Slice(r.waits, func(i, j int) bool { return r.waits[i] < r.waits[j] })
	r.rep.WaitP50, r.rep.WaitP90, r.rep.WaitP99 = percentile(r.waits, 50), percentile(r.waits, 90), percentile(r.waits, 99)
	mem, err := r.usedMemory()
	r.rep.RedisMemory, r.rep.RedisGrowth = mem, mem-r.memBefore
	return r.rep, err
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

func (r *run) observe(l store.Line) {
	if l.Active > r.rep.MaxActive {
		r.rep.MaxActive = l.Active
	}
	if l.Active+l.Called > r.rep.MaxHeld {
		r.rep.MaxHeld = l.Active + l.Called
	}
}

func (r *run) handle(ctx context.Context, e *event, now time.Time) error {
	v := e.v
	switch e.kind {
	case arrive:
		v.arrived = now
		v.session = "s" + strconv.Itoa(v.id)
		r.rep.Requests["join"]++
		r.rep.Calls["join"]++
		pl, err := r.st.Join(ctx, r.room, r.policy, v.session, now)
		if err != nil {
			return err
		}
		v.ticket, v.first, v.epoch = pl.Ticket, pl.Ticket, pl.Line.Epoch
		v.steady = v.pollsLeft < 0
		return r.settle(v, pl, now)
	case poll:
		if !v.waiting {
			return nil
		}
		if v.pollsLeft == 0 {
			// Gone: the tab was closed. The ticket stays in the store
			// until the queue timeout or its claim window passes.
			v.waiting = false
			r.waiting--
			return nil
		}
		if v.pollsLeft > 0 {
			v.pollsLeft--
		}
		r.rep.Requests["poll"]++
		r.rep.Calls["poll"]++
		pl, err := r.st.Poll(ctx, r.room, r.policy, store.Ticket{Number: v.ticket, Epoch: v.epoch}, v.session, now)
		if err != nil {
			return err
		}
		if pl.Outcome == store.Rejoined && v.steady {
			r.rep.LostPlaces++
		}
		v.waiting = false
		r.waiting--
		v.ticket, v.epoch = pl.Ticket, pl.Line.Epoch
		return r.settle(v, pl, now)
	case activity:
		if !now.Before(v.leaves) {
			r.sessions--
			if v.beacon {
				r.rep.Requests["leave"]++
				r.rep.Calls["end"]++
				l, err := r.st.End(ctx, r.room, r.policy, v.session, now)
				r.observe(l)
				return err
			}
			return nil // idle: the session lapses on its own
		}
		r.rep.Requests["session"]++
		if now.Sub(v.renewed) >= r.cfg.Room.Heartbeat() {
			r.rep.Calls["renew"]++
			ok, l, err := r.st.Renew(ctx, r.room, r.policy, v.session, now)
			if err != nil {
				return err
			}
			r.observe(l)
			if !ok {
				return fmt.Errorf("visitor %d: an active session lapsed (renewed %v ago)", v.id, now.Sub(v.renewed))
			}
			v.renewed = now
		}
		r.at(now.Add(r.cfg.Activity), activity, v)
	}
	return nil
}

// settle follows a Join or Poll: admitted visitors start their stay, the
// others poll again.
func (r *run) settle(v *visitor, pl store.Place, now time.Time) error {
	r.observe(pl.Line)
	if pl.Outcome != store.Admitted {
		v.waiting = true
		r.waiting++
		r.at(now.Add(r.cfg.Room.PollEvery(pl.Ticket-pl.Line.Admitted-1)), poll, v)
		return nil
	}
	v.admitted, v.renewed = now, now
	r.rep.Admitted++
	r.sessions++
	r.waits = append(r.waits, now.Sub(v.arrived))
	stay := r.cfg.StayMin + time.Duration(r.rng.Int63n(int64(r.cfg.StayMax-r.cfg.StayMin)+1))
	v.leaves = now.Add(stay)
	r.at(now.Add(r.cfg.Activity), activity, v)
	return nil
}

// overtaken counts steady visitors (who polled until admitted, with the
// ticket they drew) admitted more than one refresh after some visitor
// holding a higher ticket: admissions out of arrival order.
func (r *run) overtaken() int {
	var steady []*visitor
	for _, v := range r.visitors {
		if v.steady && !v.admitted.IsZero() && v.ticket == v.first {
			steady = append(steady, v)
		}
	}
	sort.Slice(steady, func(i, j int) bool { return steady[i].first < steady[j].first })
	n := 0
	earliestLater := time.Time{} // earliest admission among higher tickets
	for i := len(steady) - 1; i >= 0; i-- {
		v := steady[i]
		if !earliestLater.IsZero() && v.admitted.Sub(earliestLater) > r.refresh {
			n++
		}
		if earliestLater.IsZero() || v.admitted.Before(earliestLater) {
			earliestLater = v.admitted
		}
	}
	return n
}

// sample records the room's state, utilisation while visitors wait, and
// the calls of each finished minute.
func (r *run) sample(ctx context.Context, now time.Time) error {
	l, err := r.st.Stats(ctx, r.room, r.policy, now)
	if err != nil {
		return err
	}
	r.observe(l)
	r.rep.Timeline = append(r.rep.Timeline, Sample{At: now.Sub(r.start), Waiting: int64(r.waiting), Active: l.Active, Called: l.Called})
	if r.waiting > 0 && r.policy.Capacity > 0 {
		r.utilSum += float64(l.Active) / float64(r.policy.Capacity)
		r.utilN++
	}
	minute := now.UnixMilli() / 60000
	if minute != r.lastMinute {
		// The script keeps each minute's count in slot m<minute%5> as
		// "minute:count".
		prev := minute - 1
		v, err := r.redis.Do("HGET", r.st.Keys(r.room)[0], "m"+strconv.FormatInt(prev%5, 10))
		if err != nil {
			return err
		}
		if m, count, ok := strings.Cut(v.Str, ":"); ok && m == strconv.FormatInt(prev, 10) {
			if n, _ := strconv.ParseInt(count, 10, 64); n > r.rep.MaxPerMinute {
				r.rep.MaxPerMinute = n
			}
		}
		r.lastMinute = minute
	}
	return nil
}

func (r *run) usedMemory() (int64, error) {
	v, err := r.redis.Do("MEMORY", "STATS")
	if err != nil {
		return 0, err
	}
	for i := 0; i+1 < len(v.Array); i += 2 {
		if v.Array[i].Str == "total.allocated" {
			return v.Array[i+1].Int, nil
		}
	}
	return 0, fmt.Errorf("MEMORY STATS has no total.allocated")
}
