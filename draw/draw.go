// Package draw recomputes a scheduled event's draw: the order in which the
// tickets of its pre-queue are called.
//
// The model. Everyone who arrives between an event's pre-queue opening and
// its start holds a ticket in one range, first..last. At the start the
// store (line.lua) calls that range not in arrival order but in a keyed
// pseudorandom permutation of it, so arriving first during the pre-queue
// buys nothing. The key is fixed before anyone arrives: its SHA-256 (the
// commitment) is published when the pre-queue opens, and the key itself
// once the draw is made. With the key and the range, Order gives the same
// calling order the store used, so anyone can check that the draw was the
// one committed to, and that nobody was moved.
//
// The permutation is the script's: a twelve-round Feistel network on
// [0, half²) whose round keys come from a polynomial hash of the key, with
// cycle walking back into the range. Only integer arithmetic below 2^53 is
// used, because the script runs in Lua, where numbers are doubles.
package draw

import (
	"errors"
	"fmt"
)

// prime is the modulus of the key hash and the round functions: below
// 2^26, so that every product stays exact in a double.
const prime = 67108859

// rounds is the Feistel network's number of rounds: with four, the chi-square
// test found some places likelier than others in small ranges; twelve pass.
const rounds = 12

// MaxTickets bounds the range Order lists, so a mistyped range cannot
// exhaust memory.
const MaxTickets = 10_000_000

// ErrRange is returned for a range Order cannot list.
var ErrRange = errors.New("draw: bad ticket range")

// Keys are the round keys of one draw, two per round.
type Keys [2 * rounds]int64

// KeysOf derives the round keys of the draw made with key, as the script
// does for a drawn pre-queue.
func KeysOf(key string) Keys {
	return roundKeys("draw:" + key)
}

// roundKeys hashes text into the round keys: each its own polynomial hash
// of text (multiplier 259, 261, ...) modulo the prime, squared. One hash
// per key: keys all derived from a single 26-bit hash allowed fewer than
// 2^25 orders, and over many keys the chi-square test of 100-ticket draws
// failed.
func roundKeys(text string) Keys {
	var k Keys
	for r := range k {
		m := int64(257 + 2*(r+1))
		var h int64
		for i := 0; i < len(text); i++ {
			h = (h*m + int64(text[i]) + 1) % prime
		}
		k[r] = (h*h + 7919*int64(r+1) + 1) % prime
	}
	return k
}

// Permute maps position i in [0, n) to the offset, in [0, n), of the
// ticket called at that position.
func (k Keys) Permute(i, n int64) int64 {
	if n <= 1 {
		return 0
	}
	half := int64(2)
	for half*half < n {
		half *= 2
	}
	x := i
	for {
		l, r := x/half, x%half
		for j := 0; j < rounds; j++ {
			y := (r + k[2*j]) % prime
			l, r = r, (l+(y*y+k[2*j+1])%prime)%half
		}
		x = l*half + r
		if x < n {
			return x
		}
	}
}

// Order lists the tickets first..last in the order the draw made with key
// calls them.
func Order(key string, first, last int64) ([]int64, error) {
	n := last - first + 1
	if first < 1 || n < 0 || n > MaxTickets {
		return nil, fmt.Errorf("%w: %d to %d (want 1 <= first, at most %d tickets)", ErrRange, first, last, MaxTickets)
	}
	k := KeysOf(key)
	order := make([]int64, n)
	for p := range order {
		order[p] = first + k.Permute(int64(p), n)
	}
	return order, nil
}
