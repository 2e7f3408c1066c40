package sim

import (
	"math"
	"math/rand"
	"testing"
)

// ranks pairs each item's position in first with its position in second:
// the items are the values of first, in its order.
func ranks(first, second []int64) []Ranked {
	items := make([]Ranked, len(first))
	for i := range first {
		items[i] = Ranked{First: first[i], Second: second[i]}
	}
	return items
}

func TestKendallTau(t *testing.T) {
	const n = 6 // C(6,2) = 15 pairs
	tests := []struct {
		name                 string
		first, second        []int64
		discordant, compared int64
		distance             float64
	}{
		{"identical", []int64{1, 2, 3, 4, 5, 6}, []int64{1, 2, 3, 4, 5, 6}, 0, 15, 0},
		{"reversed", []int64{1, 2, 3, 4, 5, 6}, []int64{6, 5, 4, 3, 2, 1}, 15, 15, 1},
		{"one adjacent swap", []int64{1, 2, 3, 4, 5, 6}, []int64{1, 2, 4, 3, 5, 6}, 1, 15, 1.0 / 15},
		{"first and last swapped", []int64{1, 2, 3, 4, 5, 6}, []int64{6, 2, 3, 4, 5, 1}, 9, 15, 9.0 / 15},
		{"items given out of order", []int64{4, 1, 6, 3, 2, 5}, []int64{4, 1, 6, 3, 2, 5}, 0, 15, 0},
		{"same time, same order", []int64{1, 1, 1, 1, 1, 1}, []int64{1, 2, 3, 4, 5, 6}, 0, 0, math.NaN()},
		// Two arrived together (a tie) and got in the other way round:
		// not a discordant pair, and not compared.
		{"tied arrivals swapped", []int64{1, 1, 2, 3, 4, 5}, []int64{2, 1, 3, 4, 5, 6}, 0, 14, 0},
		// Two admitted together: neither overtook the other.
		{"tied admissions", []int64{1, 2, 3, 4, 5, 6}, []int64{1, 2, 3, 3, 5, 6}, 0, 14, 0},
		// Tied in both orders: one pair that is neither.
		{"tied in both", []int64{1, 1, 2, 3, 4, 5}, []int64{1, 1, 2, 3, 5, 4}, 1, 14, 1.0 / 14},
		// Two groups (a random-order window each): the order within a
		// group is not compared, the order across groups is.
		{"groups reversed within, in order across", []int64{1, 1, 1, 2, 2, 2}, []int64{3, 2, 1, 6, 5, 4}, 0, 9, 0},
		{"groups reversed across", []int64{1, 1, 1, 2, 2, 2}, []int64{4, 5, 6, 1, 2, 3}, 9, 9, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.first) != n || len(tc.second) != n {
				t.Fatalf("case of %d and %d items, want %d", len(tc.first), len(tc.second), n)
			}
			got := KendallTau(ranks(tc.first, tc.second))
			if got.Items != n || got.Discordant != tc.discordant || got.Compared != tc.compared {
				t.Errorf("got %+v, want %d discordant of %d compared", got, tc.discordant, tc.compared)
			}
			if d := got.Distance(); !(d == tc.distance || math.IsNaN(d) && math.IsNaN(tc.distance)) {
				t.Errorf("distance %v, want %v", d, tc.distance)
			}
		})
	}
	for _, items := range [][]Ranked{nil, {{1, 1}}} {
		if got := KendallTau(items); got.Compared != 0 || got.Discordant != 0 || !math.IsNaN(got.Distance()) {
			t.Errorf("%d items: %+v, distance %v", len(items), got, got.Distance())
		}
	}
}

// TestKendallTauCountsEveryPair checks the O(n log n) count against every
// pair, on random orders with many ties.
func TestKendallTauCountsEveryPair(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 200; round++ {
		n := rng.Intn(60)
		items := make([]Ranked, n)
		for i := range items {
			items[i] = Ranked{rng.Int63n(int64(n/3 + 1)), rng.Int63n(int64(n/2 + 1))}
		}
		var discordant, compared int64
		for i := range items {
			for j := i + 1; j < n; j++ {
				a, b := items[i], items[j]
				if a.First == b.First || a.Second == b.Second {
					continue
				}
				compared++
				if (a.First < b.First) != (a.Second < b.Second) {
					discordant++
				}
			}
		}
		if got := KendallTau(items); got.Discordant != discordant || got.Compared != compared {
			t.Fatalf("%d items: got %+v, want %d discordant of %d compared", n, got, discordant, compared)
		}
	}
}

// TestKendallTauOfARandomOrder: an order drawn at random is about half
// discordant.
func TestKendallTauOfARandomOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	const n = 100000
	perm := rng.Perm(n)
	items := make([]Ranked, n)
	for i, p := range perm {
		items[i] = Ranked{int64(i), int64(p)}
	}
	// The distance's standard deviation is about 1/(3√n), 0.001 here.
	if d := KendallTau(items).Distance(); math.Abs(d-0.5) > 0.005 {
		t.Errorf("a random order of %d is %.4f from arrival order, want about 0.5", n, d)
	}
}

func BenchmarkKendallTau100000(b *testing.B) {
	rng := rand.New(rand.NewSource(3))
	items := make([]Ranked, 100000)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for j := range items {
			items[j] = Ranked{rng.Int63n(50000), rng.Int63n(50000)}
		}
		b.StartTimer()
		KendallTau(items)
	}
}

func TestChiSquareCritical(t *testing.T) {
	// The 0.1% points of the chi-square distribution, from its tables.
	tests := []struct {
		dof  int
		want float64
	}{{1, 10.828}, {2, 13.816}, {5, 20.515}, {9, 27.877}, {10, 29.588}, {20, 45.315}, {50, 86.661}, {100, 149.449}}
	for _, tc := range tests {
		if got := ChiSquareCritical(tc.dof, 0.001); math.Abs(got-tc.want) > 0.001 {
			t.Errorf("dof %d: %.4f, want %.3f", tc.dof, got, tc.want)
		}
	}
	// The 5% point with 1 degree of freedom is 1.96².
	if got := ChiSquareCritical(1, 0.05); math.Abs(got-3.8415) > 0.0001 {
		t.Errorf("dof 1 at 5%%: %.4f, want 3.8415", got)
	}
	for _, bad := range []struct {
		dof int
		p   float64
	}{{0, 0.001}, {-3, 0.001}, {10, 0}, {10, 1}, {10, -1}, {10, math.NaN()}} {
		if got := ChiSquareCritical(bad.dof, bad.p); !math.IsNaN(got) {
			t.Errorf("ChiSquareCritical(%d, %v) = %v, want NaN", bad.dof, bad.p, got)
		}
	}
}
