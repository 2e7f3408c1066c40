package fastlyhost

import (
	"container/heap"
	"container/list"
	"context"
	"fmt"
	"math"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"
)

// Edge Rate Limiting (fastly_erl): rate counters and penalty boxes that
// work, where Viceroy links the six calls as no-ops (src/wiggle_abi/
// erl_impl.rs: nothing is counted, nothing is ever blocked). A service that
// limits clients can so be tested end to end locally.
//
// The behaviour is Fastly's documented one (the Go SDK's erl package, and
// the VCL reference for ratecounter and penaltybox, which the Compute calls
// share):
//
//   - A rate counter keeps, per entry, its increments by whole second. The
//     N-second window (rates over 1, 10 or 60 s; counts over 10, 20 ... 60 s)
//     holds the increments of the current second and of the N-1 before it,
//     so between N-1 and N seconds of them. A rate is the window's count
//     divided by N, truncated. An entry with no increment in the last
//     minute is gone. (The SDK's doc of CounterDuration, from an older
//     reference, has buckets fixed at :00, :10 ...; Fastly's ratecounter
//     reference now has them slide by the second, as here.)
//   - A penalty box holds an entry for its time to live: whole minutes, the
//     seconds the SDK passes truncated, from 1 to 60.
//   - check_rate increments the entry, puts it in the penalty box when its
//     rate over the window exceeds the limit (as penaltybox_add, replacing
//     a time to live already running), and answers whether the entry is in
//     the penalty box.
//   - A counter and a box hold up to 200,000 entries each; past that a new
//     counter entry evicts the least recently incremented one, and a new
//     box entry the one with the least time left.
//   - Arguments out of the documented ranges are refused with Inval, which
//     the SDK reports as erl.ErrInvalidArgument: a window other than 1, 10
//     or 60; a duration other than 10 to 60 in tens; a delta over 1000; a
//     limit outside 10 to 10,000; a time to live outside 1 to 60 minutes; a
//     name or entry over 64 bytes (the SDK says 64 characters) or not UTF-8.
//     The host also logs why, which the platform does not.
//
// Where the local host differs from a POP: counts are exact (a POP's are
// estimates that may under-count by up to 10%, and take a moment to
// converge across its cache nodes), and a host is one POP: every instance
// of one Host shares the counters and boxes, as the nodes of a POP do,
// and nothing is shared between hosts. Time is the host's Clock (Options),
// so a test can let minutes pass at once.

// The documented limits.
const (
	// erlCapacity is how many entries a rate counter or a penalty box
	// holds, per POP.
	erlCapacity = 200_000
	// erlMaxName is the longest name of a counter or a box, and the
	// longest entry, in bytes.
	erlMaxName = 64
	// erlMaxDelta is the largest increment.
	erlMaxDelta = 1000
	// erlMinLimit and erlMaxLimit bound check_rate's limit, in events per
	// second.
	erlMinLimit, erlMaxLimit = 10, 10_000
	// erlMaxTTLMinutes is the longest time to live in a penalty box; the
	// shortest is one minute.
	erlMaxTTLMinutes = 60
	// erlHorizon is how many seconds of increments a counter needs: its
	// longest window and duration.
	erlHorizon = 60
)

// erlWindow checks a rate window, in seconds.
func erlWindow(w uint32) error {
	switch w {
	case 1, 10, 60:
		return nil
	}
	return fmt.Errorf("rate window %d s: the platform has 1, 10 and 60 s", w)
}

// erlDuration checks a counter duration, in seconds.
func erlDuration(d uint32) error {
	if d < 10 || d > erlHorizon || d%10 != 0 {
		return fmt.Errorf("counter duration %d s: the platform has 10, 20, 30, 40, 50 and 60 s", d)
	}
	return nil
}

// erlDelta checks an increment.
func erlDelta(delta uint32) error {
	if delta > erlMaxDelta {
		return fmt.Errorf("delta %d: the platform takes 0 to %d", delta, erlMaxDelta)
	}
	return nil
}

// erlLimit checks check_rate's limit.
func erlLimit(limit uint32) error {
	if limit < erlMinLimit || limit > erlMaxLimit {
		return fmt.Errorf("limit %d per second: the platform takes %d to %d", limit, erlMinLimit, erlMaxLimit)
	}
	return nil
}

