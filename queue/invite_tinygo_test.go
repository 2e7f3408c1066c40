//go:build tinygo

package queue

import "testing"

// TestInviteFuzzSeeds runs FuzzParseInvite's seeds, which TinyGo never
// runs as a Fuzz target (see fuzz_tinygo_test.go).
func TestInviteFuzzSeeds(t *testing.T) {
	for _, s := range inviteSeeds(t) {
		checkParseInvite(t, s)
	}
}
