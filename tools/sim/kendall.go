package sim

import (
	"math"
	"sort"
)

// Ranked is one item seen in two orders: its rank in the first (arrival)
// and in the second (admission). Smaller is earlier; equal ranks are ties,
// such as two visitors whose requests reached the store in the same batch.
type Ranked struct{ First, Second int64 }

// Tau is the Kendall tau distance between two orders of the same items.
type Tau struct {
	// Items is how many items were ranked.
	Items int
	// Discordant counts the pairs the two orders put the other way round;
	// Compared counts the pairs both orders put one before the other (a
	// pair tied in either order is not compared: neither came first).
	Discordant, Compared int64
}

// Distance is the normalised Kendall tau distance: the share of compared
// pairs that the two orders put the other way round, 0 when they agree and
// 1 when one is the other reversed; about 0.5 for an order drawn at
// random. Without ties every pair is compared, and one swapped pair is
// 1/C(n,2). It is NaN when no pair could be compared.
func (t Tau) Distance() float64 {
	if t.Compared == 0 {
		return math.NaN()
	}
	return float64(t.Discordant) / float64(t.Compared)
}

// KendallTau measures the Kendall tau distance between the orders of
// items, in O(n log n): sorted by first rank (ties by second rank, so
// pairs tied in the first order are never counted), the discordant pairs
// are the strict inversions of the second ranks, counted by a merge sort.
// The slice is left sorted by first rank.
func KendallTau(items []Ranked) Tau {
	n := int64(len(items))
	sort.Slice(items, func(i, j int) bool {
		if items[i].First != items[j].First {
			return items[i].First < items[j].First
		}
		return items[i].Second < items[j].Second
	})
	// Compared: every pair, less those tied in the first order and those
	// tied in the second, plus those tied in both (taken away twice).
	compared := n * (n - 1) / 2
	compared -= tiedPairs(len(items), func(i int) bool { return items[i].First == items[i-1].First })
	compared += tiedPairs(len(items), func(i int) bool { return items[i] == items[i-1] })
	second := make([]int64, n)
	for i, it := range items {
		second[i] = it.Second
	}
	discordant := inversions(second, make([]int64, n))
	sort.Slice(second, func(i, j int) bool { return second[i] < second[j] })
	compared -= tiedPairs(len(second), func(i int) bool { return second[i] == second[i-1] })
	return Tau{Items: len(items), Discordant: discordant, Compared: compared}
}

// tiedPairs counts the pairs within runs of a sorted sequence of n items,
// where same(i) says item i equals item i-1.
func tiedPairs(n int, same func(i int) bool) int64 {
	var pairs, run int64
	for i := 1; i < n; i++ {
		if same(i) {
			run++
			pairs += run
		} else {
			run = 0
		}
	}
	return pairs
}

// inversions sorts a (using buf, of the same length) and returns how many
// pairs i < j had a[i] > a[j]: equal values are not inversions.
func inversions(a, buf []int64) int64 {
	if len(a) < 2 {
		return 0
	}
	mid := len(a) / 2
	n := inversions(a[:mid], buf[:mid]) + inversions(a[mid:], buf[mid:])
	i, j, k := 0, mid, 0
	for i < mid && j < len(a) {
		if a[j] < a[i] {
			// a[j] comes before every one of a[i:mid].
			n += int64(mid - i)
			buf[k] = a[j]
			j++
		} else {
			buf[k] = a[i]
			i++
		}
		k++
	}
	k += copy(buf[k:], a[i:mid])
	copy(buf[k:], a[j:])
	copy(a, buf)
	return n
}
