package control

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/edgequeue/waitingroom/store"
)

// Stats is a room's state as operators script against it: the fields of
// CDN waiting rooms' status APIs (active_sessions, max_sessions,
// queue_length, avg_wait_seconds) and the line's own figures.
type Stats struct {
	Room           string `json:"room"`
	ActiveSessions int64  `json:"active_sessions"`
	// MaxSessions is the capacity in force; 0 is no cap.
	MaxSessions int `json:"max_sessions"`
	// QueueLength is the tickets not called yet, both lanes.
	QueueLength int64 `json:"queue_length"`
	// AvgWaitSeconds, P50WaitSeconds and P90WaitSeconds are the waits of
	// the visitors called in the last five minutes, from their ticket to
	// their call; nil when nobody was called.
	AvgWaitSeconds *float64 `json:"avg_wait_seconds"`
	P50WaitSeconds *float64 `json:"p50_wait_seconds"`
	P90WaitSeconds *float64 `json:"p90_wait_seconds"`
	// Called is how many called visitors have not arrived yet.
	Called     int64 `json:"called"`
	Issued     int64 `json:"issued"`
	NowServing int64 `json:"now_serving"`
	// AdmittedLastMinute is how many were called in the last 60 seconds.
	AdmittedLastMinute int64 `json:"admitted_last_minute"`
	// DecoyedLastMinute is how many requests the POP that answered sent
	// to the room's decoy line in the last 60 seconds (Edge Rate
	// Limiting counts within a POP); nil when it was not counted.
	DecoyedLastMinute *int64 `json:"decoyed_last_minute"`
	// ETALastInLineSeconds is when the last in line will be called at
	// the rate observed in the last minutes; nil when nobody was called
	// lately or admission is held.
	ETALastInLineSeconds *float64 `json:"eta_last_in_line_seconds"`
	Paused               bool     `json:"paused"`
	QueueAll             bool     `json:"queue_all"`
	// Mode is the mode in force.
	Mode string `json:"mode"`
	// Configured are the config store's values, Overrides the live ones
	// set, Effective those in force.
	Configured Limits `json:"configured"`
	Overrides  Limits `json:"overrides"`
	Effective  Limits `json:"effective"`
	Epoch      int64  `json:"epoch"`
	// StoreLatencyMS is how long the store took to answer for these stats.
	StoreLatencyMS float64   `json:"store_latency_ms"`
	UpdatedAt      time.Time `json:"updated_at"`
	// Event is the state of the room's scheduled event, for the panel's
	// note (its commitment and draw).
	Event store.EventState `json:"-"`
}

// OverridesOf is the live values o sets, as Limits (those not set nil).
func OverridesOf(o store.Overrides) Limits {
	l := Limits{MaxActiveUsers: o.Capacity, NewUsersPerMinute: o.PerMinute, Burst: o.Burst}
	if o.Mode != "" {
		mode := string(o.Mode)
		l.Mode = &mode
	}
	return l
}

// statsHistory is how much history Stats reads for its waits: a wait that
// began before it is not counted.
const statsHistory = 3 * time.Hour

type reading struct {
	line    store.Line
	latency time.Duration
}

func (o *Operator) stats(ctx context.Context, r *queue.Room) (reading, error) {
	clock := o.Clock
	if clock == nil {
		clock = time.Now
	}
	start := clock()
	line, err := o.store().Stats(ctx, r.Name, r.Policy(o.Now), o.Now)
	if err != nil {
		o.logf("control: reading room %s failed: %v", r.Name, err)
		return reading{}, err
	}
	return reading{line, clock().Sub(start)}, nil
}

// history reads the room's minutes from from to now.
func (o *Operator) history(ctx context.Context, r *queue.Room, from time.Time) ([]store.Minute, error) {
	minutes, err := o.store().History(ctx, r.Name, from, o.Now)
	if err != nil {
		o.logf("control: reading the history of room %s failed: %v", r.Name, err)
		return nil, err
	}
	return minutes, nil
}

// Stats reads the room's state: one store call for the line, one for the
// last hours of its history (StatsCalls).
func (o *Operator) Stats(ctx context.Context, room string) (Stats, error) {
	r, err := o.Room(room)
	if err != nil {
		return Stats{}, err
	}
	rd, err := o.stats(ctx, r)
	if err != nil {
		return Stats{}, err
	}
	minutes, err := o.history(ctx, r, o.Now.Add(-statsHistory))
	if err != nil {
		return Stats{}, err
	}
	return o.statsOf(r, rd, minutes), nil
}

