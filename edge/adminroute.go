package edge

import (
	"context"
	"errors"
	"strings"

	"github.com/edgequeue/waitingroom/admin"
	"github.com/edgequeue/waitingroom/store"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

func (s *Service) admin(ctx context.Context, w fsthttp.ResponseWriter, r *fsthttp.Request, settings Settings) {
	p := &admin.Panel{Path: settings.AdminPath, Rooms: settings.Rooms, Now: s.Now, Logf: s.Logf}
	// Without a password the panel is disabled (it says so); any other
	// problem with it is the operator's to fix.
	pw, err := s.Secrets.Get(SecretAdminPassword)
	switch {
	case errors.Is(err, ErrStoreNotLinked):
		s.notSetUp(w, storeNotLinked(SecretStore, "fastly secret-store list"))
		return
	case err == nil && !s.Local && IsDevSecret(SecretAdminPassword, pw):
		s.notSetUp(w, secretProblem(SecretAdminPassword, "holds the public development value from fastly.toml's [local_server]"))
		return
	case err == nil:
		p.Password = []byte(strings.TrimSpace(string(pw)))
	case !errors.Is(err, ErrNotFound):
		s.Logf("admin: secret %s: %v", SecretAdminPassword, err)
	}
	if len(p.Password) > 0 {
		keys, err := s.keys()
		if err == nil {
			var st *store.Upstash
			if st, err = s.store(settings); err == nil {
				p.CSRFKey, p.Store = keys.Key(), st
			}
		}
		var setup *SetupError
		switch {
		case errors.As(err, &setup):
			s.notSetUp(w, setup)
			return
		case err != nil:
			s.Logf("admin: %v", err)
			s.problem(w, fsthttp.StatusServiceUnavailable, "Admin unavailable", "The panel cannot reach its secrets; see the log.")
			return
		}
	}
	p.ServeHTTP(ctx, w, r)
}
