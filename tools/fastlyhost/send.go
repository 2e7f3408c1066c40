package fastlyhost

import (
	"context"

	"github.com/tetratelabs/wazero/api"
)

// The send calls without a host cache. Viceroy has no HTTP cache, so its
// send_v2 and send_v3 are one call, and send_async_v2 is send_async or
// send_async_streaming by its streaming flag (src/wiggle_abi/req_impl.rs).

// sendAndWait sends a request and waits for its response, as a blocking
// send does: the arguments are (request, body, backend pointer, backend
// length, error detail, response out, body out).
func sendAndWait(ctx context.Context, s *state, m api.Memory, a []uint64) Status {
	p, st := s.start(m, a[0], a[1], a[2], a[3], false)
	if st != stOK {
		return st
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		return stError
	}
	return s.finish(m, p, a[4], a[5], a[6])
}

func init() {
	register(map[string]hostcall{
		"fastly_http_req.send_v2": sendAndWait,
		"fastly_http_req.send_v3": sendAndWait,
		"fastly_http_req.send_async_v2": func(_ context.Context, s *state, m api.Memory, a []uint64) Status {
			return s.send(m, a[0], a[1], a[2], a[3], a[5], a[4] == 1)
		},
	})
}