// erlTTL reads a penalty box's time to live: seconds, truncated to whole
// minutes, which must be 1 to 60.
func erlTTL(seconds uint32) (time.Duration, error) {
	minutes := seconds / 60
	if minutes < 1 || minutes > erlMaxTTLMinutes {
		return 0, fmt.Errorf("time to live %d s is %d whole minutes: the platform takes 1 to %d", seconds, minutes, erlMaxTTLMinutes)
	}
	return time.Duration(minutes) * time.Minute, nil
}

// erlName reads the name or entry what from guest memory.
func erlName(m api.Memory, ptr, n uint64, what string) (string, error) {
	if n > erlMaxName {
		return "", fmt.Errorf("%s of %d bytes: the platform takes at most %d", what, n, erlMaxName)
	}
	b, ok := read(m, ptr, n)
	switch {
	case !ok:
		return "", fmt.Errorf("%s is outside the guest's memory", what)
	case !utf8.Valid(b):
		return "", fmt.Errorf("%s %q is not UTF-8", what, b)
	}
	return string(b), nil
}

// erlState is one host's rate counters and penalty boxes, by name (a
// counter and a box may share a name); one host is one POP.
type erlState struct {
	clock    func() time.Time
	capacity int

	mu       sync.Mutex
	counters map[string]*rateCounter
	boxes    map[string]*penaltyBox
	// latest is the latest time seen, so that the state's time never runs
	// backwards when the clock does.
	latest time.Time
	// swept is the second of the last sweep of every counter and box.
	swept int64
}

// erlStateOf returns h's rate counters and penalty boxes.
func erlStateOf(h *Host) *erlState {
	return shared(h, "erl", func() *erlState { return newERLState(h.clock, erlCapacity) })
}

func newERLState(clock func() time.Time, capacity int) *erlState {
	return &erlState{clock: clock, capacity: capacity, counters: map[string]*rateCounter{}, boxes: map[string]*penaltyBox{}}
}

// lock takes the state and returns the time of the call. Once a second it
// drops every expired counter entry and box entry, and the counters and
// boxes left empty, so memory follows the last minute's increments and
// the last hour's penalties, not the host's age.
func (e *erlState) lock() time.Time {
	e.mu.Lock()
	// Round(0) drops the monotonic reading: seconds are the wall clock's.
	if now := e.clock().Round(0); now.After(e.latest) {
		e.latest = now
	}
	now := e.latest
	if sec := now.Unix(); sec != e.swept {
		e.swept = sec
		for name, c := range e.counters {
			if c.expire(sec); c.lru.Len() == 0 {
				delete(e.counters, name)
			}
		}
		for name, b := range e.boxes {
			if b.expire(now); len(b.entries) == 0 {
				delete(e.boxes, name)
			}
		}
	}
	return now
}

func (e *erlState) unlock() { e.mu.Unlock() }

// counter returns the rate counter name, made when first used. The caller
// holds mu.
func (e *erlState) counter(name string) *rateCounter {
	c := e.counters[name]
	if c == nil {
		c = &rateCounter{capacity: e.capacity, entries: map[string]*list.Element{}, lru: list.New()}
		e.counters[name] = c
	}
	return c
}

// box returns the penalty box name, made when first used. The caller holds
// mu.
func (e *erlState) box(name string) *penaltyBox {
	b := e.boxes[name]
	if b == nil {
		b = &penaltyBox{capacity: e.capacity, entries: map[string]*boxEntry{}}
		e.boxes[name] = b
	}
	return b
}

// rateCounter is one named rate counter.
type rateCounter struct {
	capacity int
	entries  map[string]*list.Element // of *counterEntry
	// lru orders the entries by their latest increment, the latest first.
	lru *list.List
}

// counterEntry is one entry's increments by second, the oldest first, none
// older than the horizon.
type counterEntry struct {
	key     string
	seconds []secondCount
}

// secondCount is the increments of one second.
type secondCount struct {
	sec int64
	n   uint64
}

// last is the second of the entry's latest increment.
func (c *counterEntry) last() int64 { return c.seconds[len(c.seconds)-1].sec }

