//go:build tinygo

package queue

import "testing"

// TestKeySetFuzzSeeds runs FuzzParseKeySet's seeds, which TinyGo never
// runs as a Fuzz target (see fuzz_tinygo_test.go).
func TestKeySetFuzzSeeds(t *testing.T) {
	for _, s := range keySetSeeds {
		checkParseKeySet(t, s)
	}
}
