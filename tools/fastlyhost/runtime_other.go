//go:build !linux

package fastlyhost

import (
	"context"
	"time"
)

// guestCPU is, off Linux, the instance's wall time: the host has no
// portable per-thread CPU clock, and wall time bounds CPU time from above.
type guestCPU struct{ start time.Time }

// withGuestCPU starts the instance's clock; the returned func does nothing.
func withGuestCPU(ctx context.Context) (context.Context, func()) {
	return context.WithValue(ctx, guestCPUKey{}, &guestCPU{start: time.Now()}), func() {}
}

// used is the time since the instance started.
func (c *guestCPU) used() time.Duration { return time.Since(c.start) }
