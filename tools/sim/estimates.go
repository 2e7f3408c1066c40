package sim

import (
	"math"
	"sort"
	"time"
)

// Estimates compares the wait estimates the visitors' pages showed with the
// waits that followed: for every visitor who polled until admitted and
// never lost their place, each estimate shown (on a join or a poll that
// answered "wait") against the time from that answer to their admission,
// weighted by how long the estimate stayed on screen (until the next poll).
// An operator's "admit N" cannot be foreseen: an estimate shown before one
// that came before the visitor's turn counts in Minutes and Unknown only.
type Estimates struct {
	// Minutes is the visitor-minutes those pages were on screen; Unknown
	// is the share of them that said "not known".
	Minutes, Unknown float64
	// Within is the share of the minutes with an estimate on screen whose
	// wait that followed fell in the range as the page words it: the range
	// widened by the half minute its words round to, and under a minute
	// for "less than a minute".
	Within float64
	// Ratio is the median, over the minutes with an estimate on screen, of
	// the wait that followed divided by the estimate (the middle of the
	// range shown, its geometric mean).
	Ratio float64
	// SoonLies counts visitors whose page said "less than a minute" two
	// minutes or more before they were let in.
	SoonLies int
	// Rises counts visitors whose estimate went back from one answer to
	// the next: up by half and by two minutes or more, or to "not known".
	Rises int
}

// shownAt is an estimate a visitor's page showed from at, for lasted.
type shownAt struct {
	at     time.Time
	lasted time.Duration
	Shown
}

// middle is the estimate a range stands for: its geometric mean.
func (s Shown) middle() time.Duration {
	return time.Duration(math.Sqrt(float64(s.Least) * float64(s.Most)))
}

// covers reports whether the range s, as the page words it, held the wait
// that followed.
func (s Shown) covers(wait time.Duration) bool {
	if s.Most < time.Minute {
		return wait < time.Minute
	}
	return wait >= s.Least-30*time.Second && wait < s.Most+30*time.Second
}

// estimateTally adds up Estimates over the visitors as they are admitted.
type estimateTally struct {
	admits                           []time.Time // the operator's, in time order
	minutes, unknown, judged, within float64
	ratios                           []weighted
	soonLies, rises                  int
}

type weighted struct{ value, weight float64 }

// add counts the estimates shown to a visitor admitted at admitted.
func (t *estimateTally) add(shown []shownAt, admitted time.Time) {
	lied, rose := false, false
	for i, s := range shown {
		m := s.lasted.Minutes()
		t.minutes += m
		wait := admitted.Sub(s.at)
		if !s.Known {
			t.unknown += m
			rose = rose || i > 0 && shown[i-1].Known
			continue
		}
		lied = lied || s.Most < time.Minute && wait >= 2*time.Minute
		if !t.admitBetween(s.at, admitted) {
			t.judged += m
			if s.covers(wait) {
				t.within += m
			}
			if mid := s.middle(); mid > 0 {
				t.ratios = append(t.ratios, weighted{float64(wait) / float64(mid), m})
			}
		}
		if i > 0 && shown[i-1].Known {
			before, now := shown[i-1].middle(), s.middle()
			rose = rose || now > before*3/2 && now-before >= 2*time.Minute
		}
	}
	if lied {
		t.soonLies++
	}
	if rose {
		t.rises++
	}
}

// admitBetween reports whether the operator admitted some after from and
// by to.
func (t *estimateTally) admitBetween(from, to time.Time) bool {
	for _, a := range t.admits {
		if a.After(from) && !a.After(to) {
			return true
		}
	}
	return false
}

// report is the tally's Estimates.
func (t *estimateTally) report() Estimates {
	e := Estimates{Minutes: t.minutes, SoonLies: t.soonLies, Rises: t.rises}
	if t.minutes > 0 {
		e.Unknown = t.unknown / t.minutes
	}
	if t.judged > 0 {
		e.Within = t.within / t.judged
	}
	e.Ratio = median(t.ratios)
	return e
}

// median is the weighted median of values.
func median(values []weighted) float64 {
	sort.Slice(values, func(i, j int) bool { return values[i].value < values[j].value })
	total := 0.0
	for _, v := range values {
		total += v.weight
	}
	run := 0.0
	for _, v := range values {
		if run += v.weight; run >= total/2 {
			return v.value
		}
	}
	return 0
}
