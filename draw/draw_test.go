package draw

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

func TestOrderIsAPermutation(t *testing.T) {
	for _, n := range []int64{0, 1, 2, 3, 4, 5, 17, 100, 1000, 4097} {
		order, err := Order("k", 10, 10+n-1)
		if err != nil {
			t.Fatal(err)
		}
		seen := make(map[int64]bool, n)
		for _, tk := range order {
			if tk < 10 || tk >= 10+n || seen[tk] {
				t.Fatalf("n=%d: ticket %d out of range or twice in %v", n, tk, order)
			}
			seen[tk] = true
		}
		if int64(len(seen)) != n {
			t.Fatalf("n=%d: %d tickets listed", n, len(seen))
		}
	}
}

func TestOrderDependsOnTheKey(t *testing.T) {
	a, _ := Order("key one", 1, 50)
	b, _ := Order("key two", 1, 50)
	c, _ := Order("key one", 1, 50)
	if fmt.Sprint(a) == fmt.Sprint(b) {
		t.Fatal("two keys drew the same order")
	}
	if fmt.Sprint(a) != fmt.Sprint(c) {
		t.Fatal("one key drew two orders")
	}
}

func TestBadRanges(t *testing.T) {
	for _, r := range [][2]int64{{0, 5}, {-3, 2}, {5, 3}, {1, MaxTickets + 1}} {
		if _, err := Order("k", r[0], r[1]); !errors.Is(err, ErrRange) {
			t.Errorf("Order(%d, %d): %v, want ErrRange", r[0], r[1], err)
		}
	}
}

// TestEveryPlaceIsEquallyLikely draws n tickets with many keys and checks,
// with Pearson's chi-square test over the n×n table of (ticket, place)
// counts, that no ticket is likelier than another to be called at any
// place. The keys are fixed, so the figure is too: it is compared with the
// chi-square distribution's 0.1% critical value.
func TestEveryPlaceIsEquallyLikely(t *testing.T) {
	const draws = 20000
	for _, n := range []int64{2, 3, 5, 10, 16, 37} {
		stat, dof := ChiSquare(n, draws, func(i int) string { return fmt.Sprintf("fairness-%d", i) })
		crit := criticalValue(dof)
		t.Logf("n=%d: chi-square %.1f with %d degrees of freedom (0.1%% critical value %.1f)", n, stat, dof, crit)
		if stat > crit {
			t.Errorf("n=%d: chi-square %.1f exceeds %.1f: places are not equally likely", n, stat, crit)
		}
	}
}

// TestKeysDoNotCollide: every key gets its own round keys. When all were
// derived from one 26-bit hash, a million keys shared theirs with others
// (fewer than 2^25 draws were possible), which a chi-square test of long
// ranges over many keys found.
func TestKeysDoNotCollide(t *testing.T) {
	const keys = 200000
	seen := make(map[Keys]int, keys)
	for i := 0; i < keys; i++ {
		k := KeysOf(fmt.Sprintf("other-%d", i))
		if j, dup := seen[k]; dup {
			t.Fatalf("keys other-%d and other-%d have the same round keys", j, i)
		}
		seen[k] = i
	}
}

// criticalValue approximates the chi-square distribution's upper 0.1%
// point (Wilson–Hilferty).
func criticalValue(dof int) float64 {
	const z = 3.0902 // the normal distribution's upper 0.1% point
	k := float64(dof)
	c := 1 - 2/(9*k) + z*math.Sqrt(2/(9*k))
	return k * c * c * c
}

func BenchmarkOrder10000(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := Order("bench", 1, 10000); err != nil {
			b.Fatal(err)
		}
	}
}
