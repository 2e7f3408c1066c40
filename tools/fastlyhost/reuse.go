package fastlyhost

// Served reports how many client requests the host has taken and how many
// sandboxes (instances) it started to serve them: the difference is the
// requests reused sandboxes served.
func (h *Host) Served() (requests, sandboxes uint64) {
	return h.requests.Load(), h.sandboxes.Load()
}
