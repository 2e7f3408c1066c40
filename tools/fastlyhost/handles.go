package fastlyhost

// A host call family (ACLs, the KV store's writes, dynamic backends...)
// lives in its own file: it adds its calls to hostcalls with register,
// keeps its per-instance objects in the state's objects table with put and
// lookup, and keeps what outlives an instance (a KV store's items, a rate
// counter) in Host.shared.

// register adds a family's calls to hostcalls. It runs from init, before
// any Host binds its imports.
func register(calls map[string]hostcall) {
	for name, call := range calls {
		if _, dup := hostcalls[name]; dup {
			panic("fastlyhost: " + name + " is registered twice")
		}
		hostcalls[name] = call
	}
}

// put stores v under a new handle.
func put(s *state, v any) uint32 {
	h := s.handle()
	s.objects[h] = v
	return h
}

// lookup returns the object of type T under handle h; a handle of another
// kind is as unknown as one never given out.
func lookup[T any](s *state, h uint64) (T, bool) {
	v, ok := s.objects[u32(h)].(T)
	return v, ok
}

// shared returns the host-wide value under key, made by make the first
// time; it outlives every instance, as the platform's stores do.
func shared[T any](h *Host, key string, make func() T) T {
	h.sharedMu.Lock()
	defer h.sharedMu.Unlock()
	if h.shared == nil {
		h.shared = map[string]any{}
	}
	v, ok := h.shared[key].(T)
	if !ok {
		v = make()
		h.shared[key] = v
	}
	return v
}
