package challenge

import (
	"math"
	"testing"
)

// TestLadder: no work when calm or off, Base when the pressure is
// unknown, a bit per doubling of the line's minutes, two per doubling of
// the client's joins, never beyond Top.
func TestLadder(t *testing.T) {
	l := Ladder{Top: 20}
	for _, tc := range []struct {
		name     string
		l        Ladder
		pressure float64
		joins    int
		want     int
	}{
		{"off", Ladder{}, 100, 100, 0},
		{"calm", l, 0.5, 1, 0},
		{"calm, an empty line", l, 0, 0, 0},
		{"unknown", l, -1, 1, 14},
		{"not a number", l, math.NaN(), 1, 14},
		{"a minute", l, 1, 1, 14},
		{"three minutes", l, 3, 1, 15},
		{"an hour", l, 60, 0, 19},
		{"64 minutes", l, 64, 1, 20},
		{"a paused line", l, math.Inf(1), 1, 20},
		{"calm, a second join", l, 0.5, 2, 16},
		{"calm, eight joins", l, 0.5, 8, 20},
		{"four minutes, four joins", l, 4, 4, 20},
		{"two minutes, two joins", l, 2, 2, 17},
		{"a low top", Ladder{Top: 4}, 1, 1, 1},
		{"a top beyond the most", Ladder{Top: 40}, math.Inf(1), 1 << 30, MaxBits},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.l.Bits(tc.pressure, tc.joins); got != tc.want {
				t.Errorf("Bits(%v, %d) = %d, want %d", tc.pressure, tc.joins, got, tc.want)
			}
		})
	}
}
