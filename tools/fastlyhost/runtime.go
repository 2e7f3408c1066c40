package fastlyhost

import (
	"context"

	"github.com/tetratelabs/wazero/api"
)

// The compute runtime calls report what the instance has used, as
// Viceroy's src/wiggle_abi/compute_runtime.rs does.

// guestCPUKey is the context key of an instance's *guestCPU, which
// instantiate puts in its context with withGuestCPU.
type guestCPUKey struct{}

// vcpuCall is the call that needs the instance's CPU clock.
const vcpuCall = "fastly_compute_runtime.get_vcpu_ms"

func init() {
	register(map[string]hostcall{
		// get_vcpu_ms is the CPU time the instance has used: Viceroy counts
		// the time its guest future is being polled, so time the guest
		// spends waiting (a sleep, a backend's answer) is not counted, and
		// the host's work in a call is.
		vcpuCall: func(ctx context.Context, _ *state, m api.Memory, a []uint64) Status {
			c, ok := ctx.Value(guestCPUKey{}).(*guestCPU)
			if !ok {
				return stError
			}
			return write64(m, a[0], uint64(c.used().Milliseconds()))
		},
		// get_heap_mib is the memory the instance has grown to, rounded up
		// to MiB: Viceroy adds up every growth of the guest's memory,
		// which never shrinks, so the sum is its size.
		"fastly_compute_runtime.get_heap_mib": func(_ context.Context, _ *state, m api.Memory, a []uint64) Status {
			const mib = 1 << 20
			return write32(m, a[0], uint32((uint64(m.Size())+mib-1)/mib))
		},
	})
}
