package devstack

import (
	"bytes"
	"fmt"
	"sync"
)

// LogBuffer collects a stack's log lines (give it to Options.Log through
// log.New) for a test to read while the stack runs: the host, the guest
// and the stand-ins write from many goroutines at once.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (s *LogBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *LogBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Logf writes one formatted line: it is a Logf for a service run in the
// test's own process.
func (s *LogBuffer) Logf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(&s.b, format+"\n", args...)
}
