// Package redistest starts a throwaway redis-server for a test, and the
// Upstash REST stand-in in front of it.
package redistest

import (
	"bytes"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/tools/resp"
	"github.com/edgequeue/waitingroom/tools/upstashdev"
)

// Token is the REST token the stand-in started by Upstash accepts.
const Token = "test-token"

// Start runs a redis-server on a free loopback port for the length of the
// test and returns its address. It fails the test, saying how to fix it,
// when redis-server is not installed.
func Start(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not installed (apt-get install -y redis-server): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	var out bytes.Buffer
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--logfile", filepath.Join(dir, "redis.log"))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := resp.Dial(addr, time.Second)
		if err == nil {
			v, err := c.Do("PING")
			c.Close()
			if err == nil && v.Str == "PONG" {
				return addr
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Fatalf("redis-server on %s did not answer PING within 10s: %v\n%s%s", addr, err, out.String(), log)
		}
		time.Sleep(20 * time.Millisecond)
	}
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
