//go:build tinygo

// TinyGo compiles Fuzz targets but never runs them, not even their seeds
// (0.33's testing.MainStart drops them): here the seeds of fuzz_test.go's
// targets run as a plain test, so the TinyGo build checks them too.

package edge

import "testing"

func TestFuzzSeeds(t *testing.T) {
	for _, s := range settingsSeeds {
		checkLoadSettings(t, s.adminPath, s.timeout, s.hsts, s.index, s.room, s.upstash)
	}
	for _, s := range serveSeeds {
		checkServeHTTP(t, s.method, s.https, s.local, s.host, s.target, s.headers, s.body, s.pass, s.replies, s.commands, s.tmpl, s.limit)
	}
}
