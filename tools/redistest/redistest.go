// Package redistest starts a throwaway redis-server for a test, and the
// Upstash REST stand-in in front of it.
package redistest

import (
	"net/http/httptest"
	"testing"

	"github.com/edgequeue/waitingroom/tools/redisproc"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

// Token is the REST token the stand-in started by Upstash accepts.
const Token = "test-token"

// Start runs a redis-server on a free loopback port for the length of the
// test and returns its address. It fails the test, saying how to fix it,
// when redis-server is not installed.
func Start(t testing.TB) string {
	t.Helper()
	srv, err := redisproc.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv.Addr
}

// Upstash starts a redis-server and the REST stand-in in front of it, and
// returns the stand-in and its URL.
func Upstash(t testing.TB) (*upstashdev.Server, string) {
	t.Helper()
	srv := upstashdev.New(Start(t), Token)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return srv, hs.URL
}