// Overview is the room's Stats and its History over span, for the panel,
// from the store calls of Stats alone (StatsCalls): the day's history,
// read once, serves both.
func (o *Operator) Overview(ctx context.Context, room string, span time.Duration) (Stats, []Point, error) {
	if err := checkSpan(span); err != nil {
		return Stats{}, nil, err
	}
	r, err := o.Room(room)
	if err != nil {
		return Stats{}, nil, err
	}
	rd, err := o.stats(ctx, r)
	if err != nil {
		return Stats{}, nil, err
	}
	minutes, err := o.history(ctx, r, o.Now.Add(-MaxHistory))
	if err != nil {
		return Stats{}, nil, err
	}
	// Stats reads only the last hours: the same minutes, the same waits.
	first := o.Now.Add(-statsHistory).UnixMilli() / 60000
	var recent []store.Minute
	for _, m := range minutes {
		if m.Start.UnixMilli()/60000 >= first {
			recent = append(recent, m)
		}
	}
	return o.statsOf(r, rd, recent), o.points(minutes, span), nil
}

// statsOf is the room's Stats from its line and its recent history.
func (o *Operator) statsOf(r *queue.Room, rd reading, minutes []store.Minute) Stats {
	l := rd.line
	cur := r.At(o.Now)
	eff := effective(cur, l.Overrides)
	st := Stats{
		Room: r.Name, ActiveSessions: l.Active, MaxSessions: eff.capacity,
		QueueLength: l.Waiting() + l.PriorityIssued - l.PriorityAdmitted,
		Called:      l.Called, Issued: l.Issued, NowServing: l.Admitted,
		Paused: l.Paused, QueueAll: l.QueueAll, Mode: string(eff.mode),
		Configured: effective(cur, store.Overrides{}).json(), Effective: eff.json(),
		Overrides: OverridesOf(l.Overrides),
		Epoch:     l.Epoch, StoreLatencyMS: round(float64(rd.latency.Microseconds()) / 1000), UpdatedAt: o.Now.UTC(),
		Event: l.Event,
	}
	if o.Decoys != nil {
		n, err := o.Decoys(r.Name)
		if err != nil {
			o.logf("control: the decoyed requests of room %s were not counted: %v", r.Name, err)
		} else {
			decoyed := int64(n)
			st.DecoyedLastMinute = &decoyed
		}
	}
	fl := newFlow(minutes, l.Epoch)
	st.AdmittedLastMinute = fl.calledSince(o.Now.Add(-time.Minute), o.Now)
	from := fl.calledAt(o.Now.Add(-5 * time.Minute))
	if w := fl.waits(from, float64(l.Admitted)); w.n > 0 {
		st.AvgWaitSeconds, st.P50WaitSeconds, st.P90WaitSeconds = seconds(w.mean), seconds(w.p50), seconds(w.p90)
	}
	if l.Recent > 0 && !l.Paused && !l.QueueAll && eff.mode != queue.Reject {
		perSecond := float64(l.Recent) / math.Max(o.Now.Sub(l.RecentSince).Seconds(), 1)
		st.ETALastInLineSeconds = seconds(float64(st.QueueLength) / perSecond)
	}
	return st
}

func seconds(v float64) *float64 {
	r := round(v)
	return &r
}

// Point is one minute of a room's history, for charts.
type Point struct {
	Start time.Time `json:"start"`
	// Missing is true for a minute in which nothing called the store.
	Missing    bool  `json:"missing,omitempty"`
	Joins      int64 `json:"joins"`
	Admissions int64 `json:"admissions"`
	Active     int64 `json:"active"`
	Waiting    int64 `json:"waiting"`
	Refusals   int64 `json:"refusals"`
	// P50WaitSeconds and P90WaitSeconds are the waits of those called in
	// the minute; nil when nobody was.
	P50WaitSeconds *float64 `json:"p50_wait_seconds"`
	P90WaitSeconds *float64 `json:"p90_wait_seconds"`
}

// MaxHistory is the longest span History reads: what the store keeps.
const MaxHistory = store.HistoryMinutes * time.Minute

// checkSpan refuses a span of history that is not whole minutes from one
// to MaxHistory.
func checkSpan(span time.Duration) error {
	if span < time.Minute || span > MaxHistory {
		return &InputError{"minutes", "must be from 1 to 1440"}
	}
	return nil
}

// History is the room's last span (at most MaxHistory) minute by minute,
// oldest first, ending with the current minute.
func (o *Operator) History(ctx context.Context, room string, span time.Duration) ([]Point, error) {
	if err := checkSpan(span); err != nil {
		return nil, err
	}
	r, err := o.Room(room)
	if err != nil {
		return nil, err
	}
	// Waits need the tickets' issue, which may be hours before the span.
	minutes, err := o.history(ctx, r, o.Now.Add(-MaxHistory))
	if err != nil {
		return nil, err
	}
	return o.points(minutes, span), nil
}

