//go:build linux

package fastlyhost

import (
	"context"
	"runtime"
	"syscall"
	"time"
)

// guestCPU measures an instance's CPU time with the CPU clock of the
// thread running it: the guest runs on the goroutine that instantiates it,
// and that goroutine is pinned to its thread for the instance's life, so
// the thread runs nothing else and does not run at all while the guest
// waits in a host call.
type guestCPU struct{ start time.Duration }

// withGuestCPU pins the calling goroutine to its thread and starts the
// instance's CPU clock; the returned func unpins it when the instance ends.
func withGuestCPU(ctx context.Context) (context.Context, func()) {
	runtime.LockOSThread()
	c := &guestCPU{start: threadCPU()}
	return context.WithValue(ctx, guestCPUKey{}, c), runtime.UnlockOSThread
}

// used is the CPU time the instance has used so far.
func (c *guestCPU) used() time.Duration { return threadCPU() - c.start }

// rusageThread is Linux's RUSAGE_THREAD, which syscall does not name.
const rusageThread = 1

// threadCPU is the calling thread's user and system CPU time.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
