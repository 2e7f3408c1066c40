package edge

import (
	"context"

	"github.com/edgequeue/waitingroom/queue"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// LeavePath is where pages send a departure beacon
// (navigator.sendBeacon("/_wr/leave")) to end the visitor's sessions at
// once, freeing their places for the next in line.
const LeavePath = "/_wr/leave"

// leave ends the visitor's sessions in every room on this host.
func (s *Service) leave(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request, settings Settings) {
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != fsthttp.MethodPost {
		w.Header().Set("Allow", "POST")
		w.WriteHeader(fsthttp.StatusMethodNotAllowed)
		return
	}
	gate, err := s.gate(settings)
	if err != nil {
		s.Logf("leave: cannot run the line: %s", describe(err))
		w.WriteHeader(fsthttp.StatusServiceUnavailable)
		return
	}
	for _, room := range settings.Rooms {
		if !room.Serves(r.Host) {
			continue
		}
		v := queue.Visitor{Passes: queue.CookieValues(r.Header.Values("Cookie"), room.CookieName), Now: s.Now}
		ended, err := gate.End(ctx, room, v)
		if err != nil {
			s.Logf("room %s: leave failed: %v", room.Name, err)
			continue
		}
		if ended {
			s.Logf("room %s: visitor left", room.Name)
			w.Header().Add("Set-Cookie", expired(room))
		}
	}
	w.WriteHeader(fsthttp.StatusNoContent)
}
