package admin

import (
	"math"
	"time"

	"github.com/edgequeue/waitingroom/control"
)

// The panel's two views of a room's history: the last hour a minute a
// slot, and the last day ten minutes a slot (1,440 points would be finer
// than the chart's pixels, and a table nobody reads).
const (
	hourSpan = time.Hour
	daySpan  = 24 * time.Hour
	dayStep  = 10 // minutes a slot in the day's charts
)

// historyCharts turns a room's history (a point a minute, oldest first,
// as control.Operator.History gives it) into the hour's charts and the
// day's, their IDs prefixed with id.
//
// A minute with no data (Missing: no store call in it) breaks the lines
// rather than counting as zero. In the day's charts a ten-minute slot
// sums the counts of its minutes that have data, and shows the highest
// minute of the sampled numbers and of the waits: a median of medians
// would be no median at all, and the peak is what an operator looks for.
func historyCharts(id string, points []control.Point) (hour, day []Chart) {
	last := points
	if len(last) > int(hourSpan/time.Minute) {
		last = last[len(last)-int(hourSpan/time.Minute):]
	}
	return charts(id+"-hour", last, 1), charts(id+"-day", points, dayStep)
}

// metric is one series drawn from history: its value in a point (NaN for
// none), and how a slot of several minutes combines them.
type metric struct {
	name  string
	value func(control.Point) float64
	sum   bool // counts add up; anything else shows its highest minute
}

func count(f func(control.Point) int64) func(control.Point) float64 {
	return func(p control.Point) float64 { return float64(f(p)) }
}

func seconds(f func(control.Point) *float64) func(control.Point) float64 {
	return func(p control.Point) float64 {
		if v := f(p); v != nil {
			return *v
		}
		return math.NaN()
	}
}

// chartLayout is one of the panel's charts of a room's history.
type chartLayout struct {
	key, title        string
	unitHour, unitDay string
	metrics           []metric
}

// historyLayout is the panel's four charts of a room's history (built
// when asked for: the edge module computes nothing at init).
func historyLayout() []chartLayout {
	return []chartLayout{
		{"flow", "Joins and admissions", "per minute", "per 10 minutes", []metric{
			{"joins", count(func(p control.Point) int64 { return p.Joins }), true},
			{"admissions", count(func(p control.Point) int64 { return p.Admissions }), true},
		}},
		{"load", "Active sessions and waiting visitors", "at the minute's last store call", "highest minute in each 10", []metric{
			{"active", count(func(p control.Point) int64 { return p.Active }), false},
			{"waiting", count(func(p control.Point) int64 { return p.Waiting }), false},
		}},
		{"wait", "Wait of those admitted", "seconds, p50 and p90 of the minute", "seconds, highest minute in each 10", []metric{
			{"p50 wait", seconds(func(p control.Point) *float64 { return p.P50WaitSeconds }), false},
			{"p90 wait", seconds(func(p control.Point) *float64 { return p.P90WaitSeconds }), false},
		}},
		{"refused", "Refusals (bad passes, spent invites, joins while closed)", "per minute", "per 10 minutes", []metric{
			{"refusals", count(func(p control.Point) int64 { return p.Refusals }), true},
		}},
	}
}

// charts draws points in slots of step minutes, the last slot ending
// with the last point (the first may hold fewer minutes).
func charts(id string, points []control.Point, step int) []Chart {
	slots := (len(points) + step - 1) / step
	first := len(points) - slots*step // may be negative: the first slot is short
	var start time.Time
	if len(points) > 0 {
		start = points[len(points)-1].Start.Add(-time.Duration(slots*step-1) * time.Minute)
	}
	layout := historyLayout()
	out := make([]Chart, 0, len(layout))
	for _, l := range layout {
		c := Chart{ID: id + "-" + l.key, Title: l.title, Unit: l.unitHour, Start: start, Step: time.Duration(step) * time.Minute,
			Counts: l.metrics[0].sum}
		if step > 1 {
			c.Unit = l.unitDay
		}
		for _, m := range l.metrics {
			s := Series{Name: m.name, Values: make([]float64, slots)}
			for k := range s.Values {
				s.Values[k] = combine(points, max(first+k*step, 0), first+(k+1)*step, m)
			}
			c.Series = append(c.Series, s)
		}
		out = append(out, c)
	}
	return out
}

// combine is m over points[from:to]: the sum or the highest of the
// minutes with data, NaN when none has any.
func combine(points []control.Point, from, to int, m metric) float64 {
	v := math.NaN()
	for _, p := range points[from:to] {
		x := math.NaN()
		if !p.Missing {
			x = m.value(p)
		}
		switch {
		case math.IsNaN(x):
		case math.IsNaN(v):
			v = x
		case m.sum:
			v += x
		default:
			v = math.Max(v, x)
		}
	}
	return v
}
