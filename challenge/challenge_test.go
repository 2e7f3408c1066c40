package challenge

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestSolveThenCheck: what Solve finds, Check accepts, and its hash has
// the bits; the hashes it took are the nonce's count plus one.
func TestSolveThenCheck(t *testing.T) {
	for bits := 0; bits <= 16; bits += 4 {
		c := For("shop", "0123456789abcdef0123456789abcdef", "bind", bits)
		nonce, hashes := c.Solve()
		if err := c.Check(nonce); err != nil {
			t.Errorf("%d bits: Solve's %q refused: %v", bits, nonce, err)
		}
		sum := sha256.Sum256([]byte(c.Seed + ":" + nonce))
		if leadingZeros(sum) < bits {
			t.Errorf("%d bits: %q hashes to %x", bits, nonce, sum)
		}
		if want := strconv.FormatInt(hashes-1, 36); nonce != want {
			t.Errorf("%d bits: nonce %q after %d hashes, want %q", bits, nonce, hashes, want)
		}
	}
}

// TestCheck: each way a nonce is refused, told apart by errors.Is.
func TestCheck(t *testing.T) {
	c := For("shop", "arrival", "", 12)
	good, _ := c.Solve()
	wrong := "0"
	for c.Check(wrong) == nil {
		wrong += "0"
	}
	for _, tc := range []struct {
		name, nonce string
		c           Challenge
		want        error
	}{
		{"solved", good, c, nil},
		{"no work asked", "", Challenge{Seed: c.Seed}, nil},
		{"missing", "", c, Missing},
		{"upper case", strings.ToUpper(good) + "A", c, Malformed},
		{"too long", strings.Repeat("0", MaxNonce) + good, c, Malformed},
		{"a colon", good + ":", c, Malformed},
		{"not unicode", "\xff", c, Malformed},
		{"wrong", wrong, c, Wrong},
		{"another seed", good, For("shop", "arrival2", "", 12), Wrong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Check(tc.nonce)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Errorf("Check(%q) = %v, want %v", tc.nonce, err, tc.want)
			}
		})
	}
}

// TestSeedsBind: a seed changes with each of the room, the arrival, the
// binding and the bits, and the lengths keep shifted strings apart.
func TestSeedsBind(t *testing.T) {
	seeds := map[string]string{}
	for _, in := range [][3]string{{"shop", "a", "b"}, {"shop2", "a", "b"}, {"shop", "a2", "b"}, {"shop", "a", "b2"},
		{"sho", "pa", "b"}, {"shop", "", "ab"}, {"shop", "ab", ""}} {
		for _, bits := range []int{8, 9} {
			c := For(in[0], in[1], in[2], bits)
			if len(c.Seed) != 32 || strings.Trim(c.Seed, "0123456789abcdef") != "" {
				t.Errorf("%v: seed %q", in, c.Seed)
			}
			if was, ok := seeds[c.Seed]; ok {
				t.Errorf("%v at %d bits has the seed of %s", in, bits, was)
			}
			seeds[c.Seed] = fmt.Sprint(in, bits)
		}
	}
	if c := For("shop", "a", "b", MaxBits+5); c.Bits != MaxBits {
		t.Errorf("bits beyond the most: %d", c.Bits)
	}
}

// TestKnownAnswer pins the seed and solution of one challenge: the queue
// page's solver (templates/work.js) is held to the same numbers.
func TestKnownAnswer(t *testing.T) {
	c := For("shop", "0123456789abcdef0123456789abcdef", "", 12)
	nonce, hashes := c.Solve()
	if c.Seed != knownSeed || nonce != knownNonce {
		t.Errorf("seed %q nonce %q (%d hashes), want %q and %q", c.Seed, nonce, hashes, knownSeed, knownNonce)
	}
}

const knownSeed, knownNonce = "1c65398831eec03b4d6302c0329babe8", "45o"

// FuzzCheck: Check refuses every nonce but those that are base-36 digits,
// at most MaxNonce of them, whose hash with the seed has the bits, and
// never panics, whatever the challenge.
func FuzzCheck(f *testing.F) {
	f.Add(knownSeed, 12, knownNonce)
	f.Add(knownSeed, 12, "45p")
	f.Add("", 0, "")
	f.Add("not hex", 40, "zzzzzzzzzzzzzzzzz")
	f.Fuzz(func(t *testing.T, seed string, bits int, nonce string) {
		c := Challenge{Seed: seed, Bits: bits}
		err := c.Check(nonce)
		digits := nonce != "" && len(nonce) <= MaxNonce && strings.Trim(nonce, "0123456789abcdefghijklmnopqrstuvwxyz") == ""
		solved := bits <= 0 || digits && leadingZeros(sha256.Sum256([]byte(seed+":"+nonce))) >= bits
		if (err == nil) != solved {
			t.Errorf("Check(%q) of %+v = %v, want solved %v", nonce, c, err, solved)
		}
	})
}