// increment adds delta to key's count at second sec. An increment of 0
// counts nothing and so leaves the entry as it was.
func (r *rateCounter) increment(key string, delta uint32, sec int64) {
	if delta == 0 {
		return
	}
	r.expire(sec)
	el := r.entries[key]
	if el == nil {
		if r.lru.Len() >= r.capacity {
			r.remove(r.lru.Back())
		}
		el = r.lru.PushFront(&counterEntry{key: key})
		r.entries[key] = el
	} else {
		r.lru.MoveToFront(el)
	}
	c := el.Value.(*counterEntry)
	if n := len(c.seconds); n > 0 && c.seconds[n-1].sec == sec {
		c.seconds[n-1].n += uint64(delta)
	} else {
		c.seconds = append(c.seconds, secondCount{sec: sec, n: uint64(delta)})
	}
	drop := 0
	for drop < len(c.seconds) && c.seconds[drop].sec <= sec-erlHorizon {
		drop++
	}
	c.seconds = c.seconds[drop:]
}

// count is key's increments over the window of n seconds ending with
// second sec, saturated at the largest u32; a counter never used (nil)
// counts none.
func (r *rateCounter) count(key string, n uint32, sec int64) uint32 {
	if r == nil {
		return 0
	}
	el := r.entries[key]
	if el == nil {
		return 0
	}
	var sum uint64
	for _, s := range el.Value.(*counterEntry).seconds {
		if s.sec > sec-int64(n) {
			sum += s.n
		}
	}
	return uint32(min(sum, math.MaxUint32))
}

// expire drops the entries with no increment within the horizon before
// second sec: the least recently incremented, at the back.
func (r *rateCounter) expire(sec int64) {
	for el := r.lru.Back(); el != nil && el.Value.(*counterEntry).last() <= sec-erlHorizon; el = r.lru.Back() {
		r.remove(el)
	}
}

func (r *rateCounter) remove(el *list.Element) {
	delete(r.entries, el.Value.(*counterEntry).key)
	r.lru.Remove(el)
}

// penaltyBox is one named penalty box: its entries, and a heap of them by
// expiry, the soonest first.
type penaltyBox struct {
	capacity int
	entries  map[string]*boxEntry
	byExpiry boxHeap
}

// boxEntry is one entry of a penalty box, and its place in the heap.
type boxEntry struct {
	key     string
	expires time.Time
	index   int
}

// add puts key in the box until now+ttl, replacing a time to live already
// running. A full box first drops the entry with the least time left.
func (b *penaltyBox) add(key string, ttl time.Duration, now time.Time) {
	b.expire(now)
	if e := b.entries[key]; e != nil {
		e.expires = now.Add(ttl)
		heap.Fix(&b.byExpiry, e.index)
		return
	}
	if len(b.entries) >= b.capacity {
		delete(b.entries, heap.Pop(&b.byExpiry).(*boxEntry).key)
	}
	e := &boxEntry{key: key, expires: now.Add(ttl)}
	b.entries[key] = e
	heap.Push(&b.byExpiry, e)
}

// has reports whether key is in the box at now; a box never used (nil)
// holds none.
func (b *penaltyBox) has(key string, now time.Time) bool {
	if b == nil {
		return false
	}
	e := b.entries[key]
	return e != nil && now.Before(e.expires)
}

// expire drops the entries whose time is over.
func (b *penaltyBox) expire(now time.Time) {
	for len(b.byExpiry) > 0 && !now.Before(b.byExpiry[0].expires) {
		delete(b.entries, heap.Pop(&b.byExpiry).(*boxEntry).key)
	}
}

// boxHeap is a container/heap of box entries by expiry.
type boxHeap []*boxEntry

