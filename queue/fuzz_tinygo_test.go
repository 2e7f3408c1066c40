//go:build tinygo

// TinyGo compiles Fuzz targets but never runs them, not even their seeds
// (0.33's testing.MainStart drops them): here the seeds of fuzz_test.go's
// targets run as a plain test, so the TinyGo build checks them too.

package queue

import "testing"

func TestFuzzSeeds(t *testing.T) {
	for _, s := range roomSeeds {
		checkParseRoom(t, s.name, []byte(s.data))
	}
	for _, s := range commandSeeds {
		checkParseCommands(t, s.a, s.b)
	}
}
