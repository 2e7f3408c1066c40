package challenge

import "math"

// A Ladder picks how many bits an arrival's challenge asks: the rung of the
// line's pressure, raised for a client that joined lately.
//
// Pressure is how long the line is against the pace it is served at: the
// minutes its waiting visitors take to be called. Below a minute the line
// is calm and asks no work. From a minute on it asks Base bits, one more
// for each doubling of the minutes, and two more for each doubling of the
// client's joins in the last minute beyond the first, up to Top. A line
// whose pressure the edge does not know (a POP that could not read the
// line: the edge learns it first when it can) asks Base: a room that
// turned the work on expects some.
type Ladder struct {
	// Top is the highest rung; 0 asks no work ever.
	Top int
}

// Spread is how many rungs the ladder has above Base: Top is reached at
// 2^Spread minutes of line (64), or sooner for a client that joins often.
const Spread = 6

// Base is the lowest rung that asks any work: Spread below Top, one at
// least.
func (l Ladder) Base() int { return max(min(l.Top, MaxBits)-Spread, 1) }

// Bits is the rung for an arrival when the line takes pressure minutes to
// serve (negative: unknown) and the client joined joins times in the last
// minute.
func (l Ladder) Bits(pressure float64, joins int) int {
	top := min(l.Top, MaxBits)
	if top <= 0 {
		return 0
	}
	n := l.Base()
	switch {
	case pressure < 0 || math.IsNaN(pressure):
	case pressure < 1:
		n = 0
	default:
		n += int(math.Log2(min(pressure, 1<<20)))
	}
	if joins >= 2 {
		n = max(n, l.Base()) + 2*int(math.Log2(float64(min(joins, 1<<20))))
	}
	return min(n, top)
}