func (h boxHeap) Len() int           { return len(h) }
func (h boxHeap) Less(i, j int) bool { return h[i].expires.Before(h[j].expires) }
func (h boxHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *boxHeap) Push(x any) {
	e := x.(*boxEntry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *boxHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

// erlAct is what a fastly_erl call does to the state at now, under its
// lock; its result is the value the call writes, when it has one.
type erlAct func(e *erlState, now time.Time) uint32

// erlCall reads and checks a call's arguments a, and returns its act or the
// reason for refusing it.
type erlCall func(m api.Memory, a []uint64) (erlAct, error)

// erlHostcall makes the host call fastly_erl.name of call, writing its value
// to the guest pointer a[out] when out >= 0, and logging any refusal.
func erlHostcall(name string, out int, call erlCall) hostcall {
	return func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
		act, err := call(m, a)
		if err != nil {
			s.host.logf("fastly_erl.%s: %v: Inval", name, err)
			return stInval
		}
		e := erlStateOf(s.host)
		v := act(e, e.lock())
		e.unlock()
		if out < 0 {
			return stOK
		}
		return write32(m, a[out], v)
	}
}

// erlNames reads the counter's or box's name at a[0], a[1] and the entry
// at a[2], a[3], the first arguments of every fastly_erl call.
func erlNames(m api.Memory, a []uint64, what string) (name, entry string, err error) {
	if name, err = erlName(m, a[0], a[1], what+" name"); err != nil {
		return "", "", err
	}
	if entry, err = erlName(m, a[2], a[3], "entry"); err != nil {
		return "", "", err
	}
	return name, entry, nil
}

// b32 is a boolean as the calls write it.
func b32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// erlCalls are the fastly_erl calls (the witx's signatures in comments),
// with the index of the argument their value is written to, or -1.
var erlCalls = map[string]struct {
	out  int
	call erlCall
}{
	// check_rate(rc, entry, delta, window, limit, pb, ttl) -> blocked
	"check_rate": {10, func(m api.Memory, a []uint64) (erlAct, error) {
		rc, entry, err := erlNames(m, a, "rate counter")
		if err != nil {
			return nil, err
		}
		pb, err := erlName(m, a[7], a[8], "penalty box name")
		if err != nil {
			return nil, err
		}
		delta, window, limit := u32(a[4]), u32(a[5]), u32(a[6])
		ttl, err := erlTTL(u32(a[9]))
		for _, check := range []error{erlDelta(delta), erlWindow(window), erlLimit(limit), err} {
			if check != nil {
				return nil, check
			}
		}
		return func(e *erlState, now time.Time) uint32 {
			c := e.counter(rc)
			c.increment(entry, delta, now.Unix())
			// Over the limit on average over the window, exactly:
			// count/window > limit.
			if uint64(c.count(entry, window, now.Unix())) > uint64(limit)*uint64(window) {
				e.box(pb).add(entry, ttl, now)
			}
			return b32(e.boxes[pb].has(entry, now))
		}, nil
	}},
	// ratecounter_increment(rc, entry, delta)
	"ratecounter_increment": {-1, func(m api.Memory, a []uint64) (erlAct, error) {
		rc, entry, err := erlNames(m, a, "rate counter")
		if err != nil {
			return nil, err
		}
		delta := u32(a[4])
		if err := erlDelta(delta); err != nil {
			return nil, err
		}
		return func(e *erlState, now time.Time) uint32 {
			e.counter(rc).increment(entry, delta, now.Unix())
			return 0
		}, nil
	}},
	// ratecounter_lookup_rate(rc, entry, window) -> rate
	"ratecounter_lookup_rate": {5, func(m api.Memory, a []uint64) (erlAct, error) {
		rc, entry, err := erlNames(m, a, "rate counter")
		if err != nil {
			return nil, err
		}
		window := u32(a[4])
		if err := erlWindow(window); err != nil {
			return nil, err
		}
		return func(e *erlState, now time.Time) uint32 {
			return e.counters[rc].count(entry, window, now.Unix()) / window
		}, nil
	}},
	// ratecounter_lookup_count(rc, entry, duration) -> count
	"ratecounter_lookup_count": {5, func(m api.Memory, a []uint64) (erlAct, error) {
		rc, entry, err := erlNames(m, a, "rate counter")
		if err != nil {
			return nil, err
		}
		duration := u32(a[4])
		if err := erlDuration(duration); err != nil {
			return nil, err
		}
		return func(e *erlState, now time.Time) uint32 {
			return e.counters[rc].count(entry, duration, now.Unix())
		}, nil
	}},
	// penaltybox_add(pb, entry, ttl)
	"penaltybox_add": {-1, func(m api.Memory, a []uint64) (erlAct, error) {
		pb, entry, err := erlNames(m, a, "penalty box")
		if err != nil {
			return nil, err
		}
		ttl, err := erlTTL(u32(a[4]))
		if err != nil {
			return nil, err
		}
		return func(e *erlState, now time.Time) uint32 {
			e.box(pb).add(entry, ttl, now)
			return 0
		}, nil
	}},
	// penaltybox_has(pb, entry) -> has
	"penaltybox_has": {4, func(m api.Memory, a []uint64) (erlAct, error) {
		pb, entry, err := erlNames(m, a, "penalty box")
		if err != nil {
			return nil, err
		}
		return func(e *erlState, now time.Time) uint32 {
			return b32(e.boxes[pb].has(entry, now))
		}, nil
	}},
}

func init() {
	calls := map[string]hostcall{}
	for name, c := range erlCalls {
		calls["fastly_erl."+name] = erlHostcall(name, c.out, c.call)
	}
	register(calls)
}
