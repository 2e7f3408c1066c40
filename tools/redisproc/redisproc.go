// Package redisproc runs a throwaway redis-server: on a free loopback port,
// with no persistence, in a temporary directory it removes on Close. Tests,
// the local stack and the benchmark all start their Redis this way.
package redisproc

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/edgequeue/waitingroom/tools/resp"
)

// Server is a running redis-server.
type Server struct {
	// Addr is host:port.
	Addr string
	cmd  *exec.Cmd
	dir  string
}

// ErrNotInstalled says redis-server is not on the PATH.
var ErrNotInstalled = fmt.Errorf("redis-server is not installed (apt-get install -y redis-server)")

// Start runs redis-server and waits until it answers PING.
func Start() (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNotInstalled
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir, err := os.MkdirTemp("", "waitingroom-redis-")
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--latency-tracking", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, "redis.log"))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), cmd: cmd, dir: dir}
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := resp.Dial(s.Addr, time.Second)
		if err == nil {
			v, perr := c.Do("PING")
			c.Close()
			if perr == nil && v.Str == "PONG" {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			s.Close()
			return nil, fmt.Errorf("redis-server on %s did not answer PING within 10s: %v\n%s%s", s.Addr, err, out.String(), log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Close stops the server and removes its directory.
func (s *Server) Close() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
	os.RemoveAll(s.dir)
}
