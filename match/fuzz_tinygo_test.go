//go:build tinygo

// TinyGo compiles Fuzz targets but never runs them, not even their seeds
// (0.33's testing.MainStart drops them): here the seeds of fuzz_test.go's
// targets run as a plain test, so the TinyGo build checks them too.

package match

import "testing"

func TestFuzzSeeds(t *testing.T) {
	for _, s := range patternSeeds {
		checkPattern(t, s.pattern, s.path)
	}
	for _, s := range hostSeeds {
		checkHost(t, s)
	}
	for _, s := range ipSeeds {
		checkBypassIP(t, s)
	}
}