// points is the last span of a day's minutes, one Point a minute.
func (o *Operator) points(minutes []store.Minute, span time.Duration) []Point {
	byEpoch := map[int64]flow{}
	got := map[int64]store.Minute{}
	for _, m := range minutes {
		got[m.Start.Unix()/60] = m
		if _, ok := byEpoch[m.Epoch]; !ok {
			byEpoch[m.Epoch] = newFlow(minutes, m.Epoch)
		}
	}
	last := o.Now.Unix() / 60
	points := make([]Point, 0, int(span/time.Minute))
	for min := last - int64(span/time.Minute) + 1; min <= last; min++ {
		p := Point{Start: time.Unix(min*60, 0).UTC()}
		m, ok := got[min]
		if !ok {
			p.Missing = true
			points = append(points, p)
			continue
		}
		p.Joins, p.Admissions, p.Active, p.Waiting, p.Refusals = m.Joins, m.Admissions, m.Active, m.Waiting, m.Refusals
		fl := byEpoch[m.Epoch]
		if w := fl.waits(fl.calledAt(m.Start), float64(m.Admitted)); w.n > 0 {
			p.P50WaitSeconds, p.P90WaitSeconds = seconds(w.p50), seconds(w.p90)
		}
		points = append(points, p)
	}
	return points
}

// flow is one epoch's two running counts over time, tickets issued and
// positions called, from zero at the epoch. Each is a polyline through
// the history's records: flat until the count first moved in a minute,
// then straight to where it last moved, so a burst is a step and a
// steady stream a slope.
type flow struct {
	issued, admitted curve
}

type curve struct {
	t, v []float64 // unix seconds; the count
}

func newFlow(minutes []store.Minute, epoch int64) flow {
	start := float64(epoch) / 1000
	f := flow{issued: curve{[]float64{start}, []float64{0}}, admitted: curve{[]float64{start}, []float64{0}}}
	for _, m := range minutes {
		if m.Epoch != epoch {
			continue
		}
		f.issued.add(m.Start, m.IssuedMoved, m.Issued)
		f.admitted.add(m.Start, m.AdmittedMoved, m.Admitted)
	}
	return f
}

func (c *curve) add(start time.Time, moved [2]time.Duration, count int64) {
	if moved[0] < 0 {
		return
	}
	first := float64(start.Add(moved[0]).UnixMilli()) / 1000
	last := float64(start.Add(moved[1]).UnixMilli()) / 1000
	end := len(c.t) - 1
	if first < c.t[end] || last < first {
		return
	}
	c.t = append(c.t, first, last)
	c.v = append(c.v, c.v[end], float64(count))
}

// reached is when the count first reached k; false if it had before the
// first record, or has not yet.
func (c curve) reached(k float64) (float64, bool) {
	for i, v := range c.v {
		if v < k {
			continue
		}
		if i == 0 {
			return 0, false
		}
		prev := c.v[i-1]
		return c.t[i-1] + (k-prev)/(v-prev)*(c.t[i]-c.t[i-1]), true
	}
	return 0, false
}

// at is the count just before time t (a step at t is not counted yet).
func (c curve) at(t time.Time) float64 {
	at := float64(t.UnixMilli()) / 1000
	for i, ti := range c.t {
		if ti >= at {
			if ti == at || i == 0 {
				return c.v[i]
			}
			return c.v[i-1] + (c.v[i]-c.v[i-1])*(at-c.t[i-1])/(ti-c.t[i-1])
		}
	}
	return c.v[len(c.v)-1]
}

// calledAt is the count of called positions at t.
func (f flow) calledAt(t time.Time) float64 { return f.admitted.at(t) }

func (f flow) calledSince(from, to time.Time) int64 {
	return int64(math.Round(f.calledAt(to) - f.calledAt(from)))
}

// waitStats are the waits of a range of called positions.
type waitStats struct {
	n              int
	mean, p50, p90 float64
}

// waits are the waits of the positions called after from up to to, from
// a sample of at most 100 of them.
func (f flow) waits(from, to float64) waitStats {
	first, last := math.Floor(from)+1, math.Floor(to)
	if last < first {
		return waitStats{}
	}
	var ws []float64
	step := math.Max(1, math.Floor((last-first+1)/100))
	for k := first; k <= last; k += step {
		issued, ok1 := f.issued.reached(k)
		called, ok2 := f.admitted.reached(k)
		if ok1 && ok2 {
			ws = append(ws, math.Max(called-issued, 0))
		}
	}
	if len(ws) == 0 {
		return waitStats{}
	}
	sum := 0.0
	for _, w := range ws {
		sum += w
	}
	// ws is in calling order; first come, first served makes it nearly
	// sorted, but not quite (arrival bursts), so sort for the quantiles.
	sort.Float64s(ws)
	q := func(p float64) float64 { return ws[int(math.Ceil(p*float64(len(ws))))-1] }
	return waitStats{n: len(ws), mean: sum / float64(len(ws)), p50: q(0.5), p90: q(0.9)}
}
