// Package challenge is the door's proof of work: a small sum a newcomer's
// browser does before it takes a place in a line, so that a place costs a
// client some CPU and a flood of places costs a bot a lot of it.
//
// The model is a hash puzzle. The edge hands every arrival a Challenge: a
// seed and a number of bits. The client counts nonces 0, 1, 2, … (written
// in base 36) until the SHA-256 of the seed, a colon and the nonce begins
// with that many zero bits: about 2^bits hashes, which the edge checks
// with one. The seed is derived from what the arrival pass already signs
// (the room, the arrival's random id, the client binding and the bits), so
// the challenge travels in no cookie of its own, a solution serves only
// the pass it was worked for, and the edge checks it with no store call.
// A solution cannot buy a second place: the store gives an arrival one
// ticket however often it joins, and none once that place is gone.
//
// How many bits to ask is the room's Ladder: none while the line is calm,
// more as it grows against the pace it is served at, and more again for a
// client that joined lately. People's browsers solve the lower rungs in a
// blink; a bot pays for every place it takes, doubling with each bit.
package challenge

import (
	"crypto/sha256"
	"encoding/hex"
	"math/bits"
	"strconv"
)

// A Challenge asks for a nonce whose hash with Seed begins with Bits zero
// bits. Bits 0 asks for nothing.
type Challenge struct {
	// Seed is 32 lowercase hex digits.
	Seed string
	// Bits is the number of leading zero bits the hash must have.
	Bits int
}

// MaxBits is the most bits a challenge may ask for: 2^24 hashes take a
// phone's browser most of a minute, beyond what anyone waits on a door.
const MaxBits = 24

// MaxNonce is the longest nonce read: base 36 counts past 2^80 in 16
// digits, more than any solver reaches.
const MaxNonce = 16

// For is the challenge of the arrival whose pass names room, arrival and
// bind, at bits: its seed is the first half of the SHA-256 of them all, so
// a solution worked for one pass solves no other.
func For(room, arrival, bind string, bits int) Challenge {
	bits = min(max(bits, 0), MaxBits)
	h := sha256.New()
	// Lengths first: no two different (room, arrival, bind) write the same bytes.
	var buf [64]byte
	b := append(buf[:0], "wr-work-1 "...)
	for _, s := range [...]string{room, arrival, bind} {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ' ')
	}
	b = strconv.AppendInt(b, int64(bits), 10)
	b = append(b, '\n')
	h.Write(b)
	h.Write([]byte(room))
	h.Write([]byte(arrival))
	h.Write([]byte(bind))
	var sum [sha256.Size]byte
	return Challenge{Seed: hex.EncodeToString(h.Sum(sum[:0])[:16]), Bits: bits}
}

// Refusal is why a nonce does not solve a challenge. A small integer, as
// the pass's refusals are: both compilers make it an error without
// allocating, so refusing a bot's guess costs one hash and nothing more.
type Refusal uint8

// The refusals Check returns; errors.Is tells them apart.
const (
	// Missing: the request carries no nonce.
	Missing Refusal = iota + 1
	// Malformed: the nonce is not 1 to MaxNonce base-36 digits.
	Malformed
	// Wrong: the nonce's hash lacks the zero bits.
	Wrong
)

func (r Refusal) Error() string {
	switch r {
	case Missing:
		return "proof of work: no solution"
	case Malformed:
		return "proof of work: malformed solution"
	}
	return "proof of work: wrong solution"
}

// Check returns nil when nonce solves c, and the Refusal otherwise. Any
// nonce solves a challenge of no bits.
func (c Challenge) Check(nonce string) error {
	if c.Bits <= 0 {
		return nil
	}
	if nonce == "" {
		return Missing
	}
	if len(nonce) > MaxNonce {
		return Malformed
	}
	for i := 0; i < len(nonce); i++ {
		if b := nonce[i]; !('0' <= b && b <= '9' || 'a' <= b && b <= 'z') {
			return Malformed
		}
	}
	var buf [len("0123456789abcdef0123456789abcdef:") + MaxNonce]byte
	msg := append(append(append(buf[:0], c.Seed...), ':'), nonce...)
	if leadingZeros(sha256.Sum256(msg)) < c.Bits {
		return Wrong
	}
	return nil
}

// Solve counts nonces from 0 until one solves c, as the queue page's
// script does, and returns it with the hashes it took: the solver of a
// client that is not a browser (an app, the simulator, the tests).
func (c Challenge) Solve() (nonce string, hashes int64) {
	var buf [len("0123456789abcdef0123456789abcdef:") + MaxNonce]byte
	prefix := append(append(buf[:0], c.Seed...), ':')
	for i := int64(0); ; i++ {
		msg := strconv.AppendInt(prefix, i, 36)
		if c.Bits <= 0 || leadingZeros(sha256.Sum256(msg)) >= c.Bits {
			return string(msg[len(prefix):]), i + 1
		}
	}
}

// leadingZeros is how many zero bits sum begins with.
func leadingZeros(sum [sha256.Size]byte) int {
	n := 0
	for _, b := range sum {
		if b != 0 {
			return n + bits.LeadingZeros8(b)
		}
		n += 8
	}
	return n
}
