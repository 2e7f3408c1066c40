package fastlyhost

import "time"

// Served reports how many client requests the host has taken and how many
// sandboxes (instances) it started to serve them: the difference is the
// requests reused sandboxes served.
func (h *Host) Served() (requests, sandboxes uint64) {
	return h.requests.Load(), h.sandboxes.Load()
}

// GuestCPU is the CPU time of the instances that have ended, when
// Options.GuestCPU is set (else 0): the guest's own work and the host's
// in its calls, on the instance's thread, from its start to its end. The
// host's HTTP server, the backends' ends of a send and the rest of the
// process are not in it. An instance waiting for a request uses none.
func (h *Host) GuestCPU() time.Duration { return time.Duration(h.guestCPU.Load()) }

// Live is how many instances are running, serving a request or waiting for
// one: a benchmark waits for none before it reads GuestCPU, whose instances
// are counted as they end.
func (h *Host) Live() int { return int(h.live.Load()) }

// HostCalls is how many times the guests have called each of the host's
// fastly functions, by "module.name" (the WASI calls are not counted).
func (h *Host) HostCalls() map[string]uint64 {
	out := make(map[string]uint64, len(h.calls))
	for name, n := range h.calls {
		out[name] = n.Load()
	}
	return out
}
